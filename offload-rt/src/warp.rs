//! Warp (NVIDIA) and wavefront (AMD) operations: a kernel takes a [`Warp`] parameter and
//! uses it to exchange values between the threads ("lanes") that the hardware runs in
//! lockstep — shuffles, votes and reductions without shared memory or barriers.
//!
//! The same code runs on 32-wide NVIDIA warps, 64-wide AMD wavefronts (32-wide on RDNA) and
//! the CPU backend (32 lanes, or `OFFLOAD_CPU_WARP_SIZE=64`): write it against
//! [`Warp::size`] and [`Warp::lane`], never against a constant 32.
//!
//! Every operation acts on all lanes of the warp — fewer than [`Warp::size`] only in the last,
//! partial warp of a block whose size is not a multiple of the warp size — and every lane
//! must make the call: the kernels macro accepts warp operations only in warp-uniform control
//! flow (not under a branch, loop or early return that depends on the lane or on data), so
//! that all lanes meet at each one; the CPU backend checks it again at run time. A shuffle from
//! a lane that does not exist returns the caller's own value.
//!
//! Blocks of whole warps cost least: a kernel that takes a `Warp` is compiled twice, and a
//! launch whose blocks have a multiple of 64 threads (of 32 on NVIDIA) runs the copy in which
//! shuffles down, up and xor, votes, matches and reductions name all lanes as a constant — on
//! NVIDIA one `shfl.sync` with an immediate mask per 32 bits, as CUDA's
//! `__shfl_down_sync(0xffffffff, …)`, where a block with a partial warp works out which lanes
//! exist and `ptxas` checks the warp's convergence around each operation. (An indexed
//! [`Warp::shuffle`] works the lanes out in both copies: see its body.)

use crate::arch;
use crate::atomic::AtomicElem;
use crate::lane::{collective, wait};
use crate::reduce::{MaxOp, MinOp, ReduceOp, SumOp};

mod sealed {
    pub trait Sealed {}
}

/// Values that lanes can exchange: `i32`, `u32`, `f32`, `i64`, `u64`, `f64`.
pub trait WarpValue: sealed::Sealed + Copy + Unpin {
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
    /// Whether the launch's blocks are whole warps, so that every warp has all its lanes: a
    /// constant in each entry point (the kernels macro makes one for launches of whole warps),
    /// which lets a GPU name the lanes of its collectives as a constant, not compute them.
    whole: bool,
}

impl Warp {
    /// The calling thread's warp.
    ///
    /// # Safety
    ///
    /// Only for generated kernel entry points (the value is a capability the kernels macro
    /// tracks: warp operations through a `Warp` it does not see could skip its checks).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn current() -> Warp {
        // SAFETY: the caller's contract; `false` claims nothing of the launch.
        unsafe { Warp::current_in(false) }
    }

    /// The calling thread's warp, in a launch whose blocks are all whole warps if `whole`.
    ///
    /// # Safety
    ///
    /// As [`Warp::current`]; with `whole`, every block of the launch has a multiple of the
    /// warp size threads (the runtime launches such an entry point only then): otherwise the
    /// collectives would name lanes that do not exist, undefined behaviour on NVIDIA.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn current_in(whole: bool) -> Warp {
        Warp { lane: arch::lane_id(), size: arch::warp_size(), whole }
    }

    /// The lanes this warp's collectives name: every lane when the launch's blocks are whole
    /// warps (a constant), else those that exist.
    #[inline(always)]
    fn lanes(&self) -> arch::Lanes {
        if self.whole { arch::whole_warp() } else { Self::existing() }
    }

    /// The lanes that exist, as the collectives take them.
    #[cfg(offload_gpu)]
    #[inline(always)]
    fn existing() -> arch::Lanes {
        arch::warp_lanes()
    }

    /// The CPU backend's warps know their lanes: nothing to pass.
    #[cfg(not(offload_gpu))]
    #[inline(always)]
    fn existing() -> arch::Lanes {
        arch::Lanes
    }

    /// Lanes per warp: 32 on NVIDIA, 64 on AMD CDNA (`gfx9xx`), 32 on AMD RDNA, 32 on the CPU
    /// backend unless `OFFLOAD_CPU_WARP_SIZE=64`. The same for every thread of a launch.
    #[inline(always)]
    pub fn size(&self) -> u32 {
        self.size
    }

    /// This thread's lane, `0..size()`: its index within the block modulo the warp size.
    #[inline(always)]
    pub fn lane(&self) -> u32 {
        self.lane
    }

    /// The lanes of this warp, one bit per lane: all `size()` of them but in a block's last,
    /// partial warp.
    #[inline(always)]
    pub fn active(&self) -> u64 {
        #[cfg(offload_gpu)]
        return self.lanes();
        #[cfg(not(offload_gpu))]
        return arch::warp_lanes();
    }

    collective! {
        at site;
        /// One bit per lane whose `pred` is true.
        pub fn ballot(&self, pred: bool) -> u64 {
            wait!(arch::ballot(pred, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// Whether `pred` holds on every lane.
        pub fn all(&self, pred: bool) -> bool {
            wait!(arch::ballot(pred, self.lanes(), site)) == self.active()
        }
    }

    collective! {
        at site;
        /// Whether `pred` holds on some lane.
        pub fn any(&self, pred: bool) -> bool {
            wait!(arch::ballot(pred, self.lanes(), site)) != 0
        }
    }

    collective! {
        at site;
        /// The lanes whose `v` equals this lane's, one bit per lane (this lane's own bit
        /// included): CUDA's `__match_any_sync`. Lanes with equal values get the same mask, so
        /// the lowest lane of each group (`peers.trailing_zeros()`) can act for it — as a radix
        /// sort's ranking does for the keys of one digit. One instruction on NVIDIA
        /// (`match.any.sync`); on AMD a ballot per distinct value in the warp.
        pub fn peers(&self, v: u32) -> u64 {
            wait!(arch::peers(v, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// The lanes whose `v` agrees with this lane's in its low `bits` bits (`bits` above 32
        /// counts as 32; 0 bits: every lane), one bit per lane: [`peers`](Self::peers) of
        /// `v`'s low bits. On a GPU it takes one ballot per bit: for a few bits (a radix sort's 8-bit
        /// digit) cheaper on NVIDIA than the single `match.any.sync` of `peers`, whose
        /// throughput is low — the matching CUB's radix ranking uses. Pass `bits` as a constant,
        /// so that the ballots unroll.
        pub fn peers_low_bits(&self, v: u32, bits: u32) -> u64 {
            wait!(arch::peers_low_bits(v, bits, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// The value of lane `src` (this lane's own `v` when there is no lane `src`).
        pub fn shuffle<T: WarpValue>(&self, v: T, src: u32) -> T {
            // (Over the lanes that exist, worked out even in a launch of whole warps: with a
            // constant mask, `ptxas` drops the convergence check that otherwise keeps a radix
            // sort's twelve ranking rounds, each a match, an atomic and this shuffle, apart,
            // interleaves them and spills 136 bytes a thread at 80 registers.)
            wait!(arch::shuffle(v, src, Self::existing(), site))
        }
    }

    collective! {
        at site;
        /// The value of the lowest lane of `from`, one bit per lane (this lane's own `v` when
        /// `from` names no lane of the warp): a group's first lane hands its value to the
        /// group, as after [`peers`](Self::peers), where the first lane of each group of equal
        /// values acts for it (a warp-aggregated atomic: one atomic per group, its result
        /// handed back). Unlike [`shuffle`](Self::shuffle) of `from.trailing_zeros()`, the
        /// lane read is known to exist whenever `from` names one, which spares a check.
        pub fn shuffle_first<T: WarpValue>(&self, v: T, from: u64) -> T {
            wait!(arch::shuffle_first(v, from, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// The value of lane `lane() ^ mask` (butterfly exchange).
        pub fn shuffle_xor<T: WarpValue>(&self, v: T, mask: u32) -> T {
            wait!(arch::shuffle_xor(v, self.lane, mask, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// The value of lane `lane() + delta` (own value past the last lane).
        pub fn shuffle_down<T: WarpValue>(&self, v: T, delta: u32) -> T {
            wait!(arch::shuffle_down(v, self.lane, delta, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// The value of lane `lane() - delta` (own value before lane 0).
        pub fn shuffle_up<T: WarpValue>(&self, v: T, delta: u32) -> T {
            wait!(arch::shuffle_up(v, self.lane, delta, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// The sum of `v` over the warp's lanes, returned to every one of them. Over a whole
        /// warp it is a butterfly (`size / 2`, …, 2, 1 apart); over a partial one the lanes'
        /// values are added in lane order — the same association on every backend.
        pub fn sum<T: WarpValue + AtomicElem>(&self, v: T) -> T {
            wait!(arch::reduce::<SumOp, T>(v, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// The minimum of `v` over the warp's lanes (see [`Warp::sum`]).
        pub fn min<T: WarpValue + AtomicElem>(&self, v: T) -> T {
            wait!(arch::reduce::<MinOp, T>(v, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// The maximum of `v` over the warp's lanes (see [`Warp::sum`]).
        pub fn max<T: WarpValue + AtomicElem>(&self, v: T) -> T {
            wait!(arch::reduce::<MaxOp, T>(v, self.lanes(), site))
        }
    }

    collective! {
        at site;
        /// Combines `v` over the warp's lanes with `K` (see [`Warp::sum`]).
        #[doc(hidden)]
        pub fn reduce<K: ReduceOp, T: WarpValue + AtomicElem>(&self, v: T) -> T {
            wait!(arch::reduce::<K, T>(v, self.lanes(), site))
        }
    }
}

/// The warp operations in parts, for the CPU backend's lockstep copy of a kernel (the kernels
/// macro calls these where the kernel calls the operations; see `offload::__private::Lockstep`):
/// each gives the lane's value and what the warp and the lane make of all of them, waiting for
/// nothing.
#[cfg(not(offload_gpu))]
#[doc(hidden)]
#[allow(missing_docs)]
impl Warp {
    #[inline(always)]
    pub fn __lockstep_ballot(
        &self,
        pred: bool,
    ) -> arch::WarpOp<impl arch::LaneAll + use<>, impl arch::LaneRead<u64> + use<>> {
        arch::ballot_op(pred)
    }
    #[inline(always)]
    pub fn __lockstep_all(
        &self,
        pred: bool,
    ) -> arch::WarpOp<impl arch::LaneAll + use<>, impl arch::LaneRead<bool> + use<>> {
        arch::ballot_op(pred).map(|b, w| b == w.lanes)
    }
    #[inline(always)]
    pub fn __lockstep_any(
        &self,
        pred: bool,
    ) -> arch::WarpOp<impl arch::LaneAll + use<>, impl arch::LaneRead<bool> + use<>> {
        arch::ballot_op(pred).map(|b, _| b != 0)
    }
    #[inline(always)]
    pub fn __lockstep_peers(
        &self,
        v: u32,
    ) -> arch::WarpOp<impl arch::LaneAll + use<>, impl arch::LaneRead<u64> + use<>> {
        arch::peers_op(v)
    }
    #[inline(always)]
    pub fn __lockstep_peers_low_bits(
        &self,
        v: u32,
        bits: u32,
    ) -> arch::WarpOp<impl arch::LaneAll + use<>, impl arch::LaneRead<u64> + use<>> {
        arch::peers_op(v & arch::lanes_below(bits.min(32)) as u32)
    }
    #[inline(always)]
    pub fn __lockstep_shuffle<T: WarpValue>(
        &self,
        v: T,
        src: u32,
    ) -> arch::WarpOp<impl arch::LaneAll + use<T>, impl arch::LaneRead<T> + use<T>> {
        arch::shuffle_op(v, src)
    }
    #[inline(always)]
    pub fn __lockstep_shuffle_first<T: WarpValue>(
        &self,
        v: T,
        from: u64,
    ) -> arch::WarpOp<impl arch::LaneAll + use<T>, impl arch::LaneRead<T> + use<T>> {
        arch::shuffle_first_op(v, from)
    }
    #[inline(always)]
    pub fn __lockstep_shuffle_xor<T: WarpValue>(
        &self,
        v: T,
        mask: u32,
    ) -> arch::WarpOp<impl arch::LaneAll + use<T>, impl arch::LaneRead<T> + use<T>> {
        arch::shuffle_op(v, self.lane ^ mask)
    }
    #[inline(always)]
    pub fn __lockstep_shuffle_down<T: WarpValue>(
        &self,
        v: T,
        delta: u32,
    ) -> arch::WarpOp<impl arch::LaneAll + use<T>, impl arch::LaneRead<T> + use<T>> {
        arch::shuffle_op(v, self.lane.saturating_add(delta))
    }
    #[inline(always)]
    pub fn __lockstep_shuffle_up<T: WarpValue>(
        &self,
        v: T,
        delta: u32,
    ) -> arch::WarpOp<impl arch::LaneAll + use<T>, impl arch::LaneRead<T> + use<T>> {
        arch::shuffle_op(v, self.lane.checked_sub(delta).unwrap_or(u32::MAX))
    }
    #[inline(always)]
    pub fn __lockstep_sum<T: WarpValue + AtomicElem>(
        &self,
        v: T,
    ) -> arch::WarpOp<impl arch::LaneAll + use<T>, impl arch::LaneRead<T> + use<T>> {
        arch::reduce_op::<SumOp, T>(v)
    }
    #[inline(always)]
    pub fn __lockstep_min<T: WarpValue + AtomicElem>(
        &self,
        v: T,
    ) -> arch::WarpOp<impl arch::LaneAll + use<T>, impl arch::LaneRead<T> + use<T>> {
        arch::reduce_op::<MinOp, T>(v)
    }
    #[inline(always)]
    pub fn __lockstep_max<T: WarpValue + AtomicElem>(
        &self,
        v: T,
    ) -> arch::WarpOp<impl arch::LaneAll + use<T>, impl arch::LaneRead<T> + use<T>> {
        arch::reduce_op::<MaxOp, T>(v)
    }
    #[inline(always)]
    pub fn __lockstep_reduce<K: ReduceOp, T: WarpValue + AtomicElem>(
        &self,
        v: T,
    ) -> arch::WarpOp<impl arch::LaneAll + use<K, T>, impl arch::LaneRead<T> + use<K, T>> {
        arch::reduce_op::<K, T>(v)
    }
}
