//! Runs kernels in each variant, verifies every output element against the CPU reference,
//! and collects times and checksums.
//!
//! By default every timed pass of every variant is checked element by element against the
//! reference for all its repetitions. With [`Options::verify_reps`] set, a kernel whose
//! reference depends on the repetition count ([`KernelId::accumulates`]) is instead checked
//! element by element on a separate, untimed run of each variant with fewer repetitions,
//! against a reference for that many; its timed passes (all repetitions) are then compared by
//! checksum with the first variant's first timed pass, not with a host reference. Every
//! result says which check it had ([`VariantResult::verified_reps`],
//! [`VariantResult::element_check`], [`VariantResult::checksum_basis`]).
//!
//! Before its first timed pass, each variant of each kernel runs untimed
//! ([`Options::warmup_reps`] repetitions, or the untimed element check when there is one):
//! the first launch of a kernel loads its code onto the device and may find the GPU idle, and
//! without a warm-up that cost fell on whichever variant ran first (the `rust` one by
//! default). RAJAPerf runs warm-up kernels for the same reason. The timed passes then
//! interleave the variants, in reverse order every other pass (A B, B A, A B, …), so that a
//! GPU still settling during the first passes favours neither (with an even number of passes,
//! a steady drift cancels).
//!
//! The cuda variant runs every Base_CUDA tuning of the kernel ([`KernelId::cuda_tunings`]),
//! each as if it were a variant of its own: its own warm-up, its own place in the interleaved
//! passes, its own element check. Its result gives the fastest tuning's times and names it
//! ([`VariantResult::tuning`], [`fastest`]), so that the Rust kernel is compared with what a
//! CUDA programmer would pick; its checksum and element check cover every tuning, and
//! [`VariantResult::tunings`] has each tuning's own.

use crate::checksum::relative_difference;
use crate::cuda::CudaBaseline;
use crate::problem::{KernelId, Problem, Timing};
use crate::{kernels, reference, setup};
use anyhow::Context;
use serde::Serialize;
use std::time::Instant;

/// Relative tolerance of an element against the reference. The variants may legitimately
/// differ in the last bits (nvcc contracts `a*b + c` into FMAs, Rust does not), which stays
/// far below this even after LTIMES' thousands of accumulations.
pub const ELEMENT_RTOL: f64 = 1e-10;

/// Absolute slack per element, relative to the largest reference value of the array, for
/// results that should cancel to (nearly) zero.
pub const ELEMENT_ATOL: f64 = 1e-13;

/// Checksums agree when their relative difference is at most this (RAJAPerf's "normal"
/// checksum tolerance).
pub const CHECKSUM_RTOL: f64 = 1e-10;

/// Whether `checksum` agrees with `basis`: they differ by at most [`CHECKSUM_RTOL`] of the
/// basis' magnitude (`Problem::checksum_magnitude`, the sum of the terms' absolute values, at
/// least the basis itself) plus [`ELEMENT_ATOL`] of its slack (`Problem::checksum_slack`: the
/// element check's absolute slack, summed with the checksum's weights). For checksums of
/// positive terms this is 1e-10 of the checksum; outputs that cancel or sit near zero (FIR)
/// get the room their elements are allowed.
pub fn checksum_agrees(checksum: f64, basis: f64, basis_magnitude: f64, basis_slack: f64) -> bool {
    (checksum - basis).abs() <= CHECKSUM_RTOL * basis.abs().max(basis_magnitude) + ELEMENT_ATOL * basis_slack
}

/// One way to run the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Variant {
    /// The safe-Rust kernels on `offload::Device::default()` (a GPU, else CPU emulation).
    Rust,
    /// RAJAPerf's Base_CUDA kernels in the helper process.
    Cuda,
    /// The plain sequential Rust reference, timed on the host.
    Cpu,
}

impl Variant {
    /// The variant's name in tables and files.
    pub fn name(self) -> &'static str {
        match self {
            Variant::Rust => "rust",
            Variant::Cuda => "cuda",
            Variant::Cpu => "cpu",
        }
    }
}

/// How one variant's outputs compare with the reference's, over every element.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Verification {
    /// Elements compared.
    pub elements: usize,
    /// Elements outside the tolerance.
    pub mismatches: usize,
    /// Largest absolute difference.
    pub max_abs_err: f64,
    /// Largest difference relative to a non-zero reference value.
    pub max_rel_err: f64,
}

impl Verification {
    /// Whether every element is within tolerance.
    pub fn passed(&self) -> bool {
        self.mismatches == 0
    }

    fn merge(&mut self, other: Verification) {
        self.elements += other.elements;
        self.mismatches += other.mismatches;
        self.max_abs_err = self.max_abs_err.max(other.max_abs_err);
        self.max_rel_err = self.max_rel_err.max(other.max_rel_err);
    }
}

/// Compares every output element of `got` with `want`. Large arrays are compared in chunks on
/// all the host's threads; counts add and maxima combine in any order, so the result is the
/// sequential comparison's.
pub fn verify(got: &Problem, want: &Problem) -> Verification {
    let mut result = Verification::default();
    for (g, w) in got.outputs.iter().zip(&want.outputs) {
        let scale = w.data.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let mut v = Verification { elements: w.data.len(), ..Verification::default() };
        v.mismatches += w.data.len().abs_diff(g.data.len());
        let n = g.data.len().min(w.data.len());
        let (g, w) = (&g.data[..n], &w.data[..n]);
        let threads =
            if n < 1 << 16 { 1 } else { std::thread::available_parallelism().map_or(1, usize::from) };
        let chunk = n.div_ceil(threads).max(1);
        let parts: Vec<Verification> = std::thread::scope(|scope| {
            let handles: Vec<_> = g
                .chunks(chunk)
                .zip(w.chunks(chunk))
                .map(|(g, w)| scope.spawn(move || compare(g, w, scale)))
                .collect();
            handles.into_iter().map(|h| h.join().expect("a comparison thread panicked")).collect()
        });
        for part in parts {
            v.merge(part);
        }
        result.merge(v);
    }
    result
}

/// Compares `got` with `want` element by element (`scale`: the array's largest reference
/// value); `elements` is left 0 for the caller to set.
fn compare(got: &[f64], want: &[f64], scale: f64) -> Verification {
    let mut v = Verification::default();
    for (x, y) in got.iter().zip(want) {
        let err = (x - y).abs();
        let within = err <= ELEMENT_RTOL * y.abs() + ELEMENT_ATOL * scale;
        // NaN compares false above, so a NaN on either side is a mismatch.
        if !within && !(x.is_nan() && y.is_nan()) {
            v.mismatches += 1;
        }
        if err.is_finite() {
            v.max_abs_err = v.max_abs_err.max(err);
            if *y != 0.0 {
                v.max_rel_err = v.max_rel_err.max(err / y.abs());
            }
        }
    }
    v
}

/// The copies around the timed repetitions of one pass (the last): the arrays to the device
/// before the clock starts, the outputs back after it stops. Copies inside the repetitions
/// (a reduction's result, each repetition) are part of the kernel time, on both sides.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Transfers {
    pub h2d_copies: u64,
    pub h2d_bytes: u64,
    pub h2d_seconds: f64,
    pub d2h_copies: u64,
    pub d2h_bytes: u64,
    pub d2h_seconds: f64,
}

impl From<Timing> for Transfers {
    fn from(t: Timing) -> Transfers {
        Transfers {
            h2d_copies: t.h2d_copies,
            h2d_bytes: t.h2d_bytes,
            h2d_seconds: t.h2d_seconds,
            d2h_copies: t.d2h_copies,
            d2h_bytes: t.d2h_bytes,
            d2h_seconds: t.d2h_seconds,
        }
    }
}

/// Which run the element-by-element check of a result looked at.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ElementCheck {
    /// Every timed pass, against the reference for all its repetitions.
    Timed,
    /// A separate, untimed run with [`VariantResult::verified_reps`] repetitions, against the
    /// reference for that many (`--verify-reps`); the timed passes are compared by checksum.
    Untimed,
}

impl ElementCheck {
    /// The name in tables and files.
    pub fn name(self) -> &'static str {
        match self {
            ElementCheck::Timed => "timed",
            ElementCheck::Untimed => "untimed",
        }
    }
}

/// What a result's checksum was compared with.
pub const BASIS_REFERENCE: &str = "reference";

/// Measured device-to-device copy bandwidth (`cudaMemcpy` between two arrays on the GPU),
/// the yardstick for the stream kernels' bandwidth.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct CopyBandwidth {
    /// Elements (`f64`) of each of the two arrays.
    pub elements: u64,
    /// Bytes one copy moves: read plus written.
    pub bytes: u64,
    /// The fastest copy's time.
    pub best_seconds: f64,
    /// Copies timed.
    pub trials: u32,
    /// `bytes / best_seconds`, in GB/s (10^9 bytes per second).
    pub gb_per_s: f64,
}

impl CopyBandwidth {
    /// The figure for `trials` copies of two arrays of `elements` doubles, the fastest taking
    /// `best_seconds`.
    pub fn new(elements: u64, trials: u32, best_seconds: f64) -> CopyBandwidth {
        let bytes = 2 * 8 * elements;
        CopyBandwidth { elements, bytes, best_seconds, trials, gb_per_s: bytes as f64 / best_seconds / 1e9 }
    }
}

/// Everything measured for one kernel in one variant.
#[derive(Clone, Debug, Serialize)]
pub struct VariantResult {
    pub kernel: KernelId,
    pub group: &'static str,
    pub variant: Variant,
    /// Where it ran.
    pub device: String,
    /// RAJAPerf's actual problem size.
    pub size: usize,
    pub reps: usize,
    pub npasses: usize,
    /// Kernel time per repetition, averaged over the passes.
    pub time_per_rep_avg_s: f64,
    /// Kernel time per repetition, the fastest pass.
    pub time_per_rep_min_s: f64,
    /// Kernel time per repetition, the slowest pass: far above the fastest when a pass met a
    /// slower machine state (at 1M, a pass of a 5 µs kernel took twice its others' time once).
    pub time_per_rep_max_s: f64,
    /// Kernel time per repetition of each pass, in order (in the JSON only).
    pub time_per_rep_passes_s: Vec<f64>,
    /// The cuda variant: the tuning whose times this result gives, the fastest of `tunings`
    /// (lowest average time per repetition; `default` for a kernel with one tuning). `None`
    /// for the other variants.
    pub tuning: Option<&'static str>,
    /// The cuda variant: every tuning's times and checks, in RAJAPerf's order (in the JSON
    /// only); empty for the other variants. The checksum and the element check of this
    /// result cover every tuning: one wrong tuning makes the result wrong.
    pub tunings: Vec<TuningResult>,
    /// RAJAPerf's checksum of the outputs after all repetitions (the timed pass farthest from
    /// `basis_checksum`).
    pub checksum: f64,
    /// The host reference's checksum for all repetitions; `None` when it was not computed
    /// (`--verify-reps` on a kernel whose reference depends on the repetition count).
    pub reference_checksum: Option<f64>,
    /// What `checksum` is compared with: `"reference"` (the host reference for all
    /// repetitions), or a variant's name: that variant's first timed pass (the first variant
    /// of the run; for that variant itself, the agreement of its passes with each other).
    pub checksum_basis: String,
    /// The checksum `checksum` is compared with.
    pub basis_checksum: f64,
    /// Relative difference of `checksum` and `basis_checksum`.
    pub checksum_rel_diff: f64,
    /// Whether the checksums differ by at most [`CHECKSUM_RTOL`] of the basis checksum's
    /// magnitude (see [`checksum_agrees`]).
    pub checksum_agrees: bool,
    /// Repetitions of the runs checked element by element (`reps` unless `--verify-reps`
    /// checked a separate, shorter run).
    pub verified_reps: usize,
    /// Which runs the element check looked at.
    pub element_check: ElementCheck,
    /// Element-by-element comparison with the reference for `verified_reps` repetitions
    /// (worst over the runs checked).
    pub verification: Verification,
    /// Copies of the last pass (none for `cpu`).
    pub transfers: Transfers,
    /// Bytes one repetition reads and writes in device memory (RAJAPerf's bytes read plus
    /// written per repetition), for the stream kernels; `None` for the others.
    pub bytes_per_rep: Option<u64>,
    /// `bytes_per_rep` over the average time per repetition, in GB/s.
    pub gb_per_s: Option<f64>,
    /// `gb_per_s` over the measured device copy bandwidth of the run (GPU variants only).
    pub fraction_of_copy_bandwidth: Option<f64>,
}

/// The timed passes of one tuning of the cuda variant.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct TuningResult {
    /// RAJAPerf's name of the tuning ([`KernelId::cuda_tunings`]).
    pub tuning: &'static str,
    pub time_per_rep_avg_s: f64,
    pub time_per_rep_min_s: f64,
    pub time_per_rep_max_s: f64,
    pub time_per_rep_passes_s: Vec<f64>,
    /// Its timed pass farthest from the basis checksum.
    pub checksum: f64,
    pub checksum_agrees: bool,
    /// Its element check (worst over the runs checked).
    pub verification: Verification,
}

/// The index of the fastest of `tunings`: the lowest average time per repetition, the first
/// of equals (RAJAPerf's order).
pub fn fastest(tunings: &[TuningResult]) -> usize {
    let mut best = 0;
    for (k, t) in tunings.iter().enumerate() {
        if t.time_per_rep_avg_s < tunings[best].time_per_rep_avg_s {
            best = k;
        }
    }
    best
}

/// Of `checksums`, the one farthest from `basis` (`basis` itself when there is none).
fn farthest(checksums: &[f64], basis: f64) -> f64 {
    checksums.iter().fold(basis, |far, &c| {
        if relative_difference(c, basis) >= relative_difference(far, basis) { c } else { far }
    })
}

/// What to run.
#[derive(Clone, Debug)]
pub struct Options {
    /// RAJAPerf's target size (`--size`); each kernel's default when `None`.
    pub size: Option<usize>,
    /// Repetitions (`--reps`); each kernel's default when `None`.
    pub reps: Option<usize>,
    /// Passes over the timed repetitions.
    pub npasses: usize,
    /// Variants, in order.
    pub variants: Vec<Variant>,
    /// `--verify-reps`: check kernels whose reference depends on the repetition count on a
    /// separate, untimed run of at most this many repetitions (see the module documentation);
    /// `None` checks every timed pass against the reference for all repetitions.
    pub verify_reps: Option<usize>,
    /// `--warmup-reps`: repetitions of each variant's untimed run before its timed passes
    /// (0: none). A variant that had the untimed element check needs no other warm-up.
    pub warmup_reps: usize,
}

/// What the timed passes of one variant (of the cuda variant: one tuning) of one kernel gave.
#[derive(Default)]
struct VariantRuns {
    /// The element check's worst result.
    worst: Verification,
    /// Seconds per repetition, one per pass.
    times: Vec<f64>,
    checksums: Vec<f64>,
    /// The first pass's checksum magnitude and slack (only for a variant that may become the
    /// basis).
    scale: (f64, f64),
    /// The last pass's copies.
    transfers: Transfers,
}

fn failed(kernel: KernelId, variant: Variant) -> String {
    format!("{kernel} failed in the {} variant", variant.name())
}

/// The devices the variants run on.
#[derive(Debug, Default)]
pub struct Runner {
    /// For the `rust` variant.
    pub device: Option<offload::Device>,
    /// For the `cuda` variant.
    pub cuda: Option<CudaBaseline>,
    /// The device copy bandwidth measured for this run, if any: the stream kernels' GPU
    /// results give their bandwidth as a fraction of it.
    pub copy_bandwidth: Option<CopyBandwidth>,
    /// `--pad-mib`: MiB of device memory that nothing uses, allocated before each array of
    /// both GPU variants; timed pass `k` uses entry `k mod len` (each pass's arrays then lie
    /// elsewhere), the untimed runs the first. Empty: none.
    pub pads_mib: Vec<u32>,
}

impl Runner {
    /// Runs `kernel` in every variant of `opts`.
    pub fn run_kernel(&mut self, kernel: KernelId, opts: &Options) -> anyhow::Result<Vec<VariantResult>> {
        let initial = setup::setup(kernel, opts.size.unwrap_or_else(|| kernel.default_size()));
        let reps = opts.reps.unwrap_or_else(|| kernel.default_reps());
        // The element check's repetitions. A shorter check is only worth a separate run when
        // the reference for it differs from the one for all repetitions; otherwise the timed
        // passes are checked against the full reference, which costs no more.
        let short = opts.verify_reps.map_or(reps, |n| n.min(reps));
        let untimed = reference::reps_needed(kernel, short) != reference::reps_needed(kernel, reps);
        let verified_reps = if untimed { short } else { reps };
        let mut expected = initial.clone();
        reference::run(&mut expected, reference::reps_needed(kernel, verified_reps));
        let reference_checksum = (!untimed).then(|| expected.checksum());
        // (name, checksum, magnitude, slack) of what the checksums are compared with.
        let mut basis: Option<(String, f64, f64, f64)> = reference_checksum.map(|c| {
            (BASIS_REFERENCE.to_owned(), c, expected.checksum_magnitude(), expected.checksum_slack())
        });
        let bytes_per_rep = kernel.bytes_per_rep(initial.size);

        // What runs: each variant once, the cuda variant once per tuning (its slots follow
        // each other, in RAJAPerf's order of the tunings).
        let slots: Vec<(usize, &'static str)> = opts
            .variants
            .iter()
            .enumerate()
            .flat_map(|(v, &variant)| {
                let tunings: &'static [&'static str] =
                    if variant == Variant::Cuda { kernel.cuda_tunings() } else { &[""] };
                tunings.iter().map(move |&tuning| (v, tuning))
            })
            .collect();
        let failure = |v: usize, tuning: &str| {
            let variant = opts.variants[v];
            if variant == Variant::Cuda {
                format!("{kernel} failed in the cuda variant, tuning {tuning}")
            } else {
                failed(kernel, variant)
            }
        };

        // Untimed first: each slot's element check on a shorter run, or its warm-up.
        let mut runs: Vec<VariantRuns> = Vec::with_capacity(slots.len());
        for &(v, tuning) in &slots {
            let variant = opts.variants[v];
            let mut worst = Verification::default();
            if untimed {
                let mut p = initial.clone();
                self.run_variant(variant, tuning, &mut p, verified_reps, self.pad(0))
                    .with_context(|| failure(v, tuning))?;
                worst = verify(&p, &expected);
            } else if opts.warmup_reps > 0 {
                let mut p = initial.clone();
                self.run_variant(variant, tuning, &mut p, opts.warmup_reps.min(reps), self.pad(0))
                    .with_context(|| format!("{} (its warm-up)", failure(v, tuning)))?;
            }
            runs.push(VariantRuns { worst, ..VariantRuns::default() });
        }
        // The timed passes, the slots interleaved and their order reversed every other pass
        // (A B, B A, A B, …): a GPU whose clocks or caches settle during the first passes then
        // favours neither variant (nor tuning), as it would favour the later one if each ran
        // all its passes in a row.
        for pass in 0..opts.npasses.max(1) {
            let mut order: Vec<usize> = (0..slots.len()).collect();
            if pass % 2 == 1 {
                order.reverse();
            }
            for s in order {
                let (v, tuning) = slots[s];
                let variant = opts.variants[v];
                let mut p = initial.clone();
                let timing = self
                    .run_variant(variant, tuning, &mut p, reps, self.pad(pass))
                    .with_context(|| failure(v, tuning))?;
                let run = &mut runs[s];
                run.times.push(timing.kernel_seconds / reps.max(1) as f64);
                if !untimed {
                    run.worst.merge(verify(&p, &expected));
                }
                // Only the first slot's first pass can become the basis, and only it needs
                // its checksum's scale (each is another pass over the outputs, with sines).
                if s == 0 && run.checksums.is_empty() && basis.is_none() {
                    run.scale = (p.checksum_magnitude(), p.checksum_slack());
                }
                run.checksums.push(p.checksum());
                run.transfers = timing.into();
            }
        }

        let mut slot_runs: Vec<((usize, &'static str), VariantRuns)> = slots.into_iter().zip(runs).collect();
        let mut results = Vec::new();
        for (v, &variant) in opts.variants.iter().enumerate() {
            let rest = slot_runs.split_off(slot_runs.iter().take_while(|((sv, _), _)| *sv == v).count());
            let group = std::mem::replace(&mut slot_runs, rest);
            let (checksum_basis, basis_checksum, basis_magnitude, basis_slack) = basis
                .get_or_insert_with(|| {
                    let first = &group[0].1;
                    (variant.name().to_owned(), first.checksums[0], first.scale.0, first.scale.1)
                })
                .clone();
            let agrees = |c: f64| checksum_agrees(c, basis_checksum, basis_magnitude, basis_slack);
            let mut tunings: Vec<TuningResult> = Vec::with_capacity(group.len());
            let mut transfers_of = Vec::with_capacity(group.len());
            for ((_, tuning), run) in group {
                let VariantRuns { worst, times, checksums, transfers, .. } = run;
                let checksum = farthest(&checksums, basis_checksum);
                transfers_of.push(transfers);
                tunings.push(TuningResult {
                    tuning,
                    time_per_rep_avg_s: times.iter().sum::<f64>() / times.len() as f64,
                    time_per_rep_min_s: times.iter().copied().fold(f64::INFINITY, f64::min),
                    time_per_rep_max_s: times.iter().copied().fold(0.0, f64::max),
                    time_per_rep_passes_s: times,
                    checksum,
                    checksum_agrees: agrees(checksum),
                    verification: worst,
                });
            }
            // The variant's figures are its fastest tuning's; its checks cover every tuning.
            let best = fastest(&tunings);
            let checksum = farthest(&tunings.iter().map(|t| t.checksum).collect::<Vec<_>>(), basis_checksum);
            let mut worst = Verification::default();
            for t in &tunings {
                worst.merge(t.verification);
            }
            let transfers = transfers_of[best];
            let TuningResult {
                tuning,
                time_per_rep_avg_s,
                time_per_rep_min_s,
                time_per_rep_max_s,
                time_per_rep_passes_s,
                ..
            } = tunings[best].clone();
            let checksum_rel_diff = relative_difference(checksum, basis_checksum);
            let gb_per_s = bytes_per_rep
                .filter(|_| time_per_rep_avg_s > 0.0)
                .map(|b| b as f64 / time_per_rep_avg_s / 1e9);
            let on_gpu = match variant {
                Variant::Rust => self.device.as_ref().is_some_and(offload::Device::is_gpu),
                Variant::Cuda => true,
                Variant::Cpu => false,
            };
            let fraction_of_copy_bandwidth =
                gb_per_s.zip(self.copy_bandwidth.filter(|_| on_gpu)).map(|(got, copy)| got / copy.gb_per_s);
            let is_cuda = variant == Variant::Cuda;
            results.push(VariantResult {
                kernel,
                group: kernel.group().name(),
                variant,
                device: self.device_name(variant),
                size: initial.size,
                reps,
                npasses: time_per_rep_passes_s.len(),
                time_per_rep_avg_s,
                time_per_rep_min_s,
                time_per_rep_max_s,
                time_per_rep_passes_s,
                tuning: is_cuda.then_some(tuning),
                tunings: if is_cuda { tunings } else { Vec::new() },
                checksum,
                reference_checksum,
                checksum_basis,
                basis_checksum,
                checksum_rel_diff,
                checksum_agrees: agrees(checksum),
                verified_reps,
                element_check: if untimed { ElementCheck::Untimed } else { ElementCheck::Timed },
                verification: worst,
                transfers,
                bytes_per_rep,
                gb_per_s,
                fraction_of_copy_bandwidth,
            });
        }
        Ok(results)
    }

    /// Measures the device copy bandwidth through the CUDA baseline (`cudaMemcpy` between two
    /// arrays of `elements` doubles, the fastest of `trials`) and keeps it for the results.
    pub fn measure_copy_bandwidth(&mut self, elements: u64, trials: u32) -> anyhow::Result<CopyBandwidth> {
        let cuda = self.cuda.as_mut().context("measuring the copy bandwidth needs the CUDA baseline")?;
        let best = cuda.copy_bandwidth(elements, trials)?;
        let bw = CopyBandwidth::new(elements, trials, best);
        self.copy_bandwidth = Some(bw);
        Ok(bw)
    }

    /// The padding of pass `pass` (see [`Runner::pads_mib`]).
    fn pad(&self, pass: usize) -> u32 {
        if self.pads_mib.is_empty() { 0 } else { self.pads_mib[pass % self.pads_mib.len()] }
    }

    fn run_variant(
        &mut self,
        variant: Variant,
        tuning: &str,
        p: &mut Problem,
        reps: usize,
        pad_mib: u32,
    ) -> anyhow::Result<Timing> {
        match variant {
            Variant::Rust => {
                let dev = self.device.as_ref().context("no device for the rust variant")?;
                kernels::run_rust_padded(dev, p, reps, pad_mib as usize)
            }
            Variant::Cuda => self
                .cuda
                .as_mut()
                .context("no CUDA baseline for the cuda variant")?
                .run(p, tuning, reps, pad_mib),
            Variant::Cpu => {
                let start = Instant::now();
                reference::run(p, reps);
                Ok(Timing { kernel_seconds: start.elapsed().as_secs_f64(), ..Timing::default() })
            }
        }
    }

    fn device_name(&self, variant: Variant) -> String {
        match variant {
            Variant::Rust => self.device.as_ref().map_or_else(String::new, ToString::to_string),
            Variant::Cuda => self.cuda.as_ref().and_then(CudaBaseline::device).unwrap_or("").to_owned(),
            // The dense products (MAT_MAT_SHARED, GEMM, 2MM) spread their rows over threads.
            Variant::Cpu => "host, one thread (dense products: all threads)".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::problem::Array;

    #[test]
    fn checksums_agree_relative_to_their_magnitude() {
        // Terms that cancel: the checksum is tiny next to its terms.
        let w = crate::checksum::weight;
        let p = problem(vec![vec![1.0, -w(0) / w(1) + 1e-12, 3.0, -3.0 * w(2) / w(3)]]);
        let (c, m) = (p.checksum(), p.checksum_magnitude());
        assert!(m > 1e6 * c.abs(), "the terms cancel ({c} of {m})");
        // A last-bit-sized change of the sum agrees; a change of 1e-9 of the magnitude does not.
        assert!(checksum_agrees(c + 1e-12 * m, c, m, 0.0));
        assert!(!checksum_agrees(c + 1e-9 * m, c, m, 0.0));
        // Outputs near zero: the element check's absolute slack, summed, is the room.
        let slack = p.checksum_slack();
        assert!(slack > 0.0);
        assert!(checksum_agrees(c + 0.5 * ELEMENT_ATOL * slack, c, m, slack));
        assert!(!checksum_agrees(c + 2.0 * ELEMENT_ATOL * slack + 1e-9 * m, c, m, slack));
        // Positive terms: the magnitude is the checksum itself.
        let q = problem(vec![vec![1.0, 2.0, 3.0]]);
        assert!((q.checksum_magnitude() - q.checksum()).abs() <= 1e-15 * q.checksum());
        assert!(!checksum_agrees(q.checksum() * (1.0 + 1e-9), q.checksum(), q.checksum_magnitude(), 0.0));
    }

    fn problem(outputs: Vec<Vec<f64>>) -> Problem {
        Problem {
            kernel: KernelId::Copy,
            size: outputs.first().map_or(0, Vec::len),
            inputs: Vec::new(),
            outputs: outputs
                .into_iter()
                .map(|data| Array {
                    name: "c",
                    checksum_len: data.len(),
                    data,
                    checksum_offset: 0.0,
                    plain: false,
                })
                .collect(),
            indices: Vec::new(),
            scalars: Vec::new(),
            params: Vec::new(),
        }
    }

    fn tuning(name: &'static str, passes: &[f64]) -> TuningResult {
        TuningResult {
            tuning: name,
            time_per_rep_avg_s: passes.iter().sum::<f64>() / passes.len() as f64,
            time_per_rep_min_s: passes.iter().copied().fold(f64::INFINITY, f64::min),
            time_per_rep_max_s: passes.iter().copied().fold(0.0, f64::max),
            time_per_rep_passes_s: passes.to_vec(),
            checksum: 1.0,
            checksum_agrees: true,
            verification: Verification::default(),
        }
    }

    #[test]
    fn the_fastest_tuning_is_the_lowest_average_and_the_first_of_equals() {
        // The fastest single pass (a) does not decide: the average (c) does.
        let ts = [tuning("a", &[1.0, 9.0]), tuning("b", &[4.0, 4.0]), tuning("c", &[3.0, 3.0])];
        assert_eq!(fastest(&ts), 2);
        let ts = [tuning("a", &[2.0]), tuning("b", &[1.0]), tuning("c", &[1.0])];
        assert_eq!(ts[fastest(&ts)].tuning, "b");
        assert_eq!(fastest(&[tuning("default", &[5.0])]), 0);
    }

    #[test]
    fn verify_finds_every_wrong_element_of_large_arrays_in_any_chunk() {
        let n = (1 << 17) + 3;
        let want: Vec<f64> = (0..n).map(|i| 1.0 + i as f64).collect();
        let mut got = want.clone();
        got[0] += 1e-3; // first chunk
        got[n / 2] *= 1.0 + 1e-6; // a middle chunk
        got[n - 1] = f64::NAN; // the last element
        got[7] *= 1.0 + 1e-12; // within tolerance
        let v = verify(&problem(vec![got.clone(), want.clone()]), &problem(vec![want.clone(), want.clone()]));
        assert_eq!(v.elements, 2 * n);
        assert_eq!(v.mismatches, 3);
        assert_eq!(v.max_abs_err, (want[n / 2] * (1.0 + 1e-6) - want[n / 2]).abs());
        assert!((v.max_rel_err - 1e-3).abs() < 1e-12, "{}", v.max_rel_err);
        // A shorter output counts its missing elements.
        got.truncate(n - 10);
        let v = verify(&problem(vec![got]), &problem(vec![want]));
        assert_eq!(v.mismatches, 10 + 2);
    }
}
