//! Kernel semantics, the same on every backend: `cargo test` runs them on the CPU emulation
//! backend; `cargo offload test` builds them with device images, and with `OFFLOAD_DEVICE=gpu`
//! they run on the GPU (the GPU script does this on the H200).

use offload::{Device, DeviceBuffer, Grid, f32x4, f64x2};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Each thread writes its global index.
    #[kernel]
    pub fn write_index(mut out: Region<u32>) {
        let i = out.index();
        if let Some(o) = out.mine() {
            *o = i as u32;
        }
    }

    /// Each thread records where it runs: block, thread, block size, grid size.
    #[kernel]
    pub fn where_am_i(mut block: Region<u32>, mut thread: Region<u32>, mut dims: Region<u32>) {
        let packed = block_dim_x() * 65536 + grid_dim_x();
        if let (Some(b), Some(t), Some(d)) = (block.mine(), thread.mine(), dims.mine()) {
            *b = block_idx_x();
            *t = thread_idx_x();
            *d = packed;
        }
    }

    /// Integer arithmetic on every scalar width the ABI packs: `y = k * x + bias + offset`.
    #[kernel]
    pub fn affine(k: i64, x: &[i64], bias: i8, offset: u16, mut y: Region<i64>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = k * x[i] + i64::from(bias) + i64::from(offset);
        }
    }

    /// Two inputs, an `f32` scale and a `bool` switch.
    #[kernel]
    pub fn blend(w: f32, add: bool, a: &[f32], b: &[f32], mut c: Region<f32>) {
        let i = c.index();
        if let Some(ci) = c.mine() {
            *ci = if add { w * a[i] + b[i] } else { w * a[i] - b[i] };
        }
    }

    /// `y = a·x + 1` on 16-byte vectors: one vector load and one vector store per thread.
    /// A kernel whose shared memory (96 KiB per block) limits how many of its blocks fit a
    /// multiprocessor.
    #[kernel]
    pub fn big_tile(x: &[f64], mut y: Region<f64>, tile: SharedArray<f64, 12288>, block: Block) {
        let t = thread_idx_x() as usize;
        tile.fill_mine(&block, |j| x.get(j).copied().unwrap_or(0.0));
        let read = block.sync();
        if let Some(o) = y.mine() {
            *o = tile.get(&read, t);
        }
    }

    #[kernel]
    pub fn scale4(a: f32, x: &[f32x4], mut y: Region<f32x4>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = x[i] * a + f32x4::splat(1.0);
        }
    }

    /// The sum of every lane of `x`, and each vector's lanes swapped into `y`.
    #[kernel]
    pub fn lanes(x: &[f64x2], mut y: Region<f64x2>, mut total: Sum<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            let v = x[i];
            total.add(v[0] + v[1]);
            *yi = f64x2::new(v[1], v[0]);
        }
    }

    /// The sum of `x`, its aligned middle read as `f64x2` pairs.
    #[kernel]
    pub fn pair_sum(x: &[f64], mut total: Sum<f64>) {
        let (head, pairs, tail) = f64x2::split_aligned(x);
        for i in grid_stride(pairs.len()) {
            total.add(pairs[i][0] + pairs[i][1]);
        }
        for i in grid_stride(head.len()) {
            total.add(head[i]);
        }
        for i in grid_stride(tail.len()) {
            total.add(tail[i]);
        }
    }
}

fn device() -> Device {
    Device::default().expect("a device")
}

/// What decides whether a GPU may be opened by an executable that carries no device images
/// (plain `cargo build`): this one links a kernels module, so it may not.
#[test]
fn an_executable_with_kernels_knows_it_has_them() {
    assert!(offload::images::executable_has_kernels());
}

#[test]
fn every_thread_writes_its_own_element() {
    let dev = device();
    for n in [1usize, 31, 256, 257, 4099, 1 << 20] {
        let mut out = vec![u32::MAX; n];
        gpu::write_index::launch(&dev, n, &mut out).unwrap();
        let wrong = out.iter().enumerate().filter(|(i, v)| **v != *i as u32).count();
        assert_eq!(wrong, 0, "n = {n} on {dev}");
    }
}

#[test]
fn block_and_grid_indices_follow_the_launch_shape() {
    let dev = device();
    for (n, block) in [(1000usize, 128u32), (64, 64), (70, 32), (5000, 1024)] {
        let (mut b, mut t, mut d) = (vec![0u32; n], vec![0u32; n], vec![0u32; n]);
        gpu::where_am_i::launch(&dev, Grid::threads(n).block_size(block), &mut b, &mut t, &mut d).unwrap();
        let blocks = n.div_ceil(block as usize) as u32;
        for i in 0..n {
            assert_eq!(b[i], i as u32 / block, "block of {i}, n = {n}, block = {block}");
            assert_eq!(t[i], i as u32 % block, "thread of {i}");
            assert_eq!(d[i], block * 65536 + blocks, "dims seen by {i}");
        }
    }
}

#[test]
fn scalars_of_every_width_reach_the_kernel() {
    let dev = device();
    let x: Vec<i64> = (0..10_000).map(|i| i * 3 - 7_000).collect();
    let mut y = vec![0i64; x.len()];
    gpu::affine::launch(&dev, x.len(), -5i64, &x, -3i8, 65535u16, &mut y).unwrap();
    for (i, (x, y)) in x.iter().zip(&y).enumerate() {
        assert_eq!(*y, -5 * x - 3 + 65535, "element {i}");
    }
}

#[test]
fn read_only_inputs_and_flags() {
    let dev = device();
    let a: Vec<f32> = (0..3000).map(|i| i as f32 * 0.25).collect();
    let b: Vec<f32> = (0..3000).map(|i| (i % 17) as f32).collect();
    for add in [true, false] {
        let mut c = vec![0.0f32; a.len()];
        gpu::blend::launch(&dev, a.len(), 1.5, add, &a, &b, &mut c).unwrap();
        for i in 0..a.len() {
            let want = if add { 1.5 * a[i] + b[i] } else { 1.5 * a[i] - b[i] };
            assert_eq!(c[i], want, "element {i}, add = {add}");
        }
    }
}

#[test]
fn an_empty_launch_does_nothing() {
    let dev = device();
    let mut out: Vec<u32> = Vec::new();
    gpu::write_index::launch(&dev, 0usize, &mut out).unwrap();
}

#[test]
fn fewer_threads_than_elements_leave_the_rest_untouched() {
    let dev = device();
    let mut out = vec![7u32; 1000];
    gpu::write_index::launch(&dev, Grid::threads(100).block_size(100), &mut out).unwrap();
    assert!(out[..100].iter().enumerate().all(|(i, v)| *v == i as u32));
    assert!(out[100..].iter().all(|v| *v == 7));
}

#[test]
fn bad_launch_shapes_are_errors_not_crashes() {
    let dev = device();
    let mut out = vec![0u32; 10];
    let e = gpu::write_index::launch(&dev, Grid::threads(10).block_size(0), &mut out).unwrap_err();
    assert!(e.to_string().contains("block size 0"), "{e}");
    let e = gpu::write_index::launch(&dev, -5, &mut out).unwrap_err();
    assert!(e.to_string().contains("negative thread count"), "{e}");
    assert!(e.to_string().contains("gpu::write_index"), "{e}");
}

#[test]
fn aligned_vectors_cross_to_the_device_and_back() {
    let dev = Device::default().unwrap();
    let n = 10_001;
    let x: Vec<f32x4> = (0..n).map(|i| f32x4::new(i as f32, 1.0, -2.0, 0.5)).collect();
    let mut y = vec![f32x4::default(); n];
    gpu::scale4::launch(&dev, n, 2.0, &x, &mut y).unwrap();
    for (i, v) in y.iter().enumerate() {
        assert_eq!(v.to_array(), [2.0 * i as f32 + 1.0, 3.0, -3.0, 2.0], "element {i}");
    }
    // In device buffers too, with a reduction over the lanes.
    let x: Vec<f64x2> = (0..1000).map(|i| f64x2::new(i as f64, 0.5)).collect();
    let dx = DeviceBuffer::from_slice(&dev, &x).unwrap();
    let mut dy = DeviceBuffer::<f64x2>::zeroed(&dev, x.len()).unwrap();
    let mut total = 0.0;
    gpu::lanes::launch(&dev, x.len(), &dx, &mut dy, &mut total).unwrap();
    assert_eq!(total, (0..1000).map(|i| i as f64 + 0.5).sum::<f64>());
    let y = dy.to_vec().unwrap();
    assert!(y.iter().zip(&x).all(|(a, b)| a.0 == [b.0[1], b.0[0]]));
}

#[test]
fn a_slice_read_as_aligned_vectors_sums_every_element_once() {
    let dev = Device::default().unwrap();
    let x: Vec<f64> = (0..4099).map(f64::from).collect();
    // Slices that start and end on either side of a vector's alignment.
    for (start, end) in [(0, 4099), (1, 4099), (1, 4098), (2, 3), (3, 4), (0, 0)] {
        let part = &x[start..end];
        let mut total = 0.0;
        gpu::pair_sum::launch(&dev, Grid::threads(300).block_size(64), part, &mut total).unwrap();
        assert_eq!(total, part.iter().sum::<f64>(), "x[{start}..{end}]");
    }
}

#[test]
fn a_kernels_resident_grid_fills_the_device_in_one_wave() {
    let dev = Device::default().unwrap();
    let p = dev.properties();
    let by_threads = p.resident_blocks_per_multiprocessor(256);
    for grid in [gpu::scale4::resident(&dev, 256).unwrap(), gpu::big_tile::resident(&dev, 256).unwrap()] {
        let blocks = grid.blocks()[0];
        assert_eq!(grid.block(), [256, 1, 1]);
        assert_eq!(blocks % p.multiprocessors, 0, "{blocks} blocks on {} multiprocessors", p.multiprocessors);
        assert!((p.multiprocessors..=p.multiprocessors * by_threads).contains(&blocks), "{blocks} blocks");
    }
    // 96 KiB of shared memory per block: where the device says how much a multiprocessor has,
    // no more blocks than fit in it.
    if p.shared_bytes_per_multiprocessor > 0 {
        let fit =
            (p.shared_bytes_per_multiprocessor / (96 * 1024 + 16 + p.reserved_shared_bytes_per_block)).max(1);
        assert!(
            gpu::big_tile::resident(&dev, 256).unwrap().blocks()[0] as usize
                <= fit * p.multiprocessors as usize
        );
    }
    // The grid runs the kernel.
    let x: Vec<f64> = (0..12288).map(f64::from).collect();
    let grid = gpu::big_tile::resident(&dev, 256).unwrap();
    let mut y = vec![0.0; 256];
    gpu::big_tile::launch(&dev, grid, &x, &mut y).unwrap();
    assert!(y.iter().enumerate().all(|(i, &v)| v == i as f64));
    // Blocks the kernel or the device cannot have are errors naming the kernel.
    let e = gpu::scale4::resident(&dev, 0).unwrap_err();
    assert!(e.to_string().contains("scale4"), "{e}");
    assert!(gpu::scale4::resident(&dev, p.max_threads_per_block + 1).is_err());
}
