#!/usr/bin/env bash
# The CPU backend against plain sequential Rust (examples/cpu_backend.rs), lockstep copies
# against futures in the same binary, into one folder: wall-clock rounds with the two modes
# alternating (runs.txt), and instructions per run under callgrind, which do not move with the
# machine's load (callgrind.txt, when valgrind is installed).
#
# Usage: scripts/cpu-bench.sh OUT_DIR [ROUNDS] [LOG2_N] [REPS]   (defaults: 3 rounds, 2^20, 5)
#   CPU_BENCH_CALLGRIND_LOG2=14: the callgrind runs' size (2^14 threads; 0 skips them).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${1:?usage: scripts/cpu-bench.sh OUT_DIR [ROUNDS] [LOG2_N] [REPS]}
rounds=${2:-3}
log2=${3:-20}
reps=${4:-5}
cg_log2=${CPU_BENCH_CALLGRIND_LOG2:-14}
mkdir -p "$out"

cargo build --release --example cpu_backend
bin=target/release/examples/cpu_backend
commit=$(git rev-parse --short HEAD)$(git diff --quiet HEAD -- . ':!results' || echo "+changes")
machine="$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), load average $(cut -d' ' -f1-3 /proc/loadavg)"

{
  echo "# OFFLOAD_CPU_LOCKSTEP=1/0 $bin $log2 $reps, $rounds rounds alternating, at $commit, $(date -u +%F)"
  echo "# $machine"
  for r in $(seq "$rounds"); do
    for mode in 1 0; do
      echo "== round $r, OFFLOAD_CPU_LOCKSTEP=$mode"
      OFFLOAD_CPU_LOCKSTEP=$mode "$bin" "$log2" "$reps"
    done
  done
} | tee "$out/runs.txt"

if [ "$cg_log2" != 0 ] && command -v valgrind >/dev/null; then
  {
    echo "# OFFLOAD_CPU_THREADS=1 valgrind --tool=callgrind $bin $cg_log2 1 KERNEL at $commit, $(date -u +%F) (Ir, the whole process; $((1 << cg_log2)) emulated threads)"
    for k in saxpy smooth warp_sum block_sum; do
      for mode in 1 0; do
        ir=$(OFFLOAD_CPU_THREADS=1 OFFLOAD_CPU_LOCKSTEP=$mode valgrind --tool=callgrind \
          --callgrind-out-file=/dev/null "$bin" "$cg_log2" 1 "$k" 2>&1 | grep -o 'Collected : [0-9]*')
        echo "$k OFFLOAD_CPU_LOCKSTEP=$mode $ir"
      done
    done
  } | tee "$out/callgrind.txt"
fi
