//! What a device is made of — multiprocessors, resident threads and blocks, warp width, shared
//! memory — and grids sized from it: [`Grid::resident`] fills the device with blocks that are
//! all resident at once, the shape a grid-stride kernel wants.

use super::backend::emulate;
use super::device::Device;
use super::error::{Error, Result};
use super::grid::Grid;

/// What a device offers kernels. On a GPU it comes from liboffload and, on NVIDIA, the CUDA
/// driver; on the CPU backend it describes the emulation: each worker thread is one
/// "multiprocessor" that runs one block at a time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DeviceProperties {
    /// Multiprocessors (NVIDIA SMs, AMD compute units; the CPU backend's worker threads).
    pub multiprocessors: u32,
    /// Threads one multiprocessor holds at once, at most.
    pub max_threads_per_multiprocessor: u32,
    /// Blocks one multiprocessor holds at once, at most.
    pub max_blocks_per_multiprocessor: u32,
    /// Threads a block may have, at most.
    pub max_threads_per_block: u32,
    /// Lanes of a warp (32 on NVIDIA, 64 on AMD CDNA; the CPU backend's setting).
    pub warp_size: u32,
    /// Shared memory a block may have, in bytes.
    pub max_shared_bytes_per_block: usize,
}

impl DeviceProperties {
    /// How many blocks of `block_threads` threads fit on one multiprocessor by threads and by
    /// the block limit (at least 1): the kernel's registers and shared memory may allow fewer,
    /// which the driver then runs in more than one wave.
    pub fn resident_blocks_per_multiprocessor(&self, block_threads: u32) -> u32 {
        (self.max_threads_per_multiprocessor / block_threads.max(1))
            .clamp(1, self.max_blocks_per_multiprocessor.max(1))
    }
}

impl Device {
    /// What this device offers kernels: see [`DeviceProperties`].
    pub fn properties(&self) -> DeviceProperties {
        match self.backend().gpu() {
            Some(g) => {
                let gpu = g.gpu;
                DeviceProperties {
                    // A plugin that reported no count still has one multiprocessor.
                    multiprocessors: gpu.multiprocessors.max(1),
                    max_threads_per_multiprocessor: gpu.threads_per_multiprocessor,
                    max_blocks_per_multiprocessor: gpu.blocks_per_multiprocessor,
                    max_threads_per_block: gpu.max_block_threads,
                    warp_size: if g.kind() == super::device::DeviceKind::Amd { 64 } else { 32 },
                    max_shared_bytes_per_block: gpu.max_shared,
                }
            }
            None => {
                let warp = emulate::warp_size();
                DeviceProperties {
                    multiprocessors: u32::try_from(emulate::worker_count()).unwrap_or(u32::MAX).max(1),
                    max_threads_per_multiprocessor: 1024,
                    max_blocks_per_multiprocessor: 1,
                    max_threads_per_block: 1024,
                    warp_size: warp,
                    max_shared_bytes_per_block: super::launch::MAX_SHARED_BYTES,
                }
            }
        }
    }
}

impl Grid {
    /// A 1-D grid that fills `dev` with blocks of `block_threads` threads, all resident at once:
    /// multiprocessors × blocks that fit one multiprocessor by threads
    /// ([`DeviceProperties::resident_blocks_per_multiprocessor`]). A kernel that walks its data
    /// with [`grid_stride`](crate::grid_stride) then does the whole job in one wave, and a
    /// per-block result (a `SharedAtomics` histogram) is merged once per block.
    ///
    /// # Errors
    ///
    /// [`Error::InvalidGrid`] when `block_threads` is 0 or more than the device allows.
    pub fn resident(dev: &Device, block_threads: u32) -> Result<Grid> {
        let p = dev.properties();
        if block_threads == 0 || block_threads > p.max_threads_per_block {
            return Err(Error::InvalidGrid {
                reason: format!(
                    "blocks of {block_threads} threads: {} allows 1 to {} threads per block",
                    dev.name(),
                    p.max_threads_per_block
                ),
            });
        }
        // Saturating: the counts come from a driver, and the launch checks the grid's limits.
        let blocks = u64::from(p.multiprocessors)
            .saturating_mul(u64::from(p.resident_blocks_per_multiprocessor(block_threads)));
        let threads = usize::try_from(blocks.saturating_mul(u64::from(block_threads))).unwrap_or(usize::MAX);
        Ok(Grid::threads(threads).block_size(block_threads))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resident_blocks_follow_threads_and_the_block_limit() {
        let h200 = DeviceProperties {
            multiprocessors: 132,
            max_threads_per_multiprocessor: 2048,
            max_blocks_per_multiprocessor: 32,
            max_threads_per_block: 1024,
            warp_size: 32,
            max_shared_bytes_per_block: 227 << 10,
        };
        assert_eq!(h200.resident_blocks_per_multiprocessor(256), 8);
        assert_eq!(h200.resident_blocks_per_multiprocessor(1024), 2);
        assert_eq!(h200.resident_blocks_per_multiprocessor(32), 32);
        assert_eq!(h200.resident_blocks_per_multiprocessor(4096), 1);
        assert_eq!(h200.resident_blocks_per_multiprocessor(0), 32);
    }

    #[test]
    fn a_resident_grid_on_the_cpu_backend_is_one_block_per_worker() {
        let dev = Device::cpu();
        let p = dev.properties();
        let grid = Grid::resident(&dev, 128).unwrap();
        assert_eq!(grid.block(), [128, 1, 1]);
        assert_eq!(grid.blocks(), [p.multiprocessors, 1, 1]);
        assert!(Grid::resident(&dev, 0).is_err());
        assert!(Grid::resident(&dev, 2048).is_err());
    }
}
