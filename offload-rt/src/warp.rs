//! Warp (NVIDIA) and wavefront (AMD) operations: a kernel takes a [`Warp`] parameter and
//! uses it to exchange values between the threads ("lanes") that the hardware runs in
//! lockstep — shuffles, votes and reductions without shared memory or barriers.
//!
//! The same code runs on 32-wide NVIDIA warps, 64-wide AMD wavefronts (32-wide on RDNA) and
//! the CPU backend (32 lanes, or `OFFLOAD_CPU_WARP_SIZE=64`): write it against
//! [`Warp::size`] and [`Warp::lane`], never against a constant 32.
//!
//! Every operation acts on the *active* lanes, the threads of the warp that make the same
//! call together: all of them in warp-uniform code, fewer in the last, partial warp of a
//! block whose size is not a multiple of the warp size or after other lanes returned. Results
//! are defined for any set of active lanes: a shuffle from a lane that is not active (or does
//! not exist) returns the caller's own value, and reductions combine exactly the active
//! lanes. Keep warp operations out of branches that split a warp (`if lane < 7 { … }`): on a
//! GPU such a call sees only the lanes that took the branch, and the CPU backend rejects it
//! (the launch fails naming the kernel) so that the surprise shows up in tests.
//!
//! On NVIDIA GPUs (independent thread scheduling) lanes that took different paths through an
//! earlier lane-dependent branch — one lane looping in `if lane == 0 { … }` — are not always
//! running together again at the next warp operation, which then sees fewer lanes than the
//! CPU backend does. Reductions to kernel outputs (`Sum`, `Min`, `Max`) are not affected:
//! their final combine synchronises the warp's lanes first.

use crate::atomic::AtomicElem;
use crate::reduce::{MaxOp, MinOp, ReduceOp, SumOp};

mod sealed {
    pub trait Sealed {}
}

/// Values that lanes can exchange: `i32`, `u32`, `f32`, `i64`, `u64`, `f64`.
pub trait WarpValue: sealed::Sealed + Copy {
    #[doc(hidden)]
    fn to_bits64(self) -> u64;
    #[doc(hidden)]
    fn from_bits64(bits: u64) -> Self;
    /// Whether the value needs two 32-bit shuffles.
    #[doc(hidden)]
    const WIDE: bool;
}

macro_rules! warp_value {
    ($($t:ty => $wide:literal, |$v:ident| $to:expr, |$b:ident| $from:expr;)*) => {$(
        impl sealed::Sealed for $t {}
        impl WarpValue for $t {
            const WIDE: bool = $wide;
            #[inline(always)]
            fn to_bits64(self) -> u64 {
                let $v = self;
                $to
            }
            #[inline(always)]
            fn from_bits64($b: u64) -> Self {
                $from
            }
        }
    )*};
}

warp_value! {
    u32 => false, |v| u64::from(v), |b| b as u32;
    i32 => false, |v| u64::from(v as u32), |b| b as u32 as i32;
    f32 => false, |v| u64::from(v.to_bits()), |b| f32::from_bits(b as u32);
    u64 => true, |v| v, |b| b;
    i64 => true, |v| v as u64, |b| b as i64;
    f64 => true, |v| v.to_bits(), |b| f64::from_bits(b);
}

/// The calling thread's warp: a kernel parameter (`w: Warp`) with no host argument. See the
/// [module documentation](self) for which lanes take part in each operation.
#[derive(Debug)]
pub struct Warp {
    lane: u32,
    size: u32,
    #[cfg(not(offload_gpu))]
    sync: *const crate::host::warp_emu::WarpSync,
}

/// CPU backend: the ballot of the lanes in `mask` from their exchanged predicates.
#[cfg(not(offload_gpu))]
fn ballot_bits(values: &[u64; 64], mask: u64) -> u64 {
    (0..64).filter(|&l| mask >> l & 1 == 1 && values[l] != 0).fold(0, |m, l| m | 1 << l)
}

/// Bit mask of the lanes `0..size`.
#[inline(always)]
fn all_lanes(size: u32) -> u64 {
    if size >= 64 { u64::MAX } else { (1u64 << size) - 1 }
}

impl Warp {
    /// The calling GPU thread's warp.
    #[doc(hidden)]
    #[cfg(offload_gpu)]
    #[inline(always)]
    pub fn current() -> Warp {
        Warp { lane: gpu::lane(), size: gpu::size() }
    }

    /// The warp of an emulated thread (CPU backend).
    ///
    /// # Safety
    ///
    /// `sync` must be the exchange of the emulated warp that holds lane `lane`, alive while
    /// the returned value is, and each lane of it must get one `Warp`.
    #[doc(hidden)]
    #[cfg(not(offload_gpu))]
    pub unsafe fn emulated(lane: u32, size: u32, sync: *const crate::host::warp_emu::WarpSync) -> Warp {
        Warp { lane, size, sync }
    }

    /// Lanes per warp: 32 on NVIDIA, 64 on AMD CDNA (`gfx9xx`), 32 on AMD RDNA, 32 on the CPU
    /// backend unless `OFFLOAD_CPU_WARP_SIZE=64`.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// This thread's lane, `0..size()`: its index within the block modulo the warp size.
    #[inline(always)]
    pub fn lane(&self) -> u32 {
        self.lane
    }

    /// The lanes taking part in this call, one bit per lane.
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn active(&self) -> u64 {
        self.exchange_and(0u32, |_, mask| mask)
    }

    /// One bit per active lane whose `pred` is true.
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn ballot(&self, pred: bool) -> u64 {
        #[cfg(offload_gpu)]
        {
            gpu::ballot(pred)
        }
        #[cfg(not(offload_gpu))]
        {
            self.exchange_and(u32::from(pred), ballot_bits)
        }
    }

    /// Whether `pred` holds on every active lane.
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn all(&self, pred: bool) -> bool {
        self.votes(pred, |ballot, mask| ballot == mask)
    }

    /// Whether `pred` holds on some active lane.
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn any(&self, pred: bool) -> bool {
        self.votes(pred, |ballot, _| ballot != 0)
    }

    /// The value of lane `src` (this lane's own `v` when `src` is not active).
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn shuffle<T: WarpValue>(&self, v: T, src: u32) -> T {
        self.permute(v, src)
    }

    /// The value of lane `lane() ^ mask` (butterfly exchange).
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn shuffle_xor<T: WarpValue>(&self, v: T, mask: u32) -> T {
        self.permute(v, self.lane ^ mask)
    }

    /// The value of lane `lane() + delta` (own value past the last lane).
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn shuffle_down<T: WarpValue>(&self, v: T, delta: u32) -> T {
        self.permute(v, self.lane.saturating_add(delta))
    }

    /// The value of lane `lane() - delta` (own value before lane 0).
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn shuffle_up<T: WarpValue>(&self, v: T, delta: u32) -> T {
        self.permute(v, self.lane.checked_sub(delta).unwrap_or(u32::MAX))
    }

    /// The sum of `v` over the active lanes, returned to every one of them. With all lanes
    /// active it is a butterfly (`size / 2`, …, 2, 1 apart); otherwise the lanes' values are
    /// added in lane order — the same association on every backend.
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn sum<T: WarpValue + AtomicElem>(&self, v: T) -> T {
        self.reduce::<SumOp, T>(v)
    }

    /// The minimum of `v` over the active lanes (see [`Warp::sum`]).
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn min<T: WarpValue + AtomicElem>(&self, v: T) -> T {
        self.reduce::<MinOp, T>(v)
    }

    /// The maximum of `v` over the active lanes (see [`Warp::sum`]).
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn max<T: WarpValue + AtomicElem>(&self, v: T) -> T {
        self.reduce::<MaxOp, T>(v)
    }

    /// Combines `v` over the first `lanes` lanes of the warp, which must all make this call
    /// (they are synchronised first, so lanes that diverged earlier take part again): for
    /// code every thread of a block runs, such as the reductions' final combine. GPU only.
    #[doc(hidden)]
    #[cfg(offload_gpu)]
    #[inline(always)]
    pub fn reduce_lanes<K: ReduceOp, T: WarpValue + AtomicElem>(&self, v: T, lanes: u32) -> T {
        self.reduce_lanes_by(v, lanes, gpu::read_lane, K::combine)
    }

    /// Combines `v` over the active lanes with `K`: a butterfly when the whole warp is active,
    /// in lane order otherwise.
    #[doc(hidden)]
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    pub fn reduce<K: ReduceOp, T: WarpValue + AtomicElem>(&self, v: T) -> T {
        #[cfg(offload_gpu)]
        {
            self.reduce_mask::<K, T>(v, gpu::active())
        }
        #[cfg(not(offload_gpu))]
        {
            self.reduce_emulated::<K, T>(v)
        }
    }

    #[cfg(offload_gpu)]
    #[inline(always)]
    fn reduce_mask<K: ReduceOp, T: WarpValue + AtomicElem>(&self, v: T, mask: u64) -> T {
        self.reduce_mask_by(v, mask, gpu::read_lane, K::combine)
    }

    /// [`reduce_lanes`](Self::reduce_lanes) for values that are not [`WarpValue`]s: `read`
    /// reads another lane's value (`read(v, src_lane, mask)`, built from `gpu::read_lane` on
    /// each field), `combine` must be associative and commutative.
    #[doc(hidden)]
    #[cfg(offload_gpu)]
    #[inline(always)]
    pub fn reduce_lanes_by<T: Copy>(
        &self,
        v: T,
        lanes: u32,
        read: impl Fn(T, u32, u64) -> T,
        combine: impl Fn(T, T) -> T,
    ) -> T {
        let mask = all_lanes(lanes.min(self.size));
        gpu::sync(mask);
        self.reduce_mask_by(v, mask, read, combine)
    }

    /// Combines `v` over the lanes of `mask`: a butterfly when the whole warp is active, in
    /// lane order otherwise.
    #[cfg(offload_gpu)]
    #[inline(always)]
    fn reduce_mask_by<T: Copy>(
        &self,
        v: T,
        mask: u64,
        read: impl Fn(T, u32, u64) -> T,
        combine: impl Fn(T, T) -> T,
    ) -> T {
        if mask == all_lanes(self.size) {
            let mut acc = v;
            let mut offset = self.size / 2;
            while offset > 0 {
                acc = combine(acc, read(acc, self.lane ^ offset, mask));
                offset /= 2;
            }
            acc
        } else {
            let first = mask.trailing_zeros();
            let mut acc = read(v, first, mask);
            let mut rest = mask & !(1u64 << first);
            while rest != 0 {
                let l = rest.trailing_zeros();
                acc = combine(acc, read(v, l, mask));
                rest &= rest - 1;
            }
            acc
        }
    }

    #[cfg(not(offload_gpu))]
    #[track_caller]
    fn reduce_emulated<K: ReduceOp, T: WarpValue + AtomicElem>(&self, v: T) -> T {
        let size = self.size as usize;
        self.exchange_and(v, |values, mask| {
            let mut lanes = [T::ZERO; 64];
            for (l, bits) in lanes.iter_mut().zip(values).take(size) {
                *l = T::from_bits64(*bits);
            }
            if mask == all_lanes(self.size) {
                let mut offset = size / 2;
                while offset > 0 {
                    let before = lanes;
                    for (l, acc) in lanes.iter_mut().enumerate().take(size) {
                        *acc = K::combine(before[l], before[l ^ offset]);
                    }
                    offset /= 2;
                }
                lanes[self.lane as usize]
            } else {
                let mut active = (0..size).filter(|&l| mask >> l & 1 == 1).map(|l| lanes[l]);
                let first = active.next().expect("the calling lane is active");
                active.fold(first, K::combine)
            }
        })
    }

    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    fn votes(&self, pred: bool, f: impl Fn(u64, u64) -> bool) -> bool {
        #[cfg(offload_gpu)]
        {
            f(gpu::ballot(pred), gpu::active())
        }
        #[cfg(not(offload_gpu))]
        {
            self.exchange_and(u32::from(pred), |values, mask| f(ballot_bits(values, mask), mask))
        }
    }

    /// The value of lane `src` if it is active, else `v`.
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    fn permute<T: WarpValue>(&self, v: T, src: u32) -> T {
        #[cfg(offload_gpu)]
        {
            let mask = gpu::active();
            let got = gpu::read_lane(v, src & (self.size - 1), mask);
            if src < self.size && mask >> src & 1 == 1 { got } else { v }
        }
        #[cfg(not(offload_gpu))]
        {
            self.exchange_and(v, |values, mask| {
                if src < self.size && mask >> src & 1 == 1 { T::from_bits64(values[src as usize]) } else { v }
            })
        }
    }

    /// CPU backend: meets the other active lanes of the emulated warp, then applies `f` to
    /// every lane's value and the active mask. On a GPU only `active` uses it.
    #[inline(always)]
    #[cfg_attr(not(offload_gpu), track_caller)]
    fn exchange_and<T: WarpValue, R>(&self, v: T, f: impl FnOnce(&[u64; 64], u64) -> R) -> R {
        #[cfg(offload_gpu)]
        {
            let _ = v;
            f(&[0; 64], gpu::active())
        }
        #[cfg(not(offload_gpu))]
        {
            // SAFETY: `emulated`'s contract keeps the exchange alive while `self` is.
            let sync = unsafe { &*self.sync };
            let (values, mask) = sync.exchange(self.lane, v.to_bits64(), core::panic::Location::caller());
            f(&values, mask)
        }
    }
}

/// The vendor primitives: active mask, lane id, warp size, ballot, and reading another
/// lane's register.
#[cfg(offload_gpu)]
pub(crate) mod gpu {
    use super::WarpValue;

    #[cfg(target_arch = "nvptx64")]
    #[allow(improper_ctypes)]
    unsafe extern "unadjusted" {
        #[link_name = "llvm.nvvm.activemask"]
        fn nvvm_activemask() -> u32;
        #[link_name = "llvm.nvvm.read.ptx.sreg.laneid"]
        fn nvvm_laneid() -> u32;
        #[link_name = "llvm.nvvm.vote.ballot.sync"]
        fn nvvm_ballot_sync(mask: u32, pred: bool) -> u32;
        #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
        fn nvvm_shfl_sync_idx(mask: u32, v: u32, lane: u32, clamp: u32) -> u32;
        #[link_name = "llvm.nvvm.bar.warp.sync"]
        fn nvvm_bar_warp_sync(mask: u32);
    }

    /// Waits until every lane in `mask` arrives (NVIDIA: lanes that diverged reconverge;
    /// AMD wavefronts run in lockstep, so there is nothing to wait for).
    #[inline(always)]
    pub fn sync(mask: u64) {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: callers pass lanes that all make this call and have not exited.
        unsafe {
            nvvm_bar_warp_sync(mask as u32)
        }
        #[cfg(target_arch = "amdgpu")]
        let _ = mask;
    }

    #[inline(always)]
    pub fn size() -> u32 {
        #[cfg(target_arch = "nvptx64")]
        {
            32
        }
        #[cfg(target_arch = "amdgpu")]
        {
            core::arch::amdgpu::wavefrontsize()
        }
    }

    #[inline(always)]
    pub fn lane() -> u32 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: reading `%laneid` has no preconditions.
        unsafe {
            nvvm_laneid()
        }
        #[cfg(target_arch = "amdgpu")]
        {
            use core::arch::amdgpu::{mbcnt_hi, mbcnt_lo};
            mbcnt_hi(u32::MAX, mbcnt_lo(u32::MAX, 0))
        }
    }

    #[inline(always)]
    pub fn active() -> u64 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: `activemask` has no preconditions.
        unsafe {
            u64::from(nvvm_activemask())
        }
        #[cfg(target_arch = "amdgpu")]
        {
            core::arch::amdgpu::ballot(true)
        }
    }

    #[inline(always)]
    pub fn ballot(pred: bool) -> u64 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: the mask is the set of lanes executing this very call (`activemask`), as
        // `vote.sync` requires.
        unsafe {
            u64::from(nvvm_ballot_sync(nvvm_activemask(), pred))
        }
        #[cfg(target_arch = "amdgpu")]
        {
            core::arch::amdgpu::ballot(pred)
        }
    }

    /// 32 bits of lane `src`'s value; `mask` is the set of active lanes, `src < size()`. An
    /// inactive `src` gives an unspecified value, which callers discard.
    #[inline(always)]
    fn read32(v: u32, src: u32, mask: u64) -> u32 {
        #[cfg(target_arch = "nvptx64")]
        // SAFETY: `mask` names exactly the lanes executing this call, as `shfl.sync` requires;
        // `src` is below 32 and the clamp value 31 keeps the read inside the warp.
        unsafe {
            nvvm_shfl_sync_idx(mask as u32, v, src, 31)
        }
        #[cfg(target_arch = "amdgpu")]
        {
            let _ = mask;
            // SAFETY: `ds_bpermute` reads lane `src` (a byte address, 4 per lane) of the
            // wavefront; an inactive lane reads as 0. It has no memory-safety preconditions.
            unsafe { core::arch::amdgpu::ds_bpermute(src * 4, v) }
        }
    }

    #[inline(always)]
    pub fn read_lane<T: WarpValue>(v: T, src: u32, mask: u64) -> T {
        let bits = v.to_bits64();
        let lo = u64::from(read32(bits as u32, src, mask));
        if T::WIDE {
            let hi = u64::from(read32((bits >> 32) as u32, src, mask));
            T::from_bits64(hi << 32 | lo)
        } else {
            T::from_bits64(lo)
        }
    }
}
