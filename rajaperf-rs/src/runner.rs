//! Runs kernels in each variant, verifies every output element against the CPU reference,
//! and collects times and checksums.

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

/// Compares every output element of `got` with `want`.
pub fn verify(got: &Problem, want: &Problem) -> Verification {
    let mut result = Verification::default();
    for (g, w) in got.outputs.iter().zip(&want.outputs) {
        let scale = w.data.iter().fold(0.0f64, |m, x| m.max(x.abs()));
        let mut v = Verification { elements: w.data.len(), ..Verification::default() };
        v.mismatches += w.data.len().abs_diff(g.data.len());
        for (x, y) in g.data.iter().zip(&w.data) {
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
        result.merge(v);
    }
    result
}

/// The copies around the timed repetitions of one pass.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Transfers {
    pub h2d_bytes: u64,
    pub h2d_seconds: f64,
    pub d2h_bytes: u64,
    pub d2h_seconds: f64,
}

impl From<Timing> for Transfers {
    fn from(t: Timing) -> Transfers {
        Transfers {
            h2d_bytes: t.h2d_bytes,
            h2d_seconds: t.h2d_seconds,
            d2h_bytes: t.d2h_bytes,
            d2h_seconds: t.d2h_seconds,
        }
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
    /// RAJAPerf's checksum of the outputs (the pass farthest from the reference).
    pub checksum: f64,
    /// The reference's checksum.
    pub reference_checksum: f64,
    pub checksum_rel_diff: f64,
    pub checksum_agrees: bool,
    /// Element-by-element comparison with the reference (worst over the passes).
    pub verification: Verification,
    /// Copies of the last pass (none for `cpu`).
    pub transfers: Transfers,
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
}

/// The devices the variants run on.
#[derive(Debug, Default)]
pub struct Runner {
    /// For the `rust` variant.
    pub device: Option<offload::Device>,
    /// For the `cuda` variant.
    pub cuda: Option<CudaBaseline>,
}

impl Runner {
    /// Runs `kernel` in every variant of `opts`.
    pub fn run_kernel(&mut self, kernel: KernelId, opts: &Options) -> anyhow::Result<Vec<VariantResult>> {
        let initial = setup::setup(kernel, opts.size.unwrap_or_else(|| kernel.default_size()));
        let reps = opts.reps.unwrap_or_else(|| kernel.default_reps());
        let mut expected = initial.clone();
        reference::run(&mut expected, reference::reps_needed(kernel, reps));
        let reference_checksum = expected.checksum();

        let mut results = Vec::new();
        for &variant in &opts.variants {
            let mut times = Vec::new();
            let mut worst = Verification::default();
            let mut checksum = reference_checksum;
            let mut transfers = Transfers::default();
            for _ in 0..opts.npasses.max(1) {
                let mut p = initial.clone();
                let timing = self
                    .run_variant(variant, &mut p, reps)
                    .with_context(|| format!("{kernel} failed in the {} variant", variant.name()))?;
                times.push(timing.kernel_seconds / reps.max(1) as f64);
                worst.merge(verify(&p, &expected));
                let c = p.checksum();
                if relative_difference(c, reference_checksum)
                    >= relative_difference(checksum, reference_checksum)
                {
                    checksum = c;
                }
                transfers = timing.into();
            }
            let checksum_rel_diff = relative_difference(checksum, reference_checksum);
            results.push(VariantResult {
                kernel,
                group: kernel.group().name(),
                variant,
                device: self.device_name(variant),
                size: initial.size,
                reps,
                npasses: times.len(),
                time_per_rep_avg_s: times.iter().sum::<f64>() / times.len() as f64,
                time_per_rep_min_s: times.iter().copied().fold(f64::INFINITY, f64::min),
                checksum,
                reference_checksum,
                checksum_rel_diff,
                checksum_agrees: checksum_rel_diff <= CHECKSUM_RTOL,
                verification: worst,
                transfers,
            });
        }
        Ok(results)
    }

    fn run_variant(&mut self, variant: Variant, p: &mut Problem, reps: usize) -> anyhow::Result<Timing> {
        match variant {
            Variant::Rust => {
                let dev = self.device.as_ref().context("no device for the rust variant")?;
                kernels::run_rust(dev, p, reps)
            }
            Variant::Cuda => {
                self.cuda.as_mut().context("no CUDA baseline for the cuda variant")?.run(p, reps)
            }
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
