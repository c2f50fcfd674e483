//! `cargo offload doctor` and `--target-gpu native` on this machine: the toolchain it runs
//! under is reported usable; a liboffload that cannot be loaded is a warning with the loader's
//! reason and what to install, not a failure, and makes `native` an error that says why.
//! (Against the stand-in liboffload, the doctor lists its GPU and `native` builds for its
//! sm_90: `scripts/lib/null-backend-tests.sh`.)

use std::process::Command;

fn doctor(library: Option<&str>) -> (bool, String) {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_cargo-offload"));
    cmd.args(["offload", "doctor"]).current_dir(env!("CARGO_MANIFEST_DIR"));
    if let Some(l) = library {
        cmd.env("OFFLOAD_LIBRARY", l);
    }
    let out = cmd.output().expect("cargo-offload runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn the_toolchain_is_reported_and_a_missing_liboffload_says_what_to_install() {
    let (ok, text) = doctor(Some("/nonexistent/libLLVMOffload.so.22.1"));
    assert!(ok, "only a missing toolchain fails the doctor:\n{text}");
    let line =
        |what: &str| text.lines().find(|l| l.trim_start().starts_with(what)).unwrap_or_default().to_owned();
    assert!(line("toolchain").contains(" ok ") && text.contains("rust-src and llvm-tools"), "{text}");
    let lib = line("liboffload");
    assert!(lib.contains("warn") && lib.contains("cannot open shared object file"), "{text}");
    assert!(text.contains("apt-get install liboffload-22"), "{text}");
    assert!(text.contains("CPU emulation backend"), "{text}");
    assert!(line("ptxas").contains(" ok ") || text.contains("pip install nvidia-cuda-nvcc"), "{text}");
}

#[test]
fn native_targets_need_a_gpu_that_liboffload_finds() {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-offload"))
        .args(["offload", "build", "--target-gpu", "native"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("OFFLOAD_LIBRARY", "/nonexistent/libLLVMOffload.so.22.1")
        .output()
        .expect("cargo-offload runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("--target-gpu native needs liboffload"), "{err}");
    assert!(err.contains("cannot open shared object file"), "{err}");
}
