//! Block-shared memory with typed barrier phases: neighbours' values, a block-wide sum, and a
//! tiled matrix multiply; the CPU backend runs each block's threads at once and checks that
//! they pass the same barriers.

use offload::{Device, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `y[i] = x[i-1] + x[i] + x[i+1]` within each block (block edges see only themselves).
    #[kernel]
    pub fn smooth(x: &[f32], mut y: Region<f32>, tile: Shared<f32>) {
        let i = y.index();
        let t = thread_idx_x() as usize;
        let v = if i < x.len() { x[i] } else { 0.0 };
        let ready = tile.write(v).sync();
        let left = if t > 0 { ready.get(t - 1) } else { 0.0 };
        let right = if t + 1 < ready.len() { ready.get(t + 1) } else { 0.0 };
        if let Some(yi) = y.mine() {
            *yi = left + ready.mine() + right;
        }
    }

    /// Tiled `c = a · b` for `n × n` row-major matrices, blocks of `TILE × TILE`.
    #[kernel]
    pub fn matmul(n: usize, a: &[f32], b: &[f32], mut c: Region2<f32>, ta: Shared<f32>, tb: Shared<f32>) {
        const TILE: usize = 16;
        let [col, row] = c.index();
        let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
        let (mut ta, mut tb) = (ta, tb);
        let mut sum = 0.0f32;
        for t in 0..n.div_ceil(TILE) {
            let (ac, br) = (t * TILE + tx, t * TILE + ty);
            let av = if row < n && ac < n { a[row * n + ac] } else { 0.0 };
            let bv = if br < n && col < n { b[br * n + col] } else { 0.0 };
            let (ra, rb) = (ta.write(av).sync(), tb.write(bv).sync());
            for k in 0..TILE {
                sum += ra.get(ty * TILE + k) * rb.get(k * TILE + tx);
            }
            (ta, tb) = (ra.sync(), rb.sync());
        }
        if let Some(ci) = c.mine() {
            *ci = sum;
        }
    }

    /// A tile of `TILE` inputs per block in a static-size shared array (more elements than
    /// threads: each thread loads every `block`-th one), then every thread reads the whole
    /// tile: `y[i] = Σ tile + tile[TILE - 1 - t]`.
    #[kernel]
    pub fn tile_sum(x: &[f32], mut y: Region<f32>, tile: SharedArray<f32, TILE>) {
        let base = block_idx_x() as usize * TILE;
        let mut tile = tile;
        tile.fill_mine(|j| x.get(base + j).copied().unwrap_or(0.0));
        let ready = tile.sync();
        let t = thread_idx_x() as usize;
        let total: f32 = ready.as_slice().iter().sum();
        if let Some(yi) = y.mine() {
            *yi = total + ready.get(TILE - 1 - t % TILE);
        }
    }

    pub const TILE: usize = 300;

    /// Breaks the barrier rule: odd threads skip the barrier.
    #[kernel]
    pub fn divergent(mut y: Region<u32>, tile: Shared<u32>) {
        let t = thread_idx_x();
        if t.is_multiple_of(2) {
            let ready = tile.write(t).sync();
            if let Some(yi) = y.mine() {
                *yi = ready.mine();
            }
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
fn divergent_barriers_fail_the_launch_on_the_cpu() {
    let dev = Device::cpu();
    let mut y = vec![0u32; 64];
    let e = gpu::divergent::launch(&dev, Grid::threads(64).block_size(32), &mut y).unwrap_err();
    assert!(e.to_string().contains("passed different barriers"), "{e}");
    assert!(e.to_string().contains("gpu::divergent"), "{e}");
}
