//! What bounds checks cost inside kernels: three access patterns, each written once with
//! ordinary indexing (`x[i]`, checked) and once with `get_unchecked` (the baseline), timed in
//! the same run on device buffers and interleaved. Prints one JSON line per pattern with both
//! median times and their ratio; `scripts/gpu check` runs it on the GPU.
//!
//! This measurement harness holds the only `unsafe` code in any kernel of the repository, on
//! purpose: the unchecked baseline is what safe code is measured against. Its module says so
//! with `#[offload::kernels(allow_unsafe)]`; users never need it.
//!
//! Usage: bounds_check [ELEMENTS] (default 2^25 f64)

use offload::{Device, DeviceBuffer, Grid};
use std::time::Instant;

#[offload::kernels(allow_unsafe)]
mod gpu {
    use offload::prelude::*;

    /// `y[i] += a·x[i]` over a grid-stride loop.
    #[kernel]
    pub fn axpy_checked(a: f64, x: &[f64], mut y: GridStride<f64>) {
        for (i, yi) in y.iter_mut() {
            *yi += a * x[i];
        }
    }

    #[kernel]
    pub fn axpy_unchecked(a: f64, x: &[f64], mut y: GridStride<f64>) {
        for (i, yi) in y.iter_mut() {
            // SAFETY: the host launches with `x.len() == y.len()` and `i < y.len()`.
            *yi += a * unsafe { *x.get_unchecked(i) };
        }
    }

    /// A three-point stencil, one element per thread.
    #[kernel]
    pub fn stencil_checked(x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine()
            && i > 0
            && i + 1 < x.len()
        {
            *yi = 0.25 * x[i - 1] + 0.5 * x[i] + 0.25 * x[i + 1];
        }
    }

    #[kernel]
    pub fn stencil_unchecked(x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine()
            && i > 0
            && i + 1 < x.len()
        {
            // SAFETY: `0 < i` and `i + 1 < x.len()` were just checked.
            *yi = unsafe {
                0.25 * x.get_unchecked(i - 1) + 0.5 * x.get_unchecked(i) + 0.25 * x.get_unchecked(i + 1)
            };
        }
    }

    /// A 16-tap filter: a loop of loads per thread (FIR's pattern).
    #[kernel]
    pub fn taps_checked(c: [f64; 16], x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine()
            && i + 16 <= x.len()
        {
            let mut acc = 0.0;
            for (k, &ck) in c.iter().enumerate() {
                acc = math::fma(ck, x[i + k], acc);
            }
            *yi = acc;
        }
    }

    /// The same filter written with one checked window: `w` has exactly 16 elements, so the
    /// compiler drops the per-tap checks. The safe formulation the language recommends.
    #[kernel]
    pub fn taps_window(c: [f64; 16], x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine()
            && let Some(w) = x.get(i..i + 16)
        {
            let mut acc = 0.0;
            for (&ck, &xk) in c.iter().zip(w) {
                acc = math::fma(ck, xk, acc);
            }
            *yi = acc;
        }
    }

    #[kernel]
    pub fn taps_unchecked(c: [f64; 16], x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine()
            && i + 16 <= x.len()
        {
            let mut acc = 0.0;
            for (k, &ck) in c.iter().enumerate() {
                // SAFETY: `i + k < i + 16 <= x.len()`.
                acc = math::fma(ck, unsafe { *x.get_unchecked(i + k) }, acc);
            }
            *yi = acc;
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Times `reps` queued launches of each variant, alternating, `rounds` times; returns the
/// median seconds per launch of (checked, unchecked).
fn time_pair(
    dev: &Device,
    rounds: usize,
    reps: usize,
    checked: &mut dyn FnMut() -> offload::Result<()>,
    unchecked: &mut dyn FnMut() -> offload::Result<()>,
) -> anyhow::Result<(f64, f64)> {
    let run = |f: &mut dyn FnMut() -> offload::Result<()>| -> anyhow::Result<f64> {
        dev.sync()?;
        let start = Instant::now();
        for _ in 0..reps {
            f()?;
        }
        dev.sync()?;
        Ok(start.elapsed().as_secs_f64() / reps as f64)
    };
    run(checked)?; // warm-up: first launches load the module
    run(unchecked)?;
    let (mut c, mut u) = (Vec::new(), Vec::new());
    for _ in 0..rounds {
        c.push(run(checked)?);
        u.push(run(unchecked)?);
    }
    Ok((median(c), median(u)))
}

fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args().nth(1).map_or(Ok(1 << 25), |s| s.parse())?;
    let dev = Device::default()?;
    let (rounds, reps) = if dev.kind() == offload::DeviceKind::Cpu { (3, 2) } else { (11, 50) };
    let host: Vec<f64> = (0..n).map(|i| (i % 1000) as f64 * 0.001).collect();
    let x = DeviceBuffer::from_slice(&dev, &host)?;
    let mut y = DeviceBuffer::<f64>::zeroed(&dev, n)?;
    let mut y2 = DeviceBuffer::<f64>::zeroed(&dev, n)?;
    let taps: [f64; 16] = std::array::from_fn(|k| 1.0 / (k + 1) as f64);
    let stride_grid = Grid::threads(132 * 2048).block_size(256);

    let mut results = Vec::new();
    let (c, u) = time_pair(
        &dev,
        rounds,
        reps,
        &mut || gpu::axpy_checked::launch(&dev, stride_grid, 0.5, &x, &mut y),
        &mut || gpu::axpy_unchecked::launch(&dev, stride_grid, 0.5, &x, &mut y2),
    )?;
    results.push(("axpy_grid_stride", c, u, 3.0 * 8.0 * n as f64));
    let (c, u) = time_pair(
        &dev,
        rounds,
        reps,
        &mut || gpu::stencil_checked::launch(&dev, n, &x, &mut y),
        &mut || gpu::stencil_unchecked::launch(&dev, n, &x, &mut y2),
    )?;
    results.push(("stencil3_region", c, u, 2.0 * 8.0 * n as f64));
    // The two variants must agree (same arithmetic) before their times mean anything.
    let (a, b) = (y.to_vec()?, y2.to_vec()?);
    anyhow::ensure!(a == b, "stencil: checked and unchecked results differ");
    let (c, u) = time_pair(
        &dev,
        rounds,
        reps,
        &mut || gpu::taps_checked::launch(&dev, n, taps, &x, &mut y),
        &mut || gpu::taps_unchecked::launch(&dev, n, taps, &x, &mut y2),
    )?;
    results.push(("fir16_region", c, u, 2.0 * 8.0 * n as f64));
    let (a, b) = (y.to_vec()?, y2.to_vec()?);
    anyhow::ensure!(a == b, "taps: checked and unchecked results differ");
    let (c, u) = time_pair(
        &dev,
        rounds,
        reps,
        &mut || gpu::taps_window::launch(&dev, n, taps, &x, &mut y),
        &mut || gpu::taps_unchecked::launch(&dev, n, taps, &x, &mut y2),
    )?;
    results.push(("fir16_region_window", c, u, 2.0 * 8.0 * n as f64));
    let (a, b) = (y.to_vec()?, y2.to_vec()?);
    anyhow::ensure!(a == b, "taps (window): checked and unchecked results differ");

    for (name, checked, unchecked, bytes) in results {
        println!(
            "{{\"kernel\":\"{name}\",\"elements\":{n},\"checked_us\":{:.2},\"unchecked_us\":{:.2},\"ratio\":{:.4},\"checked_gb_per_s\":{:.1}}}",
            checked * 1e6,
            unchecked * 1e6,
            checked / unchecked,
            bytes / checked / 1e9
        );
    }
    Ok(())
}
