//! The Rust toolchain and external tools the device compile needs, found once, with an
//! actionable message for whatever is missing.

use anyhow::{Context, Result, bail};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The nightly toolchain cargo-offload drives.
#[derive(Debug, Clone)]
pub struct Toolchain {
    /// `rustc -vV`, part of every device cache key.
    pub version: String,
    pub host: String,
    /// rustup's `llvm-tools` directory (`llvm-link`, `opt`, `llc`).
    pub llvm_bin: PathBuf,
}

impl Toolchain {
    pub fn detect(cwd: &Path) -> Result<Toolchain> {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let out = Command::new(&rustc)
            .arg("-vV")
            .current_dir(cwd)
            .output()
            .with_context(|| format!("failed to run `{} -vV`", rustc.to_string_lossy()))?;
        let version = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            bail!("`rustc -vV` failed: {}", String::from_utf8_lossy(&out.stderr));
        }
        let host = version
            .lines()
            .find_map(|l| l.strip_prefix("host: "))
            .context("`rustc -vV` printed no host triple")?
            .to_owned();
        if !version.contains("-nightly") && std::env::var_os("RUSTC_BOOTSTRAP").is_none() {
            bail!(
                "the device compile needs a nightly toolchain (for -Zbuild-std and the gpu-kernel ABI), but rustc is:\n  {}\n  \
                 help: add a rust-toolchain.toml with `channel = \"nightly-2026-05-20\"` and `components = [\"rust-src\", \"llvm-tools\"]`",
                version.lines().next().unwrap_or_default()
            );
        }
        let sysroot = Command::new(&rustc).args(["--print", "sysroot"]).current_dir(cwd).output()?;
        let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
        if !sysroot.join("lib/rustlib/src/rust/library/core").is_dir() {
            bail!(
                "the toolchain at {} has no `rust-src` component, which -Zbuild-std needs to build `core` for the GPU\n  \
                 help: rustup component add rust-src",
                sysroot.display()
            );
        }
        let llvm_bin = sysroot.join("lib/rustlib").join(&host).join("bin");
        if !llvm_bin.join("llvm-link").is_file() {
            bail!(
                "the toolchain at {} has no `llvm-tools` component, which links GPU bitcode (llvm-link, opt, llc)\n  \
                 help: rustup component add llvm-tools",
                sysroot.display()
            );
        }
        Ok(Toolchain { version, host, llvm_bin })
    }
}

/// `ptxas`, which turns PTX into a cubin: `OFFLOAD_PTXAS`, then `PATH`, the CUDA toolkit,
/// and pip's `nvidia-cuda-nvcc` package (in `python3`'s environment, or in the virtual
/// environment `scripts/setup.sh` makes where the system Python takes no packages).
pub fn find_ptxas() -> Option<PathBuf> {
    find_cuda_tool("ptxas", "OFFLOAD_PTXAS")
}

/// `nvdisasm`, which disassembles a cubin into SASS: found like [`find_ptxas`]
/// (`OFFLOAD_NVDISASM`; pip's package is `nvidia-cuda-nvdisasm`).
pub fn find_nvdisasm() -> Option<PathBuf> {
    find_cuda_tool("nvdisasm", "OFFLOAD_NVDISASM")
}

/// A CUDA tool: `$env`, then `PATH`, the CUDA toolkit, then pip's NVIDIA packages.
fn find_cuda_tool(tool: &str, env: &str) -> Option<PathBuf> {
    if let Some(p) = std::env::var_os(env) {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    if let Ok(p) = which::which(tool) {
        return Some(p);
    }
    let cuda_dirs = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(std::env::var_os)
        .map(PathBuf::from)
        .chain([PathBuf::from("/usr/local/cuda")]);
    if let Some(p) = cuda_dirs.map(|d| d.join("bin").join(tool)).find(|p| p.is_file()) {
        return Some(p);
    }
    // pip's nvidia-cuda-nvcc, in the default Python or in the virtual environment that
    // scripts/setup.sh makes where the system Python takes no packages.
    let data = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    let venv_python = data.map(|d| d.join("cargo-offload/venv/bin/python3")).filter(|p| p.is_file());
    [PathBuf::from("python3")].into_iter().chain(venv_python).find_map(|python| {
        let out = Command::new(python)
            .args(["-c", "import nvidia; print('\\n'.join(nvidia.__path__))"])
            .output()
            .ok()?;
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .flat_map(|dir| {
                ["cu13/bin", "cuda_nvcc/bin"].map(|sub| Path::new(dir.trim()).join(sub).join(tool))
            })
            .find(|p| p.is_file())
    })
}

/// The message for a build without `ptxas`.
pub const PTXAS_MISSING: &str = "ptxas not found: NVIDIA images carry PTX only, which the driver JIT-compiles when the program first loads it\n  \
    help: install it with `pip install nvidia-cuda-nvcc==13.0.88` or the CUDA toolkit, or set OFFLOAD_PTXAS to its path";
