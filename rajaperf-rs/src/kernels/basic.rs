//! Basic group: DAXPY, INIT3, MULADDSUB, IF_QUAD, INIT_VIEW1D, COPY8, NESTED_INIT.

use super::{BLOCK_SIZE, Launch, buffers};
use crate::problem::KernelId;
use offload::Grid;

/// NESTED_INIT's thread block: RAJAPerf's CUDA variant puts 32 threads along i and the rest
/// of 256 along j.
pub const NESTED_INIT_BLOCK: [u32; 3] = [32, 8, 1];

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `y[i] += a * x[i]`
    #[kernel]
    pub fn daxpy(a: f64, x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(y) = y.mine() {
            *y += a * x[i];
        }
    }

    /// `out1[i] = out2[i] = out3[i] = -in1[i] - in2[i]`
    #[kernel]
    pub fn init3(
        in1: &[f64],
        in2: &[f64],
        mut out1: Region<f64>,
        mut out2: Region<f64>,
        mut out3: Region<f64>,
    ) {
        let i = out1.index();
        if let (Some(o1), Some(o2), Some(o3)) = (out1.mine(), out2.mine(), out3.mine()) {
            let v = -in1[i] - in2[i];
            *o1 = v;
            *o2 = v;
            *o3 = v;
        }
    }

    /// `out1 = in1 * in2`, `out2 = in1 + in2`, `out3 = in1 - in2`
    #[kernel]
    pub fn muladdsub(
        in1: &[f64],
        in2: &[f64],
        mut out1: Region<f64>,
        mut out2: Region<f64>,
        mut out3: Region<f64>,
    ) {
        let i = out1.index();
        if let (Some(o1), Some(o2), Some(o3)) = (out1.mine(), out2.mine(), out3.mine()) {
            *o1 = in1[i] * in2[i];
            *o2 = in1[i] + in2[i];
            *o3 = in1[i] - in2[i];
        }
    }

    /// The roots of `a·x² + b·x + c`, or zeros when they are complex.
    #[kernel]
    pub fn if_quad(a: &[f64], b: &[f64], c: &[f64], mut x1: Region<f64>, mut x2: Region<f64>) {
        let i = x1.index();
        if let (Some(x1), Some(x2)) = (x1.mine(), x2.mine()) {
            let s = b[i] * b[i] - 4.0 * a[i] * c[i];
            if s >= 0.0 {
                let s = math::sqrt(s);
                *x2 = (-b[i] + s) / (2.0 * a[i]);
                *x1 = (-b[i] - s) / (2.0 * a[i]);
            } else {
                *x2 = 0.0;
                *x1 = 0.0;
            }
        }
    }

    /// `a[i] = (i + 1) · val` (RAJAPerf writes it through a 1-D `View`).
    #[kernel]
    pub fn init_view1d(val: f64, mut a: Region<f64>) {
        let i = a.index();
        if let Some(a) = a.mine() {
            *a = (i + 1) as f64 * val;
        }
    }

    /// Eight copies at once: `y_k[i] = x_k[i]` for k = 0..8.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn copy8(
        x0: &[f64],
        x1: &[f64],
        x2: &[f64],
        x3: &[f64],
        x4: &[f64],
        x5: &[f64],
        x6: &[f64],
        x7: &[f64],
        mut y0: Region<f64>,
        mut y1: Region<f64>,
        mut y2: Region<f64>,
        mut y3: Region<f64>,
        mut y4: Region<f64>,
        mut y5: Region<f64>,
        mut y6: Region<f64>,
        mut y7: Region<f64>,
    ) {
        let i = y0.index();
        if let (Some(y0), Some(y1), Some(y2), Some(y3), Some(y4), Some(y5), Some(y6), Some(y7)) =
            (y0.mine(), y1.mine(), y2.mine(), y3.mine(), y4.mine(), y5.mine(), y6.mine(), y7.mine())
        {
            // All eight reads before the first write: a read's bounds check may trap, and a
            // trap must come before any later write, so with reads and writes alternating each
            // read waited for the write before it, and that write for its own read — eight
            // memory latencies in a row (13 registers, the first load at SASS instruction 90;
            // CUDA's COPY8 issues its eight loads together, 32 registers).
            let v = [x0[i], x1[i], x2[i], x3[i], x4[i], x5[i], x6[i], x7[i]];
            [*y0, *y1, *y2, *y3, *y4, *y5, *y6, *y7] = v;
        }
    }

    /// `array[i + ni·(j + nj·k)] = 1e-8 · i · j · k` over a 3-D launch: each thread owns its
    /// `(i, j, k)` element of the `Region3`.
    #[kernel]
    pub fn nested_init(mut array: Region3<f64>) {
        let [i, j, k] = array.index();
        if let Some(a) = array.mine() {
            *a = 0.00000001 * i as f64 * j as f64 * k as f64;
        }
    }
}

pub(super) fn launch_reps(launch: Launch<'_>) -> offload::Result<()> {
    let Launch { dev, p, ins, outs, reps, .. } = launch;
    let grid = Grid::threads(p.param_opt("iend").unwrap_or(0)).block_size(BLOCK_SIZE);
    match p.kernel {
        KernelId::Daxpy => {
            buffers!(p, ins => [x], outs => [y]);
            let a = p.scalar("a");
            for _ in 0..reps {
                gpu::daxpy::launch(dev, grid, a, x, &mut *y)?;
            }
        }
        KernelId::Init3 => {
            buffers!(p, ins => [in1, in2], outs => [out1, out2, out3]);
            for _ in 0..reps {
                gpu::init3::launch(dev, grid, in1, in2, &mut *out1, &mut *out2, &mut *out3)?;
            }
        }
        KernelId::MulAddSub => {
            buffers!(p, ins => [in1, in2], outs => [out1, out2, out3]);
            for _ in 0..reps {
                gpu::muladdsub::launch(dev, grid, in1, in2, &mut *out1, &mut *out2, &mut *out3)?;
            }
        }
        KernelId::IfQuad => {
            buffers!(p, ins => [a, b, c], outs => [x1, x2]);
            for _ in 0..reps {
                gpu::if_quad::launch(dev, grid, a, b, c, &mut *x1, &mut *x2)?;
            }
        }
        KernelId::InitView1d => {
            buffers!(p, ins => [], outs => [a]);
            let val = p.scalar("val");
            for _ in 0..reps {
                gpu::init_view1d::launch(dev, grid, val, &mut *a)?;
            }
        }
        KernelId::Copy8 => {
            buffers!(p, ins => [x0, x1, x2, x3, x4, x5, x6, x7], outs => [y0, y1, y2, y3, y4, y5, y6, y7]);
            for _ in 0..reps {
                gpu::copy8::launch(
                    dev, grid, x0, x1, x2, x3, x4, x5, x6, x7, &mut *y0, &mut *y1, &mut *y2, &mut *y3,
                    &mut *y4, &mut *y5, &mut *y6, &mut *y7,
                )?;
            }
        }
        KernelId::NestedInit => {
            buffers!(p, ins => [], outs => [array]);
            let (ni, nj, nk) = (p.param("ni"), p.param("nj"), p.param("nk"));
            let [bx, by, bz] = NESTED_INIT_BLOCK;
            let grid = Grid::threads_xyz(ni, nj, nk).block_xyz(bx, by, bz);
            for _ in 0..reps {
                gpu::nested_init::launch(dev, grid, (&mut *array, [ni, nj, nk]))?;
            }
        }
        other => unreachable!("{other} is not in the Basic group"),
    }
    Ok(())
}
