//! Basic group: DAXPY, INIT3, MULADDSUB, IF_QUAD.

use super::{BLOCK_SIZE, buffers};
use crate::problem::{KernelId, Problem};
use offload::{Device, DeviceBuffer, Grid};

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
}

pub(super) fn launch_reps(
    dev: &Device,
    p: &Problem,
    ins: &[DeviceBuffer<f64>],
    outs: &mut [DeviceBuffer<f64>],
    reps: usize,
) -> offload::Result<()> {
    let grid = Grid::threads(p.param("iend")).block_size(BLOCK_SIZE);
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
        other => unreachable!("{other} is not in the Basic group"),
    }
    Ok(())
}
