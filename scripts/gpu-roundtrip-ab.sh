#!/usr/bin/env bash
# A/B of the reduction round trip between two builds of examples/launch_latency, beside the
# CUDA C++ baseline: ROUNDS rounds of A, B, CUDA (interleaved, separate processes, so that all
# three see the same machine state: an H200's round trip switches between about 14 and 20 µs,
# for CUDA and Rust alike). Prints per round each side's median round trip and A's and B's
# ratio to CUDA's (RAJAPerf's way: 8 bytes each way), then the medians over the rounds.
#
# Runs on the GPU machine (sources scripts/gpu-env.sh; needs nvcc):
#   scripts/gpu-roundtrip-ab.sh OUT LAUNCH_LATENCY_A LAUNCH_LATENCY_B ROUNDS
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-roundtrip-ab.sh OUT BIN_A BIN_B ROUNDS} a=${2:?binary A} b=${3:?binary B} rounds=${4:?rounds}
mkdir -p "$out"
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh
gpu_env_launch_latency_cuda || { echo "no nvcc, or examples/cuda/launch_latency.cu did not build"; exit 1; }
for r in $(seq 1 "$rounds"); do
  OFFLOAD_QUIET=1 "$a" 2000 > "$out/A-$r.jsonl" 2>&1
  OFFLOAD_QUIET=1 "$b" 2000 > "$out/B-$r.jsonl" 2>&1
  /tmp/launch_latency_cuda 2000 > "$out/cuda-$r.jsonl" 2>&1
done
python3 - "$out" "$rounds" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rows(path):
    return {j["bench"]: j for j in (json.loads(l) for l in open(path) if l.startswith("{"))} if os.path.exists(path) else {}
ra, rb, wrong = [], [], 0
print(f"{'round':<6} {'A µs':>7} {'B µs':>7} {'CUDA µs':>8} {'CUDA 1k':>8} {'A/CUDA':>7} {'B/CUDA':>7}")
for r in range(1, rounds + 1):
    A, B, C = (rows(os.path.join(out, f"{s}-{r}.jsonl")) for s in ("A", "B", "cuda"))
    try:
        a, b = A["reduce_roundtrip"]["median_us"], B["reduce_roundtrip"]["median_us"]
        c, c1k = C["reduce_roundtrip"]["median_us"], C["reduce_roundtrip_1k"]["median_us"]
    except KeyError:
        print(f"{r:<6} missing results"); continue
    wrong += sum(x["reduce_roundtrip"].get("wrong", 0) for x in (A, B, C))
    ra.append(a / c); rb.append(b / c)
    print(f"{r:<6} {a:7.2f} {b:7.2f} {c:8.2f} {c1k:8.2f} {a / c:7.3f} {b / c:7.3f}")
if ra:
    print(f"median over {len(ra)} rounds: A/CUDA {statistics.median(ra):.3f}, B/CUDA {statistics.median(rb):.3f}; wrong results {wrong}")
sys.exit(1 if wrong or not ra else 0)
PY
