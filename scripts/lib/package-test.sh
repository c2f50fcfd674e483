#!/usr/bin/env bash
# The published crates as a user gets them: `cargo package` (which builds each from its packaged
# sources), then cargo-offload installed from its packaged crate, then a new project outside
# this repository that depends on the packaged offload-rt — two binaries with a kernels module
# each — built with `cargo offload build --target-gpu sm_90,gfx90a --message-format json`.
# Checks the JSON, that each executable carries only its own kernels, and runs both (on the
# CPU backend where there is no GPU). Nothing in the project points into this repository: the
# packaged crates are unpacked into a scratch folder and stand in for the registry's through
# `[patch.crates-io]`.
#
# Usage: scripts/lib/package-test.sh   (run by scripts/test.sh)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
crates=(offload-wire offload-macros-backend offload-macros offload-rt cargo-offload)

echo "== cargo package (each crate built from its packaged sources)"
# (Offline throughout: every dependency is already in cargo's cache from the workspace's build.)
# (Earlier packages of the same version go first: verification and the unpacking below must
# see this tree's, and a crate that fails to package must not leave an older one standing in.)
# Cargo verifies the workspace's packages against each other through a local registry of
# them, unpacks that registry's crates under CARGO_HOME (a folder named `-<hash>`: a registry
# without a host) once, and takes what it built of them as done, as registry crates never
# change: a later run with the same versions would build against those stale copies. So
# their unpacked sources and their build products go too (`cargo clean -p` removes every build
# of the package, the workspace's included, which the steps below rebuild as they need).
rm -rf target/package
for c in "${crates[@]}" offload-mpi; do
  rm -rf "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$c-0.1.0" "${CARGO_HOME:-$HOME/.cargo}"/registry/cache/-*/"$c-0.1.0.crate"
done
cargo clean --offline --quiet $(printf -- '-p %s ' "${crates[@]}" offload-mpi)
if ! cargo package --offline --workspace --allow-dirty --exclude offload-tests --exclude offload-examples \
  --exclude rajaperf-rs --exclude null-liboffload --exclude shared-math > "$work/package.log" 2>&1; then
  cat "$work/package.log"
  echo "cargo package failed" >&2
  exit 1
fi
grep -E '^ *(Packaged|Verifying|warning)' "$work/package.log" || true
mkdir -p "$work/crates"
for c in "${crates[@]}"; do
  tar -xzf "target/package/$c-0.1.0.crate" -C "$work/crates"
done
patches=()
for c in "${crates[@]}"; do
  patches+=(--config "patch.crates-io.$c.path=\"$work/crates/$c-0.1.0\"")
done

echo "== cargo install cargo-offload from its packaged crate"
# (This checkout's target directory serves as the build cache: the same dependency versions.)
CARGO_TARGET_DIR=$root/target/package-test cargo install --offline --quiet --path "$work/crates/cargo-offload-0.1.0" \
  --root "$work/root" "${patches[@]}"
export PATH=$work/root/bin:$PATH

echo "== a new project outside the repository"
proj=$work/project
mkdir -p "$proj/src/bin"
cp rust-toolchain.toml "$proj/" # a project copies the toolchain file, as the README says
cat > "$proj/Cargo.toml" <<EOF
[package]
name = "outside"
version = "0.1.0"
edition = "2024"

[dependencies]
offload-rt = "0.1.0"

[patch.crates-io]
$(for c in "${crates[@]}"; do echo "$c = { path = \"$work/crates/$c-0.1.0\" }"; done)
EOF
for name in first second; do
  factor=$([ "$name" = first ] && echo 2 || echo 3)
  cat > "$proj/src/bin/$name.rs" <<EOF
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn ${name}_scale(x: &[u32], mut y: Region<u32>) {
        let i = y.index();
        if let Some(o) = y.mine() {
            *o = $factor * x[i];
        }
    }
}

fn main() {
    let dev = offload::Device::default().unwrap();
    let x: Vec<u32> = (0..1000).collect();
    let mut y = vec![0u32; 1000];
    gpu::${name}_scale::launch(&dev, 1000, &x, &mut y).unwrap();
    assert!(y.iter().zip(&x).all(|(a, b)| *a == $factor * b));
    println!("$name: verified on {dev}");
}
EOF
done
cp "$root/Cargo.lock" "$proj/Cargo.lock" # the same dependency versions, offline
(cd "$proj" && CARGO_TARGET_DIR=$proj/target cargo offload build --offline --target-gpu sm_90,gfx90a --message-format json \
  > "$work/messages.jsonl")
python3 - "$work/messages.jsonl" <<'PY'
import json, sys
messages = [json.loads(l) for l in open(sys.argv[1])]
exes = {m["label"]: m for m in messages if m["reason"] == "offload-executable"}
assert set(exes) == {"bin first", "bin second"}, exes
for label, m in exes.items():
    name = label.split()[1]
    assert m["kernels"] == [f"{name}_scale"], m
    assert m["targets"] == ["sm_90", "gfx90a"], m
images = [m for m in messages if m["reason"] == "offload-images"]
assert {m["arch"] for m in images} == {"sm_90", "gfx90a"}, images
assert messages[-1] == {"reason": "offload-build-finished", "success": True}, messages[-1]
assert any(m["reason"] == "compiler-artifact" for m in messages)
print(f"package test: {len(messages)} JSON messages; two executables, each with only its own kernel")
PY
for name in first second; do
  listing=$(cargo offload inspect "$proj/target/offload/host/debug/$name")
  kernels=$(grep -c '_scale$' <<< "$listing" || true)
  other=$([ "$name" = first ] && echo second || echo first)
  if grep -q "${other}_scale" <<< "$listing"; then
    echo "package test: $name carries $other's kernel"; exit 1
  fi
  [ "$kernels" -ge 1 ] || { echo "package test: $name carries no kernel of its own"; exit 1; }
  OFFLOAD_QUIET=1 "$proj/target/offload/host/debug/$name"
done
