//! Kernel arguments as the CPU backend sees them: each emulated thread turns them into its
//! own parameter values (its `Region`, its shared-memory view, …) through a [`ThreadToken`].

use super::args::KernelScalar;
use std::cell::Cell;
use std::marker::PhantomData;

/// A read-only argument as the CPU backend sees it.
#[derive(Clone, Copy, Debug)]
pub struct InArg<'a, T>(pub(super) &'a [T]);

impl<'a, T> InArg<'a, T> {
    /// The slice the kernel reads.
    pub fn get(&self) -> &'a [T] {
        self.0
    }
}

/// A writable argument as the CPU backend sees it: the array each emulated thread takes its
/// own element of.
#[derive(Debug)]
pub struct InOutArg<'a, T> {
    pub(super) ptr: *mut T,
    pub(super) len: usize,
    pub(super) extents: [usize; 3],
    /// Whether threads share the array through atomics (atomic views, reductions) rather
    /// than owning elements (regions); one argument is never both.
    pub(super) shared: bool,
    /// Position among the launch's writable arguments, for [`ThreadToken`]'s bookkeeping.
    pub(super) slot: u32,
    pub(super) launch: u64,
    pub(super) _borrow: PhantomData<&'a mut [T]>,
}

// SAFETY: the pointer comes from a `&'a mut [T]` held for the launch; threads only reach the
// array through `region`, which hands each emulated thread (each distinct index) at most one
// `Region`, so sharing the argument between the CPU backend's workers is sound when `T: Send`.
unsafe impl<T: Send> Sync for InOutArg<'_, T> {}

/// Proof that code runs as one emulated GPU thread of one CPU-backend launch. Only the
/// backend makes tokens, one per thread per launch, so writable arguments can hand out each
/// thread's `Region` once and soundly.
#[derive(Debug)]
pub struct ThreadToken {
    pub(super) launch: u64,
    pub(super) index: usize,
    pub(super) total: usize,
    /// Index within the block, block size, and the block's shared memory and barrier.
    pub(super) tid: usize,
    pub(super) block_threads: usize,
    pub(super) block_env: Option<(*mut u8, *const super::emulate::BlockSync)>,
    pub(super) at: [usize; 3],
    pub(super) taken: Cell<u64>,
}

impl<'a, T> InOutArg<'a, T> {
    /// The `Region` of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// When asked twice by one thread, or with a token of another launch (generated code
    /// does neither).
    pub fn region(&self, token: &ThreadToken) -> crate::Region<'a, T> {
        self.take(token);
        // SAFETY: the pointer is valid for `len` elements for `'a` (it comes from a
        // `&'a mut [T]`); the token proves this is the only `Region` of this array for this
        // thread's index in this launch, and every other thread has a distinct index.
        unsafe { crate::Region::from_raw_parts(self.ptr, self.len, token.index) }
    }

    /// The share of a 1-D partition (`GridStride`, `Chunks`) of the emulated thread that
    /// holds `token`.
    pub fn partition<P: crate::__private::Partition<'a, T>>(&self, token: &ThreadToken) -> P {
        self.take(token);
        // SAFETY: as in `region`: distinct threads have distinct linear ids below `total`,
        // and partitions give distinct ids disjoint shares.
        unsafe { P::from_raw_parts(self.ptr, self.len, token.index, token.total) }
    }

    /// The 2-D view of the emulated thread that holds `token` (see [`InOutArg::region`]).
    pub fn region2<const M: usize>(&self, token: &ThreadToken) -> crate::Region2<'a, T, M> {
        self.take(token);
        // SAFETY: as in `region`: `in_out_nd` checked that the extents cover exactly `len`
        // elements, and threads at distinct global positions get distinct elements.
        unsafe { crate::Region2::from_raw_parts(self.ptr, [self.extents[0], self.extents[1]], token.at) }
    }

    /// The 3-D view of the emulated thread that holds `token` (see [`InOutArg::region`]).
    pub fn region3<const M: usize>(&self, token: &ThreadToken) -> crate::Region3<'a, T, M> {
        self.take(token);
        // SAFETY: as in `region2`.
        unsafe { crate::Region3::from_raw_parts(self.ptr, self.extents, token.at) }
    }

    /// The atomic view every emulated thread shares.
    pub fn atomics(&self) -> crate::Atomics<'a, T>
    where
        T: crate::AtomicElem,
    {
        assert!(self.shared, "offload: an owned-element argument used as an atomic view");
        // SAFETY: the pointer is valid for `len` elements for `'a` (a `&'a mut [T]` or a
        // buffer borrowed mutably for `'a`), and `shared` arguments are only reached through
        // atomic views and reduction commits, so every access is atomic.
        unsafe { crate::Atomics::from_raw_parts(self.ptr, self.len) }
    }

    /// Combines one emulated thread's reduction contribution into the result.
    pub fn commit<K: crate::__private::Reduction<T>>(&self, acc: T)
    where
        T: Copy,
    {
        assert!(self.shared && self.len == 1, "offload: a reduction result must be one shared element");
        // SAFETY: as in `atomics`: the one element is only accessed atomically.
        unsafe { K::update(self.ptr, acc) }
    }

    fn take(&self, token: &ThreadToken) {
        assert!(!self.shared, "offload: a shared argument used as a region");
        let bit = 1u64 << self.slot;
        assert!(
            token.launch == self.launch && token.taken.get() & bit == 0,
            "offload: a Region was requested twice for one thread"
        );
        token.taken.set(token.taken.get() | bit);
    }
}

/// A `Shared<T>` parameter as the CPU backend sees it.
#[derive(Debug)]
pub struct SharedArg<T> {
    pub(super) offset: usize,
    pub(super) slot: u32,
    pub(super) launch: u64,
    pub(super) _elem: PhantomData<T>,
}

impl<T: KernelScalar> SharedArg<T> {
    /// The block-shared memory view of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// When asked twice by one thread, or outside a launch with shared memory.
    pub fn view<'t>(&self, token: &'t ThreadToken) -> crate::Shared<'t, T> {
        let bit = 1u64 << self.slot;
        assert!(
            token.launch == self.launch && token.taken.get() & bit == 0,
            "offload: shared memory requested twice for one thread"
        );
        token.taken.set(token.taken.get() | bit);
        let (arena, sync) =
            token.block_env.expect("offload: shared memory outside a launch that reserved it");
        // SAFETY: the emulator allocated `shared_bytes` bytes (16-aligned) for this block, of
        // which this parameter owns `block_threads` slots from `offset`, and keeps them and the
        // block's barrier alive while the block's threads run (`'t` is within that); each
        // thread of the block gets one view with its own `tid`.
        unsafe {
            crate::Shared::from_raw_parts(
                arena.add(self.offset).cast::<T>(),
                token.tid,
                token.block_threads,
                &*sync,
            )
        }
    }
}

/// A `Warp` parameter as the CPU backend sees it.
#[derive(Debug)]
pub struct WarpArg {
    pub(super) launch: u64,
}

impl WarpArg {
    /// The warp of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// With a token of another launch, or outside a launch whose blocks run at once
    /// (generated code does neither).
    pub fn view(&self, token: &ThreadToken) -> crate::Warp {
        assert_eq!(token.launch, self.launch, "offload: a warp of another launch");
        let (_, sync) = token.block_env.expect("offload: a warp outside a launch that runs blocks at once");
        // SAFETY: the emulator keeps the block's `BlockSync` alive while its threads run, and
        // the kernel (which holds the `Warp`) returns before its thread ends.
        let sync = unsafe { &*sync };
        let (warp, lane) = sync.warp(token.tid);
        // SAFETY: `warp` is this thread's emulated warp, alive for the thread's run; each
        // thread calls the kernel (and so this) once per launch.
        unsafe { crate::Warp::emulated(lane, super::warp_emu::warp_size(), warp) }
    }
}

/// A `SharedArray<T, N>` parameter as the CPU backend sees it.
#[derive(Debug)]
pub struct SharedArrayArg<T, const N: usize> {
    pub(super) offset: usize,
    pub(super) launch: u64,
    pub(super) _elem: PhantomData<T>,
}

impl<T: KernelScalar, const N: usize> SharedArrayArg<T, N> {
    /// The block-shared array view of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// With a token of another launch, or outside a launch with shared memory.
    pub fn view<'t>(&self, token: &'t ThreadToken) -> crate::SharedArray<'t, T, N> {
        assert_eq!(token.launch, self.launch, "offload: shared memory of another launch");
        let (arena, sync) =
            token.block_env.expect("offload: shared memory outside a launch that reserved it");
        // SAFETY: the emulator allocated (zeroed, 16-aligned) `shared_bytes` for this block, of
        // which this parameter owns `N` elements from `offset`, alive while the block's
        // threads run; each thread gets one view with its own `tid`.
        unsafe {
            crate::SharedArray::from_raw_parts(
                arena.add(self.offset).cast::<T>(),
                token.tid,
                token.block_threads,
                &*sync,
            )
        }
    }
}

/// A `Scatter<T>` parameter as the CPU backend sees it.
#[derive(Debug)]
pub struct ScatterArg<'a, T> {
    pub(super) data: InOutArg<'a, T>,
    pub(super) idx: &'a [i64],
}

// SAFETY: as for `InOutArg`: threads reach the array only through `scatter`, which gives each
// emulated thread (distinct position) the element of a distinct index (the list was checked
// to repeat none).
unsafe impl<T: Send> Sync for ScatterArg<'_, T> {}

impl<'a, T> ScatterArg<'a, T> {
    /// The `Scatter` view of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// When asked twice by one thread (generated code does not).
    pub fn scatter(&self, token: &ThreadToken) -> crate::Scatter<'a, T> {
        self.data.take(token);
        // SAFETY: the array is valid for `len` elements for `'a`; the list, checked by
        // `UniqueIndices::new` and immutable since, names each element at most once and only
        // below `len`, and each thread has its own position.
        unsafe {
            crate::Scatter::from_raw_parts(
                self.data.ptr,
                self.data.len,
                self.idx.as_ptr(),
                self.idx.len(),
                token.index,
            )
        }
    }
}
