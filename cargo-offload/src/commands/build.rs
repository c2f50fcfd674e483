//! `cargo offload build`: the three passes.

use crate::cli::BuildOptions;
use crate::context::Context;
use crate::passes::host_meta::Executable;
use crate::passes::{device, host_meta, relink};
use crate::ui;
use anyhow::{Result, bail};
use offload_wire::record::ModuleRecord;
use std::collections::BTreeMap;

/// Runs the three passes over `cargo <subcommand>` and returns the executables built.
///
/// Each executable carries the images of the kernels modules it links, and only those:
/// executables that link the same modules share one device compile (and the cache), others
/// get their own. A set whose device compile fails fails the executables that link it; the
/// others are still finished.
pub fn build(opts: BuildOptions, subcommand: &[&str]) -> Result<(Context, Vec<Executable>)> {
    ui::set_verbose(opts.verbose);
    ui::set_json(opts.message_format == crate::cli::MessageFormat::Json);
    let ctx = Context::new(opts)?;
    let host = host_meta::run(&ctx, subcommand)?;
    let mut sets: BTreeMap<Vec<String>, (Vec<ModuleRecord>, Vec<&Executable>)> = BTreeMap::new();
    for exe in host.executables.iter().filter(|e| !e.records.is_empty()) {
        let key: Vec<String> = exe.records.iter().map(|r| r.prefix.clone()).collect();
        sets.entry(key).or_insert_with(|| (exe.records.clone(), Vec::new())).1.push(exe);
    }
    if sets.is_empty() {
        ui::warn("no kernels modules in the built executables: nothing to compile for the GPU");
        for exe in &host.executables {
            ui::status("Executable", format!("{} ({})", exe.label, exe.path.display()));
        }
        ui::message("offload-build-finished", serde_json::json!({ "success": true }));
        return Ok((ctx, host.executables));
    }
    let inputs = device::inputs(&ctx, &host.sources)?;
    let (mut relinked, mut failed) = (Vec::new(), Vec::new());
    for (records, exes) in sets.values() {
        match device::run(&ctx, &inputs, records) {
            Ok(images) => {
                for exe in exes {
                    relink::run(&ctx, exe, &images)?;
                    relinked.push(*exe);
                    let kernels: Vec<&str> =
                        exe.records.iter().flat_map(|r| r.kernels.iter().map(|k| k.name.as_str())).collect();
                    ui::message(
                        "offload-executable",
                        serde_json::json!({
                            "label": exe.label, "kind": exe.kind, "path": exe.path,
                            "kernels": kernels,
                            "targets": ctx.targets.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
                        }),
                    );
                }
            }
            Err(e) => {
                let labels: Vec<&str> = exes.iter().map(|e| e.label.as_str()).collect();
                ui::message(
                    "offload-device-compile-failed",
                    serde_json::json!({ "executables": labels, "message": format!("{e:#}") }),
                );
                ui::error(format!("{e:#}\n(so not finished: {})", labels.join(", ")));
                failed.extend(labels);
            }
        }
    }
    let targets: Vec<String> = ctx.targets.iter().map(|t| t.to_string()).collect();
    ui::status(
        "Finished",
        format!("{} with device images for {}", ui::count(relinked.len(), "executable"), targets.join(", ")),
    );
    for exe in &relinked {
        ui::status("Executable", format!("{} ({})", exe.label, exe.path.display()));
    }
    ui::message("offload-build-finished", serde_json::json!({ "success": failed.is_empty() }));
    if !failed.is_empty() {
        bail!(
            "the device compile failed for {} ({}); see the errors above",
            ui::count(failed.len(), "executable"),
            failed.join(", ")
        );
    }
    Ok((ctx, host.executables))
}

pub fn run(opts: BuildOptions) -> Result<()> {
    build(opts, &["build"]).map(|_| ())
}
