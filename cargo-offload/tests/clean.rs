//! `cargo offload clean` removes `<target dir>/offload` and nothing else of the target
//! directory, and says so; with nothing to remove it says that.

use std::process::Command;

fn clean(target_dir: &std::path::Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_cargo-offload"))
        .args(["offload", "clean", "--target-dir"])
        .arg(target_dir)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo-offload runs");
    (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn clean_removes_the_offload_directory_only() {
    let dir = std::env::temp_dir().join(format!("offload-clean-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("offload/cache/sm_90-x")).unwrap();
    std::fs::write(dir.join("offload/cache/sm_90-x/sm_90.ptx"), vec![0u8; 4096]).unwrap();
    std::fs::create_dir_all(dir.join("release")).unwrap();
    std::fs::write(dir.join("release/keep"), b"cargo's").unwrap();
    let (ok, said) = clean(&dir);
    assert!(ok, "{said}");
    assert!(said.contains("Removed") && said.contains("1 file"), "{said}");
    assert!(!dir.join("offload").exists());
    assert!(dir.join("release/keep").exists(), "cargo's own outputs stay");
    let (ok, said) = clean(&dir);
    assert!(ok && said.contains("nothing to remove"), "{said}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn clean_shared_removes_the_shared_cache_and_nothing_of_the_project() {
    let dir = std::env::temp_dir().join(format!("offload-clean-shared-{}", std::process::id()));
    let cache = dir.join("cache");
    std::fs::create_dir_all(cache.join("host/0123456789abcdef/debug")).unwrap();
    std::fs::write(cache.join("host/0123456789abcdef/debug/lib.rlib"), vec![0u8; 100]).unwrap();
    std::fs::create_dir_all(dir.join("target/offload")).unwrap();
    let run = |env: &str| {
        let out = Command::new(env!("CARGO_BIN_EXE_cargo-offload"))
            .args(["offload", "clean", "--shared"])
            .env("CARGO_OFFLOAD_CACHE", env)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .output()
            .expect("cargo-offload runs");
        (out.status.success(), String::from_utf8_lossy(&out.stderr).into_owned())
    };
    let (ok, said) = run(cache.to_str().unwrap());
    assert!(ok && said.contains("Removed") && said.contains("1 file"), "{said}");
    assert!(!cache.exists());
    assert!(dir.join("target/offload").exists(), "the project's files stay");
    let (ok, said) = run("off");
    assert!(!ok && said.contains("the shared cache is off"), "{said}");
    std::fs::remove_dir_all(&dir).unwrap();
}
