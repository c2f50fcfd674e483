//! Thread, block and grid indices, the same on NVIDIA, AMD and the CPU backend.
//!
//! On NVIDIA they read PTX special registers; on AMD the work-item and work-group ids come
//! from intrinsics and the sizes from the HSA dispatch packet; on the host the CPU backend
//! sets them for each emulated thread.

#[cfg(target_arch = "amdgpu")]
mod amd {
    /// The leading fields of `hsa_kernel_dispatch_packet_t` (HSA System Architecture 1.2).
    #[repr(C)]
    pub(super) struct DispatchPacket {
        header: u16,
        setup: u16,
        pub workgroup_size_x: u16,
        pub workgroup_size_y: u16,
        pub workgroup_size_z: u16,
        reserved0: u16,
        /// Work-items (not work-groups) in the whole grid, per dimension.
        pub grid_size_x: u32,
        pub grid_size_y: u32,
        pub grid_size_z: u32,
    }

    #[inline(always)]
    pub(super) fn packet() -> &'static DispatchPacket {
        let ptr = core::intrinsics::gpu::amdgpu_dispatch_ptr().cast::<DispatchPacket>();
        // SAFETY: every gpu-kernel on amdgpu is launched through a dispatch packet that stays
        // valid for the whole kernel; its layout is fixed by the HSA specification.
        unsafe { &*ptr }
    }
}

/// Index of the calling thread within its block (x dimension).
#[inline(always)]
pub fn thread_idx_x() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reading a PTX special register has no preconditions inside a kernel.
    unsafe {
        core::arch::nvptx::_thread_idx_x() as u32
    }
    #[cfg(target_arch = "amdgpu")]
    {
        core::arch::amdgpu::workitem_id_x()
    }
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    {
        crate::host::emulate::current().thread[0]
    }
}

/// Index of the calling thread's block within the grid (x dimension).
#[inline(always)]
pub fn block_idx_x() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reading a PTX special register has no preconditions inside a kernel.
    unsafe {
        core::arch::nvptx::_block_idx_x() as u32
    }
    #[cfg(target_arch = "amdgpu")]
    {
        core::arch::amdgpu::workgroup_id_x()
    }
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    {
        crate::host::emulate::current().block[0]
    }
}

/// Number of threads in a block (x dimension).
#[inline(always)]
pub fn block_dim_x() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reading a PTX special register has no preconditions inside a kernel.
    unsafe {
        core::arch::nvptx::_block_dim_x() as u32
    }
    #[cfg(target_arch = "amdgpu")]
    {
        u32::from(amd::packet().workgroup_size_x)
    }
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    {
        crate::host::emulate::current().block_dim[0]
    }
}

/// Number of blocks in the grid (x dimension).
#[inline(always)]
pub fn grid_dim_x() -> u32 {
    #[cfg(target_arch = "nvptx64")]
    // SAFETY: reading a PTX special register has no preconditions inside a kernel.
    unsafe {
        core::arch::nvptx::_grid_dim_x() as u32
    }
    #[cfg(target_arch = "amdgpu")]
    {
        let p = amd::packet();
        p.grid_size_x.div_ceil(u32::from(p.workgroup_size_x))
    }
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    {
        crate::host::emulate::current().grid_dim[0]
    }
}

/// Global index of the calling thread: `block_idx_x() * block_dim_x() + thread_idx_x()`.
#[inline(always)]
pub fn global_id_x() -> usize {
    block_idx_x() as usize * block_dim_x() as usize + thread_idx_x() as usize
}

/// Total number of threads in the grid (x dimension).
#[inline(always)]
pub fn global_threads_x() -> usize {
    grid_dim_x() as usize * block_dim_x() as usize
}
