//! Lcals group: HYDRO_1D.

use super::{BLOCK_SIZE, buffers};
use crate::problem::{KernelId, Problem};
use offload::{Device, DeviceBuffer, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Livermore loop 1: `x[i] = q + y[i] * (r * z[i+10] + t * z[i+11])` for `i < iend`.
    /// x is 12 elements longer than the loop, so threads of the last block past `iend`
    /// would own elements: they must stop, as in RAJAPerf's `if (i < iend)`.
    #[kernel]
    pub fn hydro_1d(iend: usize, q: f64, r: f64, t: f64, y: &[f64], z: &[f64], mut x: Region<f64>) {
        let i = x.index();
        if i >= iend {
            return;
        }
        if let Some(x) = x.mine() {
            *x = q + y[i] * (r * z[i + 10] + t * z[i + 11]);
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
    // x, y and z carry 12 spare elements: the grid covers the loop, not the arrays.
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
        other => unreachable!("{other} is not in the Lcals group"),
    }
    Ok(())
}
