//! Results as a terminal table, `results.csv`, `results.json` and an SVG bar chart of the
//! Rust/CUDA time ratios.

use crate::problem::KernelId;
use crate::runner::{Variant, VariantResult};
use anyhow::Context;
use serde::Serialize;
use std::fmt::Write as _;
use std::path::Path;

/// Which RAJAPerf release the kernel definitions follow.
pub const DEFINITIONS: &str = "RAJAPerf v2024.07";

/// The result of `variant` for `kernel`, if it ran.
fn find(results: &[VariantResult], kernel: KernelId, variant: Variant) -> Option<&VariantResult> {
    results.iter().find(|r| r.kernel == kernel && r.variant == variant)
}

/// Kernels in the order they first appear in `results`.
fn kernels(results: &[VariantResult]) -> Vec<KernelId> {
    let mut ks: Vec<KernelId> = Vec::new();
    for r in results {
        if !ks.contains(&r.kernel) {
            ks.push(r.kernel);
        }
    }
    ks
}

/// Average time per repetition of Rust over CUDA, when both ran.
pub fn rust_cuda_ratio(results: &[VariantResult], kernel: KernelId) -> Option<f64> {
    let rust = find(results, kernel, Variant::Rust)?;
    let cuda = find(results, kernel, Variant::Cuda)?;
    (cuda.time_per_rep_avg_s > 0.0).then(|| rust.time_per_rep_avg_s / cuda.time_per_rep_avg_s)
}

/// The terminal report: times per repetition, ratio, then checksums and verification.
pub fn table(results: &[VariantResult], variants: &[Variant]) -> String {
    let mut out = String::new();
    let us = |r: Option<&VariantResult>| {
        r.map_or_else(|| "-".to_owned(), |r| format!("{:.2}", r.time_per_rep_avg_s * 1e6))
    };
    let _ = write!(out, "{:<22} {:<9} {:>9} {:>5}", "Kernel", "Group", "Size", "Reps");
    for v in variants {
        let _ = write!(out, " {:>13}", format!("{} us/rep", v.name()));
    }
    let _ = writeln!(out, " {:>9}", "rust/cuda");
    for k in kernels(results) {
        let any = results.iter().find(|r| r.kernel == k);
        let (size, reps) = any.map_or((0, 0), |r| (r.size, r.reps));
        let _ = write!(out, "{:<22} {:<9} {size:>9} {reps:>5}", k.name(), k.group().name());
        for &v in variants {
            let _ = write!(out, " {:>13}", us(find(results, k, v)));
        }
        let ratio = rust_cuda_ratio(results, k).map_or_else(|| "-".to_owned(), |r| format!("{r:.3}"));
        let _ = writeln!(out, " {ratio:>9}");
    }
    let _ = writeln!(out, "\nChecksums (RAJAPerf's formula; reference: sequential Rust on the host)");
    let _ = writeln!(
        out,
        "{:<22} {:<6} {:>24} {:>24} {:>10} {:>6} {:>10} {:>10} {:>6}",
        "Kernel", "Var", "checksum", "reference", "rel diff", "agree", "max abs", "max rel", "check"
    );
    for r in results {
        let v = &r.verification;
        let _ = writeln!(
            out,
            "{:<22} {:<6} {:>24.15e} {:>24.15e} {:>10.2e} {:>6} {:>10.2e} {:>10.2e} {:>6}",
            r.kernel.name(),
            r.variant.name(),
            r.checksum,
            r.reference_checksum,
            r.checksum_rel_diff,
            if r.checksum_agrees { "yes" } else { "NO" },
            v.max_abs_err,
            v.max_rel_err,
            if v.passed() { "ok" } else { "WRONG" },
        );
    }
    out
}

/// One line of `results.csv`.
#[derive(Serialize)]
struct CsvRow<'a> {
    kernel: &'static str,
    group: &'static str,
    variant: &'static str,
    device: &'a str,
    size: usize,
    reps: usize,
    npasses: usize,
    time_per_rep_avg_s: f64,
    time_per_rep_min_s: f64,
    rust_over_cuda: Option<f64>,
    checksum: f64,
    reference_checksum: f64,
    checksum_rel_diff: f64,
    checksum_agrees: bool,
    elements: usize,
    mismatches: usize,
    max_abs_err: f64,
    max_rel_err: f64,
    verified: bool,
    h2d_bytes: u64,
    h2d_seconds: f64,
    d2h_bytes: u64,
    d2h_seconds: f64,
}

/// Writes one row per kernel and variant to `path`.
pub fn write_csv(path: &Path, results: &[VariantResult]) -> anyhow::Result<()> {
    let mut w =
        csv::Writer::from_path(path).with_context(|| format!("failed to create {}", path.display()))?;
    for r in results {
        let v = &r.verification;
        w.serialize(CsvRow {
            kernel: r.kernel.name(),
            group: r.group,
            variant: r.variant.name(),
            device: &r.device,
            size: r.size,
            reps: r.reps,
            npasses: r.npasses,
            time_per_rep_avg_s: r.time_per_rep_avg_s,
            time_per_rep_min_s: r.time_per_rep_min_s,
            rust_over_cuda: (r.variant == Variant::Rust)
                .then(|| rust_cuda_ratio(results, r.kernel))
                .flatten(),
            checksum: r.checksum,
            reference_checksum: r.reference_checksum,
            checksum_rel_diff: r.checksum_rel_diff,
            checksum_agrees: r.checksum_agrees,
            elements: v.elements,
            mismatches: v.mismatches,
            max_abs_err: v.max_abs_err,
            max_rel_err: v.max_rel_err,
            verified: v.passed(),
            h2d_bytes: r.transfers.h2d_bytes,
            h2d_seconds: r.transfers.h2d_seconds,
            d2h_bytes: r.transfers.d2h_bytes,
            d2h_seconds: r.transfers.d2h_seconds,
        })?;
    }
    w.flush().with_context(|| format!("failed to write {}", path.display()))?;
    Ok(())
}

/// `results.json`: the run's settings and every result.
#[derive(Debug, Serialize)]
pub struct JsonReport<'a> {
    pub definitions: &'static str,
    pub size: Option<usize>,
    pub reps: Option<usize>,
    pub npasses: usize,
    pub variants: &'a [Variant],
    pub element_rtol: f64,
    pub checksum_rtol: f64,
    pub results: &'a [VariantResult],
}

/// Writes `report` as pretty JSON to `path`.
pub fn write_json(path: &Path, report: &JsonReport<'_>) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(report)?;
    std::fs::write(path, text + "\n").with_context(|| format!("failed to write {}", path.display()))
}

mod plot;
pub use plot::write_ratio_svg;
