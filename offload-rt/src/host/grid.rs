//! The shape of a launch.

use super::error::{Error, Result};

/// Block size used when the launch names only a thread count.
pub const DEFAULT_BLOCK_SIZE: u32 = 256;

/// The shape of a launch: how many threads in each dimension, in blocks of what size.
/// Integers convert into a 1-D `Grid` of that many threads in blocks of
/// [`DEFAULT_BLOCK_SIZE`]; grids are rounded up to whole blocks, so kernels check bounds
/// (`Region::mine` does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    threads: [i128; 3],
    block: [u32; 3],
    dims: u8,
}

impl Grid {
    /// `n` threads in blocks of [`DEFAULT_BLOCK_SIZE`].
    pub fn threads(n: usize) -> Grid {
        Grid { threads: [n as i128, 1, 1], block: [DEFAULT_BLOCK_SIZE, 1, 1], dims: 1 }
    }

    /// `nx × ny` threads in blocks of 32 × 8.
    pub fn threads_xy(nx: usize, ny: usize) -> Grid {
        Grid { threads: [nx as i128, ny as i128, 1], block: [32, 8, 1], dims: 2 }
    }

    /// `nx × ny × nz` threads in blocks of 32 × 4 × 2.
    pub fn threads_xyz(nx: usize, ny: usize, nz: usize) -> Grid {
        Grid { threads: [nx as i128, ny as i128, nz as i128], block: [32, 4, 2], dims: 3 }
    }

    /// Blocks of `size` threads (1-D).
    pub fn block_size(self, size: u32) -> Grid {
        Grid { block: [size, 1, 1], ..self }
    }

    /// Blocks of `bx × by` threads.
    pub fn block_xy(self, bx: u32, by: u32) -> Grid {
        Grid { block: [bx, by, 1], dims: self.dims.max(2), ..self }
    }

    /// Blocks of `bx × by × bz` threads.
    pub fn block_xyz(self, bx: u32, by: u32, bz: u32) -> Grid {
        Grid { block: [bx, by, bz], dims: 3, ..self }
    }

    /// Threads per block, per dimension.
    pub fn block(&self) -> [u32; 3] {
        self.block
    }

    /// Blocks per dimension.
    #[inline]
    pub fn blocks(&self) -> [u32; 3] {
        std::array::from_fn(|d| self.blocks_in(d) as u32)
    }

    /// Blocks in dimension `d`, in 64-bit arithmetic: a thread count comes from at most a
    /// `u64` or an `i64` and is clamped at 0, so it fits (and a 64-bit division costs a launch
    /// a fraction of a 128-bit one's).
    #[inline]
    fn blocks_in(&self, d: usize) -> u64 {
        let threads = self.threads[d].clamp(0, i128::from(u64::MAX)) as u64;
        threads.div_ceil(u64::from(self.block[d].max(1)))
    }

    /// Whether the grid has no thread at all.
    pub fn is_empty(&self) -> bool {
        self.blocks().contains(&0)
    }

    /// Number of dimensions used (1 to 3).
    pub fn dims(&self) -> u8 {
        self.dims
    }

    /// Checks the shape against what a GPU launches and returns the blocks per dimension.
    /// Checks the grid for `kernel`, whose blocks hold at most `max_block_threads` threads
    /// (its `launch_bounds`; 0: no bound of its own), and returns its blocks per dimension.
    #[inline]
    pub(crate) fn validate(&self, kernel: &str, max_block_threads: u32) -> Result<[u32; 3]> {
        let invalid = |reason: String| Err(Error::InvalidLaunch { kernel: kernel.to_owned(), reason });
        if let Some(n) = self.threads.iter().find(|&&n| n < 0) {
            return invalid(format!("negative thread count {n}"));
        }
        let per_block: u64 = self.block.iter().map(|&b| u64::from(b)).product();
        // (Formatted only for an error: `validate` runs on every launch.)
        let shape = || {
            let [x, y, z] = self.block;
            if self.dims == 1 { format!("{x} ") } else { format!("{x}×{y}×{z} ") }
        };
        if self.block.contains(&0) || per_block > 1024 || self.block[2] > 64 {
            return invalid(format!(
                "block size {}is invalid: each dimension must be at least 1, z at most 64, and the product at most 1024",
                shape()
            ));
        }
        if max_block_threads > 0 && per_block > u64::from(max_block_threads) {
            return invalid(format!(
                "block size {}has {per_block} threads, and the kernel's `launch_bounds` allow at most {max_block_threads}",
                shape()
            ));
        }
        let limits = [i32::MAX as u64, 65535, 65535];
        for (d, limit) in limits.into_iter().enumerate() {
            let blocks = self.blocks_in(d);
            if blocks > limit {
                let threads = self.threads[d];
                return invalid(format!(
                    "{threads} threads in dimension {d} need {blocks} blocks, more than a grid holds ({limit})"
                ));
            }
        }
        // Every thread's linear index and the grid's thread count (`global_linear_id`,
        // `global_threads`, which partitions such as `GridStride` divide the work by) are
        // `usize` products of these: a grid of more threads than a `usize` counts would wrap
        // them, and hand two threads one element. Each dimension may be within its limit and
        // the product not.
        let launched = |d: usize| self.blocks_in(d) * u64::from(self.block[d]);
        let total = launched(0).checked_mul(launched(1)).and_then(|t| t.checked_mul(launched(2)));
        if total.is_none_or(|t| usize::try_from(t).is_err()) {
            let [x, y, z] = [0, 1, 2].map(launched);
            return invalid(format!(
                "a grid of {x}×{y}×{z} threads has more threads than a `usize` counts, so their linear indices would wrap"
            ));
        }
        Ok(self.blocks())
    }
}

macro_rules! grid_from {
    ($($t:ty),*) => {$(
        impl From<$t> for Grid {
            fn from(n: $t) -> Grid {
                Grid { threads: [n as i128, 1, 1], block: [DEFAULT_BLOCK_SIZE, 1, 1], dims: 1 }
            }
        }
    )*};
}
grid_from!(usize, u32, u64, i32, i64);

#[cfg(test)]
mod tests {
    use super::Grid;

    #[test]
    fn blocks_round_up_and_the_limits_hold_at_the_extremes() {
        assert_eq!(Grid::threads(1000).validate("k", 0).unwrap(), [4, 1, 1]);
        assert_eq!(Grid::threads(0).validate("k", 0).unwrap(), [0, 1, 1]);
        assert_eq!(Grid::threads_xyz(33, 5, 3).validate("k", 0).unwrap(), [2, 2, 2]);
        // The largest 1-D grid: i32::MAX blocks of 256.
        let most = (i32::MAX as usize) * 256;
        assert_eq!(Grid::threads(most).validate("k", 0).unwrap(), [i32::MAX as u32, 1, 1]);
        let e = Grid::threads(most + 1).validate("k", 0).unwrap_err().to_string();
        assert!(e.contains("more than a grid holds"), "{e}");
        // Counts from the widest integer types convert without wrapping.
        let e = Grid::from(u64::MAX).validate("k", 0).unwrap_err().to_string();
        assert!(e.contains(&u64::MAX.to_string()) && e.contains("more than a grid holds"), "{e}");
        let e = Grid::from(i64::MIN).validate("k", 0).unwrap_err().to_string();
        assert!(e.contains("negative thread count"), "{e}");
    }

    #[test]
    fn a_grid_whose_thread_count_overflows_a_usize_is_refused_though_each_dimension_fits() {
        // 2^34 × 2^15 × 2^15 threads: every dimension within its limit, 2^64 in all.
        let e =
            Grid::threads_xyz(1 << 34, 1 << 15, 1 << 15).block_xyz(16, 1, 1).validate("k", 0).unwrap_err();
        assert!(e.to_string().contains("more threads than a `usize` counts"), "{e}");
        // Half as many in x: 2^63 threads, which a `usize` counts.
        let g = Grid::threads_xyz(1 << 33, 1 << 15, 1 << 15).block_xyz(16, 1, 1);
        assert_eq!(g.validate("k", 0).unwrap(), [1 << 29, 1 << 15, 1 << 15]);
    }

    #[test]
    fn a_kernels_launch_bounds_cap_its_block_size() {
        assert_eq!(Grid::threads(1000).validate("k", 256).unwrap(), [4, 1, 1]);
        let e = Grid::threads(1000).block_size(512).validate("m::k", 256).unwrap_err().to_string();
        assert!(e.contains("`m::k`") && e.contains("512 threads") && e.contains("at most 256"), "{e}");
        let e = Grid::threads_xy(64, 64).block_xy(32, 16).validate("k", 256).unwrap_err().to_string();
        assert!(e.contains("32×16×1") && e.contains("at most 256"), "{e}");
    }
}
