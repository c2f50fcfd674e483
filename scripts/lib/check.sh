#!/usr/bin/env bash
# Runs every GPU check on the GPU machine, in one go, and writes all logs to one folder.
# Needs only what scripts/gpu bundle put in .gpu-bundle/ and the .debs in .gpu-debs/.
#
# Usage: scripts/gpu check OUT_DIR
#   GPU_CHECK_QUICK=1: skip the benchmarks (GPU_CHECK_LAUNCH=1, GPU_CHECK_HISTOGRAM=1, GPU_CHECK_NBODY=1, GPU_CHECK_SCAN=1, GPU_CHECK_SPMV=1, GPU_CHECK_SORT=1, GPU_CHECK_MPI=1 keep those); GPU_CHECK_BANDWIDTH_ONLY=1: only the copy benchmark;
#   GPU_CHECK_NO_RAJAPERF=1: every benchmark but rajaperf-rs;
#   GPU_CHECK_ONLY=a,b: of the correctness checks only those named (e.g. algorithms-tests,sort;
#     "none" for none), for a benchmark run that needs no full check;
#   GPU_CHECK_QUICK=1 GPU_CHECK_RAJAPERF=1: correctness and rajaperf-rs, no other benchmark;
#   GPU_CHECK_RAJAPERF_KERNELS=A,B: only those kernels, and no large-size run (unless one of
#     the two below selects it)
#   GPU_CHECK_RAJAPERF_RUNS=N: the default-size run N times, in separate processes, and their
#     per-kernel geometric means (scripts/lib/rajaperf-summary.py)
#   GPU_CHECK_PADS=L: the default-size run's paddings, one per pass (rajaperf --pad-mib; default
#     0,2,6,14 with its four passes: each kernel's time is averaged over four placements of
#     its arrays, on both sides; 0 for one placement)
#   GPU_CHECK_PROFILE=A,B: also hardware counters of those rajaperf kernels (Nsight Compute),
#     at the default size or GPU_CHECK_PROFILE_SIZE
#   GPU_CHECK_SASS=p,q: also the SASS of the rajaperf kernels, Rust and CUDA, whose names
#     contain one of these (case-insensitive) substrings, into OUT/sass/ with a table of
#     instruction counts by kind (static counts: what each thread may execute, not how often)
# rajaperf-rs at 2^25 (--size 33554432): by default the large run does tier 1, checked against
# the full-repetition host reference, into OUT/rajaperf-large. To cover all 47 kernels, each
# device call (600 s at most) does a part, with --verify-reps 1 (the accumulating kernels are
# checked element by element on a separate one-repetition pass; their full runs by checksum,
# Rust vs CUDA):
#   GPU_CHECK_LARGE_TIERS=T,...: the kernels of these tiers (1, 1b, 2, 3; 1b-a and 1b-b are the
#     two halves of 1b), into OUT/rajaperf-large-tier<T>[-<T>...];
#   GPU_CHECK_LARGE_KERNELS=A,B: these kernels, into OUT/rajaperf-large-$GPU_CHECK_LARGE_LABEL
#     (default label: custom);
#   GPU_CHECK_LARGE_ONLY=1: no default-size rajaperf run, only the large one;
#   GPU_CHECK_LARGE_NPASSES=N: passes of the large run (default 1; with 2 or more the variants
#     alternate which runs first, see rajaperf-rs/src/runner.rs);
#   GPU_CHECK_LARGE_TIMEOUT=S: the large run's limit in seconds (default 420); results.csv and
#     results.json are rewritten after every kernel, so a run cut short keeps what it finished.
# All 47 at 2^25 in three device calls (the correctness checks and the baseline build run in
# each, so the large run gets 380 of the 600 s):
#   GPU_CHECK_QUICK=1 GPU_CHECK_RAJAPERF=1 GPU_CHECK_LARGE_ONLY=1 GPU_CHECK_LARGE_TIMEOUT=380 GPU_CHECK_LARGE_TIERS=1,2,3 scripts/gpu check OUT1
#   GPU_CHECK_QUICK=1 GPU_CHECK_RAJAPERF=1 GPU_CHECK_LARGE_ONLY=1 GPU_CHECK_LARGE_TIMEOUT=380 GPU_CHECK_LARGE_TIERS=1b-a scripts/gpu check OUT2
#   GPU_CHECK_QUICK=1 GPU_CHECK_RAJAPERF=1 GPU_CHECK_LARGE_ONLY=1 GPU_CHECK_LARGE_TIMEOUT=380 GPU_CHECK_LARGE_TIERS=1b-b scripts/gpu check OUT3
# Host work per part at 2^25 with --verify-reps 1 (set-up, reference, copies, checks), measured
# with the cpu variant alone on a 2-core development machine: tier 1 90 s, tier 2 20 s, tier 3
# 30 s plus the dense products' references (about 50, 60 and 110 s there, a few seconds each on
# 16 cores), 1b-a 190 s (DIFF_PREDICT 130, most of it that machine's 23 GB running short: 12 s at
# 2^23), 1b-b 165 s (MATVEC_3D_STENCIL 60); a GPU run has two
# variants, on a 16-core host.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/gpu check OUT_DIR}
mkdir -p "$out"
log="$out/gpu-check.log"
exec > >(tee "$log") 2>&1

echo "== machine"
date -u; uname -a; nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv || true
echo "commit: $(cat .gpu-bundle/COMMIT 2>/dev/null || echo unknown)"

# shellcheck source=scripts/lib/gpu-env.sh
source scripts/lib/gpu-env.sh # liboffload on the loader path, the bundle unpacked
bin=.gpu-bundle/bin
nvcc=$gpu_env_nvcc

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

echo "== cargo offload doctor (the machine has no Rust toolchain: that line fails)"
[ -x "$bin/cargo-offload" ] && "$bin/cargo-offload" offload doctor | tee "$out/doctor.txt"

failed=0 passed=0
twins() { # NAME JSONL ARGS...: the example NAME and its CUDA twin examples/cuda/NAME.cu, built
  # here, in five interleaved rounds (both sides meet the same machine states), into JSONL
  local name=$1 jsonl=$2
  shift 2
  : > "$jsonl"
  [ -n "$nvcc" ] && "$nvcc" -O3 -arch=sm_90 -o "/tmp/${name}_cuda" "examples/cuda/$name.cu" || return 1
  for _ in 1 2 3 4 5; do
    OFFLOAD_QUIET=1 "$bin/$name" "$@" >> "$jsonl"
    "/tmp/${name}_cuda" "$@" >> "$jsonl"
  done
}
twins_ratio() { # LABEL JSONL FIELD: the medians of FIELD (µs) of the two sides and their ratio
  python3 - "$@" <<'PY'
import json, statistics, sys
label, path, field = sys.argv[1:4]
rows = [json.loads(l) for l in open(path) if l.startswith("{")]
med = {side: statistics.median(r[field] for r in rows if r["side"] == side) for side in ("rust", "cuda")}
print(f"{label}: Rust {med['rust']:.1f} us, CUDA {med['cuda']:.1f} us, Rust/CUDA {med['rust'] / med['cuda']:.3f}")
# Variants of the Rust side ("rust-X"), each against CUDA's of the same name ("cuda-X") where
# the twin has one (sort's pairs), else against the CUDA runs above (SpMV's clamped kernel).
sides = {r["side"] for r in rows}
for side in sorted(s for s in sides if s.startswith("rust-")):
    m = statistics.median(r[field] for r in rows if r["side"] == side)
    twin = "cuda-" + side[len("rust-"):]
    if twin in sides:
        c = statistics.median(r[field] for r in rows if r["side"] == twin)
        print(f"{label}, {side[len('rust-'):]}: Rust {m:.1f} us, CUDA {c:.1f} us, Rust/CUDA {m / c:.3f}")
    else:
        print(f"{label}, {side}: {m:.1f} us, /CUDA {m / med['cuda']:.3f}")
PY
}
check() { # NAME COMMAND...: run, record pass/fail (unless GPU_CHECK_ONLY leaves a correctness check out)
  local name=$1; shift
  if [ -z "${benchmarks:-}" ] && [ -n "${GPU_CHECK_ONLY:-}" ] && [[ ",$GPU_CHECK_ONLY," != *",$name,"* ]]; then return 0; fi
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
check device-panics-test "$bin/device_panics" --test-threads=1
# The same with a failure path per source line (built with OFFLOAD_PANIC_SITES=line): the
# exact site, no list of the function's others.
[ -x "$bin/device_panics_line" ] && check device-panics-line-test "$bin/device_panics_line" --test-threads=1
[ -x "$bin/trap_line" ] && check trap-line-test "$bin/trap_line" --test-threads=1
check kernel-print-test "$bin/kernel_print" --test-threads=1
check multidim-tests "$bin/multidim" --test-threads=1
check buffer-tests "$bin/buffers" --test-threads=1
check atomics-tests "$bin/atomics" --test-threads=1
check partition-tests "$bin/partitions" --test-threads=1
check shared-memory-tests "$bin/shared" --test-threads=1
check shared-atomics-tests "$bin/shared_atomics" --test-threads=1
check report-tests "$bin/report" --test-threads=1
check preload-tests "$bin/preload" --test-threads=1
check warp-tests "$bin/warp" --test-threads=1
check helper-tests "$bin/helpers" --test-threads=1
check scope-tests "$bin/scope" --test-threads=1
check soundness-tests "$bin/soundness" --test-threads=1
check memory-100k-cycles "$bin/memory" --test-threads=1 --nocapture
check blas-tests "$bin/blas" --test-threads=1
check fast-math-tests "$bin/fast_math" --test-threads=1 --nocapture
check algorithms-tests "$bin/algorithms" --test-threads=1
check saxpy-transfer-report env OFFLOAD_REPORT=1 "$bin/saxpy" 16777216
unset OFFLOAD_DEBUG
check no-library-is-an-error bash -c "! OFFLOAD_LIBRARY=/nonexistent/libLLVMOffload.so.22.1 $bin/saxpy 2>&1 | tee /dev/stderr | grep -q verified"
check cpu-forced env OFFLOAD_DEVICE=cpu "$bin/saxpy"
for example in stencil2d histogram dot matmul generic_axpy compact nbody scan spmv device_deps sort; do check "$example" "$bin/$example"; done
check pipeline-small "$bin/pipeline" 100000 3
# Its four timelines (offload::timeline): valid trace JSON with the expected events, the
# host-slice launches copying in and out around every launch (3 repetitions × 10 kernels).
check pipeline-timelines bash -c "OFFLOAD_QUIET=1 '$bin/pipeline' 100000 3 --timeline '$out/timeline' > /dev/null && python3 scripts/lib/check-trace.py '$out/timeline' 30"

# MPI on one GPU shared by 1, 2 and 4 ranks: offload-mpi's checks and the heat example (each run
# verified against a one-rank run).
mpirun_n() { mpirun --allow-run-as-root --oversubscribe -n "$@"; }
if command -v mpirun >/dev/null 2>&1 && [ -x "$bin/mpi_heat" ]; then
  for n in 2 4; do check "mpi-ranks-$n" mpirun_n "$n" "$bin/ranks"; done
  for n in 1 2 4; do check "mpi-heat-$n" mpirun_n "$n" "$bin/mpi_heat" 4096 4096 100 25; done
else
  echo "no mpirun or no mpi_heat in the bundle: no MPI checks"
fi

if [ -n "${GPU_CHECK_QUICK:-}" ] && [ -z "${GPU_CHECK_RAJAPERF:-}${GPU_CHECK_LAUNCH:-}${GPU_CHECK_HISTOGRAM:-}${GPU_CHECK_NBODY:-}${GPU_CHECK_SCAN:-}${GPU_CHECK_SPMV:-}${GPU_CHECK_SORT:-}${GPU_CHECK_MPI:-}" ]; then # correctness only
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
  exit
fi
benchmarks=1 # GPU_CHECK_ONLY selects correctness checks only: every benchmark below runs

if [ -z "${GPU_CHECK_QUICK:-}" ] || [ -n "${GPU_CHECK_LAUNCH:-}" ]; then
echo "== benchmark: launch latency and throughput, Rust through liboffload vs CUDA C++ (same run)"
bench="$out/launch-latency.jsonl"
: > "$bench"
if [ -n "$nvcc" ]; then
  gpu_env_launch_latency_cuda
  for round in 1 2 3; do # interleaved, so that both sides see the same machine state
    OFFLOAD_QUIET=1 "$bin/launch_latency" 2000 >> "$bench"
    /tmp/launch_latency_cuda 2000 >> "$bench"
  done
  python3 - "$bench" <<'PY' || { echo "-- FAIL launch-latency (a wrong reduction result)"; failed=$((failed + 1)); }
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
med = {side: statistics.median(r["median_us"] for r in rows if r["side"] == side and r["bench"] == "launch_latency") for side in ("rust", "cuda")}
print(f"launch+sync, empty kernel: Rust {med['rust']:.2f} us, CUDA {med['cuda']:.2f} us, ratio Rust/CUDA {med['rust']/med['cuda']:.3f}")
for bench, what in (("launch_throughput", "two-buffer kernel"), ("launch_throughput_wide", "five-buffer, four-scalar kernel")):
    thr = {side: statistics.median(r["per_launch_us"] for r in rows if r["side"] == side and r["bench"] == bench) for side in ("rust", "cuda")}
    print(f"queued launches, {what}: Rust {thr['rust']:.3f} us each, CUDA {thr['cuda']:.3f} us each, ratio Rust/CUDA {thr['rust']/thr['cuda']:.3f}")
# The reduction round trip (a 2,048-element sum, its result back on the host): CUDA as RAJAPerf
# does it, and the variants that tell the Rust path's differences apart.
rt = [r for r in rows if r["bench"].startswith("reduce_roundtrip")]
for side, bench in sorted({(r["side"], r["bench"]) for r in rt}):
    sel = [r for r in rt if r["side"] == side and r["bench"] == bench]
    print(f"{bench:<28} {side:<5} median {statistics.median(r['median_us'] for r in sel):6.2f} us over {len(sel)} processes, wrong results {sum(r.get('wrong', 0) for r in sel)}")
if any(r.get("wrong", 0) for r in rt):
    sys.exit("a reduction round trip gave a wrong result")
PY
else
  echo "nvcc not found: no CUDA baseline"
fi
fi

if [ -z "${GPU_CHECK_QUICK:-}" ] || [ -n "${GPU_CHECK_HISTOGRAM:-}" ]; then
echo "== benchmark: 256-bin histogram of 2^24 values, Rust vs CUDA C++ (shared-memory bins and global atomics; same run)"
hist="$out/histogram.jsonl"
if twins histogram "$hist" 16777216 200; then
  python3 - "$hist" <<'PY' || { echo "-- FAIL histogram-bench"; failed=$((failed + 1)); }
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
if not rows:
    sys.exit("no histogram results")
for kernel in ("shared", "global"):
    med = {side: statistics.median(r["us"] for r in rows if r["side"] == side and r["kernel"] == kernel) for side in ("rust", "cuda")}
    blocks = {side: next(r["blocks"] for r in rows if r["side"] == side and r["kernel"] == kernel) for side in ("rust", "cuda")}
    print(f"histogram, {kernel:<6}: Rust {med['rust']:8.1f} us ({blocks['rust']} blocks), CUDA {med['cuda']:8.1f} us ({blocks['cuda']} blocks), Rust/CUDA {med['rust'] / med['cuda']:.3f}")
PY
else
  echo "no nvcc, or examples/cuda/histogram.cu did not build: no histogram baseline"
fi
fi

twin_bench() { # GATE NAME LABEL FIELD TITLE ARGS...: the benchmark of example NAME against its CUDA
  # twin, when the check is not quick or GATE is set; reports the medians of FIELD and the ratio
  local gate=$1 name=$2 label=$3 field=$4 title=$5
  shift 5
  [ -z "${GPU_CHECK_QUICK:-}" ] || [ -n "$gate" ] || return 0
  echo "== benchmark: $title (same run)"
  if twins "$name" "$out/$name.jsonl" "$@"; then
    twins_ratio "$label" "$out/$name.jsonl" "$field" || { echo "-- FAIL $name-bench"; failed=$((failed + 1)); }
  else
    echo "no nvcc, or examples/cuda/$name.cu did not build: no $name baseline"
  fi
}
twin_bench "${GPU_CHECK_NBODY:-}" nbody "nbody, 65536 bodies" us_per_step \
  "n-body step of 65,536 bodies (f32, fast rsqrt), Rust vs CUDA C++ with rsqrtf" 65536 20
twin_bench "${GPU_CHECK_SORT:-}" sort "sort, 2^26 u32 keys" us \
  "radix sort of 2^26 u32 keys, Rust (offload::algorithms::sort_keys) vs CUB's DeviceRadixSort::SortKeys" 67108864 20
twin_bench "${GPU_CHECK_SPMV:-}" spmv "spmv, 2048^2 rows" us \
  "CSR SpMV, 2-D Laplacian on 2048^2 (f64, four lanes per row), Rust vs the same scheme in CUDA C++" 2048 50

# The 1- and 2-rank per-step time of the heat example against the CUDA C++ + MPI twin.
if command -v mpirun >/dev/null 2>&1 && [ -x "$bin/mpi_heat" ]; then
  if [ -z "${GPU_CHECK_QUICK:-}" ] || [ -n "${GPU_CHECK_MPI:-}" ]; then
    echo "== benchmark: mpi_heat 8192^2, 1 rank and 2 ranks on one GPU, Rust vs CUDA C++ + MPI (same run)"
    mpi_inc=$(mpicc --showme:incdirs 2>/dev/null | awk '{print $1}'); [ -f "$mpi_inc/mpi.h" ] || mpi_inc=.gpu-bundle/mpi-include
    libmpi=$(ldconfig -p | awk '/libmpi\.so\.40 /{print $NF; exit}')
    mpij="$out/mpi_heat.jsonl"; : > "$mpij"
    if [ -n "$nvcc" ] && [ -n "$libmpi" ] && [ -f "$mpi_inc/mpi.h" ] &&
      "$nvcc" -O3 -arch=sm_90 -I"$mpi_inc" -o /tmp/mpi_heat_cuda examples/cuda/mpi_heat.cu -Xlinker "$libmpi"; then
      for _ in 1 2 3; do
        for n in 1 2; do
          OFFLOAD_QUIET=1 mpirun_n "$n" "$bin/mpi_heat" 8192 8192 200 50 | grep '^{' >> "$mpij"
          mpirun_n "$n" /tmp/mpi_heat_cuda 8192 8192 200 50 | grep '^{' >> "$mpij"
        done
        # The halos exchanged after the interior instead of while it runs: what overlap hides.
        OFFLOAD_QUIET=1 mpirun_n 2 "$bin/mpi_heat" 8192 8192 200 50 serial | grep '^{' >> "$mpij"
      done
      python3 - "$mpij" <<'PY' || { echo "-- FAIL mpi-heat-bench"; failed=$((failed + 1)); }
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
serial = [r["per_step_us"] for r in rows if not r.get("overlap", True)]
rows = [r for r in rows if r.get("overlap", True)]
for ranks in sorted({r["ranks"] for r in rows}):
    med = {s: statistics.median(r["per_step_us"] for r in rows if r["side"] == s and r["ranks"] == ranks) for s in ("rust", "cuda")}
    res = {s: next(r["residual"] for r in rows if r["side"] == s and r["ranks"] == ranks) for s in ("rust", "cuda")}
    assert abs(res["rust"] - res["cuda"]) <= 1e-9 * abs(res["cuda"]), f"residuals differ: {res}"
    print(f"mpi_heat 8192^2, {ranks} rank(s) on one GPU: Rust {med['rust']:.1f} us/step, CUDA+MPI {med['cuda']:.1f} us/step, Rust/CUDA {med['rust'] / med['cuda']:.3f}")
    if ranks == 2 and serial:
        print(f"mpi_heat 8192^2, 2 ranks, Rust: halos exchanged while the interior computes {med['rust']:.1f} us/step, after it {statistics.median(serial):.1f} us/step")
PY
    else
      echo "no nvcc, libmpi.so.40 or mpi.h: no CUDA C++ + MPI baseline"
    fi
  fi
else
  echo "no mpirun or no mpi_heat in the bundle: no MPI checks"
fi

if [ -z "${GPU_CHECK_QUICK:-}" ] || [ -n "${GPU_CHECK_SCAN:-}" ]; then
echo "== benchmark: exclusive scan of 2^26 u32, Rust (decoupled look-back) vs CUB's DeviceScan::ExclusiveSum (same run)"
scanj="$out/scan.jsonl"
if twins scan "$scanj" 67108864 50; then
  python3 - "$scanj" <<'PY' || { echo "-- FAIL scan-bench"; failed=$((failed + 1)); }
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
med = {side: statistics.median(r["us"] for r in rows if r["side"] == side) for side in ("rust", "cuda")}
gbs = {side: statistics.median(r["gb_per_s"] for r in rows if r["side"] == side) for side in ("rust", "cuda")}
print(f"scan, 2^26 u32: Rust {med['rust']:.1f} us ({gbs['rust']:.0f} GB/s), CUB {med['cuda']:.1f} us ({gbs['cuda']:.0f} GB/s), Rust/CUB {med['rust'] / med['cuda']:.3f}")
lib = [r["us"] for r in rows if r["side"] == "rust-library"]
if lib:
    print(f"scan, 2^26 u32, offload::algorithms::exclusive_sum: {statistics.median(lib):.1f} us, Rust/CUB {statistics.median(lib) / med['cuda']:.3f}")
PY
else
  echo "no nvcc, or examples/cuda/scan.cu did not build: no scan baseline"
fi
fi

if [ -z "${GPU_CHECK_QUICK:-}" ]; then
echo "== benchmark: GEMM through offload::blas vs cuBLAS from C (same run)"
check gemm-bench bash scripts/lib/blas.sh "$out"

echo "== benchmark: the pipeline four ways (host slices, a scope, preloads, hand-written buffers)"
OFFLOAD_QUIET=1 "$bin/pipeline" | tee "$out/pipeline.jsonl"

echo "== benchmark: bounds-checked x[i] vs get_unchecked in the same kernels (same run)"
OFFLOAD_QUIET=1 "$bin/bounds_check" | tee "$out/bounds-check.jsonl"

bandwidth_bench
fi

echo "== rajaperf-rs: safe Rust kernels vs RAJAPerf's CUDA C++ baselines (same run)"
if [ -n "${GPU_CHECK_NO_RAJAPERF:-}" ] || { [ -n "${GPU_CHECK_QUICK:-}" ] && [ -z "${GPU_CHECK_RAJAPERF:-}" ]; }; then
  echo "skipped (GPU_CHECK_NO_RAJAPERF, or GPU_CHECK_QUICK without GPU_CHECK_RAJAPERF)"
elif [ -x "$bin/rajaperf" ] && gpu_env_rajaperf_cuda "$out/rajaperf-cuda-build.log"; then
  if [ -z "${GPU_CHECK_LARGE_ONLY:-}" ]; then
    # GPU_CHECK_RAJAPERF_RUNS=N: N separate runs (processes) into rajaperf-default,
    # rajaperf-default-2, ...: at this size a kernel's ratio moves by several per cent between
    # processes; the summary gives each kernel's geometric mean over the runs.
    runs=()
    for n in $(seq 1 "${GPU_CHECK_RAJAPERF_RUNS:-1}"); do
      dir="$out/rajaperf-default" && [ "$n" -gt 1 ] && dir="$out/rajaperf-default-$n"
      mkdir -p "$dir"
      check "rajaperf-default${dir##*rajaperf-default}" "$bin/rajaperf" --npasses 4 --pad-mib "${GPU_CHECK_PADS:-0,2,6,14}" \
        ${GPU_CHECK_RAJAPERF_KERNELS:+--kernels "$GPU_CHECK_RAJAPERF_KERNELS"} --out "$dir" --plot
      runs+=("$dir/results.csv")
    done
    python3 scripts/lib/rajaperf-summary.py "${runs[@]}" | tee "$out/rajaperf-default-summary.txt"
  fi
  # Large size (2^25). The full-repetition host reference of the accumulating kernels takes
  # minutes each there: the default covers tier 1 with it; a selected part uses --verify-reps 1.
  large_kernels="" large_dir="" large_args=()
  declare -A tier_kernels=(
    [1]=COPY,MUL,ADD,TRIAD,DAXPY,INIT3,MULADDSUB,IF_QUAD,HYDRO_1D,PRESSURE,FIR,LTIMES
    [1b]=EOS,FIRST_DIFF,INT_PREDICT,DIFF_PREDICT,PLANCKIAN,INIT_VIEW1D,COPY8,NESTED_INIT,FIRST_SUM,TRIDIAG_ELIM,GEN_LIN_RECUR,ENERGY,VOL3D,DEL_DOT_VEC_2D,ZONAL_ACCUMULATION_3D,MATVEC_3D_STENCIL
    # Tier 1b's arrays are the largest (DIFF_PREDICT and INT_PREDICT 14 and 13 slabs of 2^25,
    # MATVEC_3D_STENCIL and ENERGY 15): its host-side set-up, copies and checks take about as
    # long as the other three tiers together, so it also comes in two halves.
    [1b-a]=EOS,FIRST_DIFF,INT_PREDICT,DIFF_PREDICT,PLANCKIAN,INIT_VIEW1D,NESTED_INIT,FIRST_SUM
    [1b-b]=COPY8,TRIDIAG_ELIM,GEN_LIN_RECUR,ENERGY,VOL3D,DEL_DOT_VEC_2D,ZONAL_ACCUMULATION_3D,MATVEC_3D_STENCIL
    [2]=DOT,REDUCE_SUM,PI_REDUCE,TRAP_INT,PI_ATOMIC,DAXPY_ATOMIC,FIRST_MIN,REDUCE_STRUCT,MULTI_REDUCE,HISTOGRAM,NODAL_ACCUMULATION_3D,REDUCE3_INT
    [3]=HYDRO_2D,JACOBI_1D,JACOBI_2D,HEAT_3D,MAT_MAT_SHARED,GEMM,2MM
  )
  if [ -n "${GPU_CHECK_LARGE_KERNELS:-}" ]; then
    large_kernels=$GPU_CHECK_LARGE_KERNELS large_dir="$out/rajaperf-large-${GPU_CHECK_LARGE_LABEL:-custom}"
    large_args=(--verify-reps 1)
  elif [ -n "${GPU_CHECK_LARGE_TIERS:-}" ]; then
    IFS=, read -ra tiers <<< "$GPU_CHECK_LARGE_TIERS"
    suffix=""
    for t in "${tiers[@]}"; do
      if [ -z "${tier_kernels[$t]:-}" ]; then echo "unknown tier '$t' in GPU_CHECK_LARGE_TIERS (1, 1b, 1b-a, 1b-b, 2, 3)"; failed=$((failed + 1)); continue; fi
      large_kernels=${large_kernels:+$large_kernels,}${tier_kernels[$t]}
      suffix=${suffix:+$suffix-}$t
    done
    large_dir="$out/rajaperf-large-tier$suffix" large_args=(--verify-reps 1)
  elif [ -z "${GPU_CHECK_RAJAPERF_KERNELS:-}" ] && [ -z "${GPU_CHECK_LARGE_ONLY:-}" ]; then
    large_kernels=${tier_kernels[1]} large_dir="$out/rajaperf-large"
  fi
  if [ -n "$large_kernels" ]; then
    mkdir -p "$large_dir"
    check "rajaperf-large${large_dir##*rajaperf-large}" timeout "${GPU_CHECK_LARGE_TIMEOUT:-420}" "$bin/rajaperf" \
      --size 33554432 --npasses "${GPU_CHECK_LARGE_NPASSES:-1}" ${large_args[@]+"${large_args[@]}"} --kernels "$large_kernels" --out "$large_dir" --plot
    # The measured device copy bandwidth and the stream kernels' share of it (the cuda variant
    # measures it before the kernels; a baseline that cannot makes this check fail).
    check "rajaperf-large${large_dir##*rajaperf-large}-copy-bandwidth" python3 - "$large_dir/results.json" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
copy = report.get("copy_bandwidth")
if not copy:
    sys.exit("no copy_bandwidth in " + sys.argv[1])
print(f"device copy bandwidth: {copy['gb_per_s']:.1f} GB/s (cudaMemcpy D2D, 2 x {copy['elements']} doubles, best of {copy['trials']})")
for r in report["results"]:
    if r.get("fraction_of_copy_bandwidth") is not None:
        print(f"{r['kernel']:<14} {r['variant']:<5} {r['gb_per_s']:8.1f} GB/s  {100 * r['fraction_of_copy_bandwidth']:5.1f} % of copy")
PY
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
      "$bin/rajaperf" --kernels "$GPU_CHECK_PROFILE" ${GPU_CHECK_PROFILE_SIZE:+--size "$GPU_CHECK_PROFILE_SIZE" --verify-reps 1} \
      --npasses 1 --reps 1 --warmup-reps 0 --copy-bandwidth-size 0 > "$out/profile.csv" 2> "$out/profile.err"
    echo "ncu exit $?"; tail -5 "$out/profile.err"
    sed -i "s#$PWD/##g" "$out/profile.csv" # ncu names processes by absolute path
    python3 - "$out/profile.csv" <<'PY'
import csv, sys
lines = open(sys.argv[1]).read().splitlines()  # the runner's own table comes first
start = next((n for n, l in enumerate(lines) if l.startswith('"ID"')), len(lines))
rows = [r for r in csv.reader(lines[start:]) if r]
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

if [ -n "${GPU_CHECK_SASS:-}" ]; then
  echo "== SASS: ${GPU_CHECK_SASS}"
  cuobjdump=$(command -v cuobjdump || { [ -x /usr/local/cuda/bin/cuobjdump ] && echo /usr/local/cuda/bin/cuobjdump; } || true)
  if [ -n "$cuobjdump" ] && [ -f "$bin/rajaperf-sm_90.cubin" ] && [ -x rajaperf-rs/cuda/build/librajaperf_cuda.so ]; then
    mkdir -p "$out/sass"
    "$cuobjdump" -sass "$bin/rajaperf-sm_90.cubin" > /tmp/rust.sass
    "$cuobjdump" -sass rajaperf-rs/cuda/build/librajaperf_cuda.so > /tmp/cuda.sass
    python3 scripts/lib/sass-summary.py "$GPU_CHECK_SASS" "$out/sass" rust=/tmp/rust.sass cuda=/tmp/cuda.sass | tee "$out/sass/summary.txt"
  else
    echo "no cuobjdump, Rust cubin or CUDA baseline: no SASS"
  fi
fi

for extra in ${GPU_CHECK_EXTRA:-}; do check "$extra" "$bin/$extra"; done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
