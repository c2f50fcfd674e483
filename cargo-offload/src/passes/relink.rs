//! Pass 3: redo only the final link of each executable, with the device images embedded.
//! Nothing is recompiled: the link command pass 1 recorded is replayed with one more object.

use super::device::BuiltImage;
use super::host_meta::Executable;
use crate::context::Context;
use crate::{embed, linker, ui};
use anyhow::{Context as _, Result, bail};
use offload_wire::images::{self, Image};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::Command;

/// Embeds `built` into `exe`.
pub fn run(ctx: &Context, exe: &Executable, built: &[BuiltImage]) -> Result<()> {
    let image_refs: Vec<Image<'_>> = built
        .iter()
        .map(|b| Image {
            kind: b.kind,
            target: &b.target,
            arch: &b.arch,
            hash: &b.hash,
            kernels: b.kernels.iter().map(String::as_str).collect(),
            sites: b.sites.iter().map(|s| s.as_wire()).collect(),
            stack_bytes: b.stack_bytes,
            data: &b.data,
        })
        .collect();
    let container = images::write(&image_refs);
    let stamp = format!("{:x}", Sha256::digest(&container));
    let (record, dir) = linker::find_record(&ctx.links_dir(), &exe.path)?.with_context(|| {
        format!(
            "no recorded link for {} ({}): was it built by `cargo offload build`? Run `cargo clean` and build again",
            exe.label,
            exe.path.display()
        )
    })?;
    let stamp_file = dir.join("embedded.sha256");
    if std::fs::read_to_string(&stamp_file).ok().as_deref() == Some(stamp.as_str())
        && embedded_stamp_matches(&exe.path, &container)
    {
        return Ok(());
    }
    let object = dir.join("offload-images.o");
    embed::write_object(&container, &object)?;
    let mut cmd = Command::new(&record.linker);
    cmd.args(&record.args).arg(&object).current_dir(&record.cwd);
    ui::command(&cmd);
    let out =
        cmd.output().with_context(|| format!("failed to run the linker `{}`", record.linker.display()))?;
    if !out.status.success() {
        bail!(
            "failed to relink {} with its device images ({}):\n{}",
            exe.label,
            out.status,
            String::from_utf8_lossy(&out.stderr).trim_end()
        );
    }
    let linked = record.cwd.join(&record.output);
    if linked != exe.path {
        replace_with_link(&linked, &exe.path)?;
    }
    std::fs::write(&stamp_file, stamp)?;
    Ok(())
}

/// Whether `exe` already embeds exactly `container` (a relink since the stamp was written
/// would have changed it).
fn embedded_stamp_matches(exe: &Path, container: &[u8]) -> bool {
    crate::embed::embedded_container(exe).ok().flatten().as_deref() == Some(container)
}

/// Makes `uplifted` the same file as `linked`, as cargo does (hard link, else copy).
fn replace_with_link(linked: &Path, uplifted: &Path) -> Result<()> {
    let _ = std::fs::remove_file(uplifted);
    if std::fs::hard_link(linked, uplifted).is_err() {
        std::fs::copy(linked, uplifted)
            .with_context(|| format!("failed to copy to {}", uplifted.display()))?;
    }
    Ok(())
}
