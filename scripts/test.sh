#!/usr/bin/env bash
# The project's tests: every crate's unit, integration and compile-fail tests, then every
# example, each of which verifies its own result (on the CPU backend where there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
cargo build --release --examples -p offload-examples
for example in saxpy vector_add stencil2d histogram dot matmul generic_axpy gemm compact; do
  target/release/examples/"$example"
done
target/release/examples/pipeline 20000 3
OFFLOAD_CPU_WARP_SIZE=64 target/release/examples/compact
# The runtime's GPU host path (argument packing, arenas, copies, queue, liboffload calls)
# against the stand-in liboffload that runs no kernels: its tests, and the launch benchmark,
# which must take the GPU path.
scripts/null-backend-tests.sh
scripts/launch-overhead.sh 200
