#!/usr/bin/env bash
# Builds the rajaperf runner of each given git revision (a branch, a commit, or the working
# tree's `HEAD`) for sm_90 into .gpu-alt/rajaperf-<name>, for A/B runs on the GPU machine
# (scripts/gpu ab). Each revision is built in a temporary worktree with its own
# cargo-offload (a revision may change the device linker), sharing this checkout's target
# directory for the dependencies; the checkout itself is not touched.
#
# A runner speaks only to a CUDA baseline of its own protocol version (rajaperf-rs/src/protocol.rs),
# so each revision's baseline sources go to .gpu-alt/cuda-<name>/, and `scripts/gpu ab` builds
# and uses each side's own.
#
# Usage: scripts/gpu build-revs REV [REV...]
#   e.g. scripts/gpu build-revs main vol3d-together
# Then carry .gpu-alt to the GPU machine with .gpu-bundle and .gpu-debs, and run
#   scripts/gpu ab OUT .gpu-alt/rajaperf-main .gpu-alt/rajaperf-vol3d-together 3
set -euo pipefail
cd "$(dirname "$0")/../.."
[ $# -gt 0 ] || { echo "usage: scripts/gpu build-revs REV [REV...]" >&2; exit 2; }
root=$PWD
mkdir -p .gpu-alt
target=${CARGO_TARGET_DIR:-$root/target}
work=$(mktemp -d)
trap 'git -C "$root" worktree prune; rm -rf "$work"' EXIT
for rev in "$@"; do
  commit=$(git rev-parse --verify "$rev^{commit}")
  name=$(echo "$rev" | tr '/:~^' '----')
  tree="$work/$name"
  echo "== $rev ($commit) -> .gpu-alt/rajaperf-$name"
  git worktree add --detach --quiet "$tree" "$commit"
  (
    cd "$tree"
    export CARGO_TARGET_DIR=$target
    cargo build --release -p cargo-offload
    log=$(mktemp)
    "$target/release/cargo-offload" offload build --release -p rajaperf-rs --bin rajaperf --target-gpu sm_90 2>&1 |
      tee "$log"
    exe=$(grep -o 'Executable bin rajaperf (.*)' "$log" | sed 's/.*(\(.*\))/\1/')
    [ -n "$exe" ] || { echo "no rajaperf executable reported for $rev" >&2; exit 1; }
    cp "$exe" "$root/.gpu-alt/rajaperf-$name"
    # The launch benchmark too, for A/B of the runtime's per-launch cost.
    "$target/release/cargo-offload" offload build --release -p offload-examples --example launch_latency \
      --target-gpu sm_90 2>&1 | tee "$log"
    exe=$(grep -o 'Executable example launch_latency (.*)' "$log" | sed 's/.*(\(.*\))/\1/')
    [ -n "$exe" ] && cp "$exe" "$root/.gpu-alt/launch_latency-$name"
    rm -f "$log"
    # The revision's CUDA baseline sources: `scripts/gpu ab` builds them on the GPU machine for
    # this side, so that revisions of different protocol versions can be compared.
    rm -rf "$root/.gpu-alt/cuda-$name"
    mkdir -p "$root/.gpu-alt/cuda-$name"
    find rajaperf-rs/cuda -maxdepth 1 -type f -exec cp {} "$root/.gpu-alt/cuda-$name/" \;
  )
  strip --strip-unneeded ".gpu-alt/rajaperf-$name" ".gpu-alt/launch_latency-$name" 2>/dev/null || true
  # One line per name: a rebuilt name replaces its earlier line.
  { grep -v " $rev\$" .gpu-alt/REVISIONS 2>/dev/null || true; echo "$commit $rev"; } > .gpu-alt/REVISIONS.new
  mv .gpu-alt/REVISIONS.new .gpu-alt/REVISIONS
  git worktree remove --force "$tree"
done
# The checkout's own cargo-offload is the one other scripts use: put it back.
cargo build --release -p cargo-offload
ls -la .gpu-alt
