//! `cargo offload build`: the three passes.

use crate::cli::BuildOptions;
use crate::context::Context;
use crate::passes::host_meta::Executable;
use crate::passes::{device, host_meta, relink};
use crate::ui;
use anyhow::Result;
use offload_wire::record::ModuleRecord;

/// Runs the three passes over `cargo <subcommand>` and returns the executables built.
pub fn build(opts: BuildOptions, subcommand: &[&str]) -> Result<(Context, Vec<Executable>)> {
    ui::set_verbose(opts.verbose);
    let ctx = Context::new(opts)?;
    let host = host_meta::run(&ctx, subcommand)?;
    let mut records: Vec<ModuleRecord> =
        host.executables.iter().flat_map(|e| e.records.iter().cloned()).collect();
    records.sort_by(|a, b| a.prefix.cmp(&b.prefix));
    records.dedup_by(|a, b| a.prefix == b.prefix);
    if records.is_empty() {
        ui::warn("no kernels modules in the built executables: nothing to compile for the GPU");
        return Ok((ctx, host.executables));
    }
    let images = device::run(&ctx, &records, &host.sources)?;
    let mut relinked = 0;
    for exe in host.executables.iter().filter(|e| !e.records.is_empty()) {
        relink::run(&ctx, exe, &images)?;
        relinked += 1;
    }
    let targets: Vec<String> = ctx.targets.iter().map(|t| t.to_string()).collect();
    ui::status(
        "Finished",
        format!("{} with device images for {}", ui::count(relinked, "executable"), targets.join(", ")),
    );
    for exe in host.executables.iter().filter(|e| !e.records.is_empty()) {
        ui::status("Executable", format!("{} ({})", exe.label, exe.path.display()));
    }
    Ok((ctx, host.executables))
}

pub fn run(opts: BuildOptions) -> Result<()> {
    build(opts, &["build"]).map(|_| ())
}
