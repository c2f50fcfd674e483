//! The CPU emulation backend's side of the intrinsics: each emulated GPU thread is a host
//! thread whose indices live in a thread-local [`ThreadCtx`] that the backend's scheduler
//! (`host::cpu`) sets around the kernel call. Kernels that use barriers, shared memory or
//! warps run every thread of a block at once, meeting at a [`BlockSync`] (barriers) and one
//! [`WarpSync`] per warp (warp operations), which also check that every thread takes part in
//! the same operations in the same order, so that a launch that would be undefined on a GPU
//! fails here with a message naming the places involved.

mod block;
mod warp;

pub(crate) use block::{BLOCK_FAILED, BlockSync};

use super::Site;
use crate::reduce::ReduceOp;
use crate::warp::WarpValue;
use std::cell::Cell;

/// Indices of the emulated GPU thread running on this host thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadCtx {
    pub thread: [u32; 3],
    pub block: [u32; 3],
    pub block_dim: [u32; 3],
    pub grid_dim: [u32; 3],
    /// The block's shared memory and barrier, when the kernel uses them.
    pub block_env: Option<BlockEnv>,
}

/// What the threads of one emulated block share.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockEnv {
    /// The block's shared memory (zeroed, 16-byte aligned, as large as the launch reserved).
    pub shared: *mut u8,
    pub sync: *const BlockSync,
}

thread_local! {
    static CURRENT: Cell<Option<ThreadCtx>> = const { Cell::new(None) };
}

/// Runs `body` as the emulated thread `ctx`.
///
/// # Safety
///
/// `ctx.block_env`, if any, must point to the block's shared memory and its `BlockSync`,
/// both alive until `body` returns and used only by the block's threads.
pub(crate) unsafe fn run_as<R>(ctx: ThreadCtx, body: impl FnOnce() -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            CURRENT.set(None);
        }
    }
    CURRENT.set(Some(ctx));
    let _leave = Leave;
    body()
}

/// The indices of the emulated thread that calls this.
///
/// # Panics
///
/// Outside a kernel launch: thread indices only exist inside kernels.
#[inline]
pub(crate) fn current() -> ThreadCtx {
    CURRENT.get().expect("offload: thread and block indices exist only inside a kernel launch")
}

fn block_env() -> (BlockEnv, usize) {
    let ctx = current();
    let env = ctx
        .block_env
        .expect("offload: barriers, shared memory and warps exist only in kernels that take them");
    let [bx, by, _] = ctx.block_dim;
    let [tx, ty, tz] = ctx.thread;
    (env, (tx + bx * (ty + by * tz)) as usize)
}

fn block_sync() -> (&'static BlockSync, usize) {
    let (env, tid) = block_env();
    // SAFETY: `run_as`'s contract keeps the block's `BlockSync` alive while this thread runs
    // the kernel, and this is only called from inside it. (The `'static` does not escape:
    // callers use it for the one call.)
    (unsafe { &*env.sync }, tid)
}

#[inline]
pub(crate) fn thread_idx<const D: usize>() -> u32 {
    current().thread[D]
}

#[inline]
pub(crate) fn block_idx<const D: usize>() -> u32 {
    current().block[D]
}

#[inline]
pub(crate) fn block_dim<const D: usize>() -> u32 {
    current().block_dim[D]
}

#[inline]
pub(crate) fn grid_dim<const D: usize>() -> u32 {
    current().grid_dim[D]
}

/// Waits until every thread of the block arrives at this same barrier (the launch fails if
/// one arrives at another, or returns, instead).
pub(crate) fn barrier(site: Site) {
    let (sync, tid) = block_sync();
    sync.wait(site, tid);
}

/// The block's shared memory.
pub(crate) fn shared_base() -> *mut u8 {
    block_env().0.shared
}

pub(crate) fn trap() -> ! {
    panic!("offload: the kernel trapped")
}

/// The block's warp size (the scheduler sets it: `OFFLOAD_CPU_WARP_SIZE`).
pub(crate) fn warp_size() -> u32 {
    block_sync().0.warp_size()
}

pub(crate) fn lane_id() -> u32 {
    (block_env().1 % warp_size() as usize) as u32
}

/// The lanes of this thread's warp that exist.
pub(crate) fn warp_lanes() -> u64 {
    let (sync, tid) = block_sync();
    super::lanes_below(sync.warp(tid).0.lanes())
}

/// Meets the other lanes of the warp at `site` with `v`: every lane's value.
fn exchange(v: u64, site: Site) -> ([u64; 64], u32) {
    let (sync, tid) = block_sync();
    let (warp, lane) = sync.warp(tid);
    (warp.exchange(lane, v, site), lane)
}

pub(crate) fn shuffle<T: WarpValue>(v: T, src: u32, site: Site) -> T {
    let (values, _) = exchange(v.to_bits64(), site);
    if src < warp_size() && warp_lanes() >> src & 1 == 1 { T::from_bits64(values[src as usize]) } else { v }
}

pub(crate) fn ballot(pred: bool, site: Site) -> u64 {
    let (values, _) = exchange(u64::from(pred), site);
    let lanes = warp_lanes();
    (0..64).filter(|&l| lanes >> l & 1 == 1 && values[l] != 0).fold(0, |m, l| m | 1 << l)
}

/// `v` combined over the warp with the same association as on a GPU: a butterfly over a
/// whole warp, lane order over a partial one.
pub(crate) fn reduce<K: ReduceOp, T: WarpValue + crate::AtomicElem>(v: T, site: Site) -> T {
    let (values, lane) = exchange(v.to_bits64(), site);
    let size = warp_size() as usize;
    let lanes = warp_lanes();
    let mut vals = [T::ZERO; 64];
    for (l, bits) in vals.iter_mut().zip(values).take(size) {
        *l = T::from_bits64(bits);
    }
    if lanes == super::lanes_below(size as u32) {
        let mut offset = size / 2;
        while offset > 0 {
            let before = vals;
            for (l, acc) in vals.iter_mut().enumerate().take(size) {
                *acc = K::combine(before[l], before[l ^ offset]);
            }
            offset /= 2;
        }
        vals[lane as usize]
    } else {
        let mut present = (0..size).filter(|&l| lanes >> l & 1 == 1).map(|l| vals[l]);
        let first = present.next().expect("the calling lane exists");
        present.fold(first, K::combine)
    }
}

/// `math::fast` on the CPU backend: each function evaluated in `f64` and rounded once to `f32`,
/// well within the bounds that `math::fast` states for the GPUs' instructions.
pub(crate) mod fast {
    #[inline(always)]
    pub(crate) fn rsqrt(x: f32) -> f32 {
        (1.0 / f64::from(x).sqrt()) as f32
    }
    #[inline(always)]
    pub(crate) fn recip(x: f32) -> f32 {
        (1.0 / f64::from(x)) as f32
    }
    #[inline(always)]
    pub(crate) fn div(a: f32, b: f32) -> f32 {
        (f64::from(a) / f64::from(b)) as f32
    }
    #[inline(always)]
    pub(crate) fn exp2(x: f32) -> f32 {
        f64::from(x).exp2() as f32
    }
    #[inline(always)]
    pub(crate) fn log2(x: f32) -> f32 {
        f64::from(x).log2() as f32
    }
    #[inline(always)]
    pub(crate) fn sin(x: f32) -> f32 {
        f64::from(x).sin() as f32
    }
    #[inline(always)]
    pub(crate) fn cos(x: f32) -> f32 {
        f64::from(x).cos() as f32
    }
}
