//! The CPU backend's `unsafe` code on launches small enough for Miri (`cargo miri test
//! --test emulation`, run by `scripts/test.sh`): every writable parameter kind, shared memory
//! through the block's phases, broadcasts, warp operations over a partial warp, reductions,
//! atomics and scatters, block-shared atomics, each result checked against the host. Blocks of 6 threads, so that a
//! block is one partial warp.

use offload::{Device, DeviceBuffer, Grid, Loc, UniqueIndices};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Each thread writes its neighbour's input through two shared arrays and three barriers,
    /// and thread 0's value reaches everyone.
    #[kernel]
    pub fn neighbours(
        x: &[u32],
        mut y: Region<[u32; 3]>,
        slots: Shared<u32>,
        tile: SharedArray<u32, 8>,
        block: Block,
    ) {
        let i = global_linear_id();
        let t = thread_idx_x() as usize;
        let v = x.get(i).copied().unwrap_or(0);
        slots.write(&block, v);
        tile.fill_mine(&block, |j| j as u32 * 10 + v);
        let read = block.sync();
        let right = slots.get(&read, (t + 1) % slots.len());
        let sum: u32 = tile.as_slice(&read).iter().sum();
        let first = read.broadcast(v);
        let block = read.sync();
        slots.write(&block, right);
        let read = block.sync();
        let second = slots.get(&read, (t + 1) % slots.len());
        if let Some(o) = y.mine() {
            *o = [second, sum, first];
        }
    }

    /// Warp operations over one partial warp.
    #[kernel]
    pub fn lanes(w: Warp, x: &[u32], mut y: Region<[u64; 4]>) {
        let v = x[global_linear_id()];
        let s = w.sum(v);
        let m = w.max(v);
        let b = w.ballot(v.is_multiple_of(2));
        let r = w.shuffle_down(v, 1);
        if let Some(o) = y.mine() {
            *o = [u64::from(s), u64::from(m), b, u64::from(r)];
        }
    }

    /// Reductions, atomics, a scatter and the two partitions.
    #[kernel]
    pub fn mixed(
        x: &[f64],
        mut total: Sum<f64>,
        mut low: MinLoc<f64>,
        hist: Atomics<u32>,
        mut moved: Scatter<f64>,
        mut strided: GridStride<f64>,
        mut chunks: Chunks<f64>,
    ) {
        let i = global_linear_id();
        if i < x.len() {
            total.add(x[i]);
            low.min_at(x[i], i);
            hist.add(i % 3, 1);
        }
        let p = moved.position();
        if let Some(m) = moved.mine() {
            *m = x[p];
        }
        for (j, s) in strided.iter_mut() {
            *s = x[j] * 2.0;
        }
        let start = chunks.start();
        for (k, c) in chunks.mine().iter_mut().enumerate() {
            *c = x[start + k] + 1.0;
        }
    }

    /// A 2-D region over a 5 × 4 array.
    #[kernel]
    pub fn plane(mut y: Region2<u32>) {
        let [c, r] = y.index();
        if let Some(o) = y.mine() {
            *o = (r * 10 + c) as u32;
        }
    }

    /// One element per block and per pair of threads, each written by its first thread.
    #[kernel]
    pub fn leaders(mut per_block: PerBlock<u32>, mut pairs: Groups<u32, 2>, mut tiles: Tiles<u32, 2>) {
        for k in 0..3 {
            let i = tiles.index(k) as u32;
            if let Some(o) = tiles.get_mut(k) {
                *o = i + 1;
            }
        }
        let i = global_linear_id() as u32;
        let b = per_block.index() as u32;
        if let Some(o) = per_block.mine() {
            *o = 100 + b;
        }
        if let Some(o) = pairs.mine() {
            *o = i;
        }
    }

    /// Block-private accumulation: every thread adds to shared counters (one hot, three
    /// spread) and float sums, then each block merges once into the global arrays.
    #[kernel]
    pub fn shared_atomics(
        x: &[u32],
        counts: Atomics<u32>,
        sums: Atomics<f32>,
        local: SharedAtomics<u32, 4>,
        fsum: SharedAtomics<f32, 2>,
        block: Block,
    ) {
        for i in grid_stride(x.len()) {
            local.add(&block, 0, 1);
            local.add(&block, 1 + (x[i] % 3) as usize, 1);
            fsum.add(&block, (x[i] % 2) as usize, 0.5);
        }
        let read = block.sync();
        for (j, c) in local.mine(&read) {
            counts.add(j, c);
        }
        for (j, v) in fsum.mine(&read) {
            sums.add(j, v);
        }
    }
}

const BLOCK: u32 = 6;
const N: usize = 12;

fn dev() -> Device {
    Device::cpu()
}

#[test]
fn shared_memory_moves_through_the_blocks_phases() {
    let x: Vec<u32> = (1..=N as u32).collect();
    let mut y = vec![[0u32; 3]; N];
    gpu::neighbours::launch(&dev(), Grid::threads(N).block_size(BLOCK), &x, &mut y).unwrap();
    for (i, got) in y.iter().enumerate() {
        let (b, t) = (i / BLOCK as usize, i % BLOCK as usize);
        let at = |k: usize| x[b * BLOCK as usize + k % BLOCK as usize];
        // Element j of the tile was written by thread j % 6 with value j·10 + its input.
        let sum: u32 = (0..8).map(|j| j as u32 * 10 + at(j)).sum();
        assert_eq!(*got, [at(t + 2), sum, at(0)], "thread {i}");
    }
}

#[test]
fn warp_operations_over_a_partial_warp() {
    let x: Vec<u32> = (0..N as u32).map(|i| i * 7 % 5).collect();
    let mut y = vec![[0u64; 4]; N];
    gpu::lanes::launch(&dev(), Grid::threads(N).block_size(BLOCK), &x, &mut y).unwrap();
    for (i, got) in y.iter().enumerate() {
        let first = i / BLOCK as usize * BLOCK as usize;
        let warp = &x[first..first + BLOCK as usize];
        let ballot =
            warp.iter().enumerate().filter(|(_, v)| v.is_multiple_of(2)).fold(0, |m, (l, _)| m | 1 << l);
        let down = if i + 1 < first + BLOCK as usize { x[i + 1] } else { x[i] };
        let want =
            [warp.iter().sum::<u32>().into(), (*warp.iter().max().unwrap()).into(), ballot, down.into()];
        assert_eq!(*got, want, "thread {i}");
    }
}

#[test]
fn reductions_atomics_scatters_and_partitions() {
    let dev = dev();
    let x: Vec<f64> = (0..N).map(|i| ((i * 5) % 7) as f64 - 2.0).collect();
    let (mut total, mut low) = (0.5, Loc::new(f64::INFINITY, 0));
    let mut hist = vec![0u32; 3];
    let order: Vec<i64> = (0..N as i64).rev().collect();
    let list = UniqueIndices::new(&dev, &order, N).unwrap();
    let (mut moved, mut strided) = (vec![0.0; N], vec![0.0; N]);
    let mut chunks = DeviceBuffer::zeroed(&dev, N).unwrap();
    gpu::mixed::launch(
        &dev,
        Grid::threads(N).block_size(BLOCK),
        &x,
        &mut total,
        &mut low,
        &mut hist,
        (&mut moved, &list),
        &mut strided,
        &mut chunks,
    )
    .unwrap();
    assert_eq!(total, 0.5 + x.iter().sum::<f64>());
    let min = x.iter().copied().fold(f64::INFINITY, f64::min);
    assert_eq!((low.value, low.index), (min, x.iter().position(|&v| v == min).unwrap()));
    assert_eq!(hist, [4, 4, 4]);
    for i in 0..N {
        assert_eq!(moved[N - 1 - i], x[i], "scatter {i}");
        assert_eq!(strided[i], x[i] * 2.0, "grid-stride {i}");
    }
    assert_eq!(chunks.to_vec().unwrap(), x.iter().map(|v| v + 1.0).collect::<Vec<_>>());
}

#[test]
fn a_two_dimensional_region() {
    let mut y = vec![0u32; 20];
    gpu::plane::launch(&dev(), Grid::threads_xy(5, 4).block_xy(3, 2), (&mut y, [5, 4])).unwrap();
    for (k, v) in y.iter().enumerate() {
        assert_eq!(*v as usize, k / 5 * 10 + k % 5);
    }
}

#[test]
fn block_shared_atomics_merge_once_per_block() {
    let x: Vec<u32> = (0..50).collect();
    let (mut counts, mut sums) = (vec![0u32; 4], vec![0.0f32; 2]);
    gpu::shared_atomics::launch(&dev(), Grid::threads(N).block_size(BLOCK), &x, &mut counts, &mut sums)
        .unwrap();
    let by = |k: u32| x.iter().filter(|&&v| v % 3 == k).count() as u32;
    assert_eq!(counts, [50, by(0), by(1), by(2)]);
    assert_eq!(sums, [12.5, 12.5]);
}

#[test]
fn one_element_per_block_and_per_group() {
    let (mut per_block, mut pairs, mut tiles) = (vec![0u32; 3], vec![0u32; N / 2], vec![0u32; 2 * N - 3]);
    gpu::leaders::launch(&dev(), Grid::threads(N).block_size(BLOCK), &mut per_block, &mut pairs, &mut tiles)
        .unwrap();
    assert_eq!(per_block, [100, 101, 0]);
    assert_eq!(pairs, (0..N as u32).step_by(2).collect::<Vec<_>>());
    // Striped tiles of two elements per thread cover the array once, each element its index.
    assert_eq!(tiles, (1..2 * N as u32 - 2).collect::<Vec<_>>());
}
