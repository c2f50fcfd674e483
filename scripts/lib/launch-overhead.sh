#!/usr/bin/env bash
# The runtime's own host cost per launch, without a GPU: examples/launch_latency built for
# sm_90 and run against tests/null-liboffload (a stand-in for liboffload that runs no kernels,
# its "device" memory host memory), so every launch takes the runtime's GPU host path (argument
# packing, queue bookkeeping, the liboffload calls) and nothing else. The driver's and
# liboffload's own costs are not in these figures; on an H200 a queued launch through
# liboffload costs about 3.9 µs in all (results/README.md).
#
# Usage: scripts/lib/launch-overhead.sh [LAUNCHES/10, default 2000]
# Fails if the example did not run on the stand-in's device.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/null-liboffload.sh
target/release/cargo-offload offload build --release -p offload-examples --example launch_latency --target-gpu sm_90 \
  > "$null_lib_dir/build.log" 2>&1 || { cat "$null_lib_dir/build.log"; exit 1; }
out=$(OFFLOAD_QUIET=1 target/offload/host/release/examples/launch_latency "${1:-2000}" 2>&1)
echo "$out"
grep -q '"device":"GPU 0: null liboffload device' <<< "$out" || { echo "launch-overhead: the launches did not take the GPU path"; exit 1; }
