//! 2-D and 3-D launches, `Region2`/`Region3`, and device math: the same results on every
//! backend (bit for bit, since every backend runs the same math code).

use offload::{Device, Grid, math};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `out[x, y] = 1000·x + y`.
    #[kernel]
    pub fn coords2(mut out: Region2<u32>) {
        let [x, y] = out.index();
        if let Some(o) = out.mine() {
            *o = 1000 * x as u32 + y as u32;
        }
    }

    /// `out[x, y, z] = linear index + 1` inside a margin of one element, from a thread
    /// position that includes the margin.
    #[kernel]
    pub fn interior3(mut out: Region3<u32, 1>) {
        let [x, y, z] = out.index();
        let [nx, ny, _] = out.extents();
        let linear = out.linear();
        assert_eq!(linear, x + nx * (y + ny * z));
        if let Some(o) = out.mine() {
            *o = linear as u32 + 1;
        }
    }

    /// The same in 2-D with a margin of `HALO` elements.
    #[kernel]
    pub fn interior2(mut out: Region2<u32, HALO>) {
        let linear = out.linear();
        if let Some(o) = out.mine() {
            *o = linear as u32 + 1;
        }
    }

    /// The margin of `interior2`.
    pub const HALO: usize = 2;

    /// `out = Σ (k + 1) · from[p + o_k]` over the 27 offsets `o_k` of the 3 × 3 × 3 cube
    /// around each interior point (x fastest): every offset reads its own point.
    #[kernel]
    pub fn near27(from: &[u64], mut out: Region3<u64, 1>) {
        if let Some((o, near)) = out.mine_near(from) {
            let mut sum = 0;
            for k in 0..27 {
                let off = [k % 3, k / 3 % 3, k / 9].map(|c| c as isize - 1);
                sum += (k as u64 + 1) * near.at(off);
            }
            *o = sum;
        }
    }

    /// The corners of the margin's square around each interior point (margin `HALO`).
    #[kernel]
    pub fn near_corners(from: &[u64], mut out: Region2<u64, HALO>) {
        if let Some((o, near)) = out.mine_near(from) {
            *o = near.at([-2, -2]) + 10 * near.at([2, -2]) + 100 * near.at([-2, 2]) + 1000 * near.at([2, 2]);
        }
    }

    /// LTIMES-shaped: `phi[m, g, z] = Σ_d ell[m, d] · psi[d, g, z]`.
    #[kernel]
    pub fn ltimes(num_d: usize, ell: &[f64], psi: &[f64], mut phi: Region3<f64>) {
        let [m, g, z] = phi.index();
        let [num_m, num_g, _] = phi.extents();
        if let Some(p) = phi.mine() {
            let mut sum = 0.0;
            for d in 0..num_d {
                sum += ell[m + num_m * d] * psi[d + num_d * (g + num_g * z)];
            }
            *p = sum;
        }
    }

    /// A 1-D `Region` in a multi-dimensional grid: each thread owns the element at its
    /// linear id, so no two threads share one.
    #[kernel]
    pub fn linear(mut out: Region<u32>) {
        let i = out.index();
        if let Some(o) = out.mine() {
            *o = i as u32 + 1;
        }
    }

    /// Device math, element by element.
    #[kernel]
    pub fn maths(x: &[f64], mut roots: Region<f64>, mut waves: Region<f64>, mut fused: Region<f64>) {
        let i = roots.index();
        if let (Some(r), Some(w), Some(f)) = (roots.mine(), waves.mine(), fused.mine()) {
            let v = x[i];
            *r = math::sqrt(v);
            *w = math::sin(v) * math::exp(-v / 10.0) + math::pow(v, 0.75) - math::tanh(v);
            *f = math::fma(v, 1.0 + 1e-16, -v);
        }
    }
}

fn device() -> Device {
    Device::default().expect("a device")
}

#[test]
fn region2_covers_a_2d_array_exactly_once() {
    let dev = device();
    for (nx, ny, bx, by) in [(37usize, 19usize, 32u32, 8u32), (64, 64, 16, 16), (5, 300, 1, 128)] {
        let mut out = vec![u32::MAX; nx * ny];
        gpu::coords2::launch(&dev, Grid::threads_xy(nx, ny).block_xy(bx, by), (&mut out, [nx, ny])).unwrap();
        for y in 0..ny {
            for x in 0..nx {
                assert_eq!(out[x + nx * y], 1000 * x as u32 + y as u32, "({x}, {y}) of {nx}×{ny}");
            }
        }
    }
}

#[test]
fn region3_computes_ltimes() {
    let dev = device();
    let (num_d, num_m, num_g, num_z) = (16usize, 25usize, 32usize, 7usize);
    let ell: Vec<f64> = (0..num_m * num_d).map(|i| (i % 13) as f64 * 0.5 - 2.0).collect();
    let psi: Vec<f64> = (0..num_d * num_g * num_z).map(|i| ((i * 7) % 11) as f64 * 0.25).collect();
    let mut phi = vec![f64::NAN; num_m * num_g * num_z];
    let grid = Grid::threads_xyz(num_m, num_g, num_z).block_xyz(32, 4, 2);
    gpu::ltimes::launch(&dev, grid, num_d, &ell, &psi, (&mut phi, [num_m, num_g, num_z])).unwrap();
    for z in 0..num_z {
        for g in 0..num_g {
            for m in 0..num_m {
                let want: f64 = (0..num_d)
                    .map(|d| ell[m + num_m * d] * psi[d + num_d * (g + num_g * z)])
                    .fold(0.0, |a, b| a + b);
                assert_eq!(phi[m + num_m * (g + num_g * z)], want, "phi[{m}, {g}, {z}]");
            }
        }
    }
}

#[test]
fn extents_must_match_the_data() {
    let dev = device();
    let mut out = vec![0u32; 10];
    let e = gpu::coords2::launch(&dev, Grid::threads_xy(4, 4), (&mut out, [4, 4])).unwrap_err();
    assert!(e.to_string().contains("extents [4, 4] do not match the 10 elements"), "{e}");
}

/// Whether a thread of a `grid` (rounded up to `block`s) reaches `at` in a region with margin
/// `m` of an array with `extents`, and `at` is outside the margin.
fn in_interior<const D: usize>(
    at: [usize; D],
    extents: [usize; D],
    m: usize,
    grid: [usize; D],
    block: [usize; D],
) -> bool {
    (0..D).all(|d| at[d] >= m && at[d] + m < extents[d] && at[d] - m < grid[d].next_multiple_of(block[d]))
}

#[test]
fn a_region_with_a_margin_writes_the_interior_and_nothing_else() {
    let dev = device();
    let (nx, ny, nz) = (37usize, 11usize, 5usize);
    // The interior exactly, a grid larger than it, and one smaller (in blocks of 32×4×1).
    for grid in [[nx - 2, ny - 2, nz - 2], [64, 16, 4], [8, 1, 5]] {
        let mut out = vec![0u32; nx * ny * nz];
        let g = Grid::threads_xyz(grid[0], grid[1], grid[2]).block_xyz(32, 4, 1);
        gpu::interior3::launch(&dev, g, (&mut out, [nx, ny, nz])).unwrap();
        for z in 0..nz {
            for y in 0..ny {
                for x in 0..nx {
                    let i = x + nx * (y + ny * z);
                    let covered = in_interior([x, y, z], [nx, ny, nz], 1, grid, [32, 4, 1]);
                    assert_eq!(
                        out[i],
                        if covered { i as u32 + 1 } else { 0 },
                        "({x}, {y}, {z}), grid {grid:?}"
                    );
                }
            }
        }
    }
    // Margins wider than the array leave nothing to write.
    let mut tiny = vec![0u32; 9];
    gpu::interior2::launch(&dev, Grid::threads_xy(3, 3), (&mut tiny, [3, 3])).unwrap();
    assert_eq!(tiny, [0; 9]);
    let (nx, ny) = (9usize, 8usize);
    let mut out = vec![0u32; nx * ny];
    gpu::interior2::launch(&dev, Grid::threads_xy(nx, ny).block_xy(4, 4), (&mut out, [nx, ny])).unwrap();
    for y in 0..ny {
        for x in 0..nx {
            let i = x + nx * y;
            let covered = in_interior([x, y], [nx, ny], gpu::HALO, [nx, ny], [4, 4]);
            assert_eq!(out[i], if covered { i as u32 + 1 } else { 0 }, "({x}, {y})");
        }
    }
}

#[test]
fn mine_near_reads_the_points_around_the_interior() {
    let dev = device();
    let (nx, ny, nz) = (19usize, 7usize, 6usize);
    let from: Vec<u64> =
        (0..nx * ny * nz).map(|i| (i as u64).wrapping_mul(0x9e37_79b9) % 1_000_003).collect();
    let flat = |x: usize, y: usize, z: usize| x + nx * (y + ny * z);
    let mut out = vec![0u64; nx * ny * nz];
    let g = Grid::threads_xyz(nx, ny, nz).block_xyz(8, 4, 2);
    gpu::near27::launch(&dev, g, &from[..], (&mut out, [nx, ny, nz])).unwrap();
    for (i, &o) in out.iter().enumerate() {
        let (x, y, z) = (i % nx, i / nx % ny, i / (nx * ny));
        let inside = (1..nx - 1).contains(&x) && (1..ny - 1).contains(&y) && (1..nz - 1).contains(&z);
        let want = if inside {
            (0..27)
                .map(|k| (k as u64 + 1) * from[flat(x + k % 3 - 1, y + k / 3 % 3 - 1, z + k / 9 - 1)])
                .sum()
        } else {
            0
        };
        assert_eq!(o, want, "({x}, {y}, {z})");
    }
    // A `from` shorter than the region: no thread gets its element.
    let mut out = vec![0u64; nx * ny * nz];
    gpu::near27::launch(&dev, g, &from[..nx * ny * nz - 1], (&mut out, [nx, ny, nz])).unwrap();
    assert!(out.iter().all(|&o| o == 0));

    let (nx, ny) = (13usize, 9usize);
    let from: Vec<u64> = (0..(nx * ny) as u64).map(|i| i * 7 + 3).collect();
    let mut out = vec![0u64; nx * ny];
    gpu::near_corners::launch(&dev, Grid::threads_xy(nx, ny).block_xy(4, 4), &from[..], (&mut out, [nx, ny]))
        .unwrap();
    for (i, &o) in out.iter().enumerate() {
        let (x, y) = (i % nx, i / nx);
        let inside = (2..nx - 2).contains(&x) && (2..ny - 2).contains(&y);
        let at = |x: usize, y: usize| from[x + nx * y];
        let want = if inside {
            at(x - 2, y - 2) + 10 * at(x + 2, y - 2) + 100 * at(x - 2, y + 2) + 1000 * at(x + 2, y + 2)
        } else {
            0
        };
        assert_eq!(o, want, "({x}, {y})");
    }
}

#[test]
fn a_1d_region_in_a_2d_grid_gives_every_thread_its_own_element() {
    let dev = device();
    // 40×6 threads in blocks of 32×4: the grid is 64×8 threads, 512 linear ids.
    let mut out = vec![0u32; 512];
    gpu::linear::launch(&dev, Grid::threads_xy(40, 6).block_xy(32, 4), &mut out).unwrap();
    assert!(out.iter().enumerate().all(|(i, v)| *v == i as u32 + 1), "{out:?}");
}

#[test]
fn bad_multidimensional_blocks_are_errors() {
    let dev = device();
    let mut out = vec![0u32; 64];
    let e =
        gpu::coords2::launch(&dev, Grid::threads_xy(8, 8).block_xy(64, 32), (&mut out, [8, 8])).unwrap_err();
    assert!(e.to_string().contains("64×32×1"), "{e}");
}

#[test]
fn device_math_matches_the_host_bit_for_bit() {
    let dev = device();
    let x: Vec<f64> = (0..5000).map(|i| i as f64 * 0.01 + 1e-3).collect();
    let (mut r, mut w, mut f) = (vec![0.0; x.len()], vec![0.0; x.len()], vec![0.0; x.len()]);
    gpu::maths::launch(&dev, x.len(), &x, &mut r, &mut w, &mut f).unwrap();
    for (i, &v) in x.iter().enumerate() {
        assert_eq!(r[i].to_bits(), v.sqrt().to_bits(), "sqrt({v})");
        let wave = math::sin(v) * math::exp(-v / 10.0) + math::pow(v, 0.75) - math::tanh(v);
        assert_eq!(w[i].to_bits(), wave.to_bits(), "wave({v})");
        assert_eq!(f[i].to_bits(), v.mul_add(1.0 + 1e-16, -v).to_bits(), "fma({v})");
    }
}

#[offload::kernels]
mod generic {
    use offload::math::Float;
    use offload::prelude::*;

    /// `y = a·x + y` for any listed float type.
    #[kernel(f32, f64)]
    pub fn axpy<T: Float>(a: T, x: &[T], mut y: Region<T>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = math::fma(a, x[i], *yi);
        }
    }

    /// Integer types work too, with a `where` clause.
    #[kernel(u32, i64)]
    pub fn double<T>(mut y: Region<T>)
    where
        T: Copy + core::ops::Add<Output = T>,
    {
        if let Some(yi) = y.mine() {
            *yi = *yi + *yi;
        }
    }
}

#[test]
fn generic_kernels_run_for_each_listed_type() {
    let dev = device();
    let x32 = vec![1.5f32; 300];
    let mut y32 = vec![2.0f32; 300];
    generic::axpy::launch(&dev, 300, 2.0f32, &x32, &mut y32).unwrap();
    assert!(y32.iter().all(|v| *v == 5.0));
    let x64: Vec<f64> = (0..300).map(f64::from).collect();
    let mut y64 = vec![1.0f64; 300];
    generic::axpy::launch(&dev, 300, 0.5f64, &x64, &mut y64).unwrap();
    assert!(y64.iter().enumerate().all(|(i, v)| *v == 0.5 * i as f64 + 1.0));
    let mut u = vec![21u32; 10];
    generic::double::launch(&dev, 10, &mut u).unwrap();
    assert_eq!(u, [42; 10]);
    let mut l = vec![-4i64; 10];
    generic::double::launch(&dev, 10, &mut l).unwrap();
    assert_eq!(l, [-8; 10]);
}

#[offload::kernels]
mod structs {
    use offload::prelude::*;

    /// Parameters of a clamped affine map, passed by value.
    #[derive(Clone, Copy, Debug, KernelScalar)]
    #[repr(C)]
    pub struct Affine {
        pub scale: f32,
        pub flags: u8,
        pub offset: f64,
        pub bounds: [f32; 2],
    }

    /// A helper function the kernel and host code both use.
    pub fn apply(p: &Affine, v: f32) -> f32 {
        let r = (p.scale * v) as f64 + p.offset;
        let r = if p.flags & 1 == 1 { -r } else { r } as f32;
        math::min(math::max(r, p.bounds[0]), p.bounds[1])
    }

    #[kernel]
    pub fn map(p: Affine, x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = apply(&p, x[i]);
        }
    }
}

#[test]
fn repr_c_structs_and_helpers_cross_to_the_device() {
    let dev = device();
    let p = structs::Affine { scale: 1.5, flags: 1, offset: 0.25, bounds: [-50.0, 20.0] };
    let x: Vec<f32> = (0..1000).map(|i| i as f32 * 0.1 - 30.0).collect();
    let mut y = vec![0.0f32; x.len()];
    structs::map::launch(&dev, x.len(), p, &x, &mut y).unwrap();
    for (i, v) in x.iter().enumerate() {
        assert_eq!(y[i], structs::apply(&p, *v), "element {i}");
    }
}
