//! Results as a terminal table, `results.csv`, `results.json` and an SVG bar chart of the
//! Rust/CUDA time ratios.

use crate::problem::KernelId;
use crate::runner::{CopyBandwidth, Transfers, Variant, VariantResult};
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

/// Average time per repetition of Rust over CUDA (its fastest tuning), when both ran.
pub fn rust_cuda_ratio(results: &[VariantResult], kernel: KernelId) -> Option<f64> {
    let rust = find(results, kernel, Variant::Rust)?;
    let cuda = find(results, kernel, Variant::Cuda)?;
    (cuda.time_per_rep_avg_s > 0.0).then(|| rust.time_per_rep_avg_s / cuda.time_per_rep_avg_s)
}

/// The CUDA tuning the kernel's Rust/CUDA ratio compares with (the fastest), when cuda ran.
pub fn cuda_tuning(results: &[VariantResult], kernel: KernelId) -> Option<&'static str> {
    find(results, kernel, Variant::Cuda)?.tuning
}

/// The terminal report: times per repetition (cuda: its fastest tuning's), ratio and that
/// tuning, then every tuning of the kernels with several, then checksums and verification,
/// then the stream kernels' bandwidth (against `copy`, the measured device copy bandwidth, if
/// any).
pub fn table(results: &[VariantResult], variants: &[Variant], copy: Option<&CopyBandwidth>) -> String {
    let mut out = String::new();
    let with_cuda = variants.contains(&Variant::Cuda);
    let us = |r: Option<&VariantResult>| {
        r.map_or_else(|| "-".to_owned(), |r| format!("{:.2}", r.time_per_rep_avg_s * 1e6))
    };
    let _ = write!(out, "{:<22} {:<9} {:>9} {:>5}", "Kernel", "Group", "Size", "Reps");
    for v in variants {
        let _ = write!(out, " {:>13}", format!("{} us/rep", v.name()));
    }
    let _ = write!(out, " {:>9}", "rust/cuda");
    if with_cuda {
        out.push_str("  cuda tuning (fastest)");
    }
    let _ = writeln!(out);
    for k in kernels(results) {
        let any = results.iter().find(|r| r.kernel == k);
        let (size, reps) = any.map_or((0, 0), |r| (r.size, r.reps));
        let _ = write!(out, "{:<22} {:<9} {size:>9} {reps:>5}", k.name(), k.group().name());
        for &v in variants {
            let _ = write!(out, " {:>13}", us(find(results, k, v)));
        }
        let ratio = rust_cuda_ratio(results, k).map_or_else(|| "-".to_owned(), |r| format!("{r:.3}"));
        let _ = write!(out, " {ratio:>9}");
        if with_cuda {
            let _ = write!(out, "  {}", cuda_tuning(results, k).unwrap_or("-"));
        }
        let _ = writeln!(out);
    }
    tuning_table(&mut out, results);
    let _ = writeln!(
        out,
        "\nChecksums (RAJAPerf's formula) after all repetitions, compared with `vs`: ref = the \
         sequential Rust reference on the host, a variant = its first timed pass (--verify-reps); \
         agree = within 1e-10 of the checksum's magnitude (sum of the terms' absolute values) \
         plus the element check's absolute slack; \
         element check of `vreps` repetitions: timed = every timed pass, untimed = a separate run"
    );
    let _ = writeln!(
        out,
        "{:<22} {:<6} {:>24} {:>24} {:<9} {:>10} {:>6} {:>6} {:<8} {:>10} {:>10} {:>6}",
        "Kernel",
        "Var",
        "checksum",
        "compared with",
        "vs",
        "rel diff",
        "agree",
        "vreps",
        "check on",
        "max abs",
        "max rel",
        "check"
    );
    for r in results {
        let v = &r.verification;
        let basis =
            if r.checksum_basis == crate::runner::BASIS_REFERENCE { "ref" } else { &r.checksum_basis };
        let _ = writeln!(
            out,
            "{:<22} {:<6} {:>24.15e} {:>24.15e} {:<9} {:>10.2e} {:>6} {:>6} {:<8} {:>10.2e} {:>10.2e} {:>6}",
            r.kernel.name(),
            r.variant.name(),
            r.checksum,
            r.basis_checksum,
            basis,
            r.checksum_rel_diff,
            if r.checksum_agrees { "yes" } else { "NO" },
            r.verified_reps,
            r.element_check.name(),
            v.max_abs_err,
            v.max_rel_err,
            if v.passed() { "ok" } else { "WRONG" },
        );
    }
    transfer_table(&mut out, results, variants);
    let streams: Vec<&VariantResult> = results.iter().filter(|r| r.gb_per_s.is_some()).collect();
    if !streams.is_empty() {
        match copy {
            Some(c) => {
                let _ = writeln!(
                    out,
                    "\nBandwidth (bytes read + written per repetition / average time per repetition); \
                     device copy bandwidth: {:.1} GB/s (cudaMemcpy device to device, 2 arrays of {} \
                     doubles, best of {})",
                    c.gb_per_s, c.elements, c.trials
                );
            }
            None => {
                let _ = writeln!(
                    out,
                    "\nBandwidth (bytes read + written per repetition / average time per repetition); \
                     no device copy bandwidth measured"
                );
            }
        }
        let _ = writeln!(
            out,
            "{:<22} {:<6} {:>14} {:>10} {:>9}",
            "Kernel", "Var", "bytes/rep", "GB/s", "of copy"
        );
        for r in streams {
            let fraction = r
                .fraction_of_copy_bandwidth
                .map_or_else(|| "-".to_owned(), |f| format!("{:.1} %", 100.0 * f));
            let _ = writeln!(
                out,
                "{:<22} {:<6} {:>14} {:>10.1} {:>9}",
                r.kernel.name(),
                r.variant.name(),
                r.bytes_per_rep.unwrap_or(0),
                r.gb_per_s.unwrap_or(0.0),
                fraction
            );
        }
    }
    out
}

/// Every CUDA tuning of the kernels that have several: time per repetition (average and
/// fastest pass), checks, and which one the ratio compares with.
fn tuning_table(out: &mut String, results: &[VariantResult]) {
    let tuned: Vec<&VariantResult> = results.iter().filter(|r| r.tunings.len() > 1).collect();
    if tuned.is_empty() {
        return;
    }
    let _ = writeln!(
        out,
        "\nCUDA tunings (RAJAPerf's Base_CUDA tunings; the Rust/CUDA ratio compares with the fastest, \
         by average time per repetition)"
    );
    let _ = writeln!(
        out,
        "{:<22} {:<34} {:>12} {:>12} {:>6} {:>6}  fastest",
        "Kernel", "tuning", "avg us/rep", "min us/rep", "agree", "check"
    );
    for r in tuned {
        for t in &r.tunings {
            let _ = writeln!(
                out,
                "{:<22} {:<34} {:>12.2} {:>12.2} {:>6} {:>6}  {}",
                r.kernel.name(),
                t.tuning,
                t.time_per_rep_avg_s * 1e6,
                t.time_per_rep_min_s * 1e6,
                if t.checksum_agrees { "yes" } else { "NO" },
                if t.verification.passed() { "ok" } else { "WRONG" },
                if r.tuning == Some(t.tuning) { "*" } else { "" },
            );
        }
    }
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
    reference_checksum: Option<f64>,
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
    h2d_copies: u64,
    d2h_copies: u64,
    checksum_basis: &'a str,
    basis_checksum: f64,
    verified_reps: usize,
    element_check: &'static str,
    bytes_per_rep: Option<u64>,
    gb_per_s: Option<f64>,
    copy_gb_per_s: Option<f64>,
    fraction_of_copy_bandwidth: Option<f64>,
    /// After the earlier columns, so that they keep their places.
    time_per_rep_max_s: f64,
    /// The CUDA tuning of the row (cuda) or that its ratio compares with (rust): the fastest.
    cuda_tuning: Option<&'static str>,
}

/// The whole run's transfers per variant, each direction's copies, bytes, time and rate: the
/// program-level view (one pass of each kernel: its arrays to the device, its outputs back).
fn transfer_table(out: &mut String, results: &[VariantResult], variants: &[Variant]) {
    let _ = writeln!(
        out,
        "\nTransfers (whole run: each kernel's arrays to the device before its timed repetitions \
         and its outputs back after them, one pass; the Rust side's as its runtime counted them)"
    );
    let _ = writeln!(
        out,
        "{:<6} {:>9} {:>12} {:>10} {:>8}   {:>9} {:>12} {:>10} {:>8}",
        "Var", "H2D n", "H2D bytes", "H2D ms", "GB/s", "D2H n", "D2H bytes", "D2H ms", "GB/s"
    );
    for &v in variants {
        let mut t = Transfers::default();
        for r in results.iter().filter(|r| r.variant == v) {
            t.h2d_copies += r.transfers.h2d_copies;
            t.h2d_bytes += r.transfers.h2d_bytes;
            t.h2d_seconds += r.transfers.h2d_seconds;
            t.d2h_copies += r.transfers.d2h_copies;
            t.d2h_bytes += r.transfers.d2h_bytes;
            t.d2h_seconds += r.transfers.d2h_seconds;
        }
        let rate = |bytes: u64, s: f64| {
            if s > 0.0 { format!("{:.1}", bytes as f64 / s / 1e9) } else { "-".to_owned() }
        };
        let _ = writeln!(
            out,
            "{:<6} {:>9} {:>12} {:>10.2} {:>8}   {:>9} {:>12} {:>10.2} {:>8}",
            v.name(),
            t.h2d_copies,
            t.h2d_bytes,
            t.h2d_seconds * 1e3,
            rate(t.h2d_bytes, t.h2d_seconds),
            t.d2h_copies,
            t.d2h_bytes,
            t.d2h_seconds * 1e3,
            rate(t.d2h_bytes, t.d2h_seconds),
        );
    }
}

/// Writes one row per kernel and variant to `path`.
/// `copy` is the run's measured device copy bandwidth, repeated on every row that compares
/// with it. The columns after `d2h_seconds` say what the checks compared: `checksum_agrees`
/// compares `checksum` with `basis_checksum` (`checksum_basis`: `reference`, the host
/// reference for all repetitions, or a variant's first timed pass); the element check covered
/// `verified_reps` repetitions on the timed passes or on a separate untimed run
/// (`element_check`). The cuda rows give the fastest tuning's times and name it in the last
/// column, `cuda_tuning` (the rust rows name the tuning their ratio compares with); their
/// checks cover every tuning. `results.json` has every tuning's times (`tunings`).
pub fn write_csv(path: &Path, results: &[VariantResult], copy: Option<&CopyBandwidth>) -> anyhow::Result<()> {
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
            time_per_rep_max_s: r.time_per_rep_max_s,
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
            h2d_copies: r.transfers.h2d_copies,
            d2h_copies: r.transfers.d2h_copies,
            checksum_basis: &r.checksum_basis,
            basis_checksum: r.basis_checksum,
            verified_reps: r.verified_reps,
            element_check: r.element_check.name(),
            bytes_per_rep: r.bytes_per_rep,
            gb_per_s: r.gb_per_s,
            copy_gb_per_s: r.fraction_of_copy_bandwidth.and(copy.map(|c| c.gb_per_s)),
            fraction_of_copy_bandwidth: r.fraction_of_copy_bandwidth,
            cuda_tuning: match r.variant {
                Variant::Cuda => r.tuning,
                Variant::Rust => cuda_tuning(results, r.kernel),
                Variant::Cpu => None,
            },
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
    /// `--verify-reps`: kernels whose reference depends on the repetition count were checked
    /// element by element on a separate run of at most this many repetitions (see each
    /// result's `verified_reps`, `element_check` and `checksum_basis`); `None`: every timed
    /// pass was checked against the reference for all repetitions.
    pub verify_reps: Option<usize>,
    /// `--warmup-reps`: repetitions of each variant's untimed run before its timed passes.
    pub warmup_reps: usize,
    /// The measured device copy bandwidth, if the run measured it.
    pub copy_bandwidth: Option<CopyBandwidth>,
    pub results: &'a [VariantResult],
}

/// Writes `report` as pretty JSON to `path`.
pub fn write_json(path: &Path, report: &JsonReport<'_>) -> anyhow::Result<()> {
    let text = serde_json::to_string_pretty(report)?;
    std::fs::write(path, text + "\n").with_context(|| format!("failed to write {}", path.display()))
}

mod plot;
pub use plot::write_ratio_svg;
