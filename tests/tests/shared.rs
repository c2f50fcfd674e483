//! Block-shared memory with typed barrier phases: neighbours' values, a block-wide sum, and a
//! tiled matrix multiply; the CPU backend runs each block's threads at once and checks that
//! they pass the same barriers.

use offload::{Device, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

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

    /// Tiled `c = a · b` for `n × n` row-major matrices, blocks of `TILE × TILE`: both tiles
    /// move through each barrier together.
    #[kernel]
    pub fn matmul(
        n: usize,
        a: &[f32],
        b: &[f32],
        mut c: Region2<f32>,
        ta: Shared<f32>,
        tb: Shared<f32>,
        block: Block,
    ) {
        const TILE: usize = 16;
        let [col, row] = c.index();
        let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
        let mut block = block;
        let mut sum = 0.0f32;
        for t in 0..n.div_ceil(TILE) {
            let (ac, br) = (t * TILE + tx, t * TILE + ty);
            ta.write(&block, if row < n && ac < n { a[row * n + ac] } else { 0.0 });
            tb.write(&block, if br < n && col < n { b[br * n + col] } else { 0.0 });
            let read = block.sync();
            for k in 0..TILE {
                sum += ta.get(&read, ty * TILE + k) * tb.get(&read, k * TILE + tx);
            }
            block = read.sync();
        }
        if let Some(ci) = c.mine() {
            *ci = sum;
        }
    }

    /// A tile of `TILE` inputs per block in a static-size shared array (more elements than
    /// threads: each thread loads every `block`-th one), then every thread reads the whole
    /// tile: `y[i] = Σ tile + tile[TILE - 1 - t]`.
    #[kernel]
    pub fn tile_sum(x: &[f32], mut y: Region<f32>, tile: SharedArray<f32, TILE>, block: Block) {
        let base = block_idx_x() as usize * TILE;
        tile.fill_mine(&block, |j| x.get(base + j).copied().unwrap_or(0.0));
        let read = block.sync();
        let t = thread_idx_x() as usize;
        let total: f32 = tile.as_slice(&read).iter().sum();
        if let Some(yi) = y.mine() {
            *yi = total + tile.get(&read, TILE - 1 - t % TILE);
        }
    }

    pub const TILE: usize = 300;

    /// Each thread writes its first three elements of a striped array at once
    /// (`set_striped`), or four with `four`, then reads the element mirrored across the array:
    /// `y[i] = tile[STRIPED − 1 − t]`, where thread `t`'s `k`-th element holds `1000·k + t`.
    /// With blocks of 100 threads, three elements cover `STRIPED = 300` exactly; a fourth lies
    /// past it.
    #[kernel]
    pub fn striped(four: bool, mut y: Region<u32>, tile: SharedArray<u32, STRIPED>, block: Block) {
        let t = thread_idx_x() as u32;
        if four {
            tile.set_striped(&block, [t, 1000 + t, 2000 + t, 3000 + t]);
        } else {
            tile.set_striped(&block, [t, 1000 + t, 2000 + t]);
        }
        let read = block.sync();
        if let Some(yi) = y.mine() {
            *yi = tile.get(&read, (STRIPED - 1 - t as usize) % STRIPED);
        }
    }

    pub const STRIPED: usize = 300;

    /// Thread 0's value, broadcast to the block, bounds a loop with a barrier in it: a value
    /// the uniformity rules accept because `broadcast` makes it the same in every thread.
    /// Each round every thread adds its slot's neighbour.
    #[kernel]
    pub fn broadcast_rounds(rounds: &[u32], mut y: Region<u32>, ring: Shared<u32>, block: Block) {
        let t = thread_idx_x() as usize;
        let mine = rounds.get(global_linear_id()).copied().unwrap_or(0);
        let n = block.broadcast(mine);
        let mut block = block;
        let mut acc = t as u32;
        for _ in 0..n {
            ring.write(&block, acc);
            let read = block.sync();
            acc += ring.get(&read, (t + 1) % ring.len());
            block = read.sync();
        }
        if let Some(yi) = y.mine() {
            *yi = acc;
        }
    }
}

#[test]
fn neighbours_through_shared_memory() {
    let dev = Device::default().unwrap();
    let n = 1000;
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let mut y = vec![0.0f32; n];
    gpu::smooth::launch(&dev, Grid::threads(n).block_size(128), &x, &mut y).unwrap();
    for i in 0..n {
        let t = i % 128;
        let left = if t > 0 { x[i - 1] } else { 0.0 };
        let right = if t + 1 < 128 && i + 1 < n { x[i + 1] } else { 0.0 };
        assert_eq!(y[i], left + x[i] + right, "element {i}");
    }
}

#[test]
fn tiled_matrix_multiply() {
    let dev = Device::default().unwrap();
    let n = 40;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.5).collect();
    let mut c = vec![0.0f32; n * n];
    gpu::matmul::launch(&dev, Grid::threads_xy(n, n).block_xy(16, 16), n, &a, &b, (&mut c, [n, n])).unwrap();
    for r in 0..n {
        for col in 0..n {
            let want: f32 = (0..n).map(|k| a[r * n + k] * b[k * n + col]).sum();
            assert_eq!(c[r * n + col], want, "c[{r}][{col}]");
        }
    }
}

#[test]
fn a_static_size_shared_array_larger_than_the_block() {
    let dev = Device::default().unwrap();
    let (block, blocks) = (128, 5);
    let n = block * blocks;
    let x: Vec<f32> = (0..gpu::TILE * blocks).map(|i| (i % 17) as f32).collect();
    let mut y = vec![0.0f32; n];
    gpu::tile_sum::launch(&dev, Grid::threads(n).block_size(block as u32), &x, &mut y).unwrap();
    for (i, &yi) in y.iter().enumerate() {
        let (b, t) = (i / block, i % block);
        let tile = &x[b * gpu::TILE..(b + 1) * gpu::TILE];
        let want = tile.iter().sum::<f32>() + tile[gpu::TILE - 1 - t];
        assert_eq!(yi, want, "y[{i}]");
    }
}

#[test]
fn a_broadcast_value_bounds_a_loop_of_barriers() {
    let dev = Device::default().unwrap();
    let (block, blocks) = (64usize, 3usize);
    let n = block * blocks;
    // Thread 0 of block b reads rounds[b * 64]: 0, 1 and 5 rounds.
    let mut rounds = vec![99u32; n];
    for (b, r) in [0u32, 1, 5].into_iter().enumerate() {
        rounds[b * block] = r;
    }
    let mut y = vec![0u32; n];
    gpu::broadcast_rounds::launch(&dev, Grid::threads(n).block_size(block as u32), &rounds, &mut y).unwrap();
    for b in 0..blocks {
        let mut acc: Vec<u32> = (0..block as u32).collect();
        for _ in 0..rounds[b * block] {
            let before = acc.clone();
            for t in 0..block {
                acc[t] += before[(t + 1) % block];
            }
        }
        assert_eq!(&y[b * block..(b + 1) * block], &acc[..], "block {b}");
    }
}

#[test]
fn a_thread_writes_its_striped_elements_at_once_and_no_further() {
    let dev = Device::default().unwrap();
    let n = 200; // two blocks of 100
    let mut y = vec![0u32; n];
    gpu::striped::launch(&dev, Grid::threads(n).block_size(100), false, &mut y).unwrap();
    for (i, &yi) in y.iter().enumerate() {
        let j = gpu::STRIPED - 1 - i % 100; // element j is thread j % 100's (j / 100)-th
        assert_eq!(yi, (1000 * (j / 100) + j % 100) as u32, "y[{i}]");
    }
    // A fourth element per thread lies past the array's 300: the launch fails, naming it and
    // the index. (On the CPU backend: a trap on a GPU leaves its context unusable for the
    // tests after it, and the trap tests, each in a binary of its own, cover that path.)
    let err =
        gpu::striped::launch(&Device::cpu(), Grid::threads(n).block_size(100), true, &mut y).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("striped"), "{msg}");
    assert!(msg.contains("out of bounds"), "{msg}");
}
