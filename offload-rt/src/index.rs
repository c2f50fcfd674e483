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

macro_rules! index_fns {
    ($d:literal, $dim:ident, $thread:ident, $block:ident, $block_dim:ident, $grid_dim:ident, $global:ident,
     $threads:ident, $ptx_tid:ident, $ptx_ctaid:ident, $ptx_ntid:ident, $ptx_nctaid:ident,
     $amd_item:ident, $amd_group:ident, $amd_size:ident, $amd_grid:ident) => {
        #[doc = concat!("Index of the calling thread within its block (", stringify!($dim), ").")]
        #[inline(always)]
        pub fn $thread() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: reading a PTX special register has no preconditions inside a kernel.
            unsafe {
                core::arch::nvptx::$ptx_tid() as u32
            }
            #[cfg(target_arch = "amdgpu")]
            {
                core::arch::amdgpu::$amd_item()
            }
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            {
                crate::host::emulate::current().thread[$d]
            }
        }

        #[doc = concat!("Index of the calling thread's block within the grid (", stringify!($dim), ").")]
        #[inline(always)]
        pub fn $block() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: reading a PTX special register has no preconditions inside a kernel.
            unsafe {
                core::arch::nvptx::$ptx_ctaid() as u32
            }
            #[cfg(target_arch = "amdgpu")]
            {
                core::arch::amdgpu::$amd_group()
            }
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            {
                crate::host::emulate::current().block[$d]
            }
        }

        #[doc = concat!("Number of threads in a block (", stringify!($dim), ").")]
        #[inline(always)]
        pub fn $block_dim() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: reading a PTX special register has no preconditions inside a kernel.
            unsafe {
                core::arch::nvptx::$ptx_ntid() as u32
            }
            #[cfg(target_arch = "amdgpu")]
            {
                u32::from(amd::packet().$amd_size)
            }
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            {
                crate::host::emulate::current().block_dim[$d]
            }
        }

        #[doc = concat!("Number of blocks in the grid (", stringify!($dim), ").")]
        #[inline(always)]
        pub fn $grid_dim() -> u32 {
            #[cfg(target_arch = "nvptx64")]
            // SAFETY: reading a PTX special register has no preconditions inside a kernel.
            unsafe {
                core::arch::nvptx::$ptx_nctaid() as u32
            }
            #[cfg(target_arch = "amdgpu")]
            {
                let p = amd::packet();
                p.$amd_grid.div_ceil(u32::from(p.$amd_size))
            }
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            {
                crate::host::emulate::current().grid_dim[$d]
            }
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

index_fns!(
    0,
    x,
    thread_idx_x,
    block_idx_x,
    block_dim_x,
    grid_dim_x,
    global_id_x,
    global_threads_x,
    _thread_idx_x,
    _block_idx_x,
    _block_dim_x,
    _grid_dim_x,
    workitem_id_x,
    workgroup_id_x,
    workgroup_size_x,
    grid_size_x
);
index_fns!(
    1,
    y,
    thread_idx_y,
    block_idx_y,
    block_dim_y,
    grid_dim_y,
    global_id_y,
    global_threads_y,
    _thread_idx_y,
    _block_idx_y,
    _block_dim_y,
    _grid_dim_y,
    workitem_id_y,
    workgroup_id_y,
    workgroup_size_y,
    grid_size_y
);
index_fns!(
    2,
    z,
    thread_idx_z,
    block_idx_z,
    block_dim_z,
    grid_dim_z,
    global_id_z,
    global_threads_z,
    _thread_idx_z,
    _block_idx_z,
    _block_dim_z,
    _grid_dim_z,
    workitem_id_z,
    workgroup_id_z,
    workgroup_size_z,
    grid_size_z
);

/// A number unique to the calling thread across the whole grid, whatever its shape:
/// `x + X·(y + Y·z)` over global ids, with `X`, `Y` the grid's extents in threads. For 1-D
/// launches it is `global_id_x()`. [`Region`](crate::Region) gives each thread the element
/// at this index.
#[inline(always)]
pub fn global_linear_id() -> usize {
    // A 1-D launch (every y and z extent 1, so both ids 0) needs only `global_id_x()`. The
    // test reads four launch constants and is the same for every thread (a uniform branch);
    // the general formula reads four more special registers and needs three 64-bit
    // multiply-adds before the first load can be addressed: 25 of the 42 SASS instructions a
    // thread of RAJAPerf's COPY issues before its load (34 with this test; CUDA's issues 17).
    // On an H200 at 1M elements, in an A/B of all 47 rajaperf-rs kernels, three rounds each:
    // 0.989 of the time before (geometric mean); the short 1-D kernels 0.88–0.96 (EOS,
    // FIRST_DIFF, HYDRO_1D, COPY).
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
