//! Block-shared arrays of a size fixed at compile time: a [`SharedArray<T, N>`] parameter is
//! `N` elements the whole block shares, whatever the block size (a tile, a lookup table, a
//! histogram per block). The phases are the block's (see [`Block`]): in the write phase thread
//! `t` of a block of `n` threads owns the elements `t, t + n, t + 2n, …` and may write them;
//! in the read phase every element is readable by every thread.
//!
//! The elements start as zeros. The launch reserves `N × size_of::<T>()` bytes of the block's
//! shared memory next to the other shared parameters.

use crate::arch;
use crate::shared::{Block, BlockRead};

/// `N` elements of block-shared memory.
#[derive(Debug)]
pub struct SharedArray<T, const N: usize> {
    base: *mut T,
    tid: u32,
    n: u32,
}

impl<T: Copy, const N: usize> SharedArray<T, N> {
    /// Thread `tid`'s view of the block's `N` elements at `base`, in a block of `n` threads;
    /// zeroes the elements the thread owns.
    ///
    /// # Safety
    ///
    /// `base` points to `N` elements of block-shared memory used by no other parameter; every
    /// thread of the block makes its own view, with a distinct `tid < n`, at kernel entry; `T`
    /// is valid as all-zero bytes.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(base: *mut T, tid: usize, n: usize) -> Self {
        // `N` elements fit in a block's shared memory (at most 227 KiB, checked when the kernel
        // compiles), so 32-bit indices do: the loop keeps its counter in one register.
        let (mut j, step) = (tid as u32, n as u32);
        while (j as usize) < N {
            // SAFETY: `j < N`, an element this thread owns; zero is a valid `T` (the caller's
            // contract); at entry the block is in its write phase.
            unsafe { crate::shared::zero(base.add(j as usize)) };
            j += step;
        }
        SharedArray { base, tid: tid as u32, n: n as u32 }
    }

    /// Thread `tid`'s view of the block's `N` elements at `base`, which are zeros already.
    ///
    /// # Safety
    ///
    /// As [`from_raw_parts`](SharedArray::from_raw_parts), and every element is zero for
    /// every thread (`zero_block_shared` ran).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_zeroed_parts(base: *mut T, tid: usize, n: usize) -> Self {
        SharedArray { base, tid: tid as u32, n: n as u32 }
    }

    /// Whether element `j` is this thread's (`j % block threads == thread`).
    #[inline(always)]
    pub fn owns(&self, j: usize) -> bool {
        j < N && j % self.n as usize == self.tid as usize
    }

    /// Writes element `j`, which this thread must own (write phase).
    ///
    /// # Panics
    ///
    /// When `j` is out of bounds or owned by another thread.
    #[inline(always)]
    #[track_caller]
    pub fn set(&self, _phase: &Block, j: usize, value: T) {
        if !self.owns(j) {
            arch::fail!("shared element {j} is not this thread's to write");
        }
        // SAFETY: `j < N` and this thread owns it: no other thread touches it this phase.
        unsafe { self.base.add(j).write(value) };
    }

    /// Writes this thread's `k`-th element, `thread + k × block threads` (write phase): what
    /// [`set`](SharedArray::set) does with that index, without its division.
    ///
    /// # Panics
    ///
    /// When that element is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn set_nth(&self, _phase: &Block, k: usize, value: T) {
        let j = (self.tid as usize).saturating_add(k.saturating_mul(self.n as usize));
        if j >= N {
            arch::fail!("shared element {j} (this thread's element {k}) is out of bounds: the array has {N}");
        }
        // SAFETY: `j < N`, and `j ≡ tid (mod n)`: this thread's element, which no other thread
        // touches this phase.
        unsafe { self.base.add(j).write(value) };
    }

    /// Writes this thread's first `K` elements (write phase): `values[k]` to element
    /// `thread + k × block threads`, as `K` calls of [`set_nth`](SharedArray::set_nth) would,
    /// with one bounds check for all of them — so that the values (typically `K` loads just
    /// issued) are stored together, where a check before each store would keep the compiler
    /// from issuing a load before the previous store's check.
    ///
    /// # Panics
    ///
    /// When this thread's `K`-th element is past the end.
    #[inline(always)]
    #[track_caller]
    pub fn set_striped<const K: usize>(&self, _phase: &Block, values: [T; K]) {
        let (tid, n) = (self.tid as usize, self.n as usize);
        let last = tid.saturating_add(K.saturating_sub(1).saturating_mul(n));
        if K > 0 && last >= N {
            arch::fail!(
                "shared element {last} (this thread's element {}) is out of bounds: the array has {N}",
                K - 1
            );
        }
        // (By index: an array's by-value iterator keeps the array in local memory on GPUs.)
        #[allow(clippy::needless_range_loop)]
        for k in 0..K {
            // SAFETY: `tid + k·n ≤ last < N` (`k < K`), and `≡ tid (mod n)`: this thread's
            // element, which no other thread touches this phase.
            unsafe { self.base.add(tid + k * n).write(values[k]) };
        }
    }

    /// Sets every element this thread owns to `f(index)` (write phase).
    #[inline(always)]
    pub fn fill_mine(&self, _phase: &Block, mut f: impl FnMut(usize) -> T) {
        let mut j = self.tid as usize;
        while j < N {
            // SAFETY: as in `set`.
            unsafe { self.base.add(j).write(f(j)) };
            j += self.n as usize;
        }
    }

    /// Element `j`, which this thread owns, in either phase (only its owner ever writes it).
    ///
    /// # Panics
    ///
    /// When `j` is out of bounds or owned by another thread.
    #[inline(always)]
    #[track_caller]
    pub fn get_mine(&self, j: usize) -> T {
        if !self.owns(j) {
            arch::fail!("shared element {j} is not this thread's");
        }
        // SAFETY: `j < N`, written only by this thread.
        unsafe { self.base.add(j).read() }
    }

    /// All `N` elements, in the read phase (the slice cannot outlive it).
    #[inline(always)]
    pub fn as_slice<'r>(&self, _phase: &'r BlockRead) -> &'r [T] {
        // SAFETY: `N` initialised elements (zeroed at entry, written since), which no thread
        // writes while `_phase` — and so the slice — lives.
        unsafe { core::slice::from_raw_parts(self.base, N) }
    }

    /// Element `j`, in the read phase.
    ///
    /// # Panics
    ///
    /// When `j >= N`.
    #[inline(always)]
    pub fn get(&self, phase: &BlockRead, j: usize) -> T {
        self.as_slice(phase)[j]
    }

    /// Number of elements, `N`.
    #[inline(always)]
    pub fn len(&self) -> usize {
        N
    }

    /// Whether `N` is 0.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        N == 0
    }
}
