//! Block-wide synchronisation.

/// Waits until every thread of the block has arrived. On the GPU only; the CPU backend runs
/// code that needs it differently.
#[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
#[inline(always)]
pub(crate) fn barrier() {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: `bar.sync 0` has no memory-safety preconditions; callers reach it from every
    // thread of the block, so it cannot deadlock.
    unsafe {
        core::arch::nvptx::_syncthreads()
    }
    #[cfg(target_arch = "amdgpu")]
    core::arch::amdgpu::s_barrier()
}
