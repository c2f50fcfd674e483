//! A 256-bin histogram, the fast way: each block counts into its own bins in shared memory
//! (`SharedAtomics`), where contended updates stay cheap, and adds them to the global bins once;
//! the grid is sized to fill the device with the kernel's blocks (`gpu::histogram::resident`) and every thread walks its share of
//! the input (`grid_stride`). Beside it, the naive kernel — one global atomic per value — for
//! comparison. Both are verified against the host.
//!
//! On a GPU it also times both (the bins zeroed by a kernel before each histogram, as the
//! CUDA C++ counterpart `examples/cuda/histogram.cu` does) and prints one JSON line per
//! kernel for `scripts/gpu check`.
//!
//! Usage: histogram [VALUES] [REPS]   (defaults 16777216 and 50)

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    pub const BINS: usize = 256;

    /// Block-private bins, merged once per block.
    #[kernel]
    pub fn histogram(values: &[u32], bins: Atomics<u32>, local: SharedAtomics<u32, BINS>, block: Block) {
        for i in grid_stride(values.len()) {
            local.add(&block, values[i] as usize % BINS, 1);
        }
        let read = block.sync();
        for (bin, count) in local.mine(&read) {
            if count != 0 {
                bins.add(bin, count);
            }
        }
    }

    /// One global atomic per value: simple, and slow wherever many values share a bin.
    #[kernel]
    pub fn histogram_global(values: &[u32], bins: Atomics<u32>) {
        let i = global_linear_id();
        if i < values.len() {
            bins.add(values[i] as usize % BINS, 1);
        }
    }

    /// Zeroes the bins before a timed histogram.
    #[kernel]
    pub fn zero(mut bins: Region<u32>) {
        if let Some(b) = bins.mine() {
            *b = 0;
        }
    }
}

use offload::{Device, DeviceBuffer};
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(1 << 24), |a| a.parse())?;
    let reps: usize = args.next().map_or(Ok(50), |a| a.parse())?;
    let dev = Device::default()?;
    // Pseudo-random values (a multiplicative hash), as an image's or a simulation's would be.
    let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 8).collect();
    let mut want = vec![0u32; gpu::BINS];
    for v in &values {
        want[*v as usize % gpu::BINS] += 1;
    }

    let grid = gpu::histogram::resident(&dev, 256)?;
    let mut bins = vec![0u32; gpu::BINS];
    gpu::histogram::launch(&dev, grid, &values, &mut bins)?;
    anyhow::ensure!(bins == want, "histogram (shared bins): the bins differ from the host's");
    let mut naive = vec![0u32; gpu::BINS];
    gpu::histogram_global::launch(&dev, n, &values, &mut naive)?;
    anyhow::ensure!(naive == want, "histogram (global atomics): the bins differ from the host's");
    println!(
        "histogram: {n} values into {} bins on {dev}: both kernels verified against the host",
        gpu::BINS
    );

    if dev.is_gpu() && reps > 0 {
        let on_device = DeviceBuffer::from_slice(&dev, &values)?;
        let mut out = DeviceBuffer::<u32>::zeroed(&dev, gpu::BINS)?;
        let props = dev.properties();
        let timed = |name: &str,
                     run: &mut dyn FnMut(&mut DeviceBuffer<u32>) -> offload::Result<()>,
                     out: &mut DeviceBuffer<u32>|
         -> anyhow::Result<f64> {
            for _ in 0..3 {
                gpu::zero::launch(&dev, gpu::BINS, &mut *out)?;
                run(out)?;
            }
            dev.sync()?;
            let start = Instant::now();
            for _ in 0..reps {
                gpu::zero::launch(&dev, gpu::BINS, &mut *out)?;
                run(out)?;
            }
            dev.sync()?;
            let us = start.elapsed().as_secs_f64() * 1e6 / reps as f64;
            anyhow::ensure!(out.to_vec()? == want, "{name}: the timed bins differ from the host's");
            Ok(us)
        };
        let shared_us =
            timed("shared", &mut |o| gpu::histogram::launch(&dev, grid, &on_device, o), &mut out)?;
        let global_us =
            timed("global", &mut |o| gpu::histogram_global::launch(&dev, n, &on_device, o), &mut out)?;
        for (kernel, us) in [("shared", shared_us), ("global", global_us)] {
            println!(
                "{{\"bench\":\"histogram\",\"side\":\"rust\",\"kernel\":\"{kernel}\",\"values\":{n},\"bins\":{},\"blocks\":{},\"reps\":{reps},\"us\":{us:.2}}}",
                gpu::BINS,
                grid.blocks()[0]
            );
        }
        eprintln!(
            "histogram of {n} values: shared bins {shared_us:.1} µs, global atomics {global_us:.1} µs per histogram \
             ({} blocks of 256 on {} multiprocessors)",
            grid.blocks()[0],
            props.multiprocessors
        );
    }
    Ok(())
}
