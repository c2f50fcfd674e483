#!/usr/bin/env bash
# Installs everything cargo-offload needs on a Debian/Ubuntu machine, then cargo-offload
# itself. Safe to run again: it skips what is already there.
#
#   - the pinned nightly Rust toolchain with rust-src and llvm-tools (rust-toolchain.toml)
#   - LLVM 22: liboffload (runs kernels on GPUs) and llvm-22 (llvm-readelf for the tests)
#   - OpenMPI and libclang, for offload-mpi (the `mpi` crate generates its bindings with clang)
#   - ptxas, which assembles PTX into cubins: a CUDA installation's, else CUDA 13.0's from pip
#     (nvidia-cuda-nvcc; in a virtual environment where the system Python takes no packages),
#     and nvdisasm the same way (nvidia-cuda-nvdisasm), for `cargo offload inspect --emit sass`
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
for pkg in liboffload-22 llvm-22 libopenmpi-dev openmpi-bin libclang-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed" || missing+=("$pkg")
done
if [ ${#missing[@]} -gt 0 ]; then
  say "Debian packages: ${missing[*]}"
  as_root apt-get update -qq
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
fi

# ptxas (PTX to cubins) and nvdisasm (`cargo offload inspect --emit sass`): a CUDA
# installation's if there is one; else pip's, into the Python environment when it takes
# packages, else (Debian 12 and Ubuntu 24.04 keep their system Python "externally managed")
# into a virtual environment of cargo-offload's own, where `cargo offload` looks for them too.
venv="${XDG_DATA_HOME:-$HOME/.local/share}/cargo-offload/venv"
has_pip_tool() { # PYTHON TOOL
  "$1" -c "import nvidia, os, sys; sys.exit(0 if any(os.path.isfile(os.path.join(p, 'cu13/bin/$2')) for p in nvidia.__path__) else 1)" 2>/dev/null
}
pip_tool() { # TOOL ENV PACKAGE
  if [ -n "${!2:-}" ] || command -v "$1" >/dev/null 2>&1 || [ -x "/usr/local/cuda/bin/$1" ] ||
    has_pip_tool python3 "$1" || { [ -x "$venv/bin/python3" ] && has_pip_tool "$venv/bin/python3" "$1"; }; then
    :
  elif python3 -m pip install --quiet "$3" 2>/dev/null; then
    say "$1 (pip: $3)"
  else
    say "$1 (pip: $3, in $venv: this Python takes no packages)"
    if ! python3 -m venv "$venv" 2>/dev/null; then
      as_root apt-get update -qq
      as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv
      python3 -m venv "$venv"
    fi
    "$venv/bin/python3" -m pip install --quiet "$3"
  fi
}
pip_tool ptxas OFFLOAD_PTXAS nvidia-cuda-nvcc==13.0.88
pip_tool nvdisasm OFFLOAD_NVDISASM nvidia-cuda-nvdisasm==13.5.37

say "cargo-offload"
cargo install --quiet --locked --path cargo-offload
cargo offload --version

say "Miri's sysroot and cargo-fuzz (for the tests)"
cargo miri setup >/dev/null
command -v cargo-fuzz >/dev/null 2>&1 || cargo install --quiet --locked cargo-fuzz
