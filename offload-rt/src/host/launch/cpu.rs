//! A launch on the CPU backend: the kernel is called once per emulated thread, and each
//! thread turns the launch's arguments into its own parameter values (its `Region`, its
//! shared-memory view, …) through a [`ThreadToken`] that only the scheduler makes.

use super::KernelInfo;
use super::params::KernelScalar;
use crate::host::backend::emulate;
use crate::host::error::Result;
use crate::host::grid::Grid;
use crate::host::report;
use std::cell::Cell;
use std::future::Future;
use std::marker::PhantomData;
use std::time::Instant;

/// Runs `body` over every thread of `grid` (`blocks` per dimension), a block's threads one
/// after another in one call.
pub(super) fn run(
    kernel: &KernelInfo,
    grid: &Grid,
    blocks: [u32; 3],
    launch: u64,
    body: &(impl Fn(&mut Threads<'_, '_>) + Sync),
) -> Result<()> {
    if blocks.contains(&0) {
        return Ok(());
    }
    let started = Instant::now();
    let result = emulate::run(kernel.path, grid, &|threads| {
        // (One read of the context per call: the block's indices; the steps give the threads'.)
        let ctx = crate::arch::cpu::current();
        body(&mut Threads { threads, launch, place: LanePlace::new(ctx.block, ctx.block_dim, ctx.grid_dim) })
    });
    report::record_launch(kernel.path, started.elapsed());
    result
}

/// Runs the threads of each block of `grid` together, as lanes (futures polled in turns:
/// `lane(thread)` is the thread's), over `shared` bytes of the block's shared memory.
pub(super) fn run_lanes<F: Future<Output = ()>>(
    kernel: &KernelInfo,
    grid: &Grid,
    blocks: [u32; 3],
    shared: usize,
    launch: u64,
    lane: &(impl Fn(LaneThread) -> F + Sync),
) -> Result<()> {
    if blocks.contains(&0) {
        return Ok(());
    }
    let started = Instant::now();
    let result = emulate::run_lanes(kernel.path, grid, shared, &|| lane(LaneThread { launch }));
    report::record_launch(kernel.path, started.elapsed());
    result
}

/// Where a block's lanes are in the grid, worked out once per block for the lanes' tokens
/// ([`ThreadToken::lane`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct LanePlace {
    block: [u32; 3],
    block_dim: [u32; 3],
    /// Threads of the grid per dimension.
    size: [usize; 3],
    /// The global position of the block's thread 0, and its linear id.
    origin: [usize; 3],
    origin_index: usize,
    /// Threads of the grid.
    total: usize,
    /// The block's linear index over the grid (`x + X·(y + Y·z)`).
    block_index: usize,
    /// Whether the block is a row (`y` and `z` extents 1: a lane's `x` is its index).
    row: bool,
}

impl LanePlace {
    pub(crate) fn new(block: [u32; 3], block_dim: [u32; 3], grid_dim: [u32; 3]) -> LanePlace {
        let size = grid_size(block_dim, grid_dim);
        let origin: [usize; 3] = std::array::from_fn(|d| block[d] as usize * block_dim[d] as usize);
        LanePlace {
            block,
            block_dim,
            size,
            origin,
            origin_index: linear(origin, size),
            total: size.iter().product(),
            block_index: block_index(block, grid_dim),
            row: block_dim[1] == 1 && block_dim[2] == 1,
        }
    }
}

impl LanePlace {
    /// The indices in the block of its lane `t` (linear, `x` fastest): what `thread_idx_x()`,
    /// `thread_idx_y()` and `thread_idx_z()` return to it.
    #[inline(always)]
    pub(crate) fn thread(&self, t: usize) -> [u32; 3] {
        let t32 = t as u32;
        if self.row {
            return [t32, 0, 0];
        }
        let [bx, by, bz] = self.block_dim;
        let thread = [t32 % bx, (t32 / bx) % by, t32 / (bx * by)];
        debug_assert!(thread[2] < bz);
        thread
    }

    /// `global_id_x()` (`D = 0`) … `global_id_z()` of lane `t`.
    #[inline(always)]
    pub(crate) fn global_id<const D: usize>(&self, t: usize) -> usize {
        self.origin[D] + self.thread(t)[D] as usize
    }

    /// `global_linear_id()` of lane `t`: `x + X·(y + Y·z)` over its global ids.
    #[inline(always)]
    pub(crate) fn linear_id(&self, t: usize) -> usize {
        if self.row {
            return self.origin_index + t;
        }
        let thread = self.thread(t);
        linear(std::array::from_fn(|d| self.origin[d] + thread[d] as usize), self.size)
    }
}

impl ThreadToken {
    /// The token of lane `t` (linear, `x` fastest) of the block at `place`, whose threads run
    /// together: what [`LaneThread::token`] makes, from the block's place rather than from the
    /// emulated thread's context (no division where the block is a row).
    #[inline(always)]
    pub(crate) fn lane(launch: u64, place: &LanePlace, t: usize) -> ThreadToken {
        if place.row {
            return ThreadToken::in_row(launch, place, t, true);
        }
        ThreadToken::new(launch, place, place.thread(t), true)
    }

    /// The token of thread `x` of a block that is a row: its indices are the block's origin
    /// and `x` along it (what [`ThreadToken::new`] computes, with no multiplication).
    #[inline(always)]
    fn in_row(launch: u64, place: &LanePlace, x: usize, block_env: bool) -> ThreadToken {
        let mut at = place.origin;
        at[0] += x;
        ThreadToken {
            launch,
            index: place.origin_index + x,
            total: place.total,
            tid: x,
            block_threads: place.block_dim[0] as usize,
            block_index: place.block_index,
            block_env,
            at,
            taken: Cell::new(0),
        }
    }
}

/// Runs the blocks of `grid` with their threads in lockstep (see
/// [`emulate::Lockstep`]): `worker` is the kernels macro's code for one worker's blocks.
pub(super) fn run_lockstep(
    kernel: &KernelInfo,
    grid: &Grid,
    blocks: [u32; 3],
    shared: usize,
    launch: u64,
    worker: &(impl Fn(&mut emulate::Lockstep<'_>) + Sync),
) -> Result<()> {
    if blocks.contains(&0) {
        return Ok(());
    }
    let started = Instant::now();
    let result = emulate::run_lockstep(kernel.path, grid, shared, launch, worker);
    report::record_launch(kernel.path, started.elapsed());
    result
}

/// A lane of a CPU-backend launch that has not started: its [`ThreadToken`] is made when it
/// starts, from the emulated thread the scheduler made current (a lane's future keeps this,
/// not the larger token).
#[derive(Clone, Copy, Debug)]
pub struct LaneThread {
    launch: u64,
}

impl LaneThread {
    /// The token of the emulated thread that runs now.
    #[inline(always)]
    pub fn token(self) -> ThreadToken {
        let ctx = crate::arch::cpu::current();
        let (size, index) = (grid_size(ctx.block_dim, ctx.grid_dim), block_index(ctx.block, ctx.grid_dim));
        ThreadToken::of(self.launch, ctx.block, ctx.block_dim, size, index, ctx.thread(), true)
    }
}

/// Threads of the grid per dimension.
#[inline(always)]
fn grid_size(block_dim: [u32; 3], grid_dim: [u32; 3]) -> [usize; 3] {
    std::array::from_fn(|d| grid_dim[d] as usize * block_dim[d] as usize)
}

/// The linear index of block `block` over the grid.
#[inline(always)]
fn block_index(block: [u32; 3], grid_dim: [u32; 3]) -> usize {
    linear(block.map(|b| b as usize), grid_dim.map(|g| g as usize))
}

/// Position `[x, y, z]` in a space of `[X, Y, _]` as one index, `x` fastest: `x + X·(y + Y·z)`
/// (what `global_linear_id()` computes over global ids).
#[inline(always)]
fn linear([x, y, z]: [usize; 3], [sx, sy, _]: [usize; 3]) -> usize {
    x + sx * (y + sy * z)
}

/// The emulated threads of one block of a CPU-backend launch, one after another: each step is
/// a thread's [`ThreadToken`]. The body's loop over them is generated with the kernel, so the
/// kernel's call inlines into it.
#[derive(Debug)]
pub struct Threads<'a, 'b> {
    threads: &'a mut emulate::BlockThreads<'b>,
    launch: u64,
    /// Where the block's threads are in the grid.
    place: LanePlace,
}

impl Threads<'_, '_> {
    /// Runs `body` with each thread's token in turn, its indices made current: a counted loop
    /// over a block that is a row, else a step through the block's three dimensions.
    #[inline(always)]
    pub fn each(&mut self, mut body: impl FnMut(ThreadToken)) {
        let (launch, place) = (self.launch, self.place);
        // (`place.row` is what `each_in_row` tests too; tested here as well, the compiler's
        // row loop is the tighter, by about one instruction a thread.)
        if place.row
            && self.threads.each_in_row(|x| body(ThreadToken::in_row(launch, &place, x as usize, false)))
        {
            return;
        }
        while let Some(thread) = self.threads.next() {
            body(ThreadToken::new(launch, &place, thread, false));
        }
    }
}

/// A read-only argument as the CPU backend sees it.
#[derive(Clone, Copy, Debug)]
pub struct InArg<'a, T>(pub(crate) &'a [T]);

impl<'a, T> InArg<'a, T> {
    /// The slice the kernel reads.
    #[inline(always)]
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
    /// Index within the block, block size, and whether the block's threads run at once
    /// (with shared memory and a barrier).
    pub(super) tid: usize,
    pub(super) block_threads: usize,
    /// The block's linear index over the grid.
    pub(super) block_index: usize,
    pub(super) block_env: bool,
    pub(super) at: [usize; 3],
    pub(super) taken: Cell<u64>,
}

impl ThreadToken {
    /// The token of thread `thread` of the block at `place`; `block_env`: the block's threads
    /// run together, with shared memory.
    #[inline(always)]
    fn new(launch: u64, place: &LanePlace, thread: [u32; 3], block_env: bool) -> ThreadToken {
        let LanePlace { block, block_dim, size, block_index, .. } = *place;
        ThreadToken::of(launch, block, block_dim, size, block_index, thread, block_env)
    }

    /// The token of thread `thread` of block `block` (linear index `block_index`, of
    /// `block_dim` threads, in a grid of `size` threads per dimension).
    #[inline(always)]
    fn of(
        launch: u64,
        block: [u32; 3],
        block_dim: [u32; 3],
        size: [usize; 3],
        block_index: usize,
        [tx, ty, tz]: [u32; 3],
        block_env: bool,
    ) -> ThreadToken {
        let [bx, by, bz] = block_dim;
        let d = |i: usize, t: u32| block[i] as usize * block_dim[i] as usize + t as usize;
        let at = [d(0, tx), d(1, ty), d(2, tz)];
        let [s0, s1, s2] = size;
        ThreadToken {
            launch,
            // As `global_linear_id()` and `global_threads()` compute them.
            index: linear(at, size),
            total: s0 * s1 * s2,
            tid: (tx + bx * (ty + by * tz)) as usize,
            block_threads: (bx * by * bz) as usize,
            block_index,
            block_env,
            at,
            taken: Cell::new(0),
        }
    }
}

impl<'a, T> InOutArg<'a, T> {
    /// The same argument, as a local of one block's loop over its threads: the compiler then
    /// keeps its fields in registers, where a store through a thread's element could otherwise
    /// be one to them, and checks what does not change from thread to thread once per block.
    /// (A copy gives no thread more: each thread's view is still handed out once, by its token.)
    #[inline(always)]
    pub fn local(&self) -> InOutArg<'a, T> {
        let InOutArg { ptr, len, extents, shared, slot, launch, _borrow } = *self;
        InOutArg { ptr, len, extents, shared, slot, launch, _borrow }
    }

    /// The `Region` of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// When asked twice by one thread, or with a token of another launch (generated code
    /// does neither).
    #[inline(always)]
    pub fn region(&self, token: &ThreadToken) -> crate::Region<'a, T> {
        self.take(token);
        // SAFETY: the pointer is valid for `len` elements for `'a` (it comes from a
        // `&'a mut [T]`); the token proves this is the only `Region` of this array for this
        // thread's index in this launch, and every other thread has a distinct index.
        unsafe { crate::Region::from_raw_parts(self.ptr, self.len, token.index) }
    }

    /// The share of a 1-D partition (`GridStride`, `Chunks`) of the emulated thread that
    /// holds `token`.
    #[inline(always)]
    pub fn partition<P: crate::__private::Partition<'a, T>>(&self, token: &ThreadToken) -> P {
        self.take(token);
        // SAFETY: as in `region`: distinct threads have distinct linear ids below `total`,
        // and partitions give distinct ids disjoint shares.
        unsafe {
            P::from_cpu_parts(self.ptr, self.len, token.index, token.total, token.block_index, token.tid == 0)
        }
    }

    /// The 2-D view of the emulated thread that holds `token` (see [`InOutArg::region`]).
    #[inline(always)]
    pub fn region2<const M: usize>(&self, token: &ThreadToken) -> crate::Region2<'a, T, M> {
        self.take(token);
        // SAFETY: as in `region`: `in_out_nd` checked that the extents cover exactly `len`
        // elements, and threads at distinct global positions get distinct elements.
        unsafe { crate::Region2::from_raw_parts(self.ptr, [self.extents[0], self.extents[1]], token.at) }
    }

    /// The 3-D view of the emulated thread that holds `token` (see [`InOutArg::region`]).
    #[inline(always)]
    pub fn region3<const M: usize>(&self, token: &ThreadToken) -> crate::Region3<'a, T, M> {
        self.take(token);
        // SAFETY: as in `region2`.
        unsafe { crate::Region3::from_raw_parts(self.ptr, self.extents, token.at) }
    }

    /// The atomic view every emulated thread shares.
    #[inline(always)]
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
    #[inline(always)]
    pub fn commit<K: crate::__private::Reduction<T>>(&self, acc: T)
    where
        T: Copy,
    {
        assert!(self.shared && self.len == 1, "offload: a reduction result must be one shared element");
        // SAFETY: as in `atomics`: the one element is only accessed atomically.
        unsafe { K::update(self.ptr, acc) }
    }

    #[inline(always)]
    fn take(&self, token: &ThreadToken) {
        assert!(!self.shared, "offload: a shared argument used as a region");
        token.take(self.launch, self.slot, "a Region");
    }
}

/// A `Shared<T>` parameter as the CPU backend sees it: `offset` bytes into the block's
/// shared memory.
#[derive(Debug)]
pub struct SharedArg<T> {
    pub(super) offset: usize,
    pub(super) slot: u32,
    pub(super) launch: u64,
    pub(super) _elem: PhantomData<T>,
}

impl ThreadToken {
    /// Marks bookkeeping slot `slot` of this launch's arguments taken by this thread.
    ///
    /// # Panics
    ///
    /// When it was taken before, or `launch` is another launch's (generated code does
    /// neither).
    #[inline(always)]
    fn take(&self, launch: u64, slot: u32, what: &str) {
        #[cold]
        #[inline(never)]
        fn twice(what: &str) -> ! {
            panic!("offload: {what} requested twice for one thread")
        }
        let bit = 1u64 << slot;
        if self.launch != launch || self.taken.get() & bit != 0 {
            twice(what);
        }
        self.taken.set(self.taken.get() | bit);
    }

    /// The block's shared memory, `offset` bytes in.
    #[inline(always)]
    fn shared(&self, launch: u64, offset: usize) -> *mut u8 {
        assert!(self.launch == launch, "offload: shared memory of another launch");
        assert!(self.block_env, "offload: shared memory outside a launch that reserved it");
        // SAFETY: the emulator allocated the launch's `shared_bytes` for this block, which
        // cover `offset` and the parameter's piece after it (the launch reserved them in order).
        unsafe { crate::arch::shared_base().add(offset) }
    }
}

impl<T: KernelScalar> SharedArg<T> {
    /// The block-shared memory view of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// When asked twice by one thread, or outside a launch with shared memory.
    #[inline(always)]
    pub fn view(&self, token: &ThreadToken) -> crate::Shared<T> {
        token.take(self.launch, self.slot, "shared memory");
        let base = token.shared(self.launch, self.offset).cast::<T>();
        // SAFETY: this parameter owns `block_threads` slots from `offset` of the block's
        // shared memory, alive while the block's threads run; each thread of the block makes
        // one view (the token's bookkeeping) with its own `tid`; `T: KernelScalar` is valid as
        // zeros.
        unsafe { crate::Shared::from_raw_parts(base, token.tid, token.block_threads) }
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
    #[inline(always)]
    pub fn view(&self, token: &ThreadToken) -> crate::Warp {
        assert_eq!(token.launch, self.launch, "offload: a warp of another launch");
        assert!(token.block_env, "offload: a warp outside a launch that runs blocks at once");
        // SAFETY: this is the kernel's `Warp` parameter, made for the emulated thread as the
        // entry point makes it on a GPU.
        unsafe { crate::Warp::current() }
    }
}

/// A `SharedArray<T, N>` parameter as the CPU backend sees it.
#[derive(Debug)]
pub struct SharedArrayArg<T, const N: usize> {
    pub(super) offset: usize,
    pub(super) slot: u32,
    pub(super) launch: u64,
    pub(super) _elem: PhantomData<T>,
}

impl<T: KernelScalar, const N: usize> SharedArrayArg<T, N> {
    /// The block-shared array view of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// When asked twice by one thread, or outside a launch with shared memory.
    #[inline(always)]
    pub fn view(&self, token: &ThreadToken) -> crate::SharedArray<T, N> {
        token.take(self.launch, self.slot, "shared memory");
        let base = token.shared(self.launch, self.offset).cast::<T>();
        // SAFETY: this parameter owns `N` elements from `offset` of the block's shared memory,
        // alive while the block's threads run; each thread makes one view with its own `tid`.
        unsafe { crate::SharedArray::from_raw_parts(base, token.tid, token.block_threads) }
    }
}

impl<T: KernelScalar + crate::AtomicElem, const N: usize> SharedArrayArg<T, N> {
    /// The block-shared atomics view (`SharedAtomics<T, N>`) of the emulated thread that holds
    /// `token`, over the zeros the block's shared memory starts with.
    ///
    /// # Panics
    ///
    /// When asked twice by one thread, or outside a launch with shared memory.
    #[inline(always)]
    pub fn atomics_view(&self, token: &ThreadToken) -> crate::SharedAtomics<T, N> {
        token.take(self.launch, self.slot, "shared memory");
        let base = token.shared(self.launch, self.offset).cast::<T>();
        // SAFETY: as in `view`; the block's shared memory is zeroed when the block starts
        // (`emulate::run_lanes`) and only this parameter's views touch these elements, so
        // every one is zero for every thread when it makes its view, at entry.
        unsafe { crate::SharedAtomics::from_zeroed_parts(base, token.tid, token.block_threads) }
    }
}

/// A `Block` parameter as the CPU backend sees it: its broadcast slot, `offset` bytes into the
/// block's shared memory.
#[derive(Debug)]
pub struct BlockArg {
    pub(super) offset: usize,
    pub(super) slot: u32,
    pub(super) launch: u64,
}

impl BlockArg {
    /// The block token of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// When asked twice by one thread, or outside a launch with shared memory.
    #[inline(always)]
    pub fn view(&self, token: &ThreadToken) -> crate::Block {
        token.take(self.launch, self.slot, "the block token");
        let slot = token.shared(self.launch, self.offset).cast::<u64>();
        // SAFETY: one token per thread (the bookkeeping above), made at the kernel's start by
        // every thread of the block; the 16 bytes at `offset` are this parameter's.
        unsafe { crate::Block::from_raw_parts(slot, token.tid) }
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
    /// The same argument, as a local of one block's loop (see [`InOutArg::local`]).
    #[inline(always)]
    pub fn local(&self) -> ScatterArg<'a, T> {
        ScatterArg { data: self.data.local(), idx: self.idx }
    }

    /// The `Scatter` view of the emulated thread that holds `token`.
    ///
    /// # Panics
    ///
    /// When asked twice by one thread (generated code does not).
    #[inline(always)]
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
