//! Atomic updates of arrays shared by all threads: [`Atomics<T>`] for scatter updates
//! (histograms, accumulations at computed indices), and the element operations reductions use.

use crate::arch::Word;
use core::marker::PhantomData;
use core::sync::atomic::Ordering::Relaxed;
use core::sync::atomic::{AtomicI32, AtomicI64, AtomicU32, AtomicU64};

/// Which threads an ordered atomic operation or a [`fence`](crate::fence) orders with: the
/// threads of the calling thread's block, of the whole device (every block of every launch on
/// the GPU), or of the system (the host too). A narrower scope is cheaper on NVIDIA; other
/// targets order at system scope whatever is asked, which is stronger.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MemoryScope {
    /// The threads of the calling thread's block.
    Block,
    /// Every thread on the device.
    Device,
    /// Every thread on the device and the host.
    System,
}

mod sealed {
    pub trait Sealed {}
}

/// Element types with atomic operations: `i32`, `u32`, `i64`, `u64` natively; `f32` and
/// `f64` with native addition on NVIDIA and compare-and-swap loops elsewhere.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be updated atomically on a GPU",
    label = "not an atomic element type",
    note = "atomic elements (`Atomics`, `SharedAtomics`, reductions) are `i32`, `u32`, `i64`, `u64`, `f32` and `f64`"
)]
pub trait AtomicElem: sealed::Sealed + Copy + PartialOrd + crate::warp::WarpValue {
    /// Zero, the largest and the smallest value: identities of sum, min and max.
    #[doc(hidden)]
    const ZERO: Self;
    #[doc(hidden)]
    const HIGHEST: Self;
    #[doc(hidden)]
    const LOWEST: Self;
    /// Whether sums, minima and maxima of the type come out the same in any order and grouping
    /// (integers: wrapping sums); for floats they do not.
    #[doc(hidden)]
    const EXACT: bool;
    #[doc(hidden)]
    fn plus(self, other: Self) -> Self;
    /// # Safety
    /// `p` must be valid, aligned, and accessed only atomically while others may use it.
    #[doc(hidden)]
    unsafe fn fetch_add(p: *mut Self, v: Self) -> Self;
    /// # Safety
    /// As for `fetch_add`.
    /// [`fetch_add`](AtomicElem::fetch_add) on block-shared memory.
    #[doc(hidden)]
    unsafe fn fetch_add_shared(p: *mut Self, v: Self) -> Self;
    #[doc(hidden)]
    unsafe fn fetch_min(p: *mut Self, v: Self) -> Self;
    /// # Safety
    /// As for `fetch_add`.
    #[doc(hidden)]
    unsafe fn fetch_max(p: *mut Self, v: Self) -> Self;
    /// # Safety
    /// As for `fetch_add`.
    #[doc(hidden)]
    unsafe fn swap(p: *mut Self, v: Self) -> Self;
    /// # Safety
    /// As for `fetch_add`.
    #[doc(hidden)]
    unsafe fn compare_exchange(p: *mut Self, current: Self, new: Self) -> Result<Self, Self>;
    /// # Safety
    /// As for `fetch_add`.
    #[doc(hidden)]
    unsafe fn load(p: *mut Self) -> Self;
    /// [`load`](AtomicElem::load) with acquire ordering at `scope`.
    #[doc(hidden)]
    unsafe fn load_acquire(p: *mut Self, scope: MemoryScope) -> Self;
    /// Stores `v` with release ordering at `scope`.
    #[doc(hidden)]
    unsafe fn store_release(p: *mut Self, v: Self, scope: MemoryScope);
    /// Stores `v` with relaxed ordering.
    #[doc(hidden)]
    unsafe fn store(p: *mut Self, v: Self);
}

macro_rules! int_elem {
    ($t:ty, $atomic:ident, $word:ty) => {
        impl sealed::Sealed for $t {}
        impl AtomicElem for $t {
            const ZERO: Self = 0;
            const HIGHEST: Self = <$t>::MAX;
            const LOWEST: Self = <$t>::MIN;
            const EXACT: bool = true;
            #[inline(always)]
            fn plus(self, other: Self) -> Self {
                self.wrapping_add(other)
            }
            #[inline(always)]
            unsafe fn fetch_add(p: *mut Self, v: Self) -> Self {
                // SAFETY: the caller guarantees `p` is valid, aligned and only used atomically.
                unsafe { $atomic::from_ptr(p) }.fetch_add(v, Relaxed)
            }
            #[inline(always)]
            unsafe fn fetch_add_shared(p: *mut Self, v: Self) -> Self {
                // SAFETY: as in `fetch_add` (integer atomics work in every address space).
                unsafe { Self::fetch_add(p, v) }
            }
            #[inline(always)]
            unsafe fn fetch_min(p: *mut Self, v: Self) -> Self {
                // SAFETY: as in `fetch_add`.
                unsafe { $atomic::from_ptr(p) }.fetch_min(v, Relaxed)
            }
            #[inline(always)]
            unsafe fn fetch_max(p: *mut Self, v: Self) -> Self {
                // SAFETY: as in `fetch_add`.
                unsafe { $atomic::from_ptr(p) }.fetch_max(v, Relaxed)
            }
            #[inline(always)]
            unsafe fn swap(p: *mut Self, v: Self) -> Self {
                // SAFETY: as in `fetch_add`.
                unsafe { $atomic::from_ptr(p) }.swap(v, Relaxed)
            }
            #[inline(always)]
            unsafe fn compare_exchange(p: *mut Self, current: Self, new: Self) -> Result<Self, Self> {
                // SAFETY: as in `fetch_add`.
                unsafe { $atomic::from_ptr(p) }.compare_exchange(current, new, Relaxed, Relaxed)
            }
            #[inline(always)]
            unsafe fn load(p: *mut Self) -> Self {
                // SAFETY: as in `fetch_add`.
                unsafe { $atomic::from_ptr(p) }.load(Relaxed)
            }
            #[inline(always)]
            unsafe fn load_acquire(p: *mut Self, scope: MemoryScope) -> Self {
                // SAFETY: as in `fetch_add`; the element is stored as a word of its size.
                unsafe { <$word as Word>::load_acquire(p.cast(), scope) as $t }
            }
            #[inline(always)]
            unsafe fn store_release(p: *mut Self, v: Self, scope: MemoryScope) {
                // SAFETY: as in `load_acquire`.
                unsafe { <$word as Word>::store_release(p.cast(), v as $word, scope) }
            }
            #[inline(always)]
            unsafe fn store(p: *mut Self, v: Self) {
                // SAFETY: as in `load_acquire`.
                unsafe { <$word as Word>::store_relaxed(p.cast(), v as $word) }
            }
        }
    };
}

int_elem!(i32, AtomicI32, u32);
int_elem!(u32, AtomicU32, u32);
int_elem!(i64, AtomicI64, u64);
int_elem!(u64, AtomicU64, u64);

macro_rules! float_elem {
    ($t:ty, $bits:ident, $add:ident, $add_shared:ident, $cas:ident) => {
        impl sealed::Sealed for $t {}
        impl AtomicElem for $t {
            const ZERO: Self = 0.0;
            const HIGHEST: Self = <$t>::INFINITY;
            const LOWEST: Self = <$t>::NEG_INFINITY;
            const EXACT: bool = false;
            #[inline(always)]
            fn plus(self, other: Self) -> Self {
                self + other
            }
            #[inline(always)]
            unsafe fn fetch_add(p: *mut Self, v: Self) -> Self {
                // SAFETY: the callers' contract: `p` is a valid, aligned address of global
                // memory (atomics views and reduction results are device allocations), only
                // accessed atomically.
                unsafe { crate::arch::$add(p, v) }
            }
            #[inline(always)]
            unsafe fn fetch_add_shared(p: *mut Self, v: Self) -> Self {
                // SAFETY: the caller's contract: `p` is a valid, aligned address of the
                // block's shared memory, only accessed atomically.
                unsafe { crate::arch::$add_shared(p, v) }
            }
            #[inline(always)]
            unsafe fn fetch_min(p: *mut Self, v: Self) -> Self {
                // SAFETY: as above.
                unsafe { crate::arch::$cas(p, |old| crate::math::min(old, v)) }
            }
            #[inline(always)]
            unsafe fn fetch_max(p: *mut Self, v: Self) -> Self {
                // SAFETY: as above.
                unsafe { crate::arch::$cas(p, |old| crate::math::max(old, v)) }
            }
            #[inline(always)]
            unsafe fn swap(p: *mut Self, v: Self) -> Self {
                // SAFETY: the callers' contract: `p` is valid, aligned and only used atomically.
                <$t>::from_bits(unsafe { $bits::from_ptr(p.cast()) }.swap(v.to_bits(), Relaxed))
            }
            #[inline(always)]
            unsafe fn compare_exchange(p: *mut Self, current: Self, new: Self) -> Result<Self, Self> {
                // SAFETY: as in `swap`.
                unsafe { $bits::from_ptr(p.cast()) }
                    .compare_exchange(current.to_bits(), new.to_bits(), Relaxed, Relaxed)
                    .map(<$t>::from_bits)
                    .map_err(<$t>::from_bits)
            }
            #[inline(always)]
            unsafe fn load(p: *mut Self) -> Self {
                // SAFETY: as in `swap`.
                <$t>::from_bits(unsafe { $bits::from_ptr(p.cast()) }.load(Relaxed))
            }
            #[inline(always)]
            unsafe fn load_acquire(p: *mut Self, scope: MemoryScope) -> Self {
                // SAFETY: as in `swap`; the value is stored as its bits.
                <$t>::from_bits(unsafe { Word::load_acquire(p.cast(), scope) })
            }
            #[inline(always)]
            unsafe fn store_release(p: *mut Self, v: Self, scope: MemoryScope) {
                // SAFETY: as in `load_acquire`.
                unsafe { Word::store_release(p.cast(), v.to_bits(), scope) }
            }
            #[inline(always)]
            unsafe fn store(p: *mut Self, v: Self) {
                // SAFETY: as in `load_acquire`.
                unsafe { Word::store_relaxed(p.cast(), v.to_bits()) }
            }
        }
    };
}

float_elem!(f32, AtomicU32, fetch_add_f32, shared_fetch_add_f32, cas_update_f32);
float_elem!(f64, AtomicU64, fetch_add_f64, shared_fetch_add_f64, cas_update_f64);

/// A writable array that every thread may update at any index, atomically: the kernel
/// parameter for scatter updates (`hist.add(bin, 1)`). The host passes `&mut [T]` (copied to
/// the device and back) or a `&mut DeviceBuffer<T>`. Each operation returns the element's
/// previous value; an index past the end panics (a trap on the GPU).
#[derive(Debug)]
pub struct Atomics<'a, T> {
    ptr: *mut T,
    len: usize,
    _borrow: PhantomData<&'a [T]>,
}

impl<'a, T: AtomicElem> Atomics<'a, T> {
    /// The view of an array of `len` elements at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid and aligned for `len` elements for `'a`, and during `'a` every
    /// access to them must be atomic (through `Atomics` views).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize) -> Self {
        Atomics { ptr, len, _borrow: PhantomData }
    }

    #[inline(always)]
    fn at(&self, i: usize) -> *mut T {
        assert!(i < self.len, "atomic index {i} out of bounds for length {}", self.len);
        // SAFETY: `i < len`, so the pointer stays inside the array.
        unsafe { self.ptr.add(i) }
    }

    /// `a[i] += v`; returns the old value.
    #[inline(always)]
    pub fn add(&self, i: usize, v: T) -> T {
        // SAFETY: `at` checked the index; `from_raw_parts`' contract makes all access atomic.
        unsafe { T::fetch_add(self.at(i), v) }
    }

    /// `a[i] = min(a[i], v)`; returns the old value.
    #[inline(always)]
    pub fn min(&self, i: usize, v: T) -> T {
        // SAFETY: as in `add`.
        unsafe { T::fetch_min(self.at(i), v) }
    }

    /// `a[i] = max(a[i], v)`; returns the old value.
    #[inline(always)]
    pub fn max(&self, i: usize, v: T) -> T {
        // SAFETY: as in `add`.
        unsafe { T::fetch_max(self.at(i), v) }
    }

    /// `a[i] = v`; returns the old value.
    #[inline(always)]
    pub fn exchange(&self, i: usize, v: T) -> T {
        // SAFETY: as in `add`.
        unsafe { T::swap(self.at(i), v) }
    }

    /// If `a[i]` holds `current` (bit for bit), stores `new`. `Ok(old)` on success,
    /// `Err(actual)` otherwise.
    #[inline(always)]
    pub fn compare_exchange(&self, i: usize, current: T, new: T) -> Result<T, T> {
        // SAFETY: as in `add`.
        unsafe { T::compare_exchange(self.at(i), current, new) }
    }

    /// The current value of `a[i]`.
    #[inline(always)]
    pub fn load(&self, i: usize) -> T {
        // SAFETY: as in `add`.
        unsafe { T::load(self.at(i)) }
    }

    /// `a[i] = v` (relaxed: ordered with nothing else; see [`store_release`](Atomics::store_release)).
    #[inline(always)]
    pub fn store(&self, i: usize, v: T) {
        // SAFETY: as in `add`.
        unsafe { T::store(self.at(i), v) }
    }

    /// The current value of `a[i]`, with acquire ordering at `scope`: if it reads what a
    /// [`store_release`](Atomics::store_release) at that scope wrote, everything the storing
    /// thread wrote before the store is visible to this thread after the load — the
    /// hand-over of a flag or a ready value between blocks (a single-pass scan's look-back, a
    /// work queue).
    #[inline(always)]
    pub fn load_acquire(&self, i: usize, scope: MemoryScope) -> T {
        // SAFETY: as in `add`.
        unsafe { T::load_acquire(self.at(i), scope) }
    }

    /// `a[i] = v`, with release ordering at `scope`: every write of this thread before it is
    /// visible to a thread whose [`load_acquire`](Atomics::load_acquire) at that scope reads `v`.
    #[inline(always)]
    pub fn store_release(&self, i: usize, v: T, scope: MemoryScope) {
        // SAFETY: as in `add`.
        unsafe { T::store_release(self.at(i), v, scope) }
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the array is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
