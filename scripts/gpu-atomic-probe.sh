#!/usr/bin/env bash
# Builds and runs scripts/probes/atomic_contention.cu on the GPU machine (needs nvcc): the
# block-atomic reductions' cost by where the result lies and over how many addresses it is
# spread. Writes OUT/atomic-contention.jsonl and prints a summary.
#
# Usage: scripts/gpu-atomic-probe.sh OUT
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: gpu-atomic-probe.sh OUT}
mkdir -p "$out"
nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
"$nvcc" -O3 -arch=sm_90 -o /tmp/atomic_contention scripts/probes/atomic_contention.cu || exit 1
/tmp/atomic_contention > "$out/atomic-contention.jsonl" || exit 1
python3 - "$out/atomic-contention.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
for k in ("atomics_only", "dot"):
    one = [r["us_per_launch"] for r in rows if r["kernel"] == k and r["spread"] == 1]
    print(f"{k}: one address at {len(one)} places: {min(one):.1f}-{max(one):.1f} us per launch")
    for r in rows:
        if r["kernel"] == k and r["spread"] > 1:
            print(f"{k}: spread over {r['spread']:3d} addresses {r['stride_bytes']:3d} bytes apart: {r['us_per_launch']:.1f} us")
PY
