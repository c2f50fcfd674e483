//! Block-shared arrays of a size fixed at compile time: a [`SharedArray<T, N>`] parameter is
//! `N` elements the whole block shares, whatever the block size (a tile, a lookup table, a
//! histogram per block). As with [`Shared`](crate::Shared), types keep it race-free: in the
//! *write* phase thread `t` of a block of `n` threads owns the elements `t, t + n, t + 2n, …`;
//! [`SharedArray::sync`] is the barrier to the *read* phase, where every element is readable
//! ([`SharedArrayReadable::as_slice`]); [`SharedArrayReadable::sync`] goes back to writing.
//!
//! The elements start as zeros. The launch reserves `N × size_of::<T>()` bytes of the block's
//! shared memory next to the other shared parameters.

use core::marker::PhantomData;

/// A block-shared array in its write phase: each thread writes the elements it owns.
#[derive(Debug)]
pub struct SharedArray<'a, T, const N: usize> {
    base: *mut T,
    tid: usize,
    n: usize,
    #[cfg(not(offload_gpu))]
    sync: &'a crate::host::emulate::BlockSync,
    #[cfg(not(offload_gpu))]
    phase: u32,
    _borrow: PhantomData<&'a mut [T; N]>,
}

/// A block-shared array in its read phase: every element is readable by every thread.
#[derive(Debug)]
pub struct SharedArrayReadable<'a, T, const N: usize> {
    base: *mut T,
    tid: usize,
    n: usize,
    #[cfg(not(offload_gpu))]
    sync: &'a crate::host::emulate::BlockSync,
    #[cfg(not(offload_gpu))]
    phase: u32,
    _borrow: PhantomData<&'a [T; N]>,
}

macro_rules! into {
    ($self:ident, $target:ident) => {
        $target {
            base: $self.base,
            tid: $self.tid,
            n: $self.n,
            #[cfg(not(offload_gpu))]
            sync: $self.sync,
            #[cfg(not(offload_gpu))]
            phase: $self.phase + 1,
            _borrow: PhantomData,
        }
    };
}

impl<'a, T: Copy, const N: usize> SharedArray<'a, T, N> {
    /// The view of thread `tid` of a block of `n` threads on `N` elements at `base` (GPU).
    /// Zeroes the elements the thread owns, before anyone can read them.
    ///
    /// # Safety
    ///
    /// `base` must point to `N` elements of block-shared memory used by no other parameter;
    /// every thread of the block must get its own view with a distinct `tid < n`; `T` must
    /// be valid as all-zero bytes (the host side requires `KernelScalar`).
    #[doc(hidden)]
    #[cfg(offload_gpu)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(base: *mut T, tid: usize, n: usize) -> Self {
        let mut j = tid;
        while j < N {
            // SAFETY: `j < N`, an element this thread owns; zero is a valid `T` (caller).
            unsafe { base.add(j).write(core::mem::zeroed()) };
            j += n;
        }
        SharedArray { base, tid, n, _borrow: PhantomData }
    }

    /// The view of emulated thread `tid` (CPU backend), on zeroed memory.
    ///
    /// # Safety
    ///
    /// As on the GPU, with `sync` the barrier of the block whose memory `base` is, and the
    /// memory zeroed by the emulator.
    #[doc(hidden)]
    #[cfg(not(offload_gpu))]
    #[inline(always)]
    pub unsafe fn from_raw_parts(
        base: *mut T,
        tid: usize,
        n: usize,
        sync: &'a crate::host::emulate::BlockSync,
    ) -> Self {
        SharedArray { base, tid, n, sync, phase: 0, _borrow: PhantomData }
    }

    /// Writes element `j`, which this thread must own (`j % block threads == thread`).
    ///
    /// # Panics
    ///
    /// When `j` is out of bounds or owned by another thread.
    #[inline(always)]
    pub fn set(&mut self, j: usize, value: T) {
        assert!(j < N && j % self.n == self.tid, "shared element {j} is not this thread's to write");
        // SAFETY: `j < N` and this thread owns it: no other thread touches it this phase.
        unsafe { self.base.add(j).write(value) };
    }

    /// Sets every element this thread owns to `f(index)`.
    #[inline(always)]
    pub fn fill_mine(&mut self, mut f: impl FnMut(usize) -> T) {
        let mut j = self.tid;
        while j < N {
            // SAFETY: as in `set`.
            unsafe { self.base.add(j).write(f(j)) };
            j += self.n;
        }
    }

    /// The barrier: once every thread of the block has written, all elements are readable.
    #[inline(always)]
    pub fn sync(self) -> SharedArrayReadable<'a, T, N> {
        self.wait();
        into!(self, SharedArrayReadable)
    }

    #[inline(always)]
    fn wait(&self) {
        #[cfg(offload_gpu)]
        crate::sync::barrier();
        #[cfg(not(offload_gpu))]
        self.sync.wait(self.phase, self.tid);
    }
}

impl<'a, T: Copy, const N: usize> SharedArrayReadable<'a, T, N> {
    /// All `N` elements.
    #[inline(always)]
    pub fn as_slice(&self) -> &[T] {
        // SAFETY: `N` initialised elements (zeroed at the start, written since), which no
        // thread writes during the read phase.
        unsafe { core::slice::from_raw_parts(self.base, N) }
    }

    /// Element `j`.
    ///
    /// # Panics
    ///
    /// When `j >= N`.
    #[inline(always)]
    pub fn get(&self, j: usize) -> T {
        self.as_slice()[j]
    }

    /// The barrier back to a write phase: once every thread has finished reading.
    #[inline(always)]
    pub fn sync(self) -> SharedArray<'a, T, N> {
        #[cfg(offload_gpu)]
        crate::sync::barrier();
        #[cfg(not(offload_gpu))]
        self.sync.wait(self.phase, self.tid);
        into!(self, SharedArray)
    }
}
