#!/usr/bin/env bash
# Builds the CUDA baselines on a machine with CUDA:
#   build/librajaperf_cuda.so   RAJAPerf's Base_CUDA kernels behind the C ABI of rajaperf_cuda.h
#   build/rajaperf-cuda         the helper process the runner talks to (finds the library
#                               next to itself)
#
# Usage: cuda/build.sh [OUT_DIR]                 (default: cuda/build; CUDA_ARCH=sm_90, NVCC=nvcc,
#                                                NVCC_FLAGS for extra flags such as -L<cudart dir>)
#        cuda/build.sh --host-stub [OUT_DIR]     the same driver over plain C++ loops, for testing
#                                                the protocol without CUDA (default: cuda/build-host)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cxx="${CXX:-c++}"
cxxflags=(-O2 -std=c++17 -Wall -Wextra)

if [ "${1:-}" = "--host-stub" ]; then
  out="${2:-$here/build-host}"
  mkdir -p "$out"
  "$cxx" "${cxxflags[@]}" -I"$here" -o "$out/rajaperf-cuda" \
    "$here/driver.cpp" "$here/harness.cpp" "$here/host_stub.cpp"
  echo "built $out/rajaperf-cuda (host stand-in, not a GPU baseline)"
  exit 0
fi

out="${1:-$here/build}"
nvcc="${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}"
arch="${CUDA_ARCH:-sm_90}"
mkdir -p "$out"
# reduce.cu includes CUB (its "cub" tunings), which ships with the CUDA toolkit; an nvcc
# without the toolkit's headers needs their place in NVCC_FLAGS (-I<dir>/include/cccl).
# -restrict: kernel pointer parameters are non-aliasing, as in RAJAPerf's CUDA builds.
# shellcheck disable=SC2086 # NVCC_FLAGS holds several flags
"$nvcc" -O3 -arch="$arch" -restrict -std=c++17 -shared -Xcompiler -fPIC ${NVCC_FLAGS:-} \
  -o "$out/librajaperf_cuda.so" \
  "$here/device.cu" "$here/stream_basic.cu" "$here/lcals_apps.cu" "$here/tier1b.cu" \
  "$here/reduce.cu" "$here/stencil.cu" "$here/dense.cu" "$here/harness.cpp"
"$cxx" "${cxxflags[@]}" -I"$here" -o "$out/rajaperf-cuda" "$here/driver.cpp" \
  -L"$out" -lrajaperf_cuda -Wl,-rpath,'$ORIGIN'
echo "built $out/librajaperf_cuda.so and $out/rajaperf-cuda ($arch)"
