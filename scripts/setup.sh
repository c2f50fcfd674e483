#!/usr/bin/env bash
# Installs everything cargo-offload needs on a Debian/Ubuntu machine, then cargo-offload
# itself. Safe to run again: it skips what is already there.
#
#   - the pinned nightly Rust toolchain with rust-src and llvm-tools (rust-toolchain.toml)
#   - LLVM 22: liboffload (runs kernels on GPUs) and llvm-22 (llvm-readelf for the tests)
#   - ptxas from CUDA 13.0 (pip's nvidia-cuda-nvcc), which assembles PTX into cubins
#   - `cargo offload` (cargo install --path cargo-offload)
#   - for the tests: Miri's sysroot and cargo-fuzz
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '\033[1m==> %s\033[0m\n' "$*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v rustup >/dev/null 2>&1; then
  say "installing rustup"
  curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal --default-toolchain none
  # shellcheck disable=SC1091
  . "$HOME/.cargo/env"
fi
say "Rust toolchain from rust-toolchain.toml"
rustup toolchain install
rustc --version

missing=()
for pkg in liboffload-22 llvm-22; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

if ! python3 -c "import nvidia, os, sys; sys.exit(0 if any(os.path.isfile(os.path.join(p, 'cu13/bin/ptxas')) for p in nvidia.__path__) else 1)" 2>/dev/null; then
  say "ptxas (pip: nvidia-cuda-nvcc==13.0.88)"
  python3 -m pip install --quiet nvidia-cuda-nvcc==13.0.88
fi

say "cargo-offload"
cargo install --quiet --locked --path cargo-offload
cargo offload --version

say "Miri's sysroot and cargo-fuzz (for the tests)"
cargo miri setup >/dev/null
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --quiet --locked cargo-fuzz
