//! `cargo offload inspect --emit ptx,sass,asm`: an executable's device code as text files, for
//! reading what the compiler made of a kernel.

use crate::cli::Emit;
use anyhow::{Context as _, Result, bail};
use offload_wire::images::{Image, ImageKind};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Writes the `kinds` of device code of `images` into `dir`, named after `executable`;
/// returns the files written. A kind whose images the executable lacks, or whose tool is not
/// installed, is an error that says so (and what to install).
pub fn emit(executable: &Path, images: &[Image<'_>], kinds: &[Emit], dir: &Path) -> Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
    let stem =
        executable.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "image".into());
    let mut written = Vec::new();
    for &kind in kinds {
        let (image_kind, ext) = match kind {
            Emit::Ptx => (ImageKind::Ptx, "ptx"),
            Emit::Sass => (ImageKind::Cubin, "sass"),
            Emit::Asm => (ImageKind::Hsaco, "s"),
        };
        let chosen: Vec<&Image<'_>> = images.iter().filter(|i| i.kind == image_kind).collect();
        if chosen.is_empty() {
            bail!("{} carries no {image_kind} image, so there is no {ext} to emit", executable.display());
        }
        for image in chosen {
            let text = match kind {
                Emit::Ptx => image.data.strip_suffix(b"\0").unwrap_or(image.data).to_vec(),
                Emit::Sass => disassemble_cubin(image)?,
                Emit::Asm => disassemble_code_object(image)?,
            };
            let path = dir.join(format!("{stem}.{}.{ext}", image.arch));
            std::fs::write(&path, text).with_context(|| format!("failed to write {}", path.display()))?;
            written.push(path);
        }
    }
    Ok(written)
}

/// Runs `tool` on `data` written to a temporary file named `*.suffix`; its stdout.
fn run_on(mut cmd: Command, data: &[u8], suffix: &str) -> Result<Vec<u8>> {
    let file =
        tempfile::Builder::new().suffix(suffix).tempfile().context("failed to make a temporary file")?;
    std::fs::write(file.path(), data)
        .with_context(|| format!("failed to write {}", file.path().display()))?;
    cmd.arg(file.path());
    let program = cmd.get_program().to_string_lossy().into_owned();
    let out = cmd.output().with_context(|| format!("failed to run {program}"))?;
    if !out.status.success() {
        bail!("{program} failed: {}", String::from_utf8_lossy(&out.stderr).trim_end());
    }
    Ok(out.stdout)
}

fn disassemble_cubin(image: &Image<'_>) -> Result<Vec<u8>> {
    let nvdisasm = crate::toolchain::find_nvdisasm().context(
        "emitting SASS needs `nvdisasm`\n  help: install it with `pip install nvidia-cuda-nvdisasm` or the CUDA toolkit, or set OFFLOAD_NVDISASM to its path",
    )?;
    let mut cmd = Command::new(nvdisasm);
    // `-c`: only the code; `-g`: with the PTX lines where the cubin has them.
    cmd.args(["-c", "-g"]);
    run_on(cmd, image.data, ".cubin")
}

fn disassemble_code_object(image: &Image<'_>) -> Result<Vec<u8>> {
    let objdump = llvm_objdump().context(
        "emitting AMD assembly needs `llvm-objdump`\n  help: `rustup component add llvm-tools` (the toolchain's), or install LLVM",
    )?;
    let mut cmd = Command::new(objdump);
    cmd.args(["-d", "--no-show-raw-insn", &format!("--mcpu={}", image.arch)]);
    run_on(cmd, image.data, ".hsaco")
}

/// The toolchain's `llvm-objdump` (rustup's `llvm-tools`), else one on `PATH`.
fn llvm_objdump() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    crate::toolchain::Toolchain::detect(&cwd)
        .ok()
        .map(|t| t.llvm_bin.join("llvm-objdump"))
        .filter(|p| p.is_file())
        .or_else(|| which::which("llvm-objdump").ok())
}
