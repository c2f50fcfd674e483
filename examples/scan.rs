//! An exclusive prefix sum in one pass over the data (the "decoupled look-back" scan of CUB
//! and of Merrill and Garland, 2016), in safe code: each block scans a tile of 4,096 values
//! held in registers, publishes its tile's sum, looks back at its predecessors' published
//! sums (its first warp, a warp's width of tiles at a time, sleeping between polls) until it
//! meets one that holds the whole prefix, publishes its own prefix, and writes its outputs.
//! The data is read once and written once, as a copy would.
//!
//! - A tile is four rows of 256 `u32x4` vectors; thread `t` owns vector `t` of each row
//!   (`Tiles<u32x4, 4>`), so a warp reads and writes 512 consecutive bytes per access. The
//!   rows' vector totals are scanned together, across the warp with shuffles and across the
//!   block through one barrier.
//! - The tile's status lives in an `Atomics<u64>` buffer: flag in the high word, sum in the
//!   low one, so one relaxed atomic load sees both (a status that pointed at data elsewhere
//!   would publish it with `store_release` and read it after `load_acquire`).
//! - Tile `b` is block `b`: blocks start in index order, so a block only ever waits on tiles
//!   that have started (as CUB's scan assumes; the CPU backend hands blocks out in order).
//!
//! Checked against the host; on a GPU also timed, with one JSON line for `scripts/gpu check`
//! beside CUB's `DeviceScan::ExclusiveSum` in `examples/cuda/scan.cu`.
//!
//! Usage: scan [VALUES] [REPS]   (defaults 2^26 and 50 on a GPU, 2^15 on the CPU backend)

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Vectors of four values per thread (the rows of a tile; their totals travel as one
    /// `u32x4`).
    pub const VECTORS: usize = 4;
    /// Threads per block: a tile is `BLOCK × VECTORS × 4` = 4,096 values.
    pub const BLOCK: u32 = 256;
    /// A tile's status: its own sum is published (low word).
    const AGGREGATE: u64 = 1 << 32;
    /// A tile's status: the sum of every value up to and including the tile (low word).
    const PREFIX: u64 = 2 << 32;

    /// `out[i] = x[0] + … + x[i - 1]` (wrapping), four values per vector. (At most 64
    /// registers, so that four blocks fit a multiprocessor.)
    #[kernel(launch_bounds(256, 4))]
    pub fn exclusive_sum(
        x: &[u32x4],
        mut out: Tiles<u32x4, VECTORS>,
        status: Atomics<u64>,
        sums: Shared<u32x4>,
        w: Warp,
        block: Block,
    ) {
        let tile = block_idx_x() as usize;
        // Row `k` of the tile is `BLOCK` consecutive vectors, one per thread: a warp reads (and
        // later writes) 512 consecutive bytes at once. Past the end, zeros.
        let mut v = [u32x4::default(); VECTORS];
        for (k, vk) in v.iter_mut().enumerate() {
            if let Some(&xk) = x.get(out.index(k)) {
                *vk = xk;
            }
        }
        let mut totals = u32x4::default();
        for k in 0..VECTORS {
            totals[k] = v[k][0].wrapping_add(v[k][1]).wrapping_add(v[k][2]).wrapping_add(v[k][3]);
        }

        // Each row's vector totals scanned across the warp (all rows at once), then across the
        // block's warps through one `u32x4` slot per thread.
        let lane = w.lane();
        let mut inclusive = totals;
        for step in 0..w.size().trailing_zeros() {
            for k in 0..VECTORS {
                let up = w.shuffle_up(inclusive[k], 1 << step);
                if lane >= 1 << step {
                    inclusive[k] = inclusive[k].wrapping_add(up);
                }
            }
        }
        sums.write(&block, inclusive);
        let read = block.sync();
        let slots = sums.as_slice(&read);
        let (size, t) = (w.size() as usize, thread_idx_x() as usize);
        let (mut warps_before, mut rows) = (u32x4::default(), u32x4::default());
        for first in (0..slots.len()).step_by(size) {
            let warp_total = slots[(first + size - 1).min(slots.len() - 1)];
            for k in 0..VECTORS {
                if first + size <= t {
                    warps_before[k] = warps_before[k].wrapping_add(warp_total[k]);
                }
                rows[k] = rows[k].wrapping_add(warp_total[k]);
            }
        }
        let block_total = rows[0].wrapping_add(rows[1]).wrapping_add(rows[2]).wrapping_add(rows[3]);

        // Publish the tile's sum, then look back for the prefix before it: the first warp
        // looks while the others wait at the broadcast. A status word holds the flag and the
        // sum together, so relaxed atomics suffice: no other memory is published through it.
        let first_warp = w.shuffle(t as u32, 0) == 0;
        let mut before = 0u32;
        if tile == 0 {
            if t == 0 {
                status.store(0, PREFIX | u64::from(block_total));
            }
        } else if first_warp {
            if t == 0 {
                status.store(tile, AGGREGATE | u64::from(block_total));
            }
            // On large grids, back off: the predecessors' sums take about a microsecond to
            // arrive, and polling sooner only loads the memory system they travel through.
            let backoff = grid_dim_x() >= 500;
            if backoff {
                nanosleep(1500);
            }
            let mut end = tile;
            loop {
                // Lane `l` looks at tile `end - 1 - l`; before tile 0 the prefix is 0.
                let j = end.checked_sub(1 + lane as usize);
                let s = loop {
                    let s = match j {
                        Some(j) => status.load(j),
                        None => PREFIX,
                    };
                    if w.all(s >> 32 != 0) {
                        break s;
                    }
                    if backoff {
                        nanosleep(500);
                    }
                };
                // The nearest tile with a prefix ends the look-back: add the sums up to it.
                let prefixes = w.ballot(s & PREFIX != 0);
                let stop = prefixes.trailing_zeros();
                let counted = if lane <= stop { s as u32 } else { 0 };
                before = before.wrapping_add(w.sum(counted));
                if prefixes != 0 {
                    break;
                }
                end -= size;
            }
            if t == 0 {
                status.store(tile, PREFIX | u64::from(before.wrapping_add(block_total)));
            }
        }
        let before = read.broadcast(before);

        let mut row_start = before;
        for (k, vk) in v.iter().enumerate() {
            let mut run =
                row_start.wrapping_add(warps_before[k]).wrapping_add(inclusive[k].wrapping_sub(totals[k]));
            let mut y = u32x4::default();
            for e in 0..4 {
                y[e] = run;
                run = run.wrapping_add(vk[e]);
            }
            if let Some(o) = out.get_mut(k) {
                *o = y;
            }
            row_start = row_start.wrapping_add(rows[k]);
        }
    }

    /// Clears the tiles' status words before a scan.
    #[kernel]
    pub fn clear(mut status: Region<u64>) {
        if let Some(s) = status.mine() {
            *s = 0;
        }
    }
}

use offload::{Device, DeviceBuffer, Grid, u32x4};
use std::time::Instant;

/// Scans `x` into `out` on the device: `status` needs one word per tile.
fn exclusive_sum(
    dev: &Device,
    x: &DeviceBuffer<u32x4>,
    out: &mut DeviceBuffer<u32x4>,
    status: &mut DeviceBuffer<u64>,
) -> offload::Result<()> {
    let tiles = x.len().div_ceil(gpu::BLOCK as usize * gpu::VECTORS);
    gpu::clear::launch(dev, tiles, &mut *status)?;
    gpu::exclusive_sum::launch(
        dev,
        Grid::threads(tiles * gpu::BLOCK as usize).block_size(gpu::BLOCK),
        x,
        out,
        &mut *status,
    )
}

fn main() -> anyhow::Result<()> {
    let dev = Device::default()?;
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(if dev.is_gpu() { 1 << 26 } else { 1 << 15 }), |a| a.parse())?;
    let reps: usize = args.next().map_or(Ok(50), |a| a.parse())?;
    anyhow::ensure!(
        n.is_multiple_of(4) && n > 0,
        "scan: the number of values must be a positive multiple of 4"
    );
    // Small pseudo-random values (a multiplicative hash), whose sum stays within u32.
    let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 28).collect();
    let vectors: Vec<u32x4> = values.chunks_exact(4).map(|c| u32x4::new(c[0], c[1], c[2], c[3])).collect();
    let tiles = vectors.len().div_ceil(gpu::BLOCK as usize * gpu::VECTORS);

    let x = DeviceBuffer::from_slice(&dev, &vectors)?;
    let mut out = DeviceBuffer::<u32x4>::zeroed(&dev, vectors.len())?;
    let mut status = DeviceBuffer::<u64>::zeroed(&dev, tiles)?;
    exclusive_sum(&dev, &x, &mut out, &mut status)?;
    let check = |out: &DeviceBuffer<u32x4>| -> anyhow::Result<()> {
        let got = out.to_vec()?;
        let mut run = 0u32;
        for (i, (g, v)) in got.iter().flat_map(|g| g.to_array()).zip(&values).enumerate() {
            anyhow::ensure!(g == run, "scan: element {i} is {g}, the host's prefix sum is {run}");
            run = run.wrapping_add(*v);
        }
        Ok(())
    };
    check(&out)?;
    println!("scan: exclusive sum of {n} values in {tiles} tiles on {dev}: verified against the host");

    if dev.is_gpu() && reps > 0 {
        for _ in 0..3 {
            exclusive_sum(&dev, &x, &mut out, &mut status)?;
        }
        dev.sync()?;
        let start = Instant::now();
        for _ in 0..reps {
            exclusive_sum(&dev, &x, &mut out, &mut status)?;
        }
        dev.sync()?;
        let us = start.elapsed().as_secs_f64() * 1e6 / reps as f64;
        check(&out)?;
        let gbs = (2 * n * 4) as f64 / (us * 1e-6) / 1e9;
        println!(
            "{{\"bench\":\"scan\",\"side\":\"rust\",\"values\":{n},\"reps\":{reps},\"us\":{us:.2},\"gb_per_s\":{gbs:.1}}}"
        );
        eprintln!("scan of {n} values: {us:.1} µs ({gbs:.0} GB/s read + written)");

        // The library's generic scan (`offload::algorithms`) on the same values, as `u32`.
        let flat = DeviceBuffer::from_slice(&dev, &values)?;
        let mut flat_out = DeviceBuffer::<u32>::zeroed(&dev, n)?;
        for _ in 0..3 {
            offload::algorithms::exclusive_sum(&dev, &flat, &mut flat_out)?;
        }
        dev.sync()?;
        let start = Instant::now();
        for _ in 0..reps {
            offload::algorithms::exclusive_sum(&dev, &flat, &mut flat_out)?;
        }
        dev.sync()?;
        let us = start.elapsed().as_secs_f64() * 1e6 / reps as f64;
        let got = flat_out.to_vec()?;
        let mut run = 0u32;
        for (i, (g, v)) in got.iter().zip(&values).enumerate() {
            anyhow::ensure!(*g == run, "offload::algorithms::exclusive_sum: element {i} is {g}, want {run}");
            run = run.wrapping_add(*v);
        }
        let gbs = (2 * n * 4) as f64 / (us * 1e-6) / 1e9;
        println!(
            "{{\"bench\":\"scan\",\"side\":\"rust-library\",\"values\":{n},\"reps\":{reps},\"us\":{us:.2},\"gb_per_s\":{gbs:.1}}}"
        );
        eprintln!(
            "offload::algorithms::exclusive_sum of {n} values: {us:.1} µs ({gbs:.0} GB/s; its scratch from the device's pool)"
        );
    }
    Ok(())
}
