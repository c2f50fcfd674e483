#!/usr/bin/env bash
# How much of a Rust/CUDA difference can come from where the arrays lie in device memory: runs
# the rajaperf runner once per padding (`--pad-mib N`: both variants allocate N MiB that
# nothing uses before each array, so the arrays move), each run timing Rust and CUDA in one
# process, and prints per kernel each side's time and the ratio for every padding, with the
# spread of each side over the paddings. A kernel whose CUDA time alone moves by 10 % between
# paddings cannot be judged to 10 % by one run of each side.
#
# Runs on the GPU machine (sources scripts/gpu-env.sh):
#   scripts/gpu-placement-probe.sh OUT RAJAPERF_BIN "0 2 6 14" KERNELS [runner args...]
#   e.g. scripts/gpu-placement-probe.sh OUT .gpu-bundle/bin/rajaperf "0 2 6 14" ADD,TRIAD,COPY,MUL
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-placement-probe.sh OUT RAJAPERF_BIN PADS KERNELS [runner args...]}
bin=${2:?rajaperf binary} pads=${3:?paddings in MiB, e.g. "0 2 6 14"} kernels=${4:?kernels}
shift 4
mkdir -p "$out"
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh
gpu_env_rajaperf_cuda "$out/rajaperf-cuda-build.log" || { echo "no CUDA baseline (see $out/rajaperf-cuda-build.log)"; exit 1; }
for pad in $pads; do
  echo "== --pad-mib $pad"
  OFFLOAD_QUIET=1 "$bin" --kernels "$kernels" --pad-mib "$pad" --npasses 2 --copy-bandwidth-size 0 \
    --out "$out/pad-$pad" "$@" > "$out/pad-$pad.txt" 2>&1 || echo "-- pad $pad failed (exit $?)"
done
python3 - "$out" "$pads" <<'PY'
import csv, os, sys
out, pads = sys.argv[1], sys.argv[2].split()
times = {}  # kernel -> pad -> {variant: µs}
for pad in pads:
    path = os.path.join(out, f"pad-{pad}", "results.csv")
    if not os.path.exists(path):
        continue
    for r in csv.DictReader(open(path)):
        times.setdefault(r["kernel"], {}).setdefault(pad, {})[r["variant"]] = float(r["time_per_rep_avg_s"]) * 1e6
print(f"{'kernel':24} {'pad MiB':>7} {'rust µs':>10} {'cuda µs':>10} {'rust/cuda':>10}")
for kernel, by_pad in times.items():
    for pad, t in by_pad.items():
        r, c = t.get("rust"), t.get("cuda")
        ratio = f"{r / c:10.3f}" if r and c else f"{'-':>10}"
        print(f"{kernel:24} {pad:>7} {r or float('nan'):10.2f} {c or float('nan'):10.2f} {ratio}")
    for side in ("rust", "cuda"):
        v = [t[side] for t in by_pad.values() if side in t]
        if len(v) > 1:
            print(f"{kernel:24} {side} over the paddings: {min(v):.2f}-{max(v):.2f} µs (max/min {max(v) / min(v):.3f})")
PY
