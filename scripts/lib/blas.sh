#!/usr/bin/env bash
# GEMM benchmark on the GPU machine: offload::blas::gemm (examples/gemm.rs, through cuBLAS)
# against cuBLAS called directly from C (examples/cuda/gemm_cublas.cu), in the same run, with
# the same cuBLAS library; f32 and f64, square sizes. Also runs the gemm example (kernels and
# BLAS on the same device data, verified).
#
# Usage: scripts/gpu blas OUT_DIR [sizes...]   (default sizes: 1024 2048 4096 8192)
#   Expects what scripts/gpu bundle built in .gpu-bundle/bin (GPU_BLAS_BIN overrides) and
#   liboffload 22 from the carried packages (scripts/lib/gpu-env.sh sets it up when it is not yet).
#   Writes OUT_DIR/gemm.jsonl (every measurement) and OUT_DIR/gemm-summary.txt; exits non-zero
#   when the example fails or our overhead at 4096³ exceeds 2% (GPU_BLAS_LIMIT, in %).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/gpu blas OUT_DIR [sizes...]}
shift
sizes=${*:-1024 2048 4096 8192}
bin=${GPU_BLAS_BIN:-.gpu-bundle/bin}
mkdir -p "$out"
# shellcheck source=scripts/lib/gpu-env.sh
source scripts/lib/gpu-env.sh

echo "== cuBLAS on this machine"
ldconfig -p | grep -E 'libcublas(Lt)?\.so' || echo "(none in the ld cache)"
ls -l /usr/local/cuda*/lib64/libcublas.so* /usr/local/cuda*/targets/*/lib/libcublas.so* \
  /usr/lib/x86_64-linux-gnu/libcublas.so* 2>/dev/null || true

nvcc=$(command -v nvcc || { [ -x /usr/local/cuda/bin/nvcc ] && echo /usr/local/cuda/bin/nvcc; } || true)
if [ -z "$nvcc" ]; then
  echo "nvcc not found: no cuBLAS baseline"
  exit 1
fi
cuda=$(dirname "$(dirname "$(readlink -f "$nvcc")")")
baseline=/tmp/gemm_cublas
echo "== building the cuBLAS baseline with $nvcc"
if ! "$nvcc" -O3 -o "$baseline" examples/cuda/gemm_cublas.cu -L"$cuda/lib64" -Xlinker -rpath -Xlinker "$cuda/lib64" -lcublas; then
  echo "the baseline did not build (cublas_v2.h and libcublas.so come with the toolkit's cuBLAS)"
  exit 1
fi
# The Rust side loads the same library the baseline links.
cublas=$(ldd "$baseline" | awk '/libcublas\.so/ {print $3; exit}')
echo "baseline links $cublas"
[ -n "$cublas" ] && [ -e "$cublas" ] && export OFFLOAD_CUBLAS=$cublas

failed=0
echo "== gemm example (kernels and BLAS on the same device data, verified)"
if ! OFFLOAD_DEVICE=gpu "$bin/gemm"; then failed=1; fi

echo "== a missing cuBLAS is an error that says what to install"
said=$(OFFLOAD_CUBLAS=/nonexistent/libcublas.so.13 OFFLOAD_DEVICE=gpu "$bin/gemm" 2>&1)
echo "$said"
if grep -q "apt-get install libcublas" <<<"$said" && ! grep -q verified <<<"$said"; then echo "-- PASS"; else echo "-- FAIL"; failed=1; fi

echo "== benchmark: sizes $sizes"
jsonl="$out/gemm.jsonl"
: > "$jsonl"
for round in 1 2; do # interleaved, so that both sides see the same machine state
  echo "-- round $round: Rust"
  OFFLOAD_QUIET=1 OFFLOAD_DEVICE=gpu "$bin/gemm" bench $sizes | tee -a "$jsonl" || failed=1
  echo "-- round $round: cuBLAS from C"
  "$baseline" $sizes | tee -a "$jsonl" || failed=1
done

python3 - "$jsonl" "${GPU_BLAS_LIMIT:-2}" <<'PY' | tee "$out/gemm-summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip().startswith("{")]
limit = float(sys.argv[2])
def med(side, typ, n, mode=None):
    v = [r["median_ms"] for r in rows if r["what"] == "gemm" and r["side"] == side and r["type"] == typ
         and r["n"] == n and r.get("mode") == mode]
    return statistics.median(v) if v else None
lib = next((r["library"] for r in rows if r.get("library")), "?")
print(f"GEMM C = A·B, square, TFLOP/s (median per call; Rust through {lib})")
print(f"{'type':<5} {'n':>6} {'Rust':>9} {'C sync':>9} {'C async':>9} {'Rust/C sync':>12} {'Rust/C async':>13}")
bad = []
for typ in ("f32", "f64"):
    for n in sorted({r["n"] for r in rows if r["what"] == "gemm" and r["type"] == typ}):
        rust, sync, asyn = med("rust", typ, n), med("cuda", typ, n, "sync"), med("cuda", typ, n, "async")
        if None in (rust, sync, asyn):
            print(f"{typ:<5} {n:>6} missing measurements"); bad.append((typ, n)); continue
        tf = lambda ms: 2 * n**3 / (ms / 1e3) / 1e12
        print(f"{typ:<5} {n:>6} {tf(rust):>9.2f} {tf(sync):>9.2f} {tf(asyn):>9.2f} {rust/sync:>12.4f} {rust/asyn:>13.4f}")
        if n == 4096 and (rust / sync - 1) * 100 > limit:
            bad.append((typ, n))
lat = {r["side"]: r for r in rows if r["what"] == "latency"}
if "rust" in lat and "cuda" in lat:
    r, c = lat["rust"], lat["cuda"]
    print(f"fixed cost of a call (1×1×1, result ready on return): Rust {r['gemm_1x1x1_us']:.1f} us, C {c['gemm_1x1x1_us']:.1f} us; "
          f"ordering with the queue (idle queue sync) {r['idle_sync_us']:.1f} us")
print(f"overhead limit at 4096^3: {limit}% against C with a sync per call: " + ("FAIL " + str(bad) if bad else "PASS"))
sys.exit(1 if bad else 0)
PY
[ "${PIPESTATUS[0]}" -eq 0 ] || failed=1
exit $failed
