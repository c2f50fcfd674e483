#!/usr/bin/env bash
# Runs every GPU check on the GPU machine, in one go, and writes all logs to one folder.
# Needs only what scripts/gpu-bundle.sh put in .gpu-bundle/ and the .debs in .gpu-debs/.
#
# Usage: scripts/gpu-check.sh OUT_DIR
#   GPU_CHECK_QUICK=1: skip the benchmarks; GPU_CHECK_BANDWIDTH_ONLY=1: only the copy benchmark;
#   GPU_CHECK_NO_RAJAPERF=1: every benchmark but rajaperf-rs;
#   GPU_CHECK_QUICK=1 GPU_CHECK_RAJAPERF=1: correctness and rajaperf-rs, no other benchmark;
#   GPU_CHECK_RAJAPERF_KERNELS=A,B: only those kernels, and no large-size run
#   GPU_CHECK_PROFILE=A,B: also hardware counters of those rajaperf kernels (Nsight Compute)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-check.sh OUT_DIR}
mkdir -p "$out"
log="$out/gpu-check.log"
exec > >(tee "$log") 2>&1

echo "== machine"
date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv || true
echo "commit: $(cat .gpu-bundle/COMMIT 2>/dev/null || echo unknown)"

echo "== liboffload 22 from the carried Debian packages"
root=/tmp/offload-debs lib=/tmp/offload-lib
mkdir -p "$root" "$lib"
for f in .gpu-debs/*.deb; do dpkg -x "$f" "$root"; done
cp -L "$root"/usr/lib/x86_64-linux-gnu/libLLVMOffload.so.22.1 "$root"/usr/lib/x86_64-linux-gnu/libLLVM.so.22.1 "$lib"/
for _ in 1 2 3 4 5; do # add only the libraries the image lacks
  miss=$(LD_LIBRARY_PATH=$lib ldd "$lib"/*.so* 2>/dev/null | awk '/not found/{print $1}' | sort -u)
  [ -z "$miss" ] && break
  for m in $miss; do
    f=$(find "$root" -name "$m" | head -1)
    if [ -n "$f" ]; then cp -L "$f" "$lib"/; else echo "missing $m, not in the carried packages"; fi
  done
done
if ! ldconfig -p | grep -q 'libcuda\.so '; then # liboffload's CUDA plugin opens libcuda.so
  c1=$(ldconfig -p | awk '/libcuda\.so\.1 /{print $NF; exit}')
  [ -n "$c1" ] && ln -sf "$c1" "$lib"/libcuda.so
fi
export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

bin=.gpu-bundle/bin
[ -d "$bin" ] || tar -C .gpu-bundle -xJf .gpu-bundle/bin.tar.xz
nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)

bandwidth_bench() {
  echo "== benchmark: 1 GiB copy bandwidth, Rust (pageable and pinned) vs CUDA C++ pinned (same run)"
  local bw="$out/bandwidth.jsonl"
  : > "$bw"
  if [ -z "$nvcc" ] || ! "$nvcc" -O3 -o /tmp/bandwidth_cuda examples/cuda/bandwidth.cu; then
    echo "no nvcc: no bandwidth baseline"
    return
  fi
  for _ in 1 2; do
    OFFLOAD_QUIET=1 "$bin/bandwidth" 1024 >> "$bw"
    /tmp/bandwidth_cuda 1024 >> "$bw"
  done
  python3 - "$bw" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
def gbs(side, d, mem):
    return statistics.median(r["gb_per_s"] for r in rows if (r["side"], r["dir"], r["memory"]) == (side, d, mem))
for d in ("h2d", "d2h"):
    rust, cuda, page = gbs("rust", d, "pinned"), gbs("cuda", d, "pinned"), gbs("rust", d, "pageable")
    direct = gbs("rust", d, "pageable_direct")
    print(f"{d}: Rust pinned {rust:.1f} GB/s, CUDA pinned {cuda:.1f} GB/s (Rust/CUDA {rust/cuda:.3f}); Rust pageable staged {page:.1f} GB/s, direct {direct:.1f} GB/s (staged/direct {page/direct:.2f})")
PY
}

if [ -n "${GPU_CHECK_BANDWIDTH_ONLY:-}" ]; then
  bandwidth_bench
  exit
fi

failed=0 passed=0
check() { # NAME COMMAND...: run, record pass/fail
  local name=$1; shift
  echo "== $name: $*"
  if "$@"; then echo "-- PASS $name"; passed=$((passed + 1)); else echo "-- FAIL $name (exit $?)"; failed=$((failed + 1)); fi
}
export OFFLOAD_DEVICE=gpu OFFLOAD_DEBUG=1
check saxpy "$bin/saxpy"
check saxpy-odd-size "$bin/saxpy" 1000001
check vector_add "$bin/vector_add"
check kernels-tests "$bin/kernels" --test-threads=1
check trap-test "$bin/trap" --test-threads=1
check trap-async-test "$bin/trap_async" --test-threads=1
check multidim-tests "$bin/multidim" --test-threads=1
check buffer-tests "$bin/buffers" --test-threads=1
check atomics-tests "$bin/atomics" --test-threads=1
check partition-tests "$bin/partitions" --test-threads=1
check shared-memory-tests "$bin/shared" --test-threads=1
check report-tests "$bin/report" --test-threads=1
check preload-tests "$bin/preload" --test-threads=1
check warp-tests "$bin/warp" --test-threads=1
check scope-tests "$bin/scope" --test-threads=1
check memory-100k-cycles "$bin/memory" --test-threads=1 --nocapture
check blas-tests "$bin/blas" --test-threads=1
check saxpy-transfer-report env OFFLOAD_REPORT=1 "$bin/saxpy" 16777216
unset OFFLOAD_DEBUG
check no-library-is-an-error bash -c "! OFFLOAD_LIBRARY=/nonexistent/libLLVMOffload.so.22.1 $bin/saxpy 2>&1 | tee /dev/stderr | grep -q verified"
check cpu-forced env OFFLOAD_DEVICE=cpu "$bin/saxpy"
for example in stencil2d histogram dot matmul generic_axpy compact; do check "$example" "$bin/$example"; done
check pipeline-small "$bin/pipeline" 100000 3

if [ -n "${GPU_CHECK_QUICK:-}" ] && [ -z "${GPU_CHECK_RAJAPERF:-}" ]; then # correctness only
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
fi

if [ -z "${GPU_CHECK_QUICK:-}" ] || [ -n "${GPU_CHECK_LAUNCH:-}" ]; then
echo "== benchmark: launch latency and throughput, Rust through liboffload vs CUDA C++ (same run)"
bench="$out/launch-latency.jsonl"
: > "$bench"
if [ -n "$nvcc" ]; then
  "$nvcc" -O3 -arch=sm_90 -o /tmp/launch_latency_cuda examples/cuda/launch_latency.cu
  for round in 1 2 3; do # interleaved, so that both sides see the same machine state
    OFFLOAD_QUIET=1 "$bin/launch_latency" 2000 >> "$bench"
    /tmp/launch_latency_cuda 2000 >> "$bench"
  done
  python3 - "$bench" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
med = {side: statistics.median(r["median_us"] for r in rows if r["side"] == side and r["bench"] == "launch_latency") for side in ("rust", "cuda")}
print(f"launch+sync, empty kernel: Rust {med['rust']:.2f} us, CUDA {med['cuda']:.2f} us, ratio Rust/CUDA {med['rust']/med['cuda']:.3f}")
thr = {side: statistics.median(r["per_launch_us"] for r in rows if r["side"] == side and r["bench"] == "launch_throughput") for side in ("rust", "cuda")}
print(f"queued launches, two-buffer kernel: Rust {thr['rust']:.3f} us each, CUDA {thr['cuda']:.3f} us each, ratio Rust/CUDA {thr['rust']/thr['cuda']:.3f}")
PY
else
  echo "nvcc not found: no CUDA baseline"
fi
fi

if [ -z "${GPU_CHECK_QUICK:-}" ]; then
echo "== benchmark: GEMM through offload::blas vs cuBLAS from C (same run)"
check gemm-bench bash scripts/gpu-blas.sh "$out"

echo "== benchmark: the pipeline four ways (naive Interface A, scope, Interface C, hand-written buffers)"
OFFLOAD_QUIET=1 "$bin/pipeline" | tee "$out/pipeline.jsonl"

echo "== benchmark: bounds-checked x[i] vs get_unchecked in the same kernels (same run)"
OFFLOAD_QUIET=1 "$bin/bounds_check" | tee "$out/bounds-check.jsonl"

bandwidth_bench
fi

echo "== rajaperf-rs: safe Rust kernels vs RAJAPerf's CUDA C++ baselines (same run)"
if [ -n "${GPU_CHECK_NO_RAJAPERF:-}" ]; then
  echo "skipped (GPU_CHECK_NO_RAJAPERF)"
elif [ -x "$bin/rajaperf" ] && bash rajaperf-rs/cuda/build.sh > "$out/rajaperf-cuda-build.log" 2>&1; then
  mkdir -p "$out/rajaperf-default" "$out/rajaperf-large"
  export RAJAPERF_CUDA=rajaperf-rs/cuda/build/rajaperf-cuda
  check rajaperf-default "$bin/rajaperf" --npasses 3 ${GPU_CHECK_RAJAPERF_KERNELS:+--kernels "$GPU_CHECK_RAJAPERF_KERNELS"} \
    --out "$out/rajaperf-default" --plot
  # The host reference at 2^25 takes minutes per kernel: the large run covers tier 1 only.
  if [ -z "${GPU_CHECK_RAJAPERF_KERNELS:-}" ]; then
    check rajaperf-large timeout "${GPU_CHECK_LARGE_TIMEOUT:-420}" "$bin/rajaperf" --size 33554432 --npasses 1 \
      --kernels COPY,MUL,ADD,TRIAD,DAXPY,INIT3,MULADDSUB,IF_QUAD,HYDRO_1D,PRESSURE,FIR,LTIMES --out "$out/rajaperf-large" --plot
  fi
else
  echo "rajaperf-rs: no runner binary or the CUDA baseline did not build:"; tail -20 "$out/rajaperf-cuda-build.log"
  failed=$((failed + 1))
fi

if [ -n "${GPU_CHECK_PROFILE:-}" ]; then
  # Hardware counters of one repetition of each listed kernel, Rust and CUDA (rajaperf must
  # have run above, which built the CUDA helper).
  echo "== profile (Nsight Compute): ${GPU_CHECK_PROFILE}"
  ncu=$(command -v ncu || { [ -x /usr/local/cuda/bin/ncu ] && echo /usr/local/cuda/bin/ncu; } || true)
  if [ -n "$ncu" ]; then
    RAJAPERF_CUDA=rajaperf-rs/cuda/build/rajaperf-cuda timeout "${GPU_CHECK_PROFILE_TIMEOUT:-240}" "$ncu" \
      --target-processes all --csv --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,launch__registers_per_thread,sm__warps_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,smsp__cycles_active.avg \
      "$bin/rajaperf" --kernels "$GPU_CHECK_PROFILE" --npasses 1 --reps 1 > "$out/profile.csv" 2> "$out/profile.err"
    echo "ncu exit $?"; tail -5 "$out/profile.err"
    python3 - "$out/profile.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(l for l in open(sys.argv[1]) if not l.startswith("==")) if r]
if not rows:
    sys.exit("no profile rows")
head, table = rows[0], {}
k, m, v = head.index("Kernel Name"), head.index("Metric Name"), head.index("Metric Value")
for r in rows[1:]:
    table.setdefault((r[0], r[k].split("(")[0][-48:]), {})[r[m]] = r[v]
metrics = sorted({name for cols in table.values() for name in cols})
print("kernel | " + " | ".join(metrics))
for (_, name), cols in table.items():
    print(name + " | " + " | ".join(cols.get(x, "") for x in metrics))
PY
  else
    echo "no ncu on this machine"
  fi
fi

for extra in ${GPU_CHECK_EXTRA:-}; do check "$extra" "$bin/$extra"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
