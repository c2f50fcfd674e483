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
    /// 32-bit registers of one multiprocessor (65,536 on NVIDIA GPUs since Maxwell; 0 where
    /// the device does not say, AMD and the CPU backend).
    pub registers_per_multiprocessor: u32,
    /// Shared memory of one multiprocessor, in bytes (0 where unknown).
    pub shared_bytes_per_multiprocessor: usize,
    /// Shared memory the driver sets aside for each resident block (1 KiB on NVIDIA since
    /// sm_80), in bytes.
    pub reserved_shared_bytes_per_block: usize,
}

impl DeviceProperties {
    /// How many blocks of `block_threads` threads fit on one multiprocessor by threads and by
    /// the block limit (at least 1): the kernel's registers and shared memory may allow fewer,
    /// which the driver then runs in more than one wave.
    pub fn resident_blocks_per_multiprocessor(&self, block_threads: u32) -> u32 {
        (self.max_threads_per_multiprocessor / block_threads.max(1))
            .clamp(1, self.max_blocks_per_multiprocessor.max(1))
    }

    /// How many blocks of a kernel fit on one multiprocessor at once: by threads and the block
    /// limit, by registers (`registers_per_thread`, allocated per warp in units of 256, as
    /// NVIDIA GPUs do) and by shared memory (`shared_bytes_per_block`, plus what the driver
    /// reserves per block) — the occupancy CUDA's `cudaOccupancyMaxActiveBlocksPerMultiprocessor`
    /// computes. A limit the device does not report (0) is not applied. At least 1.
    pub fn resident_blocks_for(
        &self,
        block_threads: u32,
        registers_per_thread: u32,
        shared_bytes_per_block: usize,
    ) -> u32 {
        let mut blocks = self.resident_blocks_per_multiprocessor(block_threads);
        if self.registers_per_multiprocessor > 0 && registers_per_thread > 0 {
            let warps = block_threads.div_ceil(self.warp_size.max(1));
            let per_warp =
                (u64::from(registers_per_thread) * u64::from(self.warp_size)).next_multiple_of(256);
            let warps_by_registers = u64::from(self.registers_per_multiprocessor) / per_warp;
            blocks =
                blocks.min(u32::try_from(warps_by_registers / u64::from(warps.max(1))).unwrap_or(u32::MAX));
        }
        if self.shared_bytes_per_multiprocessor > 0 {
            let per_block =
                shared_bytes_per_block.saturating_add(self.reserved_shared_bytes_per_block).max(1);
            blocks = blocks
                .min(u32::try_from(self.shared_bytes_per_multiprocessor / per_block).unwrap_or(u32::MAX));
        }
        blocks.max(1)
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
                    warp_size: g.warp_size(),
                    max_shared_bytes_per_block: gpu.max_shared,
                    registers_per_multiprocessor: gpu.registers_per_multiprocessor,
                    shared_bytes_per_multiprocessor: gpu.shared_per_multiprocessor,
                    reserved_shared_bytes_per_block: gpu.reserved_shared_per_block,
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
                    registers_per_multiprocessor: 0,
                    shared_bytes_per_multiprocessor: 0,
                    reserved_shared_bytes_per_block: 0,
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

/// Shared memory a kernel parameter takes per block, as the launch reserves it (each piece
/// 16-byte aligned after the previous one).
#[doc(hidden)]
#[derive(Clone, Copy, Debug)]
pub enum SharedNeed {
    /// One `usize`-sized element per thread of the block (`Shared<T>`, a reduction's staging).
    PerThread(usize),
    /// A fixed number of bytes (`SharedArray`, `SharedAtomics`, the block token); `None`:
    /// more than `usize` holds.
    Bytes(Option<usize>),
}

/// The grid behind every kernel's generated `resident(&device, block_threads)`: as
/// [`Grid::resident`], with the multiprocessor's share computed from the kernel's own
/// registers (from its cubin, on NVIDIA) and shared memory (`needs`, from its parameters), so
/// that every block is resident at once however many registers the kernel takes.
///
/// # Errors
///
/// As [`Grid::resident`], and when the kernel's shared memory exceeds what a block may have
/// or the block is larger than the kernel's `launch_bounds`.
#[doc(hidden)]
pub fn resident_grid(
    dev: &Device,
    kernel: &'static crate::host::launch::KernelInfo,
    block_threads: u32,
    needs: &[SharedNeed],
) -> Result<Grid> {
    let p = dev.properties();
    let bound = if kernel.max_block_threads > 0 {
        kernel.max_block_threads.min(p.max_threads_per_block)
    } else {
        p.max_threads_per_block
    };
    if block_threads == 0 || block_threads > bound {
        return Err(Error::InvalidGrid {
            reason: format!(
                "blocks of {block_threads} threads: `{}` on {} takes 1 to {bound} threads per block",
                kernel.path,
                dev.name()
            ),
        });
    }
    let mut shared = 0usize;
    for need in needs {
        let bytes = match *need {
            SharedNeed::PerThread(size) => size.checked_mul(block_threads as usize),
            SharedNeed::Bytes(bytes) => bytes,
        };
        shared = match bytes.and_then(|b| b.checked_next_multiple_of(16)).and_then(|b| shared.checked_add(b))
        {
            Some(total) if total <= p.max_shared_bytes_per_block => total,
            _ => {
                return Err(Error::InvalidGrid {
                    reason: format!(
                        "`{}` needs more shared memory per block of {block_threads} threads than {} allows ({} bytes)",
                        kernel.path,
                        dev.name(),
                        p.max_shared_bytes_per_block
                    ),
                });
            }
        };
    }
    let resources = dev.backend().gpu().and_then(|g| {
        let (symbol, variant) = kernel.entry(block_threads, g.warp_size());
        kernel.cache.resources(g.index, variant, || g.gpu.kernel_resources(symbol))
    });
    let (registers, static_shared) = resources
        .map_or((0, 0), |r| (r.registers, usize::try_from(r.static_shared_bytes).unwrap_or(usize::MAX)));
    let per_multiprocessor =
        p.resident_blocks_for(block_threads, registers, shared.saturating_add(static_shared));
    let blocks = u64::from(p.multiprocessors).saturating_mul(u64::from(per_multiprocessor));
    let threads = usize::try_from(blocks.saturating_mul(u64::from(block_threads))).unwrap_or(usize::MAX);
    Ok(Grid::threads(threads).block_size(block_threads))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An H200 as its CUDA driver describes it.
    const H200: DeviceProperties = DeviceProperties {
        multiprocessors: 132,
        max_threads_per_multiprocessor: 2048,
        max_blocks_per_multiprocessor: 32,
        max_threads_per_block: 1024,
        warp_size: 32,
        max_shared_bytes_per_block: 227 << 10,
        registers_per_multiprocessor: 65536,
        shared_bytes_per_multiprocessor: 228 << 10,
        reserved_shared_bytes_per_block: 1 << 10,
    };

    #[test]
    fn resident_blocks_follow_threads_and_the_block_limit() {
        let h200 = H200;
        assert_eq!(h200.resident_blocks_per_multiprocessor(256), 8);
        assert_eq!(h200.resident_blocks_per_multiprocessor(1024), 2);
        assert_eq!(h200.resident_blocks_per_multiprocessor(32), 32);
        assert_eq!(h200.resident_blocks_per_multiprocessor(4096), 1);
        assert_eq!(h200.resident_blocks_per_multiprocessor(0), 32);
    }

    #[test]
    fn resident_blocks_of_a_kernel_follow_its_registers_and_shared_memory() {
        let h200 = H200;
        // As CUDA's occupancy calculator has them for sm_90 (256 threads per block).
        assert_eq!(h200.resident_blocks_for(256, 32, 0), 8);
        assert_eq!(h200.resident_blocks_for(256, 40, 0), 6);
        assert_eq!(h200.resident_blocks_for(256, 64, 0), 4);
        assert_eq!(h200.resident_blocks_for(256, 255, 0), 1);
        assert_eq!(h200.resident_blocks_for(128, 72, 0), 7);
        assert_eq!(h200.resident_blocks_for(256, 32, 48 << 10), 4);
        assert_eq!(h200.resident_blocks_for(256, 32, 200 << 10), 1);
        // Unknown limits are not applied.
        let unknown =
            DeviceProperties { registers_per_multiprocessor: 0, shared_bytes_per_multiprocessor: 0, ..h200 };
        assert_eq!(unknown.resident_blocks_for(256, 255, 200 << 10), 8);
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
