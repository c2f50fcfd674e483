#!/usr/bin/env bash
# Runs bundle executables under NVIDIA's compute-sanitizer (memcheck) on the GPU machine: for
# a kernel that fails with an illegal address, the access (address space, size, the faulting
# function and PTX/SASS offset) and the thread. Each run's report goes to OUT/sanitize-<name>.log.
#
# Usage: scripts/gpu sanitize OUT 'NAME[:ENV=VALUE,...] [ARGS...]' ...
#   e.g. scripts/gpu sanitize OUT 'kernel_print:OFFLOAD_TEST_KERNEL_PRINT_CHILD=all --exact child_prints --ignored'
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/gpu sanitize OUT 'NAME[:ENV=VALUE,...] [ARGS...]' ...}
shift
mkdir -p "$out"
# shellcheck source=scripts/lib/gpu-env.sh
source scripts/lib/gpu-env.sh
sanitizer=$(command -v compute-sanitizer || { [ -x /usr/local/cuda/bin/compute-sanitizer ] && echo /usr/local/cuda/bin/compute-sanitizer; } || true)
[ -n "$sanitizer" ] || { echo "no compute-sanitizer on this machine"; exit 1; }
n=0
for spec in "$@"; do
  n=$((n + 1))
  read -ra words <<< "$spec"
  head=${words[0]} name=${words[0]%%:*} envs=()
  [[ $head == *:* ]] && IFS=, read -ra envs <<< "${head#*:}"
  log="$out/sanitize-$n-$name.log"
  echo "== $spec -> $log"
  env OFFLOAD_DEVICE=gpu OFFLOAD_DEBUG=1 "${envs[@]}" timeout 300 "$sanitizer" --tool memcheck --show-backtrace device \
    ".gpu-bundle/bin/$name" "${words[@]:1}" > "$log" 2>&1
  echo "exit $?"
  grep -m 12 -E "Invalid|Address|at 0x|by thread|Saved host|ERROR SUMMARY|Device Frame" "$log"
done
