#!/usr/bin/env bash
# A/B of two builds of examples/launch_latency beside the CUDA C++ baseline: ROUNDS rounds of
# A and B (in turns: A first in odd rounds, B first in even ones) and CUDA, each a separate
# process, interleaved so that all three meet the same machine states.
# Prints, per benchmark (launch+sync of an empty kernel, queued launches of a two-buffer and of
# a five-buffer kernel, a 2,048-element sum's round trip), the medians over the rounds of A, B
# and CUDA, B/A of the medians, and the geometric mean of each round's B/A (the paired
# statistic: a process's machine state moves these times by ±10 %, for every side alike) with
# a 95 % bootstrap interval over the rounds. Fails on a wrong sum.
#
# GPU_LAUNCH_AB_CPU=LIST runs every process under `taskset -c LIST` (the same cores for all
# sides: the host core a process lands on is one source of its ±10 %); GPU_LAUNCH_AB_REPS
# (default 2000) is each process's launch count argument (fewer: shorter processes, more rounds
# in the same time).
#
# Runs on the GPU machine (needs nvcc for the CUDA side):
#   scripts/gpu launch-ab OUT LAUNCH_LATENCY_A LAUNCH_LATENCY_B ROUNDS
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/gpu launch-ab OUT BIN_A BIN_B ROUNDS} a=${2:?binary A} b=${3:?binary B} rounds=${4:?rounds}
mkdir -p "$out"
reps=${GPU_LAUNCH_AB_REPS:-2000}
pin=()
[ -n "${GPU_LAUNCH_AB_CPU:-}" ] && pin=(taskset -c "$GPU_LAUNCH_AB_CPU")
# shellcheck source=scripts/lib/gpu-env.sh
source scripts/lib/gpu-env.sh
gpu_env_launch_latency_cuda || { echo "no nvcc, or examples/cuda/launch_latency.cu did not build"; exit 1; }
# Odd rounds run A first, even rounds B first, so that neither side always follows the other.
for r in $(seq 1 "$rounds"); do
  sides=(A B)
  [ $((r % 2)) -eq 0 ] && sides=(B A)
  for side in "${sides[@]}"; do
    exe=$a
    [ "$side" = B ] && exe=$b
    OFFLOAD_QUIET=1 "${pin[@]}" "$exe" "$reps" > "$out/$side-$r.jsonl" 2>&1
  done
  "${pin[@]}" /tmp/launch_latency_cuda "$reps" > "$out/cuda-$r.jsonl" 2>&1
done
python3 - "$out" "$rounds" <<'PY'
import json, os, random, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
def rows(path):
    if not os.path.exists(path):
        return {}
    return {j["bench"]: j for j in (json.loads(l) for l in open(path) if l.startswith("{"))}
benches = [("launch_latency", "median_us", "launch+sync, empty kernel"),
           ("launch_throughput", "per_launch_us", "queued launch, two buffers"),
           ("launch_throughput_wide", "per_launch_us", "queued launch, five buffers, four scalars"),
           ("reduce_roundtrip", "median_us", "2,048-element sum, round trip")]
values = {}  # (bench, side) -> [per round]
paired = {}  # bench -> [B/A per round with both]
wrong = 0
for r in range(1, rounds + 1):
    got = {name: rows(os.path.join(out, f"{side}-{r}.jsonl")) for side, name in (("A", "A"), ("B", "B"), ("cuda", "CUDA"))}
    for bench, key, _ in benches:
        for name, g in got.items():
            if bench in g:
                values.setdefault((bench, name), []).append(g[bench][key])
                wrong += g[bench].get("wrong", 0)
        if bench in got["A"] and bench in got["B"]:
            paired.setdefault(bench, []).append(got["B"][bench][key] / got["A"][bench][key])
def interval(ratios):
    """A 95 % bootstrap interval of the geometric mean of `ratios` (resampled rounds)."""
    rng = random.Random(1)
    means = sorted(statistics.geometric_mean(rng.choices(ratios, k=len(ratios))) for _ in range(2000))
    return means[50], means[1949]
print(f"{'benchmark (µs, medians of ' + str(rounds) + ' rounds)':<44} {'A':>8} {'B':>8} {'CUDA':>8} {'B/A':>7} {'B/CUDA':>7} {'paired B/A':>10} {'95 % interval':>15}")
ok = True
for bench, _, what in benches:
    med = {s: statistics.median(values[(bench, s)]) for s in ("A", "B", "CUDA") if values.get((bench, s))}
    if "A" not in med or "B" not in med:
        print(f"{what:<44} missing results"); ok = False; continue
    cuda = med.get("CUDA")
    print(f"{what:<44} {med['A']:8.3f} {med['B']:8.3f} {cuda if cuda else float('nan'):8.3f} {med['B'] / med['A']:7.3f} "
          f"{med['B'] / cuda if cuda else float('nan'):7.3f} {statistics.geometric_mean(paired[bench]):10.3f} "
          "{:>7.3f}–{:.3f}".format(*interval(paired[bench])))
print(f"wrong sums: {wrong}")
sys.exit(0 if ok and not wrong else 1)
PY
