//! `cargo offload inspect`: what device images and kernels modules an executable carries.

use crate::cli::InspectArgs;
use anyhow::{Context as _, Result};
use offload_wire::{cubin, images};
use std::path::Path;

/// A kernel's registers and static shared memory, where its image records them (a cubin).
fn resources(image: &images::Image<'_>, kernel: &str) -> Option<cubin::KernelResources> {
    (image.kind == images::ImageKind::Cubin)
        .then(|| cubin::kernel_resources(image.data, kernel).ok().flatten())?
}

pub fn run(args: &InspectArgs) -> Result<()> {
    let mut out = String::new();
    listing(args, &mut out)?;
    // A reader that stops early (`| head`, `| grep -q`) is not an error.
    match std::io::Write::write_all(&mut std::io::stdout().lock(), out.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        other => other.context("failed to write the listing"),
    }
}

fn listing(args: &InspectArgs, out: &mut String) -> Result<()> {
    use std::fmt::Write as _;
    let container = crate::embed::embedded_container(&args.executable)?;
    let records = crate::passes::host_meta::read_records(&args.executable)?;
    let parsed = match &container {
        Some(bytes) => images::parse(bytes).map_err(anyhow::Error::msg)?,
        None => Vec::new(),
    };
    if let Some(dir) = &args.extract {
        std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
        for i in &parsed {
            let ext = i.kind.extension();
            // PTX is stored with the NUL terminator liboffload wants; a file does not need it.
            let data = i.data.strip_suffix(b"\0").filter(|_| ext == "ptx").unwrap_or(i.data);
            let path = dir.join(format!("{}.{ext}", i.arch));
            std::fs::write(&path, data).with_context(|| format!("failed to write {}", path.display()))?;
        }
    }
    if !args.emit.is_empty() {
        let dir = match &args.emit_dir {
            Some(d) => d.clone(),
            None => args.executable.parent().map(Path::to_path_buf).unwrap_or_default(),
        };
        for path in super::emit::emit(&args.executable, &parsed, &args.emit, &dir)? {
            crate::ui::status("Emitted", path.display().to_string());
        }
    }
    if args.json {
        let images: Vec<serde_json::Value> = parsed
            .iter()
            .map(|i| {
                let resources: serde_json::Map<String, serde_json::Value> = i
                    .kernels
                    .iter()
                    .filter_map(|k| {
                        let r = resources(i, k)?;
                        Some((k.to_string(), serde_json::json!({ "registers": r.registers, "local_bytes": r.local_bytes, "static_shared_bytes": r.static_shared_bytes })))
                    })
                    .collect();
                let sites: Vec<serde_json::Value> = i
                    .sites
                    .iter()
                    .map(|s| {
                        serde_json::json!({ "function": s.function, "file": s.file, "line": s.line, "column": s.column, "kind": s.kind })
                    })
                    .collect();
                serde_json::json!({
                    "kind": i.kind.to_string(), "target": i.target, "arch": i.arch, "bytes": i.data.len(),
                    "hash": i.hash, "kernels": i.kernels, "resources": resources, "panic_sites": sites,
                    "stack_bytes": i.stack_bytes,
                })
            })
            .collect();
        let modules: Vec<serde_json::Value> = records
            .iter()
            .map(|r| {
                serde_json::json!({
                    "crate": r.krate, "module": r.module, "file": r.file, "line": r.line,
                    "allow_unsafe": r.allow_unsafe,
                    "kernels": r.kernels.iter().map(|k| &k.name).collect::<Vec<_>>(),
                })
            })
            .collect();
        writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "images": images, "modules": modules }))?
        )?;
        return Ok(());
    }
    writeln!(out, "{}", args.executable.display())?;
    if container.is_none() {
        writeln!(
            out,
            "  no device images: built without `cargo offload build` (kernels run on the CPU backend)"
        )?;
    }
    for i in &parsed {
        writeln!(
            out,
            "  {:<16} {:<8} {:<22} {:>9} bytes  {} kernels",
            i.kind.to_string(),
            i.arch,
            i.target,
            i.data.len(),
            i.kernels.len()
        )?;
        for k in &i.kernels {
            match resources(i, k) {
                Some(r) => {
                    // (Local memory only when there is some: spills, or arrays not kept in registers.)
                    let local = if r.local_bytes > 0 {
                        format!(
                            ", {} bytes of local memory per thread: spills or local arrays",
                            r.local_bytes
                        )
                    } else {
                        String::new()
                    };
                    writeln!(
                        out,
                        "      {k}  ({} registers, {} bytes of static shared memory{local})",
                        r.registers, r.static_shared_bytes
                    )?
                }
                None => writeln!(out, "      {k}")?,
            };
        }
        if i.stack_bytes > 0 {
            writeln!(
                out,
                "      up to {} bytes of stack per thread (calls whose depth ptxas cannot see; the runtime raises the driver's limit to it)",
                i.stack_bytes
            )?;
        }
        if !i.sites.is_empty() {
            // (A kernel that traps on the GPU reports which of these it hit.)
            // (The first few; `--json` lists them all.)
            const SHOWN: usize = 6;
            let places: Vec<String> =
                i.sites.iter().take(SHOWN).map(|s| format!("{}:{}", s.file, s.line)).collect();
            let more = if i.sites.len() > SHOWN {
                format!(", … ({} more)", i.sites.len() - SHOWN)
            } else {
                String::new()
            };
            writeln!(out, "      {} panic sites: {}{more}", i.sites.len(), places.join(", "))?;
        }
    }
    for r in &records {
        let names: Vec<&str> = r.kernels.iter().map(|k| k.name.as_str()).collect();
        let opt_in = if r.allow_unsafe { " [allows unsafe]" } else { "" };
        writeln!(
            out,
            "  kernels module {}::{} ({}:{}){opt_in}: {}",
            r.krate,
            r.module,
            r.file,
            r.line,
            names.join(", ")
        )?;
    }
    Ok(())
}
