//! Grid-stride and chunked partitions: every element written exactly once, by a grid smaller
//! than the array.

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
