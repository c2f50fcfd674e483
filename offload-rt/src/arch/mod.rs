//! The device-intrinsics layer: one module per target — [`nvptx`], [`amdgpu`] and [`cpu`] (the
//! CPU emulation backend) — each exporting the same small set of primitives. The kernel
//! language (indices, shared memory, warps, atomics, `together`) calls only these; it names no
//! target itself. This is the one place that spells the target conditions.
//!
//! The primitives, on every target:
//!
//! | Function | What it does |
//! |---|---|
//! | `thread_idx::<D>()`, `block_idx::<D>()`, `block_dim::<D>()`, `grid_dim::<D>()` | the launch's indices and extents in dimension `D` |
//! | `barrier(site)` | the block-wide barrier (with shared-memory ordering) |
//! | `shared_base()` | the start of the block's launch-sized shared memory |
//! | `warp_size()`, `lane_id()`, `warp_lanes()` | the warp's width, this thread's lane, the lanes that exist in its warp |
//! | `shuffle(v, src, site)`, `ballot(pred, site)`, `peers(v, site)`, `reduce::<K, T>(v, site)` | warp collectives over all lanes of the warp |
//! | `warp_sync(mask)` (GPU) | lanes of `mask` run together again |
//! | `trap()` | ends the kernel with an error |
//! | `keep_order(regs)` | an empty statement that every value passes through (see `together`) |
//! | `fetch_add_f32(p, v)`, `fetch_add_f64(p, v)` | atomic floating-point addition in global memory |
//! | `shared_fetch_add_f32(p, v)`, `shared_fetch_add_f64(p, v)` | the same in block-shared memory |
//! | `device_fence(order)` | a memory fence among the threads of one device |
//! | `fence(order, scope)`, `Word::{load_acquire, store_release, store_relaxed}` | fences and ordered loads and stores at a scope (block, device, system) |
//! | `nanosleep(ns)` | suspends the thread for about `ns` nanoseconds (a spin loop's back-off) |
//! | `fast::{rsqrt, recip, div, exp2, log2, sin, cos}` | the approximate `f32` instructions of `math::fast` |
//!
//! `site` is where the kernel called the operation (`#[track_caller]`): the CPU backend checks
//! that every thread of a block (lane of a warp) reaches the same barrier (warp operation), and
//! names both places when they differ. GPU targets ignore it.

#[cfg(target_arch = "amdgpu")]
mod amdgpu;
#[cfg(not(offload_gpu))]
pub(crate) mod cpu;
#[cfg(offload_gpu)]
mod gpu;
#[cfg(target_arch = "nvptx64")]
mod nvptx;
mod ordered;
#[cfg(offload_gpu)]
mod trap_record;

#[cfg(target_arch = "amdgpu")]
pub(crate) use amdgpu::*;
#[cfg(not(offload_gpu))]
pub(crate) use cpu::*;
#[cfg(offload_gpu)]
pub(crate) use gpu::*;
#[cfg(target_arch = "nvptx64")]
pub(crate) use nvptx::*;
pub(crate) use ordered::{Word, fence};

/// `together`'s ordering statement: the identity where no target-specific one exists (on AMD
/// it is not measured yet).
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub(crate) fn keep_order(_r: &mut [u64; 32]) {}

/// A memory fence among the threads of one device (on NVIDIA its own, device-scope one).
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub(crate) fn device_fence(order: core::sync::atomic::Ordering) {
    core::sync::atomic::fence(order);
}

/// Atomic floating-point addition by compare-and-swap, where the target has no instruction we
/// use for it.
///
/// # Safety
///
/// `p` must be valid and aligned, only accessed atomically while others may access it.
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub(crate) unsafe fn fetch_add_f32(p: *mut f32, v: f32) -> f32 {
    // SAFETY: the caller's contract.
    unsafe { cas_update_f32(p, |old| old + v) }
}

/// See [`fetch_add_f32`].
///
/// # Safety
///
/// As [`fetch_add_f32`].
#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
pub(crate) unsafe fn fetch_add_f64(p: *mut f64, v: f64) -> f64 {
    // SAFETY: the caller's contract.
    unsafe { cas_update_f64(p, |old| old + v) }
}

// Compare-and-swap works in every address space: where the target has no instruction we use
// for it, shared-memory addition is the same function.
#[cfg(not(target_arch = "nvptx64"))]
pub(crate) use self::{fetch_add_f32 as shared_fetch_add_f32, fetch_add_f64 as shared_fetch_add_f64};

/// Where a kernel called a barrier or warp operation.
pub(crate) type Site = &'static core::panic::Location<'static>;

/// Bit mask of lanes `0..n`.
#[inline(always)]
pub(crate) fn lanes_below(n: u32) -> u64 {
    if n >= 64 { u64::MAX } else { (1u64 << n) - 1 }
}

/// Ends the kernel because of a failed check: a panic with `message` on the CPU backend (the
/// launch's error quotes it), a trap on a GPU (the launch fails naming the kernel).
macro_rules! fail {
    ($($message:tt)*) => {{
        #[cfg(offload_gpu)]
        {
            // (The message is lost on a GPU; naming its arguments keeps them "used".)
            let _ = || { let _ = core::format_args!($($message)*); };
            $crate::arch::trap()
        }
        #[cfg(not(offload_gpu))]
        {
            panic!($($message)*)
        }
    }};
}
pub(crate) use fail;

/// Applies `f` to the float at `p` atomically, with a compare-and-swap loop over its bits, and
/// returns the old value. When `f` leaves the value as it is (a minimum already lower, say),
/// nothing is written: contended minima and maxima then cost one load, not a compare-and-swap
/// each. Also the floating-point addition of targets without a native one.
///
/// # Safety
///
/// `p` must be valid and aligned, and only ever accessed atomically while others may access it.
macro_rules! cas_update {
    ($name:ident, $float:ty, $atomic:ident) => {
        #[inline(always)]
        pub(crate) unsafe fn $name(p: *mut $float, f: impl Fn($float) -> $float) -> $float {
            use core::sync::atomic::Ordering::Relaxed;
            // SAFETY: the caller's contract: valid, aligned, only accessed atomically.
            let cell = unsafe { core::sync::atomic::$atomic::from_ptr(p.cast()) };
            let mut seen = cell.load(Relaxed);
            loop {
                let new = f(<$float>::from_bits(seen)).to_bits();
                if new == seen {
                    return <$float>::from_bits(seen);
                }
                match cell.compare_exchange_weak(seen, new, Relaxed, Relaxed) {
                    Ok(_) => return <$float>::from_bits(seen),
                    Err(now) => seen = now,
                }
            }
        }
    };
}
cas_update!(cas_update_f32, f32, AtomicU32);
cas_update!(cas_update_f64, f64, AtomicU64);
