//! `cargo offload clean`: removes `<target dir>/offload` — the host build's executables (and,
//! with the shared cache off, its intermediate files and the device builds), the device-image
//! cache and the link records — and says how much it freed. Cargo's own outputs are `cargo clean`'s. With `--shared`, the
//! cache every project shares instead (device builds, the host build directory).

use crate::cli::CleanArgs;
use crate::context::Context;
use crate::ui;
use anyhow::{Context as _, Result};
use std::path::Path;

pub fn run(args: &CleanArgs) -> Result<()> {
    let dir = if args.shared {
        crate::context::cache_root().context(
            "the shared cache is off (`CARGO_OFFLOAD_CACHE=off`): everything is in the project's target directory",
        )?
    } else {
        Context::offload_dir_of(args.manifest_path.as_deref(), args.target_dir.as_deref())?
    };
    if !dir.exists() {
        ui::status("Clean", format!("nothing to remove ({} does not exist)", dir.display()));
        return Ok(());
    }
    let (files, bytes) = size(&dir);
    std::fs::remove_dir_all(&dir).with_context(|| format!("failed to remove {}", dir.display()))?;
    ui::status(
        "Removed",
        format!(
            "{} ({}, {:.1} MiB)",
            dir.display(),
            ui::count(files, "file"),
            bytes as f64 / (1 << 20) as f64
        ),
    );
    Ok(())
}

/// Files and bytes under `dir` (what cannot be read is not counted).
fn size(dir: &Path) -> (usize, u64) {
    let Ok(entries) = std::fs::read_dir(dir) else { return (0, 0) };
    entries.flatten().fold((0, 0), |(files, bytes), e| match e.file_type() {
        Ok(t) if t.is_dir() => {
            let (f, b) = size(&e.path());
            (files + f, bytes + b)
        }
        Ok(_) => (files + 1, bytes + e.metadata().map_or(0, |m| m.len())),
        Err(_) => (files, bytes),
    })
}
