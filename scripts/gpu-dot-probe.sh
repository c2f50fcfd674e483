#!/usr/bin/env bash
# DOT at 2^25: why CUDA's baseline runs about 30 µs per repetition faster while the runner
# also has the Rust device open (rajaperf-rs/results/README.md, 2026-11-30 later). Run on the
# GPU machine, on its own or after scripts/gpu-check.sh (set-up: scripts/gpu-env.sh).
# Each case runs DOT and REDUCE_SUM at 2^25, two passes, one process per case:
#   cuda-alone          the cuda variant only (the runner opens no Rust device)
#   cuda-beside-idle    the same while another process holds a CUDA context and does nothing
#   cuda-beside-rust    the same with the runner's Rust device open (variants rust,cuda)
#   rust-alone          the rust variant only
# Prints DOT's and REDUCE_SUM's µs per repetition for each; results under OUT/<case>/.
#
# Usage: scripts/gpu-dot-probe.sh OUT
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-dot-probe.sh OUT}
mkdir -p "$out"
# shellcheck source=scripts/gpu-env.sh
source scripts/gpu-env.sh
gpu_env_rajaperf_cuda "$out/rajaperf-cuda-build.log" || { echo "no CUDA baseline (see $out/rajaperf-cuda-build.log)"; exit 1; }
bin=.gpu-bundle/bin
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
cat > /tmp/hold_context.cu <<'CU'
#include <cstdio>
#include <unistd.h>
int main(int argc, char** argv) {
  cudaFree(0);  // create the context, then hold it idle
  std::puts("holding a CUDA context");
  std::fflush(stdout);
  sleep(argc > 1 ? atoi(argv[1]) : 60);
  return 0;
}
CU
"$nvcc" -O2 -o /tmp/hold_context /tmp/hold_context.cu || exit 1
run() { # CASE VARIANTS
  OFFLOAD_QUIET=1 timeout 120 "$bin/rajaperf" --kernels DOT,REDUCE_SUM --size 33554432 --verify-reps 1 \
    --npasses 2 --variants "$2" --copy-bandwidth-size 0 --out "$out/$1" > "$out/$1.txt" 2>&1
  summary "$1"
}
summary() { # CASE: each kernel's µs per repetition by variant, from the run's results.csv
  python3 - "$1" "$out/$1/results.csv" <<'PY2'
import csv, os, sys
case, path = sys.argv[1], sys.argv[2]
if not os.path.exists(path):
    print(f"{case}: no results (see its .txt)")
    sys.exit()
parts = [f"{r['kernel']} {r['variant']} {float(r['time_per_rep_avg_s']) * 1e6:.2f} us"
         for r in csv.DictReader(open(path))]
print(f"{case}: " + "; ".join(parts))
PY2
}
run cuda-alone cuda
/tmp/hold_context 100 & holder=$!
sleep 2
run cuda-beside-idle cuda
kill "$holder" 2>/dev/null
run cuda-beside-rust rust,cuda
run rust-alone rust
run cuda-alone-again cuda
