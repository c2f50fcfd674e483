//! Tier 3, 2-D and 3-D stencils: HYDRO_2D (Lcals), JACOBI_1D, JACOBI_2D, HEAT_3D (Polybench).
//!
//! JACOBI_2D and HEAT_3D launch over the interior only, as RAJAPerf's CUDA kernels do: they
//! write a `Region2<f64, 1>`/`Region3<f64, 1>`, whose margin of one element makes the thread at
//! global position `p` own the element at `p + 1`, with no boundary test in the kernel.
//! JACOBI_1D and HYDRO_2D launch over the whole array and their threads on the boundary
//! return at once (HYDRO_2D measured faster this way than over the interior: 0.93 of CUDA's
//! time against 1.08 at 2^25, with warps aligned to the rows). The sweeps read the other
//! array of the pair, so a repetition is two launches with the roles swapped.

use super::{Launch, buffers};
use crate::problem::KernelId;
use offload::Grid;

/// Thread block of the 2-D stencils: 32 along the fastest index, 8 along the next (RAJAPerf's
/// CUDA shape for 256 threads); HEAT_3D adds a third dimension of 1.
pub const STENCIL_BLOCK: [u32; 3] = [32, 8, 1];

/// Whether this module runs `kernel`.
pub(super) fn handles(kernel: KernelId) -> bool {
    matches!(kernel, KernelId::Hydro2d | KernelId::Jacobi1d | KernelId::Jacobi2d | KernelId::Heat3d)
}

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `to[i] = 0.33333 · (from[i-1] + from[i] + from[i+1])` for `0 < i < n-1` (`to`'s
    /// interior: one comparison). `mine_near` reads the three points with no check of their
    /// own (`from` is as long as `to`: one test, the same in every thread).
    #[kernel]
    pub fn jacobi_1d(from: &[f64], mut to: Region<f64>) {
        if let Some((t, near)) = to.mine_near::<1, _>(from) {
            *t = 0.33333 * (near.at([-1]) + near.at([0]) + near.at([1]));
        }
    }

    /// The five-point average `to[i][j] = 0.2 · (from[i][j] + from[i][j±1] + from[i±1][j])`
    /// on the interior of an n × n grid (`to`'s margin leaves the boundary out). `mine_near`
    /// reads `from` around the thread's point with no check per point: the point is inside the
    /// margin and `from` is as large as `to`, so its neighbours exist (one check of the
    /// length, the same in every thread, where a stencil checks the span around each point).
    #[kernel]
    pub fn jacobi_2d(from: &[f64], mut to: Region2<f64, 1>) {
        if let Some((t, near)) = to.mine_near(from) {
            let [w, c, e] = [near.at([-1, 0]), near.at([0, 0]), near.at([1, 0])];
            let (s, north) = (near.at([0, -1]), near.at([0, 1]));
            *t = 0.2 * (c + w + e + north + s);
        }
    }

    /// One explicit heat-equation step on the interior of an n³ grid (`to`'s margin):
    /// `to = Σ_d 0.125 · (from[+d] − 2·from + from[−d]) + from`. Written as the multiply-adds
    /// nvcc contracts the CUDA body into (`f + fma(dk, 0.125, fma(di, 0.125, 0.125·dj))`);
    /// `mine_near` reads the seven points with no check per point (see `jacobi_2d`).
    #[kernel]
    pub fn heat_3d(from: &[f64], mut to: Region3<f64, 1>) {
        if let Some((t, near)) = to.mine_near(from) {
            let [i0, j0, k0] = [near.at([0, 0, -1]), near.at([0, -1, 0]), near.at([-1, 0, 0])];
            let f = near.at([0, 0, 0]);
            let [k2, j2, i2] = [near.at([1, 0, 0]), near.at([0, 1, 0]), near.at([0, 0, 1])];
            let di = i2 - 2.0 * f + i0;
            let dj = j2 - 2.0 * f + j0;
            let dk = k2 - 2.0 * f + k0;
            *t = f + math::fma(dk, 0.125, math::fma(di, 0.125, 0.125 * dj));
        }
    }

    /// Whether `(j, k)` is inside the `jn × kn` grid's interior.
    fn interior(j: usize, k: usize, jn: usize, kn: usize) -> bool {
        j > 0 && k > 0 && j + 1 < jn && k + 1 < kn
    }

    /// HYDRO_2D loop 1: the fluxes za, zb from zp, zq, zr, zm (the west and centre points of
    /// each input are one checked window).
    #[kernel]
    pub fn hydro_2d_1(
        zp: &[f64],
        zq: &[f64],
        zr: &[f64],
        zm: &[f64],
        mut za: Region2<f64>,
        mut zb: Region2<f64>,
    ) {
        let [j, k] = za.index();
        let [jn, kn] = za.extents();
        if !interior(j, k, jn, kn) {
            return;
        }
        if let (Some(a), Some(b)) = (za.mine(), zb.mine()) {
            let (c, w, n, s) = (j + k * jn, j - 1 + k * jn, j - 1 + (k + 1) * jn, j + (k - 1) * jn);
            // w and c are neighbours (w = c - 1): one window each for zp, zq, zr, zm.
            let (p, q, r, m) = (&zp[w..=c], &zq[w..=c], &zr[w..=c], &zm[w..=c]);
            // Both values before either write (README: read, then write): `zr[s]`'s check
            // would otherwise hold its load behind the write of `a`.
            let va = (zp[n] + zq[n] - p[0] - q[0]) * (r[1] + r[0]) / (m[0] + zm[n]);
            let vb = (p[0] + q[0] - p[1] - q[1]) * (r[1] + zr[s]) / (m[1] + m[0]);
            (*a, *b) = (va, vb);
        }
    }

    /// HYDRO_2D loop 2: the velocities zu, zv accumulate the flux differences. Written as the
    /// multiply-adds nvcc contracts the CUDA body into (the last flux term and the update
    /// `fma(flux, s, u)`); the points along j are one checked window per array.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn hydro_2d_2(
        s: f64,
        za: &[f64],
        zb: &[f64],
        zz: &[f64],
        zr: &[f64],
        mut zu: Region2<f64>,
        mut zv: Region2<f64>,
    ) {
        let [j, k] = zu.index();
        let [jn, kn] = zu.extents();
        if !interior(j, k, jn, kn) {
            return;
        }
        if let (Some(u), Some(v)) = (zu.mine(), zv.mine()) {
            let c = j + k * jn;
            let (e, w, n, so) = (c + 1, c - 1, c + jn, c - jn);
            let a = &za[w..=c];
            let (bc, bn) = (zb[c], zb[n]);
            let flux = |f: &[f64]| {
                let row = &f[w..=e];
                let fc = row[1];
                let west = a[1] * (fc - row[2]) - a[0] * (fc - row[0]) - bc * (fc - f[so]);
                math::fma(bn, fc - f[n], west)
            };
            // Both fluxes before either write (README: read, then write).
            let (fu, fv) = (flux(zz), flux(zr));
            (*u, *v) = (math::fma(fu, s, *u), math::fma(fv, s, *v));
        }
    }

    /// HYDRO_2D loop 3: the new positions, `zr + t·zu` as the fma nvcc contracts it into.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn hydro_2d_3(
        t: f64,
        zr: &[f64],
        zz: &[f64],
        zu: &[f64],
        zv: &[f64],
        mut zrout: Region2<f64>,
        mut zzout: Region2<f64>,
    ) {
        let [j, k] = zrout.index();
        let [jn, kn] = zrout.extents();
        if !interior(j, k, jn, kn) {
            return;
        }
        if let (Some(r), Some(z)) = (zrout.mine(), zzout.mine()) {
            let c = j + k * jn;
            (*r, *z) = (math::fma(t, zu[c], zr[c]), math::fma(t, zv[c], zz[c]));
        }
    }
}

pub(super) fn launch_reps(launch: Launch<'_>) -> offload::Result<()> {
    let Launch { dev, p, ins, outs, reps, .. } = launch;
    let [bx, by, bz] = STENCIL_BLOCK;
    match p.kernel {
        KernelId::Jacobi1d => {
            buffers!(p, ins => [], outs => [a, b]);
            let grid = Grid::threads(p.param("n")).block_size(super::BLOCK_SIZE);
            for _ in 0..reps {
                gpu::jacobi_1d::launch(dev, grid, &*a, &mut *b)?;
                gpu::jacobi_1d::launch(dev, grid, &*b, &mut *a)?;
            }
        }
        KernelId::Jacobi2d => {
            buffers!(p, ins => [], outs => [a, b]);
            let n = p.param("n");
            // The interior: `to`'s margin adds 1 to each thread's position.
            let grid = Grid::threads_xy(n.saturating_sub(2), n.saturating_sub(2)).block_xy(bx, by);
            for _ in 0..reps {
                gpu::jacobi_2d::launch(dev, grid, &*a, (&mut *b, [n, n]))?;
                gpu::jacobi_2d::launch(dev, grid, &*b, (&mut *a, [n, n]))?;
            }
        }
        KernelId::Heat3d => {
            buffers!(p, ins => [], outs => [a, b]);
            let n = p.param("n");
            let m = n.saturating_sub(2);
            let grid = Grid::threads_xyz(m, m, m).block_xyz(bx, by, bz);
            for _ in 0..reps {
                gpu::heat_3d::launch(dev, grid, &*a, (&mut *b, [n, n, n]))?;
                gpu::heat_3d::launch(dev, grid, &*b, (&mut *a, [n, n, n]))?;
            }
        }
        KernelId::Hydro2d => {
            buffers!(p, ins => [zm, zp, zq, zr, zz], outs => [zrout, zzout, za, zb, zu, zv]);
            let (jn, kn) = (p.param("jn"), p.param("kn"));
            let (s, t) = (p.scalar("s"), p.scalar("t"));
            let grid = Grid::threads_xy(jn, kn).block_xy(bx, by);
            let e = [jn, kn];
            for _ in 0..reps {
                gpu::hydro_2d_1::launch(dev, grid, zp, zq, zr, zm, (&mut *za, e), (&mut *zb, e))?;
                gpu::hydro_2d_2::launch(dev, grid, s, &*za, &*zb, zz, zr, (&mut *zu, e), (&mut *zv, e))?;
                gpu::hydro_2d_3::launch(
                    dev,
                    grid,
                    t,
                    zr,
                    zz,
                    &*zu,
                    &*zv,
                    (&mut *zrout, e),
                    (&mut *zzout, e),
                )?;
            }
        }
        other => unreachable!("{other} is not a stencil kernel"),
    }
    Ok(())
}
