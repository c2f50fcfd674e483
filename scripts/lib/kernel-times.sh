#!/usr/bin/env bash
# The GPU's own time per launch of rajaperf kernels, Rust and CUDA, measured by Nsight Compute
# (gpu__time_duration: from the kernel's start on the GPU to its end), beside the runner's time
# per repetition. The difference separates what the kernel code costs from what the launch path
# costs: a kernel whose GPU time matches CUDA's while its time per repetition does not is bound
# by the host's launches (the 4-6 µs kernels at RAJAPerf's default size, whose data stays in L2).
#
# Runs on the GPU machine after scripts/lib/gpu-env.sh's set-up (it sources it):
#   scripts/gpu kernel-times OUT RAJAPERF_BIN KERNELS [REPS] [runner args...]
#   e.g. scripts/gpu kernel-times OUT .gpu-bundle/bin/rajaperf TRIAD,VOL3D 5
# Every repetition is profiled with the caches left as the previous launch left them
# (`--cache-control none`, as in a timed run; ncu's default flushes them before each launch) and
# the clocks unlocked (`--clock-control none`, as in a timed run). Prints, per kernel, the
# median GPU time of the Rust and the CUDA launches and their ratio; OUT/kernel-times.csv has
# every launch.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/gpu kernel-times OUT RAJAPERF_BIN KERNELS [REPS] [runner args...]}
bin=${2:?rajaperf binary} kernels=${3:?kernels} reps=${4:-5}
shift 3
[ $# -gt 0 ] && shift
mkdir -p "$out"
# shellcheck source=scripts/lib/gpu-env.sh
source scripts/lib/gpu-env.sh
gpu_env_rajaperf_cuda "$out/rajaperf-cuda-build.log" || { echo "no CUDA baseline (see $out/rajaperf-cuda-build.log)"; exit 1; }
ncu=$(command -v ncu || { [ -x /usr/local/cuda/bin/ncu ] && echo /usr/local/cuda/bin/ncu; } || true)
[ -n "$ncu" ] || { echo "no ncu (Nsight Compute) on this machine"; exit 1; }
OFFLOAD_QUIET=1 "$ncu" --target-processes all --csv --cache-control none --clock-control none --print-kernel-base mangled \
  --metrics gpu__time_duration.sum,launch__registers_per_thread,launch__grid_size \
  "$bin" --kernels "$kernels" --reps "$reps" --npasses 1 --warmup-reps 0 --copy-bandwidth-size 0 \
  --out "$out/runner" "$@" > "$out/kernel-times.raw" 2> "$out/kernel-times.err"
echo "ncu exit $?"
tail -3 "$out/kernel-times.err"
sed -i "s#$PWD/##g" "$out/kernel-times.raw" # ncu names processes by absolute path
PYTHONPATH=scripts/lib python3 - "$out" <<'PY'
import csv, os, statistics, sys
from kernel_names import kernel_identifier
from ncu_csv import read_launches
out = sys.argv[1]
launches = read_launches(os.path.join(out, "kernel-times.raw"))  # launch id -> fields
if not launches:
    sys.exit("no profile rows (see kernel-times.err)")

def family(launch):
    """rust or cuda (the CUDA baseline runs in its own process), and a comparable kernel name
    (as scripts/gpu resources writes it)."""
    side = "cuda" if "cuda" in os.path.basename(launch["process"]) else "rust"
    name = kernel_identifier(launch["kernel"]).lower().replace("_", "")
    return side, name[4:] if name.startswith("poly") else name

with open(os.path.join(out, "kernel-times.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(["variant", "kernel", "gpu_us", "registers", "grid"])
    by = {}
    for l in launches.values():
        side, name = family(l)
        w.writerow([side, name, f"{l.get('us', float('nan')):.3f}", int(l.get("launch__registers_per_thread", 0)), int(l.get("launch__grid_size", 0))])
        by.setdefault(name, {}).setdefault(side, []).append(l.get("us", float("nan")))
# A CUDA kernel may serve several RAJAPerf kernels and tunings (`blockatomicsum` is DOT's and
# REDUCE_SUM's, in a direct and an occupancy-sized grid), and the runner tries every tuning:
# so, first, the launches of each side, kernel, grid and register count, in the order each
# first ran (the runner's order of kernels and tunings), which pairs a tuning with its kernel.
print(f"{'side':5} {'kernel':32} {'grid':>8} {'regs':>5} {'median GPU µs':>14}  (in the order they first ran)")
groups = {}
for l in launches.values():
    key = (*family(l), int(l.get("launch__grid_size", 0)), int(l.get("launch__registers_per_thread", 0)))
    groups.setdefault(key, []).append(l.get("us", float("nan")))
for (side, name, grid, regs), us in groups.items():
    print(f"{side:5} {name:32} {grid:8} {regs:5} {statistics.median(us):14.3f}  n={len(us)}")
print()
print(f"{'kernel':32} {'rust GPU µs':>12} {'cuda GPU µs':>12} {'rust/cuda':>10}  (kernels of one name on both sides)")
for name in sorted(by):
    r, c = by[name].get("rust"), by[name].get("cuda")
    if not (r and c):
        continue
    mr = statistics.median(r) if r else float("nan")
    mc = statistics.median(c) if c else float("nan")
    print(f"{name:32} {mr:12.3f} {mc:12.3f} {mr / mc if c and r else float('nan'):10.3f}  n={len(r or [])}/{len(c or [])}")
PY
