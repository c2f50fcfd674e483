# Sourced by the GPU-machine subcommands of scripts/gpu (check, ab, launch-ab, blas, kernel-times):
# puts liboffload 22 from the carried Debian packages (.gpu-debs/) into /tmp/offload-lib and on
# the loader's path, and unpacks the bundle (.gpu-bundle/bin). Safe to source again in the same
# machine session: what is already in place is kept.
#   gpu_env_rajaperf_cuda LOG   builds RAJAPerf's CUDA baseline (rajaperf-rs/cuda/build.sh) if
#                               it is not built yet, and exports RAJAPERF_CUDA; fails without nvcc
#   gpu_env_nvcc                nvcc's path (on PATH or CUDA's default place), empty without it
#   gpu_env_launch_latency_cuda builds examples/cuda/launch_latency.cu, the CUDA side of the
#                               launch benchmarks, into /tmp/launch_latency_cuda; fails without nvcc
# Needs the repository root as the working directory.

gpu_env_lib=/tmp/offload-lib
if [ ! -e "$gpu_env_lib/libLLVMOffload.so.22.1" ]; then
  echo "== liboffload 22 from the carried Debian packages"
  gpu_env_root=/tmp/offload-debs
  mkdir -p "$gpu_env_root" "$gpu_env_lib"
  for f in .gpu-debs/*.deb; do dpkg -x "$f" "$gpu_env_root"; done
  cp -L "$gpu_env_root"/usr/lib/x86_64-linux-gnu/libLLVMOffload.so.22.1 \
    "$gpu_env_root"/usr/lib/x86_64-linux-gnu/libLLVM.so.22.1 "$gpu_env_lib"/
  for _ in 1 2 3 4 5; do # add only the libraries the image lacks
    miss=$(LD_LIBRARY_PATH=$gpu_env_lib ldd "$gpu_env_lib"/*.so* 2>/dev/null | awk '/not found/{print $1}' | sort -u)
    [ -z "$miss" ] && break
    for m in $miss; do
      f=$(find "$gpu_env_root" -name "$m" | head -1)
      if [ -n "$f" ]; then cp -L "$f" "$gpu_env_lib"/; else echo "missing $m, not in the carried packages"; fi
    done
  done
  if ! ldconfig -p | grep -q 'libcuda\.so '; then # liboffload's CUDA plugin opens libcuda.so
    c1=$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')
    [ -n "$c1" ] && ln -sf "$c1" "$gpu_env_lib"/libcuda.so
  fi
fi
if [[ ":${LD_LIBRARY_PATH:-}:" != *":$gpu_env_lib:"* ]]; then
  export LD_LIBRARY_PATH=$gpu_env_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
[ -d .gpu-bundle/bin ] || [ ! -f .gpu-bundle/bin.tar.xz ] || tar -C .gpu-bundle -xJf .gpu-bundle/bin.tar.xz

gpu_env_nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)

gpu_env_launch_latency_cuda() {
  [ -n "$gpu_env_nvcc" ] && "$gpu_env_nvcc" -O3 -arch=sm_90 -o /tmp/launch_latency_cuda examples/cuda/launch_latency.cu
}

gpu_env_rajaperf_cuda() { # LOG
  local built=rajaperf-rs/cuda/build/rajaperf-cuda
  if [ ! -x "$built" ] || [ ! -x rajaperf-rs/cuda/build/librajaperf_cuda.so ]; then
    bash rajaperf-rs/cuda/build.sh > "$1" 2>&1 || return 1
  fi
  export RAJAPERF_CUDA=$built
}
