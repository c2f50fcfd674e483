#!/usr/bin/env bash
# Variants of one example against the bundle's build of it and its CUDA twin, in interleaved
# rounds (every round runs every side once, so all meet the same machine states): what a
# tuning of a library kernel (tile sizes, launch bounds) is chosen from. Each variant is the
# example rebuilt with the change, stripped and packed by the development machine:
#   target/release/cargo-offload offload build --release -p offload-examples --example sort --target-gpu sm_90
#   mkdir -p .gpu-alt/variants && strip --strip-unneeded -o .gpu-alt/variants/sort_12_3 \
#     target/offload/host/release/examples/sort     (once per variant, after each change)
#   tar -C .gpu-alt -cJf .gpu-alt/variants.tar.xz variants && rm -rf .gpu-alt/variants
# (packed, because carried executables count against what the GPU machine receives).
# On the GPU machine, after scripts/lib/gpu-env.sh's set-up (it sources it):
#   scripts/gpu twins-ab OUT NAME ROUNDS [ARGS...]
#   e.g. scripts/gpu twins-ab OUT sort 3 67108864 20
# first runs every variant NAME_* at the sizes in TWINS_AB_CHECK_SIZES (default: 1 1000 4097
# 3145733, with 0 repetitions: the example's own check against the host), then ROUNDS rounds of
# the bundle's NAME, each variant and examples/cuda/NAME.cu built here, all with ARGS. Every
# JSON line the example prints gets a "v" field naming its side (`base`: the bundle's build);
# OUT/NAME.jsonl has them all, and the table printed has each side's median per "side" field
# and its ratio to the CUDA twin's (`cuda-X` for a Rust `rust-X`).
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/gpu twins-ab OUT NAME ROUNDS [ARGS...]}
name=${2:?example name} rounds=${3:?rounds}
shift 3
mkdir -p "$out"
# shellcheck source=scripts/lib/gpu-env.sh
source scripts/lib/gpu-env.sh
[ -f .gpu-alt/variants.tar.xz ] && tar -C .gpu-alt -xJf .gpu-alt/variants.tar.xz
shopt -s nullglob
variants=(.gpu-alt/variants/"$name"_*)
[ ${#variants[@]} -gt 0 ] || { echo "no variants .gpu-alt/variants/${name}_* (see this script's top)"; exit 1; }
[ -n "$gpu_env_nvcc" ] && "$gpu_env_nvcc" -O3 -arch=sm_90 -o "/tmp/${name}_cuda" "examples/cuda/$name.cu" ||
  { echo "no nvcc, or examples/cuda/$name.cu did not build"; exit 1; }
failed=0
for v in "${variants[@]}"; do
  for n in ${TWINS_AB_CHECK_SIZES:-1 1000 4097 3145733}; do
    if ! OFFLOAD_QUIET=1 "$v" "$n" 0 > "$out/check.log" 2>&1; then
      echo "FAIL ${v##*/} at $n:"; tail -5 "$out/check.log"; failed=$((failed + 1))
    fi
  done
done
echo "== checks: $failed failed"
jsonl="$out/$name.jsonl"; : > "$jsonl"
tag() { sed "s/^{/{\"v\":\"$1\",/" | grep '^{'; }
for _ in $(seq "$rounds"); do
  OFFLOAD_QUIET=1 ".gpu-bundle/bin/$name" "$@" | tag base >> "$jsonl"
  for v in "${variants[@]}"; do OFFLOAD_QUIET=1 "$v" "$@" | tag "${v##*/}" >> "$jsonl"; done
  "/tmp/${name}_cuda" "$@" | tag cuda >> "$jsonl"
done
python3 - "$jsonl" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
by = {}
for r in rows:
    by.setdefault((r["v"], r["side"]), []).append(r["us"])
cuda = {side: statistics.median(us) for (v, side), us in by.items() if v == "cuda"}
for (v, side), us in sorted(by.items()):
    if v == "cuda":
        continue
    twin = cuda.get(side.replace("rust", "cuda", 1))
    med = statistics.median(us)
    ratio = f", /CUDA {med / twin:.3f}" if twin else ""
    print(f"{v:<14} {side:<12} {med:10.1f} us (n={len(us)}){ratio}")
for side, med in sorted(cuda.items()):
    print(f"{'cuda':<14} {side:<12} {med:10.1f} us")
PY
exit $((failed > 0))
