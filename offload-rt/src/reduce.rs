//! Reductions to a scalar: kernel parameters [`Sum<T>`], [`Min<T>`] and [`Max<T>`]. Each
//! thread folds values into its own accumulator; when the kernel returns, the generated entry
//! point combines the block's accumulators with warp shuffles and shared memory and adds one
//! atomic update per block to the result (the CPU backend updates the result atomically per
//! thread). The host passes `&mut T`, which ends up combined with every contribution (start
//! from 0 for a sum).
//!
//! On a GPU a sum's result is spread over up to [`RESULT_SLOTS`] copies ("slots"),
//! [`SLOT_BYTES`] apart: block `b` updates slot `b mod slots`, and the host combines the slots
//! after the copy back. Atomic updates of one address are serialised where the memory system
//! executes them, so one address per result makes every block of a large launch wait for the
//! others; a few addresses a cache line or more apart let their updates proceed in parallel
//! (`results/README.md` has the measurement).
//!
//! [`MinLoc<T>`] and [`MaxLoc<T>`] reduce a value *and where it was found*: the host passes a
//! `&mut` [`Loc<T>`], which ends up holding the smallest (largest) value and, among equal
//! values, the smallest index — the first occurrence, whatever order the threads ran in.
//!
//! When a kernel has several reduction parameters, their block combines are fused (see
//! [`BlockCommit`]): one barrier per block for all of them.

use crate::atomic::AtomicElem;

/// The most slots a GPU launch spreads a reduction result over (a power of two; a launch of
/// fewer blocks uses fewer).
#[cfg_attr(offload_gpu, allow(dead_code))]
pub(crate) const RESULT_SLOTS: usize = 8;

/// Bytes between a result's slots: each slot in its own 128-byte line, so that the slots'
/// atomic updates proceed in parallel (at 8 bytes apart they still contend: 105 µs for 32
/// slots in the measurement above).
pub(crate) const SLOT_BYTES: usize = 128;

macro_rules! reducer {
    ($(#[$doc:meta])* $name:ident, $op:ident, $method:ident, $identity:ident, $combine:expr, $atomic:ident, $idempotent:expr, $zero:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T: AtomicElem> {
            acc: &'a mut T,
        }

        impl<'a, T: AtomicElem> $name<'a, T> {
            #[doc(hidden)]
            #[inline(always)]
            pub fn new(acc: &'a mut T) -> Self {
                $name { acc }
            }

            /// Folds `v` into this thread's contribution.
            #[inline(always)]
            pub fn $method(&mut self, v: T) {
                *self.acc = <$op as ReduceOp>::combine(*self.acc, v);
            }
        }

        #[doc(hidden)]
        #[derive(Debug)]
        pub struct $op;

        impl ReduceOp for $op {
            const IDEMPOTENT: bool = $idempotent;
            const ZERO_IDENTITY: bool = $zero;
            #[inline(always)]
            fn identity<T: AtomicElem>() -> T {
                T::$identity
            }
            #[inline(always)]
            fn combine<T: AtomicElem>(a: T, b: T) -> T {
                $combine(a, b)
            }
            #[inline(always)]
            unsafe fn atomic<T: AtomicElem>(p: *mut T, v: T) {
                // SAFETY: forwarded from the caller.
                unsafe { T::$atomic(p, v) };
            }
        }
    };
}

/// How a reduction combines values: `combine` is commutative, and associative on integers
/// (the CPU backend combines a warp's integers once, in lane order, for every lane).
#[doc(hidden)]
pub trait ReduceOp {
    /// Whether combining a value with itself gives the value (minimum, maximum).
    const IDEMPOTENT: bool;
    /// Whether the identity is all-zero bytes for every `T` (a sum's `ZERO`: `0` or `0.0`, the
    /// only `AtomicElem` types being primitive integers and floats).
    const ZERO_IDENTITY: bool;
    fn identity<T: AtomicElem>() -> T;
    fn combine<T: AtomicElem>(a: T, b: T) -> T;
    /// # Safety
    /// `p` must be valid, aligned, and accessed only atomically while others may use it.
    unsafe fn atomic<T: AtomicElem>(p: *mut T, v: T);
}

fn add_elems<T: AtomicElem>(a: T, b: T) -> T {
    a.plus(b)
}

fn smaller<T: AtomicElem>(a: T, b: T) -> T {
    if b < a { b } else { a }
}

fn larger<T: AtomicElem>(a: T, b: T) -> T {
    if b > a { b } else { a }
}

reducer!(
    /// A sum over all threads: `total.add(v)`.
    Sum, SumOp, add, ZERO, add_elems, fetch_add, false, true
);
reducer!(
    /// A minimum over all threads: `lowest.min(v)`.
    Min, MinOp, min, HIGHEST, smaller, fetch_min, true, false
);
reducer!(
    /// A maximum over all threads: `highest.max(v)`.
    Max, MaxOp, max, LOWEST, larger, fetch_max, true, false
);

/// How generated code combines and commits a reduction's accumulators of type `T`.
#[doc(hidden)]
pub trait Reduction<T: Copy> {
    /// Whether `combine(a, a) == a` (minima and maxima, with or without location): such
    /// results are not spread over slots (see [`RESULT_SLOTS`] and the host's `Launch::reduce`).
    const IDEMPOTENT: bool;
    /// Whether [`identity`](Reduction::identity) is all-zero bytes (a sum's): the host then
    /// zeroes the device's slots instead of copying identities to them.
    const ZERO_IDENTITY: bool = false;
    fn identity() -> T;
    /// Associative and commutative.
    fn combine(a: T, b: T) -> T;
    /// Combines `v` into the result at `out`.
    ///
    /// # Safety
    /// `out` must be valid, aligned, and only accessed through `update` (or atomically) while
    /// others may use it.
    unsafe fn update(out: *mut T, v: T);
    /// Combines `v` over the lanes of the caller's warp, all of which make this call.
    #[cfg(offload_gpu)]
    fn warp_reduce(v: T) -> T;
}

impl<K: ReduceOp, T: AtomicElem> Reduction<T> for K {
    const IDEMPOTENT: bool = K::IDEMPOTENT;
    const ZERO_IDENTITY: bool = K::ZERO_IDENTITY;
    #[inline(always)]
    fn identity() -> T {
        K::identity()
    }
    #[inline(always)]
    fn combine(a: T, b: T) -> T {
        K::combine(a, b)
    }
    #[inline(always)]
    unsafe fn update(out: *mut T, v: T) {
        // SAFETY: forwarded from the caller.
        unsafe { K::atomic(out, v) }
    }
    #[cfg(offload_gpu)]
    #[inline(always)]
    fn warp_reduce(v: T) -> T {
        let lanes = crate::arch::warp_lanes();
        // Lanes that took different paths through the kernel meet here first, so that the
        // shuffles run with the warp converged (without it RAJAPerf's FIRST_MIN ran 5× slower
        // on an H200).
        crate::arch::warp_sync(lanes);
        crate::arch::reduce_by(v, lanes, crate::arch::read_lane, K::combine::<T>)
    }
}

/// The block-wide combine of a kernel's reductions, run by the generated entry point after the
/// kernel returns, by every thread of the block. With several reductions the steps are fused:
/// each value is reduced across its warp with shuffles, every warp's lane 0 stages all its
/// partial values in shared memory, **one** barrier, then the first warp combines each value
/// and one thread per block updates each result atomically. (Committing the reductions one
/// after the other costs a barrier each.)
#[doc(hidden)]
#[cfg(offload_gpu)]
#[derive(Debug)]
pub struct BlockCommit {
    /// This thread's lane and the warp size.
    lane: u32,
    size: u32,
    /// This thread's linear index in the block.
    tid: usize,
    /// Warps in the block.
    warps: usize,
}

#[cfg(offload_gpu)]
impl BlockCommit {
    /// The commit of the calling thread.
    ///
    /// # Safety
    ///
    /// Generated entry points only: every thread of the block makes the commit's calls, in
    /// the same order, after the kernel returns.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn new() -> Self {
        use crate::index::*;
        let threads = (block_dim_x() * block_dim_y() * block_dim_z()) as usize;
        let tid =
            (thread_idx_x() + block_dim_x() * (thread_idx_y() + block_dim_y() * thread_idx_z())) as usize;
        let size = crate::arch::warp_size();
        BlockCommit { lane: crate::arch::lane_id(), size, tid, warps: threads.div_ceil(size as usize) }
    }

    /// This thread's warp's combined value of `acc`. Every lane of the block is here (the
    /// kernel has returned); lanes that diverged in it meet again at the first shuffle, which
    /// waits for every lane of the warp.
    #[doc(hidden)]
    #[inline(always)]
    pub fn warp_value<K: Reduction<T>, T: Copy>(&self, acc: T) -> T {
        K::warp_reduce(acc)
    }

    /// Whether the block is one warp: its warp value is the block's, no shared memory needed.
    #[doc(hidden)]
    #[inline(always)]
    pub fn single_warp(&self) -> bool {
        self.warps == 1
    }

    /// Combines the block's value `v` (from [`warp_value`](Self::warp_value) of a one-warp block,
    /// or from [`combine`](Self::combine)) to this block's slot of the result at `out`: thread
    /// 0 only. Block `b` (linear over the grid) takes slot `b mod slots`; an idempotent
    /// reduction (a minimum, a maximum) always has one slot and computes none (the few
    /// instructions took RAJAPerf's FIRST_MIN from 31 to 34 registers, past the 32 at which
    /// blocks of 256 threads fill an SM; it took 1.3 of its time on an H200 with them).
    ///
    /// # Safety
    ///
    /// `slots` must be a power of two (1 if `K` is idempotent), and `out` the first of `slots`
    /// results, [`SLOT_BYTES`] apart, each valid, aligned and only accessed through
    /// `K::update` during the kernel.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn publish<K: Reduction<T>, T: Copy>(&self, v: T, out: *mut T, slots: usize) {
        if self.tid == 0 {
            let out = if K::IDEMPOTENT {
                out
            } else {
                use crate::index::*;
                let block = block_idx_x() + grid_dim_x() * (block_idx_y() + grid_dim_y() * block_idx_z());
                // SAFETY: `block mod slots < slots`: one of the caller's results.
                unsafe { out.byte_add((block as usize & (slots - 1)) * SLOT_BYTES) }
            };
            // SAFETY: forwarded from the caller.
            unsafe { K::update(out, v) };
        }
    }

    /// The block barrier between [`stage`](Self::stage) and [`combine`](Self::combine).
    #[doc(hidden)]
    #[inline(always)]
    #[track_caller]
    pub fn barrier(&self) {
        crate::arch::barrier(core::panic::Location::caller());
    }

    /// Stages this warp's value (lane 0 writes it) in the shared memory at `offset` bytes.
    ///
    /// # Safety
    ///
    /// The launch must provide `offset + threads × size_of::<T>()` bytes of dynamic shared
    /// memory, which nothing else uses during the commit, and a barrier must follow before
    /// [`combine`](Self::combine) reads it.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn stage<T: Copy>(&self, v: T, offset: usize) {
        if self.lane == 0 {
            // SAFETY: the slots lie in the launch's shared memory (the caller's contract) and
            // `tid / size < warps <= threads`: each warp's lane 0 writes its own slot.
            unsafe { self.slots::<T>(offset).add(self.tid / self.size as usize).write(v) };
        }
    }

    /// After the barrier: the first warp combines the staged values at `offset` and thread 0
    /// combines the block's value into `out`.
    ///
    /// # Safety
    ///
    /// As for [`stage`](Self::stage) (every warp staged at `offset`, then a barrier) and
    /// [`publish`](Self::publish).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn combine<K: Reduction<T>, T: Copy>(&self, offset: usize, out: *mut T, slots: usize) {
        let size = self.size as usize;
        if self.tid < size {
            // SAFETY: slot `tid < warps` was written before the barrier; nobody writes now.
            let partial = if self.tid < self.warps {
                unsafe { self.slots::<T>(offset).add(self.tid).read() }
            } else {
                K::identity()
            };
            // (The first warp: all its lanes are here.)
            let total = K::warp_reduce(partial);
            // SAFETY: forwarded from the caller.
            unsafe { self.publish::<K, T>(total, out, slots) };
        }
    }

    /// # Safety
    /// `offset` must lie within the launch's dynamic shared memory.
    #[inline(always)]
    unsafe fn slots<T>(&self, offset: usize) -> *mut T {
        // SAFETY: forwarded from the caller.
        unsafe { crate::arch::shared_base().add(offset).cast::<T>() }
    }
}

/// A value and the index where it was found: the result of a [`MinLoc`] or [`MaxLoc`]
/// reduction. Make it with [`Loc::new`] (RAJAPerf's FIRST_MIN starts from `Loc::new(x[0], 0)`;
/// [`Loc::min_identity`]/[`Loc::max_identity`] start from nothing).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Loc<T> {
    /// The smallest (largest) value.
    pub value: T,
    /// Where it was found: the smallest index among equal values.
    pub index: usize,
    /// Serialises the GPU's block results (0 outside a launch).
    lock: u32,
}

impl<T: AtomicElem> Loc<T> {
    /// `value` found at `index`.
    pub const fn new(value: T, index: usize) -> Self {
        Loc { value, index, lock: 0 }
    }

    /// The start of a minimum: every value found replaces it (`T`'s largest value, or
    /// infinity, at index `usize::MAX`).
    pub const fn min_identity() -> Self {
        Loc::new(T::HIGHEST, usize::MAX)
    }

    /// The start of a maximum (see [`Loc::min_identity`]).
    pub const fn max_identity() -> Self {
        Loc::new(T::LOWEST, usize::MAX)
    }
}

/// Whether `a` wins over `b` in a location reduction: a strictly better value (`better`),
/// or an equal value at a smaller index; a value that is not NaN wins over NaN, a NaN never
/// wins (NaNs are ignored, as by `Min`/`Max`).
#[inline(always)]
#[expect(clippy::eq_op, reason = "`x != x` is the NaN test that works for every element type")]
fn wins<T: AtomicElem>(a: &Loc<T>, b: &Loc<T>, better: impl Fn(T, T) -> bool) -> bool {
    // `|` and `&`, not `||` and `&&`: every comparison is cheap and side-effect free, and
    // without short circuits the update is a few selects instead of a chain of branches that
    // each wait for the element's load (a grid-stride `min_at` loop then keeps no load in
    // flight while it decides).
    better(a.value, b.value)
        | (a.value == b.value) & (a.index < b.index)
        | (b.value != b.value) & (a.value == a.value)
}

macro_rules! loc_reducer {
    ($(#[$doc:meta])* $name:ident, $op:ident, $method:ident, $identity:ident, |$a:ident, $b:ident| $better:expr) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T: AtomicElem> {
            acc: &'a mut Loc<T>,
        }

        impl<'a, T: AtomicElem> $name<'a, T> {
            #[doc(hidden)]
            #[inline(always)]
            pub fn new(acc: &'a mut Loc<T>) -> Self {
                $name { acc }
            }

            /// Folds in `value`, found at `index`.
            #[inline(always)]
            pub fn $method(&mut self, value: T, index: usize) {
                *self.acc = <$op as Reduction<Loc<T>>>::combine(*self.acc, Loc::new(value, index));
            }
        }

        #[doc(hidden)]
        #[derive(Debug)]
        pub struct $op;

        impl $op {
            #[inline(always)]
            fn better<T: AtomicElem>($a: T, $b: T) -> bool {
                $better
            }
        }

        impl<T: AtomicElem> Reduction<Loc<T>> for $op {
            const IDEMPOTENT: bool = true;
            #[inline(always)]
            fn identity() -> Loc<T> {
                Loc::$identity()
            }
            #[inline(always)]
            fn combine(a: Loc<T>, b: Loc<T>) -> Loc<T> {
                if wins(&b, &a, Self::better) { b } else { a }
            }
            #[inline(always)]
            unsafe fn update(out: *mut Loc<T>, v: Loc<T>) {
                // SAFETY: forwarded from the caller.
                unsafe { update_loc(out, v, Self::better) }
            }
            #[cfg(offload_gpu)]
            #[inline(always)]
            fn warp_reduce(v: Loc<T>) -> Loc<T> {
                use crate::arch::read_lane;
                let read = |l: Loc<T>, src, mask| {
                    Loc::new(read_lane(l.value, src, mask), read_lane(l.index as u64, src, mask) as usize)
                };
                let lanes = crate::arch::warp_lanes();
                crate::arch::warp_sync(lanes);
                crate::arch::reduce_by(v, lanes, read, Self::combine)
            }
        }
    };
}

loc_reducer!(
    /// The minimum over all threads and where it is: `lowest.min_at(v, i)`. Ties go to the
    /// smallest index.
    MinLoc, MinLocOp, min_at, min_identity, |a, b| a < b
);
loc_reducer!(
    /// The maximum over all threads and where it is: `highest.max_at(v, i)`. Ties go to the
    /// smallest index.
    MaxLoc, MaxLocOp, max_at, max_identity, |a, b| a > b
);

/// Combines `v` into the location result at `out`. The stored pair only ever gets better, so
/// a `v` whose value is worse than the stored one is dropped after one load, one with an equal
/// value after reading the stored index too; otherwise the update happens under the result's
/// lock (value and index change together).
///
/// The loads race with updates: the value is read first, the index after an acquire fence,
/// and an update writes the index before the value (release fence between). So the index read
/// is that of the value read or of a later, better pair — and any pair that `v` fails to beat
/// with it is beaten by what is stored by then.
///
/// # Safety
///
/// `out` must be valid and aligned, and during the kernel only accessed through this function.
#[inline(always)]
unsafe fn update_loc<T: AtomicElem>(out: *mut Loc<T>, v: Loc<T>, better: impl Fn(T, T) -> bool + Copy) {
    use core::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
    // SAFETY: `out` is valid (the caller's contract); only field addresses are taken.
    let (value, index, lock) =
        unsafe { (&raw mut (*out).value, &raw mut (*out).index, &raw mut (*out).lock) };
    // SAFETY: `lock` and `index` are valid and aligned fields of `*out`, only used atomically.
    let (lock, index) = unsafe { (AtomicU32::from_ptr(lock), AtomicUsize::from_ptr(index)) };
    // SAFETY: every access to the value during the kernel is atomic (the caller's contract).
    let seen = unsafe { T::load(value) };
    // A worse value never wins (no fence needed); an equal one needs the stored index.
    let tie = v.value == seen;
    if !(tie || wins(&v, &Loc::new(seen, usize::MAX), better)) {
        return;
    }
    if tie {
        crate::arch::device_fence(Ordering::Acquire);
        if !wins(&v, &Loc::new(seen, index.load(Ordering::Relaxed)), better) {
            return;
        }
    }
    // Waiting for the lock, drop `v` as soon as the stored value beats it: the stored pair
    // only gets better, so `v` would lose under the lock too. When every block of a resident
    // grid finishes at once, all of them see the start value and queue here; without this,
    // each took the lock in turn only to find itself beaten (RAJAPerf's FIRST_MIN at 2^25
    // on an H200: 2.6× CUDA's time, the blocks' turns through the lock most of it). A
    // holder's update is visible to the waiters' loads within a few turns, so only the few
    // blocks that really improve the result take the lock.
    loop {
        if lock.load(Ordering::Relaxed) == 0
            && lock.compare_exchange_weak(0, 1, Ordering::Acquire, Ordering::Relaxed).is_ok()
        {
            break;
        }
        core::hint::spin_loop();
        // SAFETY: as above.
        if better(unsafe { T::load(value) }, v.value) {
            return;
        }
    }
    // SAFETY: as above; the lock orders these accesses after the previous holder's.
    let current = Loc::new(unsafe { T::load(value) }, index.load(Ordering::Relaxed));
    if wins(&v, &current, better) {
        index.store(v.index, Ordering::Relaxed);
        crate::arch::device_fence(Ordering::Release);
        // SAFETY: as above.
        unsafe { T::swap(value, v.value) };
    }
    lock.store(0, Ordering::Release);
}

#[cfg(all(test, not(offload_gpu)))]
mod tests {
    use super::*;

    #[test]
    fn a_location_wins_by_value_then_by_lower_index_and_nan_never_wins() {
        let lower = |a: f64, b: f64| a < b;
        let w = |a: (f64, usize), b: (f64, usize)| wins(&Loc::new(a.0, a.1), &Loc::new(b.0, b.1), lower);
        assert!(w((1.0, 9), (2.0, 0)));
        assert!(!w((2.0, 0), (1.0, 9)));
        assert!(w((1.0, 3), (1.0, 4)));
        assert!(!w((1.0, 4), (1.0, 3)));
        assert!(!w((1.0, 4), (1.0, 4)));
        assert!(w((5.0, 7), (f64::NAN, 0)), "a number beats NaN");
        assert!(!w((f64::NAN, 0), (5.0, 7)), "NaN never wins");
        assert!(!w((f64::NAN, 0), (f64::NAN, 1)));
        // The combine keeps the winner either way round.
        let (a, b) = (Loc::new(1.0f64, 3), Loc::new(1.0, 2));
        assert_eq!(MinLocOp::combine(a, b).index, 2);
        assert_eq!(MinLocOp::combine(b, a).index, 2);
    }
}
