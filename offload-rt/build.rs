//! Sets `cfg(offload_gpu)` when the runtime is compiled for a GPU target, so that the
//! source reads `#[cfg(offload_gpu)]` instead of repeating the list of GPU architectures.
fn main() {
    println!("cargo::rustc-check-cfg=cfg(offload_gpu)");
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    if arch == "nvptx64" || arch == "amdgpu" {
        println!("cargo::rustc-cfg=offload_gpu");
    }
}
