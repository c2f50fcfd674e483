//! Pass 1: build the host program normally, with cargo-offload as the linker (which records
//! every final link), and collect the kernels modules each executable carries.

use crate::cargo_cli::CargoCommand;
use crate::context::Context;
use crate::linker;
use anyhow::{Context as _, Result, bail};
use cargo_metadata::Message;
use object::{Object, ObjectSection};
use offload_wire::record::{self, ModuleRecord};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An executable the host build produced.
#[derive(Debug)]
pub struct Executable {
    pub path: PathBuf,
    /// `example saxpy`, `bin demo`, `test e2e`…
    pub label: String,
    pub kind: String,
    /// The kernels modules linked into it.
    pub records: Vec<ModuleRecord>,
}

/// Where the runtime and macro crates the host build used live, for the device crate.
#[derive(Debug, Default)]
pub struct Sources {
    /// Directory of the `offload-rt` package.
    pub runtime: Option<PathBuf>,
    /// Packages whose sources decide what the device compile produces.
    pub hashed: BTreeMap<String, PathBuf>,
    /// Edition of each crate, by crate name.
    pub editions: BTreeMap<String, String>,
}

#[derive(Debug)]
pub struct HostOutput {
    pub executables: Vec<Executable>,
    pub sources: Sources,
}

/// `cargo <subcommand>` for the host, in cargo-offload's target directory, with
/// cargo-offload as the linker so that every final link is recorded.
pub fn host_command(ctx: &Context, subcommand: &[&str]) -> CargoCommand {
    let host = &ctx.toolchain.host;
    let linker_var = format!("CARGO_TARGET_{}_LINKER", host.to_uppercase().replace(['-', '.'], "_"));
    let real_linker = std::env::var_os(&linker_var).unwrap_or_else(|| "cc".into());
    let mut cmd =
        CargoCommand::new(subcommand).selectors(&ctx.opts).arg("--target-dir").arg(ctx.host_target_dir());
    if let Some(dir) = ctx.host_build_dir() {
        cmd = cmd.env("CARGO_BUILD_BUILD_DIR", dir);
    }
    cmd.env(&linker_var, &ctx.self_exe)
        .env(linker::ROLE_ENV, linker::ROLE_HOST)
        .env(linker::REAL_LINKER_ENV, real_linker)
        .env(linker::LINKS_DIR_ENV, ctx.links_dir())
}

/// Runs the host build (`cargo <subcommand> …`) and reads what it produced.
pub fn run(ctx: &Context, subcommand: &[&str]) -> Result<HostOutput> {
    let cmd = host_command(ctx, subcommand).arg("--message-format=json-render-diagnostics");
    let mut out = HostOutput { executables: Vec::new(), sources: Sources::default() };
    let (status, _) = cmd.run_json(false, |message| {
        crate::ui::forward(&message);
        if let Message::CompilerArtifact(a) = message {
            let dir =
                a.manifest_path.parent().map(|p| p.to_path_buf().into_std_path_buf()).unwrap_or_default();
            let crate_name = a.target.name.replace('-', "_");
            out.sources.editions.insert(crate_name.clone(), a.target.edition.to_string());
            match crate_name.as_str() {
                "offload" => {
                    out.sources.runtime = Some(dir.clone());
                    out.sources.hashed.insert(crate_name, dir);
                }
                "offload_macros" | "offload_macros_backend" | "offload_wire" => {
                    out.sources.hashed.insert(crate_name, dir);
                }
                _ => {}
            }
            if let Some(exe) = a.executable {
                let path = exe.into_std_path_buf();
                let records = read_records(&path)?;
                let kind = a.target.kind.first().map(|k| k.to_string()).unwrap_or_default();
                let kind = if a.profile.test { "test".to_owned() } else { kind };
                let label = format!("{kind} {}", a.target.name);
                out.executables.push(Executable { path, label, kind, records });
            }
        }
        Ok(())
    })?;
    if !status.success() {
        bail!("failed to build the host program (`cargo {}` exited with {status})", subcommand.join(" "));
    }
    linker::prune_records(&ctx.links_dir())?;
    Ok(out)
}

/// The kernels-module records in an executable's `.offload_kernels` section.
pub fn read_records(path: &Path) -> Result<Vec<ModuleRecord>> {
    let data = std::fs::read(path).with_context(|| format!("failed to read {}", path.display()))?;
    let file = object::File::parse(&*data).with_context(|| format!("failed to parse {}", path.display()))?;
    let Some(section) = file.section_by_name(record::SECTION) else { return Ok(Vec::new()) };
    let bytes = section
        .data()
        .with_context(|| format!("failed to read the kernels section of {}", path.display()))?;
    let mut records = record::parse_section(bytes)
        .map_err(anyhow::Error::msg)
        .with_context(|| path.display().to_string())?;
    records.sort_by(|a, b| a.prefix.cmp(&b.prefix));
    records.dedup_by(|a, b| a.prefix == b.prefix);
    Ok(records)
}
