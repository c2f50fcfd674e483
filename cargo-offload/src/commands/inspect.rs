//! `cargo offload inspect`: what device images and kernels modules an executable carries.

use crate::cli::InspectArgs;
use anyhow::{Context as _, Result, bail};
use object::{Object, ObjectSection, ObjectSymbol};
use offload_wire::images;
use std::path::Path;

/// ELF machine number of AMD GPUs.
const EM_AMDGPU: u16 = 224;

/// The image container embedded in an executable: found through its symbol, or by its magic
/// when the symbol table was stripped.
pub fn embedded_container(path: &Path) -> Result<Option<Vec<u8>>> {
    let data = std::fs::read(path).with_context(|| format!("failed to read {}", path.display()))?;
    let file =
        object::File::parse(&*data).with_context(|| format!("{} is not an object file", path.display()))?;
    let from_section = |section: &object::Section<'_, '_>, offset: usize| -> Option<Vec<u8>> {
        let bytes = section.data().ok()?.get(offset..)?;
        let len = images::container_len(bytes)?;
        Some(bytes.get(..len)?.to_vec())
    };
    if let Some(sym) = file.symbols().find(|s| s.name() == Ok(images::SYMBOL))
        && let Some(index) = sym.section_index()
        && let Ok(section) = file.section_by_index(index)
    {
        return Ok(from_section(&section, (sym.address() - section.address()) as usize));
    }
    for section in file.sections() {
        if let Ok(bytes) = section.data()
            && let Some(at) = bytes.windows(images::MAGIC.len()).position(|w| w == images::MAGIC)
            && let Some(found) = from_section(&section, at)
        {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

/// Checks an AMD code object: ELF for `EM_AMDGPU`, a kernel descriptor (`K.kd`) for every
/// kernel, and no undefined symbols.
pub fn validate_amd(data: &[u8], kernels: &[String]) -> Result<()> {
    let file = object::File::parse(data).context("not an ELF file")?;
    let machine = u16::from_le_bytes(data.get(18..20).context("truncated ELF header")?.try_into()?);
    if machine != EM_AMDGPU {
        bail!("ELF machine is {machine}, not EM_AMDGPU ({EM_AMDGPU})");
    }
    let names: Vec<&str> = file.symbols().filter_map(|s| s.name().ok()).collect();
    let missing: Vec<&String> =
        kernels.iter().filter(|k| !names.contains(&format!("{k}.kd").as_str())).collect();
    if !missing.is_empty() {
        bail!("no kernel descriptor for {missing:?}");
    }
    let undefined: Vec<&str> = file
        .symbols()
        .filter(|s| s.is_undefined() && !s.name().unwrap_or("").is_empty())
        .filter_map(|s| s.name().ok())
        .collect();
    if !undefined.is_empty() {
        bail!("undefined symbols {undefined:?}");
    }
    Ok(())
}

pub fn run(args: &InspectArgs) -> Result<()> {
    let container = embedded_container(&args.executable)?;
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
    if args.json {
        let images: Vec<serde_json::Value> = parsed
            .iter()
            .map(|i| {
                serde_json::json!({
                    "kind": i.kind.to_string(), "target": i.target, "arch": i.arch, "bytes": i.data.len(),
                    "hash": i.hash, "kernels": i.kernels,
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
        println!(
            "{}",
            serde_json::to_string_pretty(&serde_json::json!({ "images": images, "modules": modules }))?
        );
        return Ok(());
    }
    println!("{}", args.executable.display());
    if container.is_none() {
        println!("  no device images: built without `cargo offload build` (kernels run on the CPU backend)");
    }
    for i in &parsed {
        println!(
            "  {:<16} {:<8} {:<22} {:>9} bytes  {} kernels",
            i.kind.to_string(),
            i.arch,
            i.target,
            i.data.len(),
            i.kernels.len()
        );
        for k in &i.kernels {
            println!("      {k}");
        }
    }
    for r in &records {
        let names: Vec<&str> = r.kernels.iter().map(|k| k.name.as_str()).collect();
        let opt_in = if r.allow_unsafe { " [allows unsafe]" } else { "" };
        println!(
            "  kernels module {}::{} ({}:{}){opt_in}: {}",
            r.krate,
            r.module,
            r.file,
            r.line,
            names.join(", ")
        );
    }
    Ok(())
}
