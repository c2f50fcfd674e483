#!/usr/bin/env bash
# The project's tests: every crate's unit, integration and compile-fail tests, then every
# example, each of which verifies its own result (on the CPU backend where there is no GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo test --workspace
cargo build --release --examples -p offload-examples
for example in saxpy vector_add stencil2d histogram dot matmul generic_axpy gemm compact nbody scan spmv device_deps sort; do
  target/release/examples/"$example"
done
# MPI (offload-mpi): its checks across two and three ranks, and the heat example decomposed
# over 1, 2 and 3 ranks, each verified against a one-rank run (CPU backend, oversubscribed).
cargo build --release -q -p offload-examples --features mpi --example mpi_heat
ranks_test=$(cargo test --release -q -p offload-mpi --test ranks --no-run --message-format json 2>/dev/null |
  python3 -c 'import json,sys; print([m["executable"] for m in map(json.loads, sys.stdin) if m.get("executable")][-1])')
mpirun_n() { mpirun --allow-run-as-root --oversubscribe -n "$@"; }
for n in 2 3; do mpirun_n "$n" "$ranks_test"; done
target/release/examples/mpi_heat 128 96 40 10
for n in 2 3; do mpirun_n "$n" target/release/examples/mpi_heat 128 96 40 10; done
mpirun_n 2 target/release/examples/mpi_heat 128 96 40 10 serial
# The CPU backend's benchmark checks each kernel against its loop (small here: a test, not a
# measurement; results/README.md has the measured figures).
target/release/examples/cpu_backend 16 1
# The same kernels, and those of the tests of barriers and warps, as futures polled in turns
# rather than in lockstep (what kernels the macro cannot cut run as).
OFFLOAD_CPU_LOCKSTEP=0 target/release/examples/cpu_backend 16 1
OFFLOAD_CPU_LOCKSTEP=0 cargo test -q -p offload-tests --test lockstep --test shared --test warp --test emulation
# The pipeline also writes a timeline per variant (offload::timeline), which must be there.
timeline_dir=$(mktemp -d)
target/release/examples/pipeline 20000 3 --timeline "$timeline_dir"
for variant in host-slices launch-scope preloads buffers; do
  test -s "$timeline_dir/pipeline-$variant.json" || { echo "pipeline wrote no timeline for $variant"; exit 1; }
done
rm -rf "$timeline_dir"
OFFLOAD_CPU_WARP_SIZE=64 target/release/examples/compact
# The runtime's GPU host path (argument packing, arenas, copies, queue, liboffload calls)
# against the stand-in liboffload that runs no kernels: its tests, and the launch benchmark,
# which must take the GPU path.
scripts/lib/null-backend-tests.sh
scripts/lib/launch-overhead.sh 200
# The published crates as a user gets them: packaged, cargo-offload installed from its crate, a
# project outside the repository built against the packaged runtime.
scripts/lib/package-test.sh
# docs/ci.md's recipe: one build per architecture of its matrix, then the CPU-backend tests.
scripts/lib/ci-recipe-test.sh
# Kernels that use a crates.io crate and a workspace crate (device dependencies), built for
# both GPU vendors and run here on the CPU backend.
target/release/cargo-offload offload build --locked --release -p offload-examples --example device_deps \
  --target-gpu sm_90,gfx90a
target/offload/host/release/examples/device_deps
# The runtime's unsafe code under Miri: argument packing, sizes, the CPU backend's barriers,
# warps and shared memory (unit tests, and small launches of every parameter kind), and the
# wire formats' readers.
cargo miri test -p offload-rt --lib -- arch:: host::alloc host::launch host::grid host::properties region stencil strided load_order index::
cargo miri test -p offload-tests --test emulation
cargo miri test -p offload-wire
# The wire formats' readers against arbitrary bytes, for a bounded time per target
# (FUZZ_SECONDS, default 30), from the committed seeds; new inputs go to a scratch corpus.
fuzz_dir=$(mktemp -d)
for target in image_container module_record cubin; do
  mkdir -p "$fuzz_dir/$target"
  (cd offload-wire/fuzz && cargo fuzz run "$target" "$fuzz_dir/$target" "corpus/$target" -- \
    -max_total_time="${FUZZ_SECONDS:-30}" -print_final_stats=1 2>&1 | tail -n 12)
done
rm -rf "$fuzz_dir"
