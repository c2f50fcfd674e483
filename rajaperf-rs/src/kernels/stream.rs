//! Stream group: COPY, MUL, ADD, TRIAD.

use super::{BLOCK_SIZE, Launch, buffers};
use crate::problem::KernelId;
use offload::Grid;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `c[i] = a[i]`
    #[kernel]
    pub fn copy(a: &[f64], mut c: Region<f64>) {
        let i = c.index();
        if let Some(c) = c.mine() {
            *c = a[i];
        }
    }

    /// `b[i] = alpha * c[i]`
    #[kernel]
    pub fn mul(alpha: f64, c: &[f64], mut b: Region<f64>) {
        let i = b.index();
        if let Some(b) = b.mine() {
            *b = alpha * c[i];
        }
    }

    /// `c[i] = a[i] + b[i]`
    #[kernel]
    pub fn add(a: &[f64], b: &[f64], mut c: Region<f64>) {
        let i = c.index();
        if let Some(c) = c.mine() {
            *c = a[i] + b[i];
        }
    }

    /// `a[i] = b[i] + alpha * c[i]`
    #[kernel]
    pub fn triad(alpha: f64, b: &[f64], c: &[f64], mut a: Region<f64>) {
        let i = a.index();
        if let Some(a) = a.mine() {
            *a = b[i] + alpha * c[i];
        }
    }
}

pub(super) fn launch_reps(launch: Launch<'_>) -> offload::Result<()> {
    let Launch { dev, p, ins, outs, reps, .. } = launch;
    let grid = Grid::threads(p.param("iend")).block_size(BLOCK_SIZE);
    match p.kernel {
        KernelId::Copy => {
            buffers!(p, ins => [a], outs => [c]);
            for _ in 0..reps {
                gpu::copy::launch(dev, grid, a, &mut *c)?;
            }
        }
        KernelId::Mul => {
            buffers!(p, ins => [c], outs => [b]);
            let alpha = p.scalar("alpha");
            for _ in 0..reps {
                gpu::mul::launch(dev, grid, alpha, c, &mut *b)?;
            }
        }
        KernelId::Add => {
            buffers!(p, ins => [a, b], outs => [c]);
            for _ in 0..reps {
                gpu::add::launch(dev, grid, a, b, &mut *c)?;
            }
        }
        KernelId::Triad => {
            buffers!(p, ins => [b, c], outs => [a]);
            let alpha = p.scalar("alpha");
            for _ in 0..reps {
                gpu::triad::launch(dev, grid, alpha, b, c, &mut *a)?;
            }
        }
        other => unreachable!("{other} is not in the Stream group"),
    }
    Ok(())
}
