//! Lcals group: HYDRO_1D, EOS, FIRST_DIFF, INT_PREDICT, DIFF_PREDICT, PLANCKIAN, FIRST_SUM,
//! TRIDIAG_ELIM, GEN_LIN_RECUR.

use super::{BLOCK_SIZE, Launch, buffers};
use crate::problem::KernelId;
use offload::Grid;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Livermore loop 1: `x[i] = q + y[i] * (r * z[i+10] + t * z[i+11])` for `i < iend`.
    /// x is 12 elements longer than the loop, so threads of the last block past `iend`
    /// would own elements: they must stop, as in RAJAPerf's `if (i < iend)`.
    ///
    /// Written as the multiply-adds nvcc contracts the CUDA body into
    /// (`fma(y, fma(r, z10, t·z11), q)`), with `z`'s two elements taken as one window.
    #[kernel]
    pub fn hydro_1d(iend: usize, q: f64, r: f64, t: f64, y: &[f64], z: &[f64], mut x: Region<f64>) {
        let i = x.index();
        if i >= iend {
            return;
        }
        if let Some(x) = x.mine() {
            let z = &z[i + 10..i + 12];
            *x = math::fma(y[i], math::fma(r, z[0], t * z[1]), q);
        }
    }

    /// Livermore loop 7, the equation of state fragment:
    /// `x[i] = u[i] + r·(z[i] + r·y[i]) + t·(u[i+3] + r·(u[i+2] + r·u[i+1]) + t·(u[i+6] + q·(u[i+5] + q·u[i+4])))`
    /// for `i < iend` (the arrays carry 7 spare elements, so the threads past `iend` stop).
    ///
    /// Written as the fused multiply-adds nvcc contracts the CUDA body into; `u`'s window of
    /// seven elements is sliced once.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn eos(iend: usize, q: f64, r: f64, t: f64, y: &[f64], z: &[f64], u: &[f64], mut x: Region<f64>) {
        let i = x.index();
        if i >= iend {
            return;
        }
        if let Some(x) = x.mine() {
            let u = &u[i..i + 7];
            let inner = math::fma(q, math::fma(q, u[4], u[5]), u[6]);
            let middle = math::fma(t, inner, math::fma(r, math::fma(r, u[1], u[2]), u[3]));
            *x = math::fma(t, middle, math::fma(r, math::fma(r, y[i], z[i]), u[0]));
        }
    }

    /// Livermore loop 12: `x[i] = y[i+1] - y[i]` for `i < iend` (x and y have `iend + 1`
    /// elements).
    #[kernel]
    pub fn first_diff(iend: usize, y: &[f64], mut x: Region<f64>) {
        let i = x.index();
        if i >= iend {
            return;
        }
        if let Some(x) = x.mine() {
            let y = &y[i..i + 2];
            *x = y[1] - y[0];
        }
    }

    /// Livermore loop 9, integrate predictors: slab 0 of `px` (13 slabs of `offset`) from
    /// slabs 2 and 4 to 12 of the same array.
    ///
    /// A thread writes `px[i]` and reads `px[i + k·offset]`, elements no thread writes: the
    /// host splits the buffer (`split_at_mut(offset)`) into slab 0, written through a
    /// `Region`, and the other slabs, read as a plain slice — loads and a store as in CUDA.
    /// The multiply-adds are fused as nvcc fuses them.
    #[kernel]
    pub fn int_predict(iend: usize, offset: usize, dm: [f64; 7], c0: f64, rest: &[f64], mut px: Region<f64>) {
        let i = px.index();
        if i >= iend {
            return;
        }
        // Slab k of the whole array is slab k - 1 of `rest`.
        let at = |k: usize| rest[i + offset * (k - 1)];
        // dm[0] = dm22 .. dm[6] = dm28, summed in the source's order.
        let mut sum = dm[6] * at(12);
        sum = math::fma(dm[5], at(11), sum);
        sum = math::fma(dm[4], at(10), sum);
        sum = math::fma(dm[3], at(9), sum);
        sum = math::fma(dm[2], at(8), sum);
        sum = math::fma(dm[1], at(7), sum);
        sum = math::fma(dm[0], at(6), sum);
        sum = math::fma(c0, at(4) + at(5), sum);
        if let Some(p) = px.mine() {
            *p = sum + at(2);
        }
    }

    /// Livermore loop 10, difference predictors: a chain of differences down slabs 4 to 13
    /// of `px` (14 slabs of `offset`), starting from slab 4 of `cx`.
    ///
    /// A thread reads and rewrites ten elements of `px`, `offset` apart, that no other thread
    /// touches. The kernel language has no view for such a strided set, so `px` is an
    /// `Atomics` view and each `read old; write new` pair is one exchange (CUDA uses plain
    /// loads and stores).
    #[kernel]
    pub fn diff_predict(iend: usize, offset: usize, cx: &[f64], px: Atomics<f64>) {
        let i = global_linear_id();
        if i >= iend {
            return;
        }
        let at = |k: usize| i + offset * k;
        // The running difference d_k = d_{k-1} - old px_k, and px_k takes d_{k-1}.
        let mut d = cx[at(4)];
        for k in 4..12 {
            let old = px.exchange(at(k), d);
            d -= old;
        }
        // The last two: px_13 = d_11 - old px_12, px_12 = d_11.
        let old = px.exchange(at(12), d);
        px.exchange(at(13), d - old);
    }

    /// `y[i] = u[i] / v[i]`, `w[i] = x[i] / (exp(y[i]) - 1)`.
    #[kernel]
    pub fn planckian(x: &[f64], u: &[f64], v: &[f64], mut y: Region<f64>, mut w: Region<f64>) {
        let i = y.index();
        if let (Some(y), Some(w)) = (y.mine(), w.mine()) {
            // x[i] read before the write of y (README: read, then write).
            let (xi, yi) = (x[i], u[i] / v[i]);
            *y = yi;
            *w = xi / (math::exp(yi) - 1.0);
        }
    }

    /// Livermore loop 11, first sum (parallel form): `x[i] = y[i-1] + y[i]` for `0 < i < n`.
    #[kernel]
    pub fn first_sum(y: &[f64], mut x: Region<f64>) {
        let i = x.index();
        if i == 0 {
            return;
        }
        if let Some(x) = x.mine() {
            let y = &y[i - 1..=i];
            *x = y[0] + y[1];
        }
    }

    /// Livermore loop 5, tridiagonal elimination (parallel form):
    /// `xout[i] = z[i] · (y[i] − xin[i-1])` for `0 < i < n`.
    #[kernel]
    pub fn tridiag_elim(xin: &[f64], y: &[f64], z: &[f64], mut xout: Region<f64>) {
        let i = xout.index();
        if i == 0 {
            return;
        }
        if let Some(xout) = xout.mine() {
            *xout = z[i] * (y[i] - xin[i - 1]);
        }
    }

    /// Livermore loop 19, general linear recurrence (parallel form), one pass over k:
    /// `b5[k] = sa[k] + stb5[k]·sb[k]; stb5[k] = b5[k] − stb5[k]` (RAJAPerf's kb5i is 0).
    /// RAJAPerf's second loop visits k = N − i for i = 1..=N, the same set in reverse; each
    /// k is independent, so both passes launch this kernel with thread k owning element k.
    /// `sa + stb5·sb` is the fma nvcc contracts it into.
    #[kernel]
    pub fn gen_lin_recur(sa: &[f64], sb: &[f64], mut b5: Region<f64>, mut stb5: Region<f64>) {
        let k = b5.index();
        if let (Some(b5), Some(stb5)) = (b5.mine(), stb5.mine()) {
            *b5 = math::fma(*stb5, sb[k], sa[k]);
            *stb5 = *b5 - *stb5;
        }
    }
}

pub(super) fn launch_reps(launch: Launch<'_>) -> offload::Result<()> {
    let Launch { dev, p, ins, outs, reps, .. } = launch;
    // Several arrays carry spare elements: the grid covers the loop, not the arrays.
    let grid = Grid::threads(p.param("iend")).block_size(BLOCK_SIZE);
    match p.kernel {
        KernelId::Hydro1d => {
            buffers!(p, ins => [y, z], outs => [x]);
            let (q, r, t) = (p.scalar("q"), p.scalar("r"), p.scalar("t"));
            let iend = p.param("iend");
            for _ in 0..reps {
                gpu::hydro_1d::launch(dev, grid, iend, q, r, t, y, z, &mut *x)?;
            }
        }
        KernelId::Eos => {
            buffers!(p, ins => [y, z, u], outs => [x]);
            let (q, r, t) = (p.scalar("q"), p.scalar("r"), p.scalar("t"));
            let iend = p.param("iend");
            for _ in 0..reps {
                gpu::eos::launch(dev, grid, iend, q, r, t, y, z, u, &mut *x)?;
            }
        }
        KernelId::FirstDiff => {
            buffers!(p, ins => [y], outs => [x]);
            let iend = p.param("iend");
            for _ in 0..reps {
                gpu::first_diff::launch(dev, grid, iend, y, &mut *x)?;
            }
        }
        KernelId::IntPredict => {
            buffers!(p, ins => [], outs => [px]);
            let dm = ["dm22", "dm23", "dm24", "dm25", "dm26", "dm27", "dm28"].map(|n| p.scalar(n));
            let (c0, iend, offset) = (p.scalar("c0"), p.param("iend"), p.param("offset"));
            let (mut slab0, rest) = px.split_at_mut(offset);
            for _ in 0..reps {
                gpu::int_predict::launch(dev, grid, iend, offset, dm, c0, &rest, &mut slab0)?;
            }
        }
        KernelId::DiffPredict => {
            buffers!(p, ins => [cx], outs => [px]);
            let (iend, offset) = (p.param("iend"), p.param("offset"));
            for _ in 0..reps {
                gpu::diff_predict::launch(dev, grid, iend, offset, cx, &mut *px)?;
            }
        }
        KernelId::Planckian => {
            buffers!(p, ins => [x, u, v], outs => [y, w]);
            for _ in 0..reps {
                gpu::planckian::launch(dev, grid, x, u, v, &mut *y, &mut *w)?;
            }
        }
        KernelId::FirstSum => {
            buffers!(p, ins => [y], outs => [x]);
            for _ in 0..reps {
                gpu::first_sum::launch(dev, grid, y, &mut *x)?;
            }
        }
        KernelId::TridiagElim => {
            buffers!(p, ins => [xin, y, z], outs => [xout]);
            for _ in 0..reps {
                gpu::tridiag_elim::launch(dev, grid, xin, y, z, &mut *xout)?;
            }
        }
        KernelId::GenLinRecur => {
            buffers!(p, ins => [sa, sb], outs => [b5, stb5]);
            for _ in 0..reps {
                // RAJAPerf's two loops, as two launches.
                gpu::gen_lin_recur::launch(dev, grid, sa, sb, &mut *b5, &mut *stb5)?;
                gpu::gen_lin_recur::launch(dev, grid, sa, sb, &mut *b5, &mut *stb5)?;
            }
        }
        other => unreachable!("{other} is not in the Lcals group"),
    }
    Ok(())
}
