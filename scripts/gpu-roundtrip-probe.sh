#!/usr/bin/env bash
# Why a one-value reduction's repetition at 1M (initialise, launch, copy back, wait: a host
# round trip around a kernel of a few microseconds) takes 22.6 µs in one process and 28.4 µs
# in another on the Rust side, against CUDA's 21.3-25.0 (rajaperf-rs/results/README.md,
# 2026-11-30 afternoon). Each rajaperf process times both sides; the CUDA helper is a child
# process and inherits the runner's CPU affinity, so a pinned run pins both. (What it found, on
# a one-node machine: the round trip switches between two states for both sides alike; see
# the results' 2026-11-30 evening section.)
#
# For every placement, RUNS separate processes of the reductions (and the launch-latency
# examples, Rust and CUDA C++, whose "launch + sync" row is the bare round trip), then per
# placement and kernel the median and range over the processes. Then, once, the reduction's
# round trip in CUDA C++ with its result handled four ways (scripts/probes/reduce_roundtrip.cu):
# whether a reduction that publishes its result from the last block, with no copies, is worth
# building into the runtime. Placements: `all` (no
# pinning, as the GPU check runs) and, for each NUMA node, its CPUs (`taskset -c`), so a run
# on the GPU's node and one on another node are told apart. The machine's CPU and NUMA layout
# and the GPU's node go into OUT/machine.txt.
#
# Runs on the GPU machine (sources scripts/gpu-env.sh):
#   scripts/gpu-roundtrip-probe.sh OUT RAJAPERF_BIN [RUNS]
#   e.g. scripts/gpu-roundtrip-probe.sh OUT .gpu-bundle/bin/rajaperf 5
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-roundtrip-probe.sh OUT RAJAPERF_BIN [RUNS]}
bin=${2:?rajaperf binary}
runs=${3:-5}
kernels=REDUCE_SUM,PI_REDUCE,TRAP_INT,DOT
mkdir -p "$out"
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh
gpu_env_rajaperf_cuda "$out/rajaperf-cuda-build.log" || { echo "no CUDA baseline (see $out/rajaperf-cuda-build.log)"; exit 1; }

{
  echo "== lscpu"; lscpu 2>&1
  echo "== NUMA nodes"
  for n in /sys/devices/system/node/node[0-9]*; do [ -d "$n" ] && echo "${n##*/}: cpus $(cat "$n/cpulist")"; done
  echo "== GPU topology"; nvidia-smi topo -m 2>&1
  echo "== frequency governors"; cat /sys/devices/system/cpu/cpu*/cpufreq/scaling_governor 2>/dev/null | sort | uniq -c
} > "$out/machine.txt"

ll_cuda=""
nvcc=$gpu_env_nvcc
gpu_env_launch_latency_cuda && ll_cuda=/tmp/launch_latency_cuda
ll_rust=$(dirname "$bin")/launch_latency

placements=(all)
for n in /sys/devices/system/node/node[0-9]*; do
  [ -d "$n" ] && placements+=("$(cat "$n/cpulist")")
done
for place in "${placements[@]}"; do
  pin=()
  [ "$place" != all ] && pin=(taskset -c "$place")
  tag=$(echo "$place" | tr ',' '_')
  for r in $(seq 1 "$runs"); do
    dir="$out/$tag/run-$r"
    mkdir -p "$dir"
    echo "== cpus $place, run $r"
    OFFLOAD_QUIET=1 "${pin[@]}" "$bin" --kernels "$kernels" --npasses 2 --copy-bandwidth-size 0 \
      --out "$dir" > "$dir/stdout.txt" 2>&1 || echo "-- rajaperf failed (exit $?)"
    [ -x "$ll_rust" ] && { OFFLOAD_QUIET=1 "${pin[@]}" "$ll_rust" 2000 > "$dir/launch-rust.jsonl" 2>&1 || true; }
    [ -n "$ll_cuda" ] && { "${pin[@]}" "$ll_cuda" 2000 > "$dir/launch-cuda.jsonl" 2>&1 || true; }
  done
done

# The same round trip in CUDA C++ with the result handled four ways (copies as RAJAPerf, a
# memset for the initial zero, the last block publishing into mapped host memory, atomics
# straight into mapped host memory): what a reduction could cost without the two copies.
if [ -n "$nvcc" ] && "$nvcc" -O3 -arch=sm_90 -o /tmp/reduce_roundtrip scripts/probes/reduce_roundtrip.cu; then
  /tmp/reduce_roundtrip 1000000 500 > "$out/reduce-roundtrip.jsonl" 2> "$out/reduce-roundtrip.err" || true
  echo "== one-value reduction at 1M, CUDA C++, by how the result travels (us per repetition)"
  cat "$out/reduce-roundtrip.jsonl" "$out/reduce-roundtrip.err"
fi

python3 - "$out" <<'PY'
import csv, json, os, statistics, sys
out = sys.argv[1]
rows = {}  # (placement, name, side) -> [µs per process]
for place in sorted(os.listdir(out)):
    pdir = os.path.join(out, place)
    if not os.path.isdir(pdir):
        continue
    for run in sorted(os.listdir(pdir)):
        d = os.path.join(pdir, run)
        path = os.path.join(d, "results.csv")
        if os.path.exists(path):
            for r in csv.DictReader(open(path)):
                rows.setdefault((place, r["kernel"], r["variant"]), []).append(float(r["time_per_rep_avg_s"]) * 1e6)
        for side in ("rust", "cuda"):
            p = os.path.join(d, f"launch-{side}.jsonl")
            if not os.path.exists(p):
                continue
            for line in open(p):
                try:
                    j = json.loads(line)
                except ValueError:
                    continue
                # {"bench":"launch_latency", "median_us": …}: launch + sync of an empty kernel.
                if j.get("bench") == "launch_latency" and "median_us" in j:
                    rows.setdefault((place, "launch+sync", side), []).append(float(j["median_us"]))
print(f"{'cpus':<10} {'kernel':<12} {'rust median':>11} {'range':>15} {'cuda median':>11} {'range':>15} {'ratio':>6}")
for (place, name) in sorted({(p, n) for p, n, _ in rows}):
    r, c = rows.get((place, name, "rust"), []), rows.get((place, name, "cuda"), [])
    if not r or not c:
        continue
    mr, mc = statistics.median(r), statistics.median(c)
    print(f"{place:<10} {name:<12} {mr:11.2f} {min(r):7.2f}-{max(r):<7.2f} {mc:11.2f} {min(c):7.2f}-{max(c):<7.2f} {mr / mc:6.3f}")
PY
