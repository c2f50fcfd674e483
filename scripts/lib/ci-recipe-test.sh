#!/usr/bin/env bash
# The commands of docs/ci.md's recipe, in this repository: one build per GPU architecture of
# its matrix (sm_80, sm_90, gfx90a, gfx942) with --locked and --message-format json, each
# checked to carry images for that architecture only, then the tests on the CPU backend.
#
# Usage: scripts/lib/ci-recipe-test.sh   (run by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -q -p cargo-offload
offload=target/release/cargo-offload
for gpu in sm_80 sm_90 gfx90a gfx942; do
  "$offload" offload build --locked --release -p offload-examples --example saxpy --target-gpu "$gpu" \
    --message-format json > "target/ci-recipe-$gpu.jsonl"
  python3 - "target/ci-recipe-$gpu.jsonl" "$gpu" <<'PY'
import json, sys
path, gpu = sys.argv[1:3]
messages = [json.loads(l) for l in open(path)]
images = [m for m in messages if m["reason"] == "offload-images"]
assert images and all(m["arch"] == gpu for m in images), images
exe = [m for m in messages if m["reason"] == "offload-executable"]
assert len(exe) == 1 and exe[0]["targets"] == [gpu] and exe[0]["kernels"], exe
assert messages[-1] == {"reason": "offload-build-finished", "success": True}, messages[-1]
print(f"ci recipe, {gpu}: {exe[0]['label']} with {', '.join(exe[0]['kernels'])} for {gpu}")
PY
  # (Captured first: `grep -q` leaving a pipe early would break the writer's output.)
  listing=$("$offload" offload inspect target/offload/host/release/examples/saxpy)
  grep -q "$gpu" <<< "$listing" || { echo "ci recipe: the saxpy executable carries no $gpu image"; exit 1; }
done
# The CPU-backend tests of the recipe's second job (a test binary of this repository's).
"$offload" offload test --locked -p offload-tests --test kernels
