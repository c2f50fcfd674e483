//! NVIDIA (`nvptx64-nvidia-cuda`): PTX special registers, `bar.sync`, and the warp's
//! `shfl.sync` / `vote.sync` with an explicit lane mask.

use super::Site;
use core::arch::nvptx as ptx;

#[allow(improper_ctypes)]
unsafe extern "unadjusted" {
    #[link_name = "llvm.nvvm.read.ptx.sreg.laneid"]
    fn nvvm_laneid() -> u32;
    #[link_name = "llvm.nvvm.vote.ballot.sync"]
    fn nvvm_ballot_sync(mask: u32, pred: bool) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn nvvm_shfl_sync_idx(mask: u32, v: u32, lane: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn nvvm_shfl_sync_down(mask: u32, v: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn nvvm_shfl_sync_up(mask: u32, v: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn nvvm_shfl_sync_bfly(mask: u32, v: u32, lanes: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.match.any.sync.i32"]
    fn nvvm_match_any_sync(mask: u32, v: u32) -> u32;
    #[link_name = "llvm.nvvm.bar.warp.sync"]
    fn nvvm_bar_warp_sync(mask: u32);
}

/// Waits until every lane of `mask` arrives (`bar.warp.sync`): lanes that diverged run
/// together again.
#[inline(always)]
pub(crate) fn warp_sync(mask: u64) {
    // SAFETY: the lanes of `mask` all make this call and have not exited (the callers' use:
    // the reductions' combine after the kernel returns, reached by every thread).
    unsafe { nvvm_bar_warp_sync(mask as u32) }
}

macro_rules! special_register {
    ($name:ident, $x:ident, $y:ident, $z:ident) => {
        #[inline(always)]
        pub(crate) fn $name<const D: usize>() -> u32 {
            // SAFETY: reading a PTX special register has no preconditions inside a kernel.
            (unsafe {
                match D {
                    0 => ptx::$x(),
                    1 => ptx::$y(),
                    _ => ptx::$z(),
                }
            }) as u32
        }
    };
}
special_register!(thread_idx, _thread_idx_x, _thread_idx_y, _thread_idx_z);
special_register!(block_idx, _block_idx_x, _block_idx_y, _block_idx_z);
special_register!(block_dim, _block_dim_x, _block_dim_y, _block_dim_z);
special_register!(grid_dim, _grid_dim_x, _grid_dim_y, _grid_dim_z);

/// `bar.sync 0`: every thread of the block waits here, and shared-memory writes before it are
/// visible to reads after it.
#[inline(always)]
pub(crate) fn barrier(_site: Site) {
    // SAFETY: `bar.sync 0` has no memory-safety preconditions. Every thread of the block
    // reaches the same barrier: the kernels macro only accepts barriers in block-uniform
    // control flow.
    unsafe { ptx::_syncthreads() }
}

#[inline(always)]
pub(crate) fn trap() -> ! {
    // SAFETY: `trap` has no preconditions; it ends the kernel with an error.
    unsafe { ptx::trap() }
}

#[inline(always)]
pub(crate) fn warp_size() -> u32 {
    32
}

#[inline(always)]
pub(crate) fn lane_id() -> u32 {
    // SAFETY: reading `%laneid` has no preconditions.
    unsafe { nvvm_laneid() }
}

/// 32 bits of lane `src`'s `v`: every lane of `mask` makes this call (`shfl.sync` waits for
/// them); `src` must be below 32. A `src` outside `mask` gives an unspecified value.
#[inline(always)]
pub(crate) fn read32(v: u32, src: u32, mask: u64) -> u32 {
    // SAFETY: the lanes of `mask` all execute this call (callers run warp operations only in
    // warp-uniform control flow, over the lanes that exist), as `shfl.sync` requires; the clamp
    // value 31 keeps the read inside the warp.
    unsafe { nvvm_shfl_sync_idx(mask as u32, v, src, 31) }
}

/// 32 bits of lane `lane + delta`'s `v`, or the caller's own past lane `last` (`shfl.sync.down`
/// with `last` as its clamp): every lane of `mask` (lanes `0..=last`) makes this call; `delta`
/// must be below 32.
#[inline(always)]
pub(crate) fn read32_down(v: u32, delta: u32, last: u32, mask: u64) -> u32 {
    // SAFETY: as in `read32`; a source past the clamp `last`, the last lane of `mask`, reads
    // the caller's own value, so every lane read is one of `mask`.
    unsafe { nvvm_shfl_sync_down(mask as u32, v, delta, last) }
}

/// 32 bits of lane `lane - delta`'s `v`, or the caller's own before lane 0 (`shfl.sync.up`):
/// every lane of `mask` makes this call; `delta` must be below 32.
#[inline(always)]
pub(crate) fn read32_up(v: u32, delta: u32, mask: u64) -> u32 {
    // SAFETY: as in `read32`; a source before lane 0 (clamp 0) reads the caller's own value,
    // and the lanes below a lane of `mask` (lanes `0..n`) are in it.
    unsafe { nvvm_shfl_sync_up(mask as u32, v, delta, 0) }
}

/// 32 bits of lane `lane ^ lanes`'s `v`, or the caller's own where that is past lane `last`
/// (`shfl.sync.bfly`): every lane of `mask` (lanes `0..=last`) makes this call; `lanes` must be
/// below 32.
#[inline(always)]
pub(crate) fn read32_xor(v: u32, lanes: u32, last: u32, mask: u64) -> u32 {
    // SAFETY: as in `read32_down`.
    unsafe { nvvm_shfl_sync_bfly(mask as u32, v, lanes, last) }
}

/// The lanes of `mask` whose `pred` is true; every lane of `mask` makes this call.
#[inline(always)]
pub(crate) fn vote(pred: bool, mask: u64) -> u64 {
    // SAFETY: as in `read32`: `vote.sync` over lanes that all make the call.
    u64::from(unsafe { nvvm_ballot_sync(mask as u32, pred) })
}

/// The lanes of `mask` whose bit `bit` of `v` is the caller's: the ballot of the bit, inverted
/// where the caller's bit is clear. Every lane of `mask` makes this call.
#[inline(always)]
pub(crate) fn vote_agree(v: u32, bit: u32, mask: u64) -> u64 {
    let t: u32;
    // SAFETY: an `and` of registers: no memory, no other lane, no other effect.
    unsafe {
        core::arch::asm!("and.b32 {t}, {v}, {b};", t = out(reg32) t, v = in(reg32) v, b = in(reg32) 1u32 << bit,
            options(pure, nomem, nostack, preserves_flags));
    }
    let votes = vote(t != 0, mask) as u32;
    // All ones where the caller's bit is clear, by `set` rather than a select on the ballot's
    // predicate, which LLVM would make of it in Rust: with that, ptxas tested each bit twice
    // and made a mask of it (six instructions a bit; CUB's match takes four or five).
    let clear: u32;
    // SAFETY: a comparison of registers: no memory, no other lane, no other effect.
    unsafe {
        core::arch::asm!("set.eq.u32.u32 {c}, {t}, 0;", c = out(reg32) clear, t = in(reg32) t,
            options(pure, nomem, nostack, preserves_flags));
    }
    u64::from(votes ^ clear)
}

/// The lanes of `mask` whose `v` equals the caller's (`match.any.sync`, sm_70 and later);
/// every lane of `mask` makes this call.
#[inline(always)]
pub(crate) fn match_lanes(v: u32, mask: u64) -> u64 {
    // SAFETY: as in `read32`: `match.any.sync` over lanes that all make the call.
    u64::from(unsafe { nvvm_match_any_sync(mask as u32, v) })
}

/// The statement `together` passes values through: it takes and returns all 32 registers, so
/// LLVM computes every input before it and places every use after it. Its text is a PTX
/// comment (the template must name each operand): no instruction is emitted.
#[inline(always)]
pub(crate) fn keep_order(r: &mut [u64; 32]) {
    // SAFETY: the template is a comment: no instruction, no memory access, no other effect.
    unsafe {
        core::arch::asm!(
            "// together {0} {1} {2} {3} {4} {5} {6} {7} {8} {9} {10} {11} {12} {13} {14} {15}",
            "// together {16} {17} {18} {19} {20} {21} {22} {23} {24} {25} {26} {27} {28} {29} {30} {31}",
            inout(reg64) r[0], inout(reg64) r[1], inout(reg64) r[2], inout(reg64) r[3],
            inout(reg64) r[4], inout(reg64) r[5], inout(reg64) r[6], inout(reg64) r[7],
            inout(reg64) r[8], inout(reg64) r[9], inout(reg64) r[10], inout(reg64) r[11],
            inout(reg64) r[12], inout(reg64) r[13], inout(reg64) r[14], inout(reg64) r[15],
            inout(reg64) r[16], inout(reg64) r[17], inout(reg64) r[18], inout(reg64) r[19],
            inout(reg64) r[20], inout(reg64) r[21], inout(reg64) r[22], inout(reg64) r[23],
            inout(reg64) r[24], inout(reg64) r[25], inout(reg64) r[26], inout(reg64) r[27],
            inout(reg64) r[28], inout(reg64) r[29], inout(reg64) r[30], inout(reg64) r[31],
            options(pure, nomem, nostack),
        )
    };
}

macro_rules! fetch_add {
    ($name:ident, $t:ty, $reg:ident, $space:literal, $ptx:literal) => {
        #[doc = concat!("The hardware's atomic floating-point addition in ", $space, " memory (`atom.", $space, ".add`; the")]
        /// generic form would cost an address-space check per operation).
        ///
        /// # Safety
        ///
        #[doc = concat!("`p` must be a valid, aligned address of ", $space, " memory, only accessed atomically")]
        /// while others may access it.
        #[inline(always)]
        pub(crate) unsafe fn $name(p: *mut $t, v: $t) -> $t {
            let old: $t;
            // SAFETY: the caller's contract: `p` is a valid, aligned address of the named
            // space (atomics views and reduction results are device allocations; shared
            // atomics live in the block's shared memory).
            unsafe { core::arch::asm!($ptx, out($reg) old, in(reg64) p, in($reg) v) };
            old
        }
    };
}
fetch_add!(
    fetch_add_f32,
    f32,
    reg32,
    "global",
    "{{ .reg .b64 g; cvta.to.global.u64 g, {1}; atom.global.add.f32 {0}, [g], {2}; }}"
);
fetch_add!(
    fetch_add_f64,
    f64,
    reg64,
    "global",
    "{{ .reg .b64 g; cvta.to.global.u64 g, {1}; atom.global.add.f64 {0}, [g], {2}; }}"
);
fetch_add!(
    shared_fetch_add_f32,
    f32,
    reg32,
    "shared",
    "{{ .reg .b64 s; cvta.to.shared.u64 s, {1}; atom.shared.add.f32 {0}, [s], {2}; }}"
);
fetch_add!(
    shared_fetch_add_f64,
    f64,
    reg64,
    "shared",
    "{{ .reg .b64 s; cvta.to.shared.u64 s, {1}; atom.shared.add.f64 {0}, [s], {2}; }}"
);

/// A memory fence among the threads of one device: `fence.acq_rel.gpu`. What it orders lives
/// in device memory, which the host does not touch during a launch, so the GPU scope suffices
/// (a system-scope fence costs about a microsecond per block).
#[inline(always)]
pub(crate) fn device_fence(_order: core::sync::atomic::Ordering) {
    // SAFETY: a fence has no operands and no memory-safety preconditions.
    unsafe { core::arch::asm!("fence.acq_rel.gpu;") };
}

/// Suspends the thread for about `ns` nanoseconds (`nanosleep.u32`, sm_70 and later; the
/// hardware picks a time between 0 and 2·`ns`, at most a millisecond).
#[inline(always)]
pub(crate) fn nanosleep(ns: u32) {
    // SAFETY: `nanosleep` only delays this thread: it accesses no memory and has no
    // preconditions. (Not `nomem`: as a statement that may touch memory it also keeps the
    // loads of a spin loop from being merged across it.)
    unsafe { core::arch::asm!("nanosleep.u32 {0};", in(reg32) ns, options(nostack)) };
}

/// The approximate `f32` instructions behind `math::fast`: PTX's `.approx` forms, keeping
/// subnormal inputs and results (no `.ftz`).
pub(crate) mod fast {
    macro_rules! approx {
        ($($name:ident => $ptx:literal;)*) => {$(
            #[inline(always)]
            pub(crate) fn $name(x: f32) -> f32 {
                let y: f32;
                // SAFETY: one arithmetic instruction on registers: it touches no memory and has
                // no preconditions.
                unsafe {
                    core::arch::asm!(concat!($ptx, " {0}, {1};"), out(reg32) y, in(reg32) x,
                        options(pure, nomem, nostack))
                };
                y
            }
        )*};
    }
    approx! {
        rsqrt => "rsqrt.approx.f32";
        recip => "rcp.approx.f32";
        exp2 => "ex2.approx.f32";
        log2 => "lg2.approx.f32";
        sin => "sin.approx.f32";
        cos => "cos.approx.f32";
    }

    #[inline(always)]
    pub(crate) fn div(a: f32, b: f32) -> f32 {
        let q: f32;
        // SAFETY: as in `approx!`.
        unsafe {
            core::arch::asm!("div.approx.f32 {0}, {1}, {2};", out(reg32) q, in(reg32) a, in(reg32) b,
                options(pure, nomem, nostack))
        };
        q
    }
}
