//! Tier 3, dense matrix products: MAT_MAT_SHARED (Basic), GEMM and 2MM (Polybench).
//!
//! MAT_MAT_SHARED stages 16×16 tiles of A and B in block-shared memory (one
//! `SharedArray<f64, 512>` holding both tiles, two slots per thread of the 16×16 block), as
//! RAJAPerf's kernel does; the barrier between loading and using the tiles is the `sync` that
//! makes them readable. GEMM and 2MM are RAJAPerf's Base_CUDA kernels without shared memory:
//! one thread per output element and a loop over k (2MM's second product, which CUDA does not
//! scale, has its own kernel).

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
    /// matrix) into one shared array of both tiles (A's at `0..256`, B's at `256..512`: thread
    /// `t` of the block owns elements `t` and `t + 256`), the block synchronises once, and
    /// every thread adds the tile's products for its element. The products are the
    /// multiply-adds nvcc contracts the CUDA body into (`fma(a, b, sum)`), and the reads come
    /// from two checked windows (this thread's row of A's tile, and B's tile from its column
    /// on), so the unrolled loop has no per-read check.
    #[kernel]
    pub fn mat_mat_shared(
        n: usize,
        a: &[f64],
        b: &[f64],
        mut c: Region2<f64>,
        tiles: SharedArray<f64, 512>,
        block: Block,
    ) {
        const TILE: usize = 16;
        const AREA: usize = TILE * TILE;
        let [col, row] = c.index();
        let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
        assert!(tx < TILE && ty < TILE, "MAT_MAT_SHARED runs in blocks of 16×16 threads");
        let mut block = block;
        let mut sum = 0.0;
        for k in 0..(TILE + n - 1) / TILE {
            let (ak, bk) = (k * TILE + tx, k * TILE + ty);
            let av = if ak < n && row < n { a[row * n + ak] } else { 0.0 };
            let bv = if bk < n && col < n { b[bk * n + col] } else { 0.0 };
            tiles.fill_mine(&block, |j| if j < AREA { av } else { bv });
            let ready = block.sync();
            let (a_tile, b_tile) = tiles.as_slice(&ready).split_at(AREA);
            let a_row = &a_tile[ty * TILE..ty * TILE + TILE];
            let b_col = &b_tile[tx..tx + (TILE - 1) * TILE + 1];
            for m in 0..TILE {
                sum = math::fma(a_row[m], b_col[m * TILE], sum);
            }
            block = ready.sync();
        }
        if let Some(c) = c.mine() {
            *c = sum;
        }
    }

    /// `out[i][j] = Σ_k scale · x[i][k] · y[k][j]` (x is rows × nk, y is nk × cols): GEMM's
    /// `C = alpha·A·B` and 2MM's first product. Each step is the multiply and multiply-add
    /// nvcc contracts the CUDA body into (`fma(scale·x, y, dot)`).
    #[kernel]
    pub fn mat_mul(nk: usize, scale: f64, x: &[f64], y: &[f64], mut out: Region2<f64>) {
        let [j, i] = out.index();
        let nj = out.extents()[0];
        if let Some(o) = out.mine() {
            *o = column_dot(&x[i * nk..(i + 1) * nk], y, j, nj, 0.0, |xv| scale * xv);
        }
    }

    /// `out[i][j] = init + Σ_k x[i][k] · y[k][j]`: 2MM's second product (`D = beta + tmp·C`),
    /// one multiply-add a step as nvcc contracts it.
    #[kernel]
    pub fn mat_mul_acc(nk: usize, init: f64, x: &[f64], y: &[f64], mut out: Region2<f64>) {
        let [j, i] = out.index();
        let nj = out.extents()[0];
        if let Some(o) = out.mine() {
            *o = column_dot(&x[i * nk..(i + 1) * nk], y, j, nj, init, |xv| xv);
        }
    }

    /// `init + Σ_k f(row[k]) · y[k][j]` with `y` nk × nj (nk = `row.len()`), as `fma`s. `row`
    /// is one checked window and y's column one `Strided` view, checked once: no check per
    /// step, and LLVM unrolls the loop ×4 with read-only loads, as nvcc does.
    #[inline(always)]
    #[expect(
        clippy::needless_range_loop,
        reason = "indexing both by k keeps every load an offset from its base (read-only, no checks); zipped iterators did not"
    )]
    fn column_dot(row: &[f64], y: &[f64], j: usize, nj: usize, init: f64, f: impl Fn(f64) -> f64) -> f64 {
        let nk = row.len();
        let column = Strided::new(y, j, nj, nk).expect("y holds nk rows of nj elements");
        let mut dot = init;
        for k in 0..nk {
            // `k < nk` proves both reads in bounds: no check is left in the loop.
            if let Some(yv) = column.get(k) {
                dot = math::fma(f(row[k]), yv, dot);
            }
        }
        dot
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
                gpu::mat_mul::launch(dev, grid, nk, alpha, a, b, (&mut *c, [nj, ni]))?;
            }
        }
        KernelId::Mm2 => {
            buffers!(p, ins => [a, b, cm], outs => [tmp, d]);
            let (ni, nj, nk, nl) = (p.param("ni"), p.param("nj"), p.param("nk"), p.param("nl"));
            let (alpha, beta) = (p.scalar("alpha"), p.scalar("beta"));
            let (grid1, grid2) =
                (Grid::threads_xy(nj, ni).block_xy(bx, by), Grid::threads_xy(nl, ni).block_xy(bx, by));
            for _ in 0..reps {
                gpu::mat_mul::launch(dev, grid1, nk, alpha, a, b, (&mut *tmp, [nj, ni]))?;
                gpu::mat_mul_acc::launch(dev, grid2, nj, beta, &*tmp, cm, (&mut *d, [nl, ni]))?;
            }
        }
        other => unreachable!("{other} is not a dense kernel"),
    }
    Ok(())
}
