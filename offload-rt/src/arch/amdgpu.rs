//! AMD (`amdgcn-amd-amdhsa`): work-item and work-group ids from intrinsics, sizes from the HSA
//! dispatch packet, `s_barrier` between workgroup-scope fences, and wavefront operations
//! (`ds_bpermute`, `ballot`). Built and checked in code objects; not run: there is no AMD GPU
//! here.

use super::Site;
use core::arch::amdgpu as amd;

/// The leading fields of `hsa_kernel_dispatch_packet_t` (HSA System Architecture 1.2).
#[repr(C)]
struct DispatchPacket {
    header: u16,
    setup: u16,
    workgroup_size: [u16; 3],
    reserved0: u16,
    /// Work-items (not work-groups) in the whole grid, per dimension.
    grid_size: [u32; 3],
}

#[inline(always)]
fn packet() -> &'static DispatchPacket {
    let ptr = core::intrinsics::gpu::amdgpu_dispatch_ptr().cast::<DispatchPacket>();
    // SAFETY: every gpu-kernel on amdgpu is launched through a dispatch packet that stays
    // valid for the whole kernel; its layout is fixed by the HSA specification.
    unsafe { &*ptr }
}

#[inline(always)]
pub(crate) fn thread_idx<const D: usize>() -> u32 {
    match D {
        0 => amd::workitem_id_x(),
        1 => amd::workitem_id_y(),
        _ => amd::workitem_id_z(),
    }
}

#[inline(always)]
pub(crate) fn block_idx<const D: usize>() -> u32 {
    match D {
        0 => amd::workgroup_id_x(),
        1 => amd::workgroup_id_y(),
        _ => amd::workgroup_id_z(),
    }
}

#[inline(always)]
pub(crate) fn block_dim<const D: usize>() -> u32 {
    u32::from(packet().workgroup_size[D])
}

#[inline(always)]
pub(crate) fn grid_dim<const D: usize>() -> u32 {
    let p = packet();
    p.grid_size[D].div_ceil(u32::from(p.workgroup_size[D]))
}

/// `s_barrier` between a release and an acquire fence: on gfx90a and later the hardware no
/// longer waits for outstanding LDS accesses at a barrier, and LLVM models `s_barrier` as
/// touching no memory, so the fences are what order shared-memory accesses around it (as
/// HIP's `__syncthreads` does).
#[inline(always)]
pub(crate) fn barrier(_site: Site) {
    use core::sync::atomic::{Ordering, fence};
    fence(Ordering::Release);
    amd::s_barrier();
    fence(Ordering::Acquire);
}

/// Suspends the wavefront for about `ns` nanoseconds: `s_sleep 1` (64 clocks) until the
/// constant 100 MHz clock (`s_memrealtime`) has advanced by `ns`.
#[inline(always)]
pub(crate) fn nanosleep(ns: u32) {
    let start = amd::s_memrealtime();
    let ticks = u64::from(ns.div_ceil(10));
    while amd::s_memrealtime().wrapping_sub(start) < ticks {
        amd::s_sleep::<1>();
    }
}

#[inline(always)]
pub(crate) fn trap() -> ! {
    core::intrinsics::abort()
}

#[inline(always)]
pub(crate) fn warp_size() -> u32 {
    amd::wavefrontsize()
}

#[inline(always)]
pub(crate) fn lane_id() -> u32 {
    amd::mbcnt_hi(u32::MAX, amd::mbcnt_lo(u32::MAX, 0))
}

/// 32 bits of lane `src`'s `v` (`src` below the wavefront size). Wavefronts run in lockstep:
/// the lanes of `mask` are the active ones.
#[inline(always)]
pub(crate) fn read32(v: u32, src: u32, _mask: u64) -> u32 {
    // SAFETY: `ds_bpermute` reads lane `src` (a byte address, 4 per lane) of the wavefront; it
    // has no memory-safety preconditions.
    unsafe { amd::ds_bpermute(src * 4, v) }
}

/// 32 bits of lane `lane + delta`'s `v`, or the caller's own past lane `last` (`delta` below
/// the wavefront size).
#[inline(always)]
pub(crate) fn read32_down(v: u32, delta: u32, last: u32, mask: u64) -> u32 {
    let src = lane_id() + delta;
    let got = read32(v, src & (warp_size() - 1), mask);
    if src <= last { got } else { v }
}

/// 32 bits of lane `lane - delta`'s `v`, or the caller's own before lane 0 (`delta` below the
/// wavefront size).
#[inline(always)]
pub(crate) fn read32_up(v: u32, delta: u32, mask: u64) -> u32 {
    let lane = lane_id();
    let got = read32(v, lane.wrapping_sub(delta) & (warp_size() - 1), mask);
    if lane >= delta { got } else { v }
}

/// 32 bits of lane `lane ^ lanes`'s `v`, or the caller's own where that is past lane `last`
/// (`lanes` below the wavefront size).
#[inline(always)]
pub(crate) fn read32_xor(v: u32, lanes: u32, last: u32, mask: u64) -> u32 {
    let src = lane_id() ^ lanes;
    let got = read32(v, src, mask);
    if src <= last { got } else { v }
}

/// Wavefronts run in lockstep: there is nothing to wait for.
#[inline(always)]
pub(crate) fn warp_sync(_mask: u64) {}

/// The active lanes whose `pred` is true.
#[inline(always)]
pub(crate) fn vote(pred: bool, _mask: u64) -> u64 {
    amd::ballot(pred)
}

/// The active lanes whose bit `bit` of `v` is the caller's.
#[inline(always)]
pub(crate) fn vote_agree(v: u32, bit: u32, mask: u64) -> u64 {
    let set = v & 1 << bit != 0;
    let votes = vote(set, mask);
    if set { votes } else { !votes }
}

/// The active lanes whose `v` equals the caller's: AMD has no match instruction, so one ballot
/// per distinct value among the lanes (the lowest lane not yet matched names the next value;
/// the loop is the same for every lane, so the wavefront stays together).
#[inline(always)]
pub(crate) fn match_lanes(v: u32, mask: u64) -> u64 {
    let (mut left, mut mine) = (mask, 0);
    while left != 0 {
        let value = read32(v, left.trailing_zeros(), mask);
        let equal = vote(v == value, mask);
        if v == value {
            mine = equal;
        }
        left &= !equal;
    }
    mine
}

/// The approximate `f32` instructions behind `math::fast`: `v_rsq_f32`, `v_rcp_f32`,
/// `v_exp_f32`, `v_log_f32`, `v_sin_f32` and `v_cos_f32` (the last two take revolutions, not
/// radians). Built into code objects and checked there; not run (no AMD GPU here).
pub(crate) mod fast {
    #[allow(improper_ctypes)]
    unsafe extern "unadjusted" {
        #[link_name = "llvm.amdgcn.rsq.f32"]
        fn amdgcn_rsq(x: f32) -> f32;
        #[link_name = "llvm.amdgcn.rcp.f32"]
        fn amdgcn_rcp(x: f32) -> f32;
        #[link_name = "llvm.amdgcn.exp2.f32"]
        fn amdgcn_exp2(x: f32) -> f32;
        #[link_name = "llvm.amdgcn.log.f32"]
        fn amdgcn_log2(x: f32) -> f32;
        #[link_name = "llvm.amdgcn.sin.f32"]
        fn amdgcn_sin(revolutions: f32) -> f32;
        #[link_name = "llvm.amdgcn.cos.f32"]
        fn amdgcn_cos(revolutions: f32) -> f32;
    }

    const REVOLUTIONS_PER_RADIAN: f32 = 0.5 / core::f32::consts::PI;

    // SAFETY (every block below): one arithmetic instruction on registers; no preconditions.
    #[inline(always)]
    pub(crate) fn rsqrt(x: f32) -> f32 {
        // SAFETY: see above.
        unsafe { amdgcn_rsq(x) }
    }
    #[inline(always)]
    pub(crate) fn recip(x: f32) -> f32 {
        // SAFETY: see above.
        unsafe { amdgcn_rcp(x) }
    }
    #[inline(always)]
    pub(crate) fn div(a: f32, b: f32) -> f32 {
        a * recip(b)
    }
    #[inline(always)]
    pub(crate) fn exp2(x: f32) -> f32 {
        // SAFETY: see above.
        unsafe { amdgcn_exp2(x) }
    }
    #[inline(always)]
    pub(crate) fn log2(x: f32) -> f32 {
        // SAFETY: see above.
        unsafe { amdgcn_log2(x) }
    }
    #[inline(always)]
    pub(crate) fn sin(x: f32) -> f32 {
        // SAFETY: see above.
        unsafe { amdgcn_sin(x * REVOLUTIONS_PER_RADIAN) }
    }
    #[inline(always)]
    pub(crate) fn cos(x: f32) -> f32 {
        // SAFETY: see above.
        unsafe { amdgcn_cos(x * REVOLUTIONS_PER_RADIAN) }
    }
}
