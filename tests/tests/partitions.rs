//! Grid-stride and chunked partitions: every element written exactly once, by a grid smaller
//! than the array; one element per block and per group of threads, written by the block's or
//! group's first thread.

use offload::{Device, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `y[i] = 2·x[i] + i` over a grid-stride loop.
    #[kernel]
    pub fn strided(x: &[f32], mut y: GridStride<f32>) {
        for (i, yi) in y.iter_mut() {
            *yi = 2.0 * x[i] + i as f32;
        }
    }

    /// Each block's sum of `x` (through shared memory), written once by its first thread,
    /// with the block's linear index beside it.
    #[kernel]
    pub fn block_totals(x: &[u32], mut totals: PerBlock<[u64; 2]>, slots: Shared<u32>, block: Block) {
        let i = global_linear_id();
        slots.write(&block, x.get(i).copied().unwrap_or(0));
        let read = block.sync();
        let sum: u64 = slots.as_slice(&read).iter().map(|&v| u64::from(v)).sum();
        let b = totals.index() as u64;
        if let Some(t) = totals.mine() {
            *t = [sum, b];
        }
    }

    /// Groups of `G` consecutive threads: the leader writes its group's index and the group's
    /// sum of `x`, combined with shuffles down the warp (groups of 1, 4 and 32 lanes).
    #[kernel(launch_bounds(256))]
    pub fn group_sums(
        x: &[u32],
        mut g1: Groups<u32, 1>,
        mut g4: Groups<u32, 4>,
        mut g32: Groups<u32, 32>,
        w: Warp,
    ) {
        let v = x.get(global_linear_id()).copied().unwrap_or(0);
        let (mut s4, mut s32) = (v, v);
        for off in [2u32, 1] {
            s4 += w.shuffle_down(s4, off);
        }
        for off in [16u32, 8, 4, 2, 1] {
            s32 += w.shuffle_down(s32, off);
        }
        let _ = g4.rank();
        if let Some(o) = g1.mine() {
            *o = v;
        }
        if let Some(o) = g4.mine() {
            *o = s4;
        }
        if let Some(o) = g32.mine() {
            *o = s32;
        }
    }

    /// Each thread writes who owns each of its striped tile elements.
    #[kernel]
    pub fn tiled(mut out: Tiles<u64, 3>) {
        let owner = (block_idx_x() as u64) << 32 | u64::from(thread_idx_x());
        let out_len = out.len();
        // (Row 3 does not exist: `get_mut` says so.)
        for k in 0..4 {
            let i = out.index(k);
            if let Some(o) = out.get_mut(k) {
                assert!(i < out_len, "get_mut gives elements inside the array");
                *o = owner * 10 + k as u64;
            }
        }
    }

    /// Each thread counts up through its own chunk, a sequential scan within the chunk.
    #[kernel]
    pub fn chunked(mut out: Chunks<u64>) {
        let start = out.start() as u64;
        for (k, o) in out.mine().iter_mut().enumerate() {
            *o = start * 1000 + k as u64;
        }
    }
}

#[test]
fn grid_stride_covers_an_array_larger_than_the_grid() {
    let dev = Device::default().unwrap();
    let n = 100_000;
    let x: Vec<f32> = (0..n).map(|i| (i % 100) as f32).collect();
    for grid in
        [Grid::threads(1000).block_size(128), Grid::threads(1), Grid::threads_xy(64, 3).block_xy(32, 2)]
    {
        let mut y = vec![-1.0f32; n];
        gpu::strided::launch(&dev, grid, &x, &mut y).unwrap();
        for i in 0..n {
            assert_eq!(y[i], 2.0 * x[i] + i as f32, "element {i} with {grid:?}");
        }
    }
}

#[test]
fn chunks_are_contiguous_and_disjoint() {
    let dev = Device::default().unwrap();
    let n = 10_007;
    let mut out = vec![u64::MAX; n];
    gpu::chunked::launch(&dev, Grid::threads(300).block_size(64), &mut out).unwrap();
    let chunk = n.div_ceil(320); // 300 threads round up to 5 blocks of 64
    for (i, v) in out.iter().enumerate() {
        let start = (i / chunk) * chunk;
        assert_eq!(*v, start as u64 * 1000 + (i - start) as u64, "element {i}");
    }
}

#[test]
fn one_element_per_block_written_by_its_first_thread() {
    let dev = Device::default().unwrap();
    let n = 1000usize;
    let x: Vec<u32> = (0..n as u32).map(|i| i % 97).collect();
    for block in [64u32, 128, 256] {
        let blocks = n.div_ceil(block as usize);
        // One element more than there are blocks: it stays as it was.
        let mut totals = vec![[7u64, 7]; blocks + 1];
        gpu::block_totals::launch(&dev, Grid::threads(n).block_size(block), &x, &mut totals).unwrap();
        for (b, t) in totals.iter().enumerate().take(blocks) {
            let part = &x[b * block as usize..((b + 1) * block as usize).min(n)];
            assert_eq!(
                *t,
                [part.iter().map(|&v| u64::from(v)).sum::<u64>(), b as u64],
                "block {b} of {block}"
            );
        }
        assert_eq!(totals[blocks], [7, 7], "no block reaches past the grid");
    }
    // A 2-D grid of blocks: linear block index x + X·y.
    let mut totals = vec![[0u64; 2]; 6];
    gpu::block_totals::launch(&dev, Grid::threads_xy(96, 2).block_xy(32, 1), &x, &mut totals).unwrap();
    assert!(totals.iter().enumerate().all(|(b, t)| t[1] == b as u64), "{totals:?}");
    // A 3-D grid of blocks that are not rows (16 × 2 × 2 threads): linear block index
    // x + X·(y + Y·z), written by the thread at (0, 0, 0) of each.
    let mut totals = vec![[0u64; 2]; 2 * 3 * 2];
    gpu::block_totals::launch(&dev, Grid::threads_xyz(32, 6, 4).block_xyz(16, 2, 2), &x, &mut totals)
        .unwrap();
    assert!(totals.iter().enumerate().all(|(b, t)| t[1] == b as u64), "{totals:?}");
}

#[test]
fn one_element_per_group_of_threads_written_by_its_leader() {
    let dev = Device::default().unwrap();
    let n = 512usize;
    let x: Vec<u32> = (0..n as u32).map(|i| i * 3 % 11).collect();
    let (mut g1, mut g4, mut g32) = (vec![0u32; n], vec![0u32; n / 4], vec![0u32; n / 32]);
    gpu::group_sums::launch(&dev, Grid::threads(n).block_size(128), &x, &mut g1, &mut g4, &mut g32).unwrap();
    assert_eq!(g1, x);
    for (g, got) in g4.iter().enumerate() {
        assert_eq!(*got, x[g * 4..g * 4 + 4].iter().sum::<u32>(), "group of 4 number {g}");
    }
    for (g, got) in g32.iter().enumerate() {
        assert_eq!(*got, x[g * 32..g * 32 + 32].iter().sum::<u32>(), "group of 32 number {g}");
    }
}

#[test]
fn tiles_are_striped_across_their_block_and_cover_the_array_once() {
    let dev = Device::default().unwrap();
    // Two full tiles of 3 × 64 and a partial one, with more threads than elements in the last.
    let n = 2 * 3 * 64 + 100;
    let mut out = vec![u64::MAX; n];
    gpu::tiled::launch(&dev, Grid::threads(3 * 64).block_size(64), &mut out).unwrap();
    for (i, &o) in out.iter().enumerate() {
        let (b, k, t) = (i / (3 * 64), i % (3 * 64) / 64, i % 64);
        let want = ((b as u64) << 32 | t as u64) * 10 + k as u64;
        assert_eq!(o, want, "element {i}: block {b}, row {k}, thread {t}");
    }
}
