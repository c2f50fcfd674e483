//! Thread, block and grid indices, the same on NVIDIA, AMD and the CPU backend (read through
//! the intrinsics layer, [`crate::arch`]).
//!
//! Which of them are the same for every thread of a block matters for barriers and warp
//! operations (see the kernels macro's uniformity rules): block indices and sizes, grid sizes
//! and [`global_threads`] are; thread indices, global ids and [`global_linear_id`] are not.

use crate::arch;

macro_rules! index_fns {
    ($d:literal, $dim:ident, $thread:ident, $block:ident, $block_dim:ident, $grid_dim:ident, $global:ident,
     $threads:ident) => {
        #[doc = concat!("Index of the calling thread within its block (", stringify!($dim), ").")]
        #[inline(always)]
        pub fn $thread() -> u32 {
            arch::thread_idx::<$d>()
        }

        #[doc = concat!("Index of the calling thread's block within the grid (", stringify!($dim), ").")]
        #[inline(always)]
        pub fn $block() -> u32 {
            arch::block_idx::<$d>()
        }

        #[doc = concat!("Number of threads in a block (", stringify!($dim), ").")]
        #[inline(always)]
        pub fn $block_dim() -> u32 {
            arch::block_dim::<$d>()
        }

        #[doc = concat!("Number of blocks in the grid (", stringify!($dim), ").")]
        #[inline(always)]
        pub fn $grid_dim() -> u32 {
            arch::grid_dim::<$d>()
        }

        #[doc = concat!("Global index of the calling thread (", stringify!($dim), "): block index × block size + thread index.")]
        #[inline(always)]
        pub fn $global() -> usize {
            $block() as usize * $block_dim() as usize + $thread() as usize
        }

        #[doc = concat!("Total number of threads in the grid (", stringify!($dim), ").")]
        #[inline(always)]
        pub fn $threads() -> usize {
            $grid_dim() as usize * $block_dim() as usize
        }
    };
}

index_fns!(0, x, thread_idx_x, block_idx_x, block_dim_x, grid_dim_x, global_id_x, global_threads_x);
index_fns!(1, y, thread_idx_y, block_idx_y, block_dim_y, grid_dim_y, global_id_y, global_threads_y);
index_fns!(2, z, thread_idx_z, block_idx_z, block_dim_z, grid_dim_z, global_id_z, global_threads_z);

/// A number unique to the calling thread across the whole grid, whatever its shape:
/// `x + X·(y + Y·z)` over global ids, with `X`, `Y` the grid's extents in threads. For 1-D
/// launches it is `global_id_x()`. [`Region`](crate::Region) gives each thread the element
/// at this index.
#[inline(always)]
pub fn global_linear_id() -> usize {
    // A 1-D launch (every y and z extent 1, so both ids 0) needs only `global_id_x()`. The
    // test reads four launch constants and is the same for every thread (a uniform branch),
    // where the general formula needs four more special registers and three 64-bit
    // multiply-adds before a short kernel's first load can be addressed.
    let x = global_id_x();
    if (grid_dim_y() | grid_dim_z() | block_dim_y() | block_dim_z()) == 1 {
        return x;
    }
    x + global_threads_x() * (global_id_y() + global_threads_y() * global_id_z())
}

/// Number of threads in the whole grid, all dimensions together.
#[inline(always)]
pub fn global_threads() -> usize {
    global_threads_x() * global_threads_y() * global_threads_z()
}

/// The indices `0..n` this thread visits in a grid-stride loop: `global_linear_id()`, then
/// every `global_threads()`-th index after it. Between them the grid's threads visit every
/// index exactly once, however many blocks the grid has — the loop of a kernel launched with a
/// grid sized to fill the device (`Grid::resident`) rather than one thread per element.
///
/// ```
/// # use offload::prelude::*;
/// # fn sum_mine(x: &[f32]) -> f32 {
/// let mut acc = 0.0;
/// for i in grid_stride(x.len()) {
///     acc += x[i];
/// }
/// # acc }
/// ```
#[inline(always)]
pub fn grid_stride(n: usize) -> GridStrideIndices {
    GridStrideIndices::new(global_linear_id(), n, global_threads())
}

/// The indices of [`grid_stride`].
#[derive(Clone, Debug)]
pub struct GridStrideIndices {
    next: usize,
    end: usize,
    step: usize,
}

impl GridStrideIndices {
    /// `start, start + step, …` below `end`.
    #[inline(always)]
    pub(crate) fn new(start: usize, end: usize, step: usize) -> GridStrideIndices {
        GridStrideIndices { next: start, end, step }
    }
}

impl Iterator for GridStrideIndices {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        let i = self.next;
        if i >= self.end {
            return None;
        }
        // Past `usize::MAX` there is no index left: the loop ends.
        self.next = i.saturating_add(self.step);
        Some(i)
    }
}
