//! Block-shared memory with barriers, made safe by types: a [`Shared<T>`] holds one slot per
//! thread of the block. In the *write* phase a thread may only write its own slot
//! ([`Shared::write`]); [`Written::sync`] is the barrier that turns the block's slots into a
//! *read* phase ([`Readable::get`] reads any slot); [`Readable::sync`] is the barrier back to a
//! write phase. Reading before the barrier, or writing while others read, does not compile.
//!
//! Every thread of the block must pass the same barriers (keep `sync` out of divergent
//! branches and early returns): the CPU backend checks this and fails the launch otherwise.

use core::marker::PhantomData;

macro_rules! phase {
    ($(#[$doc:meta])* $name:ident) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T> {
            base: *mut T,
            tid: usize,
            n: usize,
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            sync: &'a crate::host::emulate::BlockSync,
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            phase: u32,
            _borrow: PhantomData<&'a mut [T]>,
        }
    };
}

phase!(
    /// Block-shared memory in its write phase: each thread may write its own slot.
    Shared
);
phase!(
    /// Block-shared memory after this thread's write, before the barrier.
    Written
);
phase!(
    /// Block-shared memory in its read phase: every slot is readable by every thread.
    Readable
);

macro_rules! to {
    ($self:ident, $target:ident) => {
        $target {
            base: $self.base,
            tid: $self.tid,
            n: $self.n,
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            sync: $self.sync,
            #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
            phase: $self.phase + 1,
            _borrow: PhantomData,
        }
    };
}

impl<'a, T: Copy> Shared<'a, T> {
    /// The view of thread `tid` of a block of `n` threads, on `n` slots at `base` (GPU).
    ///
    /// # Safety
    ///
    /// `base` must point to `n` slots of block-shared memory, used by no other parameter;
    /// every thread of the block must get its own view with a distinct `tid < n`; `T` must be
    /// valid as all-zero bytes.
    #[doc(hidden)]
    #[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
    #[inline(always)]
    pub unsafe fn from_raw_parts(base: *mut T, tid: usize, n: usize) -> Self {
        // Every slot starts as zero, so that a thread that skips its first write leaves
        // a defined value (the CPU backend's memory starts zeroed too).
        // SAFETY: `tid < n` is this thread's slot; the host side requires `T: KernelScalar`,
        // which is valid as all-zero bytes.
        unsafe { base.add(tid).write(core::mem::zeroed()) };
        Shared { base, tid, n, _borrow: PhantomData }
    }

    /// The view of emulated thread `tid` (CPU backend).
    ///
    /// # Safety
    ///
    /// As on the GPU, with `sync` the barrier of the block whose memory `base` is.
    #[doc(hidden)]
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    #[inline(always)]
    pub unsafe fn from_raw_parts(
        base: *mut T,
        tid: usize,
        n: usize,
        sync: &'a crate::host::emulate::BlockSync,
    ) -> Self {
        Shared { base, tid, n, sync, phase: 0, _borrow: PhantomData }
    }

    /// Writes this thread's slot.
    #[inline(always)]
    pub fn write(self, value: T) -> Written<'a, T> {
        // SAFETY: `tid < n`; in the write phase only this thread touches its slot.
        unsafe { self.base.add(self.tid).write(value) };
        to!(self, Written)
    }

    /// Leaves this thread's slot as it is (it still takes part in the barrier).
    #[inline(always)]
    pub fn skip(self) -> Written<'a, T> {
        to!(self, Written)
    }

    /// Number of slots: the block's thread count.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no slots (never, inside a kernel).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}

impl<'a, T: Copy> Written<'a, T> {
    /// The barrier: once every thread of the block has written (or skipped), all slots
    /// become readable.
    #[inline(always)]
    pub fn sync(self) -> Readable<'a, T> {
        wait(&self);
        to!(self, Readable)
    }
}

impl<'a, T: Copy> Readable<'a, T> {
    /// Slot `j` (a thread index within the block).
    ///
    /// # Panics
    ///
    /// When `j` is not below the block's thread count.
    #[inline(always)]
    pub fn get(&self, j: usize) -> T {
        assert!(j < self.n, "shared slot {j} out of bounds for a block of {} threads", self.n);
        // SAFETY: `j < n`; in the read phase no thread writes.
        unsafe { self.base.add(j).read() }
    }

    /// This thread's own slot.
    #[inline(always)]
    pub fn mine(&self) -> T {
        self.get(self.tid)
    }

    /// Number of slots: the block's thread count.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.n
    }

    /// Whether there are no slots (never, inside a kernel).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }

    /// The barrier back to a write phase: once every thread has finished reading.
    #[inline(always)]
    pub fn sync(self) -> Shared<'a, T> {
        wait(&self);
        to!(self, Shared)
    }
}

#[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
#[inline(always)]
fn wait<S>(_phase: &S) {
    crate::sync::barrier();
}

#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
trait Phase {
    fn parts(&self) -> (&crate::host::emulate::BlockSync, u32, usize);
}

#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
macro_rules! phase_parts {
    ($($t:ident),*) => {$(
        impl<T> Phase for $t<'_, T> {
            fn parts(&self) -> (&crate::host::emulate::BlockSync, u32, usize) {
                (self.sync, self.phase, self.tid)
            }
        }
    )*};
}
#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
phase_parts!(Written, Readable);

#[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
fn wait(phase: &impl Phase) {
    let (sync, n, tid) = phase.parts();
    sync.wait(n, tid);
}
