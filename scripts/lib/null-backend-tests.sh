#!/usr/bin/env bash
# The runtime's GPU host path without a GPU: builds tests/null-liboffload (a stand-in for
# liboffload 22 that runs no kernels, its "device" memory host memory) and runs the tests that
# need it (tests/tests/null_liboffload.rs, timeline_null_liboffload.rs and null_liboffload_trap.rs, ignored in a plain
# `cargo test`) with an sm_90 image, through the stand-in.
set -euo pipefail
cd "$(dirname "$0")/../.."
. scripts/lib/null-liboffload.sh
offload_test() { # TEST [test-binary arguments...]
  local test=$1
  shift
  target/release/cargo-offload offload test --release -p offload-tests --test "$test" --target-gpu sm_90 \
    -- --ignored --test-threads=1 "$@"
}
for test in null_liboffload timeline_null_liboffload; do
  offload_test "$test"
  OFFLOAD_GATHER=0 offload_test "$test" # every small argument its own allocation and copies
  # Queued copies and fills happen only when their queue is waited for: the runtime must wait
  # on the right queue before host memory changes or goes.
  NULL_OFFLOAD_DEFER=1 offload_test "$test"
done
# A fault poisons the device for the process: each of these tests in a process of its own.
for t in a_queued_launch_that_faults a_launch_on_host_data_that_faults; do
  NULL_OFFLOAD_TRAP=1 offload_test null_liboffload_trap "$t"
done
NULL_OFFLOAD_TRAP=3 offload_test null_liboffload_trap a_kernel_queued_again_after_a_wait
# `cargo offload doctor` lists the stand-in's GPU with its architecture.
# (Output captured first: `grep -q` leaving a pipe early would fail `tee` with SIGPIPE.)
doctor=$(target/release/cargo-offload offload doctor)
echo "$doctor"
grep -q 'GPU 0: null liboffload device' <<< "$doctor" || { echo "cargo offload doctor did not list the stand-in's GPU"; exit 1; }
# `--target-gpu native` builds for the architecture liboffload reports (the stand-in's sm_90).
native=$(target/release/cargo-offload offload build --release -p offload-examples --example saxpy --target-gpu native 2>&1)
echo "$native"
grep -q 'device images for sm_90' <<< "$native" || { echo "--target-gpu native did not build for sm_90"; exit 1; }
