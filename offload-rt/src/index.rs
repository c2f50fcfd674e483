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
///
/// A counted loop: the number of indices is computed once, so the compiler knows the trip
/// count and can unroll the loop with its loads independent of each other (several loads in
/// flight per thread, which a memory-bound grid-stride loop needs to reach the device's
/// bandwidth), where a loop that tests each next index against the end cannot be.
#[derive(Clone, Debug)]
pub struct GridStrideIndices {
    next: usize,
    left: usize,
    step: usize,
    end: usize,
}

impl GridStrideIndices {
    /// `start, start + step, …` below `end` (just `start` if `step` is 0).
    #[inline(always)]
    pub(crate) fn new(start: usize, end: usize, step: usize) -> GridStrideIndices {
        // `start + (left - 1) * step < end <= usize::MAX`: no index overflows.
        let left = if start >= end { 0 } else { (end - start - 1).checked_div(step).map_or(1, |k| k + 1) };
        GridStrideIndices { next: start, left, step, end }
    }
}

impl Iterator for GridStrideIndices {
    type Item = usize;

    #[inline(always)]
    fn next(&mut self) -> Option<usize> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        let i = self.next;
        // SAFETY: `new` counted the indices below `end`: while one is left, `next` is one of
        // them. (Telling the compiler lets it drop the bounds check of `x[i]` for an `x` of
        // `end` elements, which the count alone does not show it.)
        unsafe { core::hint::assert_unchecked(i < self.end) };
        // Wraps only after the last index, whose successor is never returned.
        self.next = i.wrapping_add(self.step);
        Some(i)
    }

    #[inline(always)]
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.left, Some(self.left))
    }
}

impl ExactSizeIterator for GridStrideIndices {}

#[cfg(test)]
mod tests {
    use super::GridStrideIndices;

    /// The indices of the old loop, one at a time: `start`, then `step` further while below `end`.
    fn stepped(start: usize, end: usize, step: usize) -> Vec<usize> {
        let mut v = Vec::new();
        let mut i = start;
        while i < end {
            v.push(i);
            match i.checked_add(step) {
                Some(n) if step > 0 => i = n,
                _ => break,
            }
        }
        v
    }

    #[test]
    fn a_grid_stride_visits_every_index_once_up_to_the_end_of_the_address_range() {
        let max = usize::MAX;
        for (start, end, step) in [
            (0, 0, 1),
            (5, 3, 2),
            (3, 4, 7),
            (0, 10, 3),
            (2, 11, 3),
            (1, 1000, 1),
            (7, 10, 0),
            (max - 10, max, 4),
            (max - 1, max, max),
            (0, max, max / 2 + 1),
        ] {
            let it = GridStrideIndices::new(start, end, step);
            assert_eq!(it.len(), stepped(start, end, step).len(), "{start} {end} {step}");
            assert_eq!(it.collect::<Vec<_>>(), stepped(start, end, step), "{start} {end} {step}");
        }
        // Every index of 0..n exactly once over the threads of a grid.
        let (threads, n) = (96, 1000);
        let mut seen = vec![0u8; n];
        for t in 0..threads {
            for i in GridStrideIndices::new(t, n, threads) {
                seen[i] += 1;
            }
        }
        assert!(seen.iter().all(|&c| c == 1));
    }
}
