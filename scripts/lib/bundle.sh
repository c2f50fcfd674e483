#!/usr/bin/env bash
# Builds, on a development machine (no GPU needed), everything the GPU check runs and puts
# it in .gpu-bundle/: the examples and the GPU test binaries, built by `cargo offload` with
# device images for sm_90 (and gfx90a, to check multi-vendor executables), plus the Debian
# packages that provide liboffload 22 on the GPU machine.
#
# Usage: scripts/gpu bundle [extra cargo-offload build flags]
set -euo pipefail
cd "$(dirname "$0")/../.."
bundle=.gpu-bundle
rm -rf "$bundle"
mkdir -p "$bundle/bin" .gpu-debs

cargo build --release -p cargo-offload
offload=target/release/cargo-offload
export CARGO=${CARGO:-cargo}

collect() { # copy the executables a `cargo offload` run reported
  grep -o 'Executable [a-z]* [A-Za-z0-9_-]* (.*)' | sed 's/.*(\(.*\))/\1/' | while read -r exe; do
    cp "$exe" "$bundle/bin/"
  done
}
"$offload" offload build --release --examples --target-gpu sm_90,gfx90a "$@" 2>&1 | tee "$bundle/build.log" | collect
# MPI: the heat example and offload-mpi's checks across ranks (the GPU machine has OpenMPI's
# runtime), and MPI's headers for building the CUDA C++ + MPI twin there.
"$offload" offload build --release -p offload-examples --features mpi --example mpi_heat --target-gpu sm_90,gfx90a "$@" 2>&1 | tee -a "$bundle/build.log" | collect
"$offload" offload test --release -p offload-mpi --test ranks --no-run --target-gpu sm_90 "$@" 2>&1 | tee -a "$bundle/build.log" | collect
mpi_include=$(mpicc --showme:incdirs 2>/dev/null | awk '{print $1}')
if [ -n "$mpi_include" ] && [ -f "$mpi_include/mpi.h" ]; then cp -r "$mpi_include" "$bundle/mpi-include"; fi
"$offload" offload build --release -p rajaperf-rs --bin rajaperf --target-gpu sm_90,gfx90a "$@" 2>&1 | tee -a "$bundle/build.log" | collect
# The tests record panic sites (tests/tests/device_panics.rs checks what a trap reports).
OFFLOAD_PANIC_SITES=kernel "$offload" offload test --release -p offload-tests --no-run --target-gpu sm_90,gfx90a "$@" 2>&1 | tee -a "$bundle/build.log" | collect
for t in "$bundle"/bin/*-*; do mv "$t" "${t%-*}"; done 2>/dev/null || true
# The panic tests once more with a failure path per source line (OFFLOAD_PANIC_SITES=line), as
# device_panics_line and trap_line.
OFFLOAD_PANIC_SITES=line "$offload" offload test --release -p offload-tests --test device_panics --test trap --no-run \
  --target-gpu sm_90 "$@" 2>&1 | tee -a "$bundle/build.log" |
  grep -o 'Executable [a-z]* [A-Za-z0-9_-]* (.*)' | sed 's/.*(\(.*\))/\1/' | while read -r exe; do
  name=$(basename "$exe"); cp "$exe" "$bundle/bin/${name%-*}_line"
done
# cargo-offload itself, for `cargo offload doctor` on the GPU machine (it has no Rust toolchain,
# which the doctor reports; the rest of its report is that machine's).
cp "$offload" "$bundle/bin/cargo-offload"
# The rajaperf kernels' sm_90 cubin, for the GPU check's SASS listings (GPU_CHECK_SASS).
# (Newest by modification time; `sort` reads all its input, so no writer dies of SIGPIPE.)
rajaperf_ptx=$(grep -l '__offload_rajaperf_' target/offload/cache/sm_90-*/sm_90.ptx 2>/dev/null |
  xargs -r stat -c '%Y %n' | sort -n | tail -1 | cut -d' ' -f2-)
if [ -n "$rajaperf_ptx" ]; then cp "$(dirname "$rajaperf_ptx")/sm_90.cubin" "$bundle/bin/rajaperf-sm_90.cubin"; fi
# The device images survive `strip` (the runtime finds them through a referenced symbol);
# stripped and compressed, the bundle stays small enough to carry to the GPU machine.
strip --strip-unneeded "$bundle"/bin/* 2>/dev/null || true
ls -la "$bundle/bin"
tar -C "$bundle" -cJf "$bundle/bin.tar.xz" bin && rm -rf "$bundle/bin"

if ! ls .gpu-debs/*.deb >/dev/null 2>&1; then
  (cd .gpu-debs && apt-get download liboffload-22 libllvm22 libz3-4)
fi
git rev-parse HEAD > "$bundle/COMMIT"
git diff --quiet HEAD || echo "(with uncommitted changes)" >> "$bundle/COMMIT"
ls -la "$bundle"
