//! Block-private accumulation (`SharedAtomics`): histograms and sums per block merged once into
//! global memory, minima and maxima, compare-and-swap claims, and accumulation across phases.
//! On the CPU backend every block's threads run at once, so the atomics really contend.

use offload::{Device, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    pub const BINS: usize = 256;

    /// The fast histogram: every thread folds a grid-stride share of `x` into its block's
    /// shared bins, and each block adds its bins to the global ones once.
    #[kernel]
    pub fn histogram(x: &[u32], bins: Atomics<u32>, local: SharedAtomics<u32, BINS>, block: Block) {
        for i in grid_stride(x.len()) {
            local.add(&block, (x[i] % BINS as u32) as usize, 1);
        }
        let read = block.sync();
        for (bin, count) in local.mine(&read) {
            if count != 0 {
                bins.add(bin, count);
            }
        }
    }

    /// Weighted bins in `f32`, merged once per block.
    #[kernel]
    pub fn weighted32(x: &[u32], w: &[f32], out: Atomics<f32>, local: SharedAtomics<f32, 16>, block: Block) {
        for i in grid_stride(x.len()) {
            local.add(&block, (x[i] % 16) as usize, w[i]);
        }
        let read = block.sync();
        for (bin, v) in local.mine(&read) {
            out.add(bin, v);
        }
    }

    /// The same in `f64`, with a `u64` count beside it: two shared arrays in one kernel.
    #[kernel]
    pub fn weighted64(
        x: &[u32],
        w: &[f32],
        out: Atomics<f64>,
        count: Atomics<u64>,
        sums: SharedAtomics<f64, 16>,
        counts: SharedAtomics<u64, 16>,
        block: Block,
    ) {
        for i in grid_stride(x.len()) {
            let bin = (x[i] % 16) as usize;
            sums.add(&block, bin, f64::from(w[i]));
            counts.add(&block, bin, 1);
        }
        let read = block.sync();
        for (bin, v) in sums.mine(&read) {
            out.add(bin, v);
        }
        for (bin, v) in counts.mine(&read) {
            count.add(bin, v);
        }
    }

    /// Per block: the minimum and maximum of its values (slots 0 and 1), the one thread that
    /// wins a compare-and-swap on slot 2 (its index + 1 stays there), and a count of winners
    /// (slot 3). `claimed[i]` is 1 for the winning thread.
    #[kernel]
    pub fn extremes_and_claims(
        x: &[i32],
        mut claimed: Region<u32>,
        mut per_block: Region<[i32; 4]>,
        stats: SharedAtomics<i32, 4>,
        block: Block,
    ) {
        let i = global_linear_id();
        let t = thread_idx_x() as i32;
        let v = x.get(i).copied().unwrap_or(0);
        stats.min(&block, 0, v);
        stats.max(&block, 1, v);
        let won = stats.compare_exchange(&block, 2, 0, t + 1).is_ok();
        if won {
            stats.add(&block, 3, 1);
        }
        let read = block.sync();
        if let Some(c) = claimed.mine() {
            *c = u32::from(won);
        }
        let all = stats.as_slice(&read);
        if let Some(p) = per_block.mine() {
            *p = [all[0], all[1], all[2], all[3]];
        }
    }

    /// Two rounds of accumulation in one block's shared counters, with a read phase between:
    /// the second round adds to what the first left. `y[i]` gets bin `t % 8` after each round.
    #[kernel]
    pub fn two_rounds(mut y: Region<[u32; 2]>, counts: SharedAtomics<u32, 8>, block: Block) {
        let t = thread_idx_x() as usize;
        counts.add(&block, t % 8, 1);
        let read = block.sync();
        let first = counts.get(&read, t % 8);
        let block = read.sync();
        counts.add(&block, t % 8, 2);
        let now = counts.load(&block, t % 8);
        let read = block.sync();
        let second = counts.get(&read, t % 8);
        if let Some(yi) = y.mine() {
            *yi = [first, second.max(now)];
        }
    }

    /// A block reversed through shared memory: thread `t` stores its value at `n - 1 - t`
    /// (a scatter to indices no other thread owns), and reads its own slot back.
    #[kernel]
    pub fn reverse(x: &[u32], mut y: Region<u32>, slots: SharedAtomics<u32, 256>, block: Block) {
        let (t, n) = (thread_idx_x() as usize, block_dim_x() as usize);
        let i = y.index();
        slots.store(&block, n - 1 - t, x[i]);
        let read = block.sync();
        if let Some(o) = y.mine() {
            *o = slots.get(&read, t);
        }
    }

    /// An index past the end of the shared array: the launch fails naming the kernel.
    #[kernel]
    pub fn out_of_bounds(n: usize, local: SharedAtomics<u32, 8>, block: Block) {
        local.add(&block, n, 1);
    }
}

/// Values with a hot bin (a third of them in bin 7), as real histograms have.
fn skewed(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| if i % 3 == 0 { 7 } else { i.wrapping_mul(2_654_435_761) >> 7 }).collect()
}

#[test]
fn a_histogram_through_block_shared_bins_matches_the_host() {
    let dev = Device::default().unwrap();
    for (n, blocks, block) in [(100_003usize, 8usize, 128u32), (5, 3, 64), (0, 2, 32), (70_000, 1, 256)] {
        let x = skewed(n);
        let mut bins = vec![0u32; gpu::BINS];
        gpu::histogram::launch(&dev, Grid::threads(blocks * block as usize).block_size(block), &x, &mut bins)
            .unwrap();
        let mut want = vec![0u32; gpu::BINS];
        for v in &x {
            want[(v % gpu::BINS as u32) as usize] += 1;
        }
        assert_eq!(bins, want, "n = {n}, {blocks} blocks of {block}");
    }
}

#[test]
fn float_and_64_bit_shared_atomics_merge_exactly() {
    let dev = Device::default().unwrap();
    let n = 20_000;
    let x = skewed(n);
    // Multiples of 1/4 below 2^10: every partial sum is exact in f32, whatever the order.
    let w: Vec<f32> = (0..n).map(|i| (i % 13) as f32 * 0.25).collect();
    let (mut out32, mut out64, mut count) = (vec![0.0f32; 16], vec![0.0f64; 16], vec![0u64; 16]);
    let grid = Grid::threads(4 * 96).block_size(96);
    gpu::weighted32::launch(&dev, grid, &x, &w, &mut out32).unwrap();
    gpu::weighted64::launch(&dev, grid, &x, &w, &mut out64, &mut count).unwrap();
    let (mut w32, mut w64, mut c) = (vec![0.0f32; 16], vec![0.0f64; 16], vec![0u64; 16]);
    for (v, wi) in x.iter().zip(&w) {
        let bin = (v % 16) as usize;
        w32[bin] += wi;
        w64[bin] += f64::from(*wi);
        c[bin] += 1;
    }
    assert_eq!(out32, w32);
    assert_eq!(out64, w64);
    assert_eq!(count, c);
}

#[test]
fn minima_maxima_and_one_winner_per_block() {
    let dev = Device::default().unwrap();
    let (blocks, block) = (5usize, 64usize);
    let n = blocks * block;
    let x: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 101 - 50).collect();
    let mut claimed = vec![0u32; n];
    let mut per_block = vec![[0i32; 4]; n];
    gpu::extremes_and_claims::launch(
        &dev,
        Grid::threads(n).block_size(block as u32),
        &x,
        &mut claimed,
        &mut per_block,
    )
    .unwrap();
    for b in 0..blocks {
        let range = b * block..(b + 1) * block;
        let xs = &x[range.clone()];
        // Zero-initialised slots: the minimum is at most 0 and the maximum at least 0.
        let (lo, hi) = (xs.iter().copied().min().unwrap().min(0), xs.iter().copied().max().unwrap().max(0));
        let winners: Vec<usize> = range.clone().filter(|&i| claimed[i] == 1).collect();
        assert_eq!(winners.len(), 1, "block {b}: one thread wins the compare-and-swap");
        let winner = (winners[0] - b * block) as i32 + 1;
        for i in range {
            assert_eq!(per_block[i], [lo, hi, winner, 1], "block {b}, element {i}");
        }
    }
}

#[test]
fn accumulation_carries_across_phases() {
    let dev = Device::default().unwrap();
    let block = 48usize;
    let mut y = vec![[0u32; 2]; 2 * block];
    gpu::two_rounds::launch(&dev, Grid::threads(2 * block).block_size(block as u32), &mut y).unwrap();
    // 48 threads over 8 counters: 6 each; the second round adds 2 per thread.
    assert!(y.iter().all(|&v| v == [6, 18]), "{y:?}");
}

#[test]
fn stores_scatter_within_a_block() {
    let dev = Device::default().unwrap();
    let x: Vec<u32> = (0..3 * 200).map(|i| i * 7 + 1).collect();
    let mut y = vec![0u32; x.len()];
    gpu::reverse::launch(&dev, Grid::threads(x.len()).block_size(200), &x, &mut y).unwrap();
    let want: Vec<u32> = x.chunks(200).flat_map(|c| c.iter().rev().copied()).collect();
    assert_eq!(y, want);
}

#[test]
fn an_index_past_the_end_fails_the_launch_naming_the_kernel() {
    let dev = Device::cpu();
    let err = gpu::out_of_bounds::launch(&dev, Grid::threads(64).block_size(32), 8).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("out_of_bounds"), "{text}");
    assert!(text.contains("shared atomic index 8 out of bounds for length 8"), "{text}");
}
