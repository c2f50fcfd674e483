#!/usr/bin/env bash
# A/B comparison of two rajaperf runner builds on the GPU machine, in one session: runs A, B,
# A, B, ... (interleaved, so that both see the same machine state), each pass timing Rust and
# the CUDA baseline in one process, and prints per kernel the median Rust/CUDA ratio of A and
# of B and their quotient. A change to the kernel language or the runtime is judged by B/A,
# not by comparing ratios from different runs (those move by a few per cent between runs).
#
# Runs on its own or after scripts/gpu check (liboffload and the CUDA baseline are set up
# once per machine session, scripts/lib/gpu-env.sh):
#   scripts/gpu ab OUT BIN_A BIN_B ROUNDS [runner args...]
#   e.g. scripts/gpu ab OUT .gpu-alt/rajaperf-main .gpu-alt/rajaperf-BRANCH 3 --kernels DOT --size 33554432
#   (scripts/gpu build-revs main BRANCH builds the two into .gpu-alt/)
# GPU_AB_ARGS_A / GPU_AB_ARGS_B: extra runner arguments for one side only (an option the other
# build lacks, or one setting compared against another with the same binary).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/gpu ab OUT BIN_A BIN_B ROUNDS [runner args...]}
a=${2:?binary A} b=${3:?binary B} rounds=${4:?rounds}
shift 4
# One pass per process unless the arguments ask for more (e.g. --npasses 4 --pad-mib 0,2,6,14,
# each kernel averaged over four placements of its arrays).
passes=(--npasses 1)
for arg in "$@"; do
  case $arg in --npasses | --npasses=*) passes=() ;; esac
done
mkdir -p "$out"
# shellcheck source=scripts/lib/gpu-env.sh
source scripts/lib/gpu-env.sh
gpu_env_rajaperf_cuda "$out/rajaperf-cuda-build.log" || { echo "no CUDA baseline (see $out/rajaperf-cuda-build.log)"; exit 1; }
# A runner built by `scripts/gpu build-revs` (.gpu-alt/rajaperf-<name>) talks to its own
# revision's CUDA baseline (.gpu-alt/cuda-<name>/, built here once); any other to the checkout's.
side_cuda() { # RUNNER
  local name dir
  name=$(basename "$1")
  dir=$(dirname "$1")/cuda-${name#rajaperf-}
  if [ -f "$dir/build.sh" ]; then
    if [ ! -x "/tmp/$(basename "$dir")/rajaperf-cuda" ]; then
      bash "$dir/build.sh" "/tmp/$(basename "$dir")" > "$out/$(basename "$dir")-build.log" 2>&1 ||
        echo "-- the CUDA baseline of $dir did not build (see $out/$(basename "$dir")-build.log)" >&2
    fi
    echo "/tmp/$(basename "$dir")/rajaperf-cuda"
  else
    echo "$RAJAPERF_CUDA"
  fi
}
for r in $(seq 1 "$rounds"); do
  for side in A B; do
    exe=$a extra=${GPU_AB_ARGS_A:-}
    [ "$side" = B ] && exe=$b extra=${GPU_AB_ARGS_B:-}
    dir="$out/$side-$r"
    mkdir -p "$dir"
    cuda=$(side_cuda "$exe")
    echo "== $side round $r: $exe $* $extra (baseline $cuda)"
    # shellcheck disable=SC2086 # the extra arguments are words
    RAJAPERF_CUDA=$cuda OFFLOAD_QUIET=1 "$exe" "${passes[@]}" "$@" $extra --out "$dir" > "$dir/stdout.txt" 2>&1 ||
      echo "-- $side round $r failed (exit $?)"
  done
done
python3 scripts/lib/ab-summary.py "$out" "$rounds"
