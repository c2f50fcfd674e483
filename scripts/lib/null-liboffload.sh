# Sourced by the scripts that run against tests/null-liboffload (a stand-in for liboffload 22
# that runs no kernels): builds it and cargo-offload, puts the stand-in under liboffload 22's
# file name (the only one the runtime accepts) in a temporary folder removed on exit, and
# exports OFFLOAD_LIBRARY and OFFLOAD_DEVICE=gpu. Leaves the folder's path in $null_lib_dir.
cargo build --release -q -p null-liboffload
cargo build --release -q -p cargo-offload
null_lib_dir=$(mktemp -d)
trap 'rm -rf "$null_lib_dir"' EXIT
cp target/release/libnull_liboffload.so "$null_lib_dir/libLLVMOffload.so.22.1"
export OFFLOAD_LIBRARY="$null_lib_dir/libLLVMOffload.so.22.1" OFFLOAD_DEVICE=gpu
