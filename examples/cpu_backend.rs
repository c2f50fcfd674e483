//! How fast the CPU backend runs kernels, against the same loop written as plain sequential
//! Rust, measured in the same run: an element-wise kernel (`saxpy`), a three-point stencil
//! through block-shared memory (`smooth`: one barrier), a warp reduction (`warp_sum`: one warp
//! operation) and a block-shared tree reduction (`block_sum`: sixteen barriers per thread, the
//! worst case for an emulator that switches between a block's threads at each barrier). Each
//! ratio is the CPU backend's best time over the sequential loop's best time; every result is
//! checked against the loop's.
//!
//! `cargo run --release --example cpu_backend [log2 n] [repetitions] [kernel]` (default 2^20,
//! 5, every kernel). It always runs on the CPU backend, whatever GPU the machine has.

use offload::{Device, Grid};
use std::time::{Duration, Instant};

const BLOCK: u32 = 256;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn saxpy(a: f32, x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi += a * x[i];
        }
    }

    /// `y[i] = x[i-1] + x[i] + x[i+1]` within each block (block edges see only themselves).
    #[kernel]
    pub fn smooth(x: &[f32], mut y: Region<f32>, tile: Shared<f32>, block: Block) {
        let i = y.index();
        let t = thread_idx_x() as usize;
        tile.write(&block, if i < x.len() { x[i] } else { 0.0 });
        let read = block.sync();
        let left = if t > 0 { tile.get(&read, t - 1) } else { 0.0 };
        let right = if t + 1 < tile.len() { tile.get(&read, t + 1) } else { 0.0 };
        if let Some(yi) = y.mine() {
            *yi = left + tile.mine() + right;
        }
    }

    /// Each block's sum of its `x`, by halving in shared memory: one barrier per step.
    #[kernel]
    pub fn block_sum(x: &[f32], mut sums: PerBlock<f32>, tile: Shared<f32>, block: Block) {
        let i = global_linear_id();
        let t = thread_idx_x() as usize;
        let mut block = block;
        let mut v = if i < x.len() { x[i] } else { 0.0 };
        let mut half = tile.len() / 2;
        while half > 0 {
            tile.write(&block, v);
            let read = block.sync();
            if t < half {
                v += tile.get(&read, t + half);
            }
            block = read.sync();
            half /= 2;
        }
        if let Some(s) = sums.mine() {
            *s = v;
        }
    }

    /// Each warp's sum of its `x` (32-lane warps: the CPU backend's default).
    #[kernel]
    pub fn warp_sum(w: Warp, x: &[u32], mut sums: Groups<u32, 32>) {
        let i = global_linear_id();
        let total = w.sum(if i < x.len() { x[i] } else { 0 });
        if let Some(s) = sums.mine() {
            *s = total;
        }
    }
}

/// The best of `reps` runs of `f`.
fn best(reps: usize, mut f: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<Duration> {
    let mut best = Duration::MAX;
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        best = best.min(t.elapsed());
    }
    Ok(best)
}

/// One kernel against its loop: the CPU backend's best time, the loop's, and whether the
/// results agree.
struct Case {
    name: &'static str,
    run: fn(&Device, usize, usize) -> anyhow::Result<(Duration, Duration)>,
}

fn saxpy(dev: &Device, n: usize, reps: usize) -> anyhow::Result<(Duration, Duration)> {
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let (mut y, mut want) = (vec![1.0f32; n], vec![1.0f32; n]);
    let kernel = best(reps, || Ok(gpu::saxpy::launch(dev, n, 0.5, &x, &mut y)?))?;
    let seq = best(reps, || {
        for (w, xi) in want.iter_mut().zip(&x) {
            *w += 0.5 * xi;
        }
        std::hint::black_box(&mut want);
        Ok(())
    })?;
    anyhow::ensure!(y == want, "saxpy differs from the loop");
    Ok((kernel, seq))
}

fn smooth(dev: &Device, n: usize, reps: usize) -> anyhow::Result<(Duration, Duration)> {
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let (mut y, mut want) = (vec![0.0f32; n], vec![0.0f32; n]);
    let grid = Grid::threads(n).block_size(BLOCK);
    let kernel = best(reps, || Ok(gpu::smooth::launch(dev, grid, &x, &mut y)?))?;
    let b = BLOCK as usize;
    let seq = best(reps, || {
        for (w, xs) in want.chunks_mut(b).zip(x.chunks(b)) {
            for t in 0..xs.len() {
                let left = if t > 0 { xs[t - 1] } else { 0.0 };
                let right = if t + 1 < b && t + 1 < xs.len() { xs[t + 1] } else { 0.0 };
                w[t] = left + xs[t] + right;
            }
        }
        std::hint::black_box(&mut want);
        Ok(())
    })?;
    anyhow::ensure!(y == want, "smooth differs from the loop");
    Ok((kernel, seq))
}

fn warp_sum(dev: &Device, n: usize, reps: usize) -> anyhow::Result<(Duration, Duration)> {
    anyhow::ensure!(
        std::env::var("OFFLOAD_CPU_WARP_SIZE").map_or(true, |v| v == "32"),
        "warp_sum is written for 32-lane warps: unset OFFLOAD_CPU_WARP_SIZE"
    );
    let xs: Vec<u32> = (0..n as u32).map(|i| i % 1000).collect();
    let (mut sums, mut want) = (vec![0u32; n.div_ceil(32)], vec![0u32; n.div_ceil(32)]);
    let grid = Grid::threads(n).block_size(BLOCK);
    let kernel = best(reps, || Ok(gpu::warp_sum::launch(dev, grid, &xs, &mut sums)?))?;
    let seq = best(reps, || {
        for (w, chunk) in want.iter_mut().zip(xs.chunks(32)) {
            *w = chunk.iter().sum();
        }
        std::hint::black_box(&mut want);
        Ok(())
    })?;
    anyhow::ensure!(sums == want, "warp_sum differs from the loop");
    Ok((kernel, seq))
}

fn block_sum(dev: &Device, n: usize, reps: usize) -> anyhow::Result<(Duration, Duration)> {
    let x: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let blocks = n.div_ceil(BLOCK as usize);
    let (mut sums, mut want) = (vec![0.0f32; blocks], vec![0.0f32; blocks]);
    let grid = Grid::threads(n).block_size(BLOCK);
    let kernel = best(reps, || Ok(gpu::block_sum::launch(dev, grid, &x, &mut sums)?))?;
    let seq = best(reps, || {
        for (w, chunk) in want.iter_mut().zip(x.chunks(BLOCK as usize)) {
            *w = chunk.iter().sum();
        }
        std::hint::black_box(&mut want);
        Ok(())
    })?;
    // Small integers: every order of the additions gives the same sum.
    anyhow::ensure!(sums == want, "block_sum differs from the loop");
    Ok((kernel, seq))
}

const CASES: [Case; 4] = [
    Case { name: "saxpy", run: saxpy },
    Case { name: "smooth", run: smooth },
    Case { name: "warp_sum", run: warp_sum },
    Case { name: "block_sum", run: block_sum },
];

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let log2: u32 = args.next().map_or(Ok(20), |a| a.parse())?;
    let reps: usize = args.next().map_or(Ok(5), |a| a.parse())?;
    let only = args.next();
    anyhow::ensure!(
        only.as_deref().is_none_or(|o| CASES.iter().any(|c| c.name == o)),
        "no kernel {only:?} here; the kernels are {:?}",
        CASES.map(|c| c.name)
    );
    let n = 1usize << log2;
    let dev = Device::cpu();
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    println!("CPU backend vs sequential Rust, n = 2^{log2}, best of {reps}, {workers} host threads");
    println!("{:<10} {:>12} {:>12} {:>8}", "kernel", "backend ms", "loop ms", "ratio");
    let mut logs = Vec::new();
    for case in CASES.iter().filter(|c| only.as_deref().is_none_or(|o| o == c.name)) {
        let (kernel, seq) = (case.run)(&dev, n, reps)?;
        let ratio = kernel.as_secs_f64() / seq.as_secs_f64();
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!("{:<10} {:>12.3} {:>12.3} {ratio:>8.1}", case.name, ms(kernel), ms(seq));
        logs.push(ratio.ln());
    }
    println!("geomean ratio {:.1}", (logs.iter().sum::<f64>() / logs.len() as f64).exp());
    Ok(())
}
