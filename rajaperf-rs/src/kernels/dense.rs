//! Tier 3, dense matrix products: MAT_MAT_SHARED (Basic), GEMM and 2MM (Polybench).
//!
//! MAT_MAT_SHARED stages 16×16 tiles of A and B in block-shared memory (`Shared`, one slot
//! per thread of the 16×16 block), as RAJAPerf's kernel does; the barrier between loading and
//! using a tile is the `sync` that makes the tile readable. GEMM and 2MM are RAJAPerf's
//! Base_CUDA kernels without shared memory: one thread per output element and a loop over k.

use super::{Launch, buffers};
use crate::problem::KernelId;
use offload::Grid;

/// MAT_MAT_SHARED's tile side (RAJAPerf's `TL_SZ`): blocks of 16×16 threads.
pub const TL_SZ: u32 = 16;

/// Whether this module runs `kernel`.
pub(super) fn handles(kernel: KernelId) -> bool {
    matches!(kernel, KernelId::MatMatShared | KernelId::Gemm | KernelId::Mm2)
}

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `C = A·B` for n × n matrices, one 16×16 tile of C per block: for each tile of the k
    /// range, every thread loads one element of A's and of B's tile (zero outside the
    /// matrix), the block synchronises, and every thread adds the tile's products for its
    /// element.
    #[kernel]
    pub fn mat_mat_shared(
        n: usize,
        a: &[f64],
        b: &[f64],
        mut c: Region2<f64>,
        a_tile: Shared<f64>,
        b_tile: Shared<f64>,
    ) {
        const TILE: usize = 16;
        let [col, row] = c.index();
        let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
        let (mut a_tile, mut b_tile) = (a_tile, b_tile);
        let mut sum = 0.0;
        for k in 0..(TILE + n - 1) / TILE {
            let (ak, bk) = (k * TILE + tx, k * TILE + ty);
            let av = if ak < n && row < n { a[row * n + ak] } else { 0.0 };
            let bv = if bk < n && col < n { b[bk * n + col] } else { 0.0 };
            let (ra, rb) = (a_tile.write(av).sync(), b_tile.write(bv).sync());
            for m in 0..TILE {
                sum += ra.get(ty * TILE + m) * rb.get(m * TILE + tx);
            }
            (a_tile, b_tile) = (ra.sync(), rb.sync());
        }
        if let Some(c) = c.mine() {
            *c = sum;
        }
    }

    /// `out[i][j] = init + Σ_k scale · x[i][k] · y[k][j]` (x is rows × nk, y is nk × cols):
    /// GEMM's `C = alpha·A·B` (init 0) and both products of 2MM.
    #[kernel]
    pub fn mat_mul(nk: usize, scale: f64, init: f64, x: &[f64], y: &[f64], mut out: Region2<f64>) {
        let [j, i] = out.index();
        let nj = out.extents()[0];
        if let Some(o) = out.mine() {
            let row = &x[i * nk..(i + 1) * nk];
            let mut dot = init;
            for (k, xv) in row.iter().enumerate() {
                dot += scale * xv * y[j + k * nj];
            }
            *o = dot;
        }
    }
}

pub(super) fn launch_reps(launch: Launch<'_>) -> offload::Result<()> {
    let Launch { dev, p, ins, outs, reps, .. } = launch;
    let [bx, by, _] = super::stencil::STENCIL_BLOCK;
    match p.kernel {
        KernelId::MatMatShared => {
            buffers!(p, ins => [a, b], outs => [c]);
            let n = p.param("n");
            let grid = Grid::threads_xy(n, n).block_xy(TL_SZ, TL_SZ);
            for _ in 0..reps {
                gpu::mat_mat_shared::launch(dev, grid, n, a, b, (&mut *c, [n, n]))?;
            }
        }
        KernelId::Gemm => {
            buffers!(p, ins => [a, b], outs => [c]);
            let (ni, nj, nk) = (p.param("ni"), p.param("nj"), p.param("nk"));
            let alpha = p.scalar("alpha");
            let grid = Grid::threads_xy(nj, ni).block_xy(bx, by);
            for _ in 0..reps {
                gpu::mat_mul::launch(dev, grid, nk, alpha, 0.0, a, b, (&mut *c, [nj, ni]))?;
            }
        }
        KernelId::Mm2 => {
            buffers!(p, ins => [a, b, cm], outs => [tmp, d]);
            let (ni, nj, nk, nl) = (p.param("ni"), p.param("nj"), p.param("nk"), p.param("nl"));
            let (alpha, beta) = (p.scalar("alpha"), p.scalar("beta"));
            let (grid1, grid2) =
                (Grid::threads_xy(nj, ni).block_xy(bx, by), Grid::threads_xy(nl, ni).block_xy(bx, by));
            for _ in 0..reps {
                gpu::mat_mul::launch(dev, grid1, nk, alpha, 0.0, a, b, (&mut *tmp, [nj, ni]))?;
                gpu::mat_mul::launch(dev, grid2, nj, 1.0, beta, &*tmp, cm, (&mut *d, [nl, ni]))?;
            }
        }
        other => unreachable!("{other} is not a dense kernel"),
    }
    Ok(())
}
