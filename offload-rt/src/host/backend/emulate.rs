//! The CPU emulation backend's scheduler: runs the host-compiled kernels module over the
//! launch grid on host threads. Blocks are spread over worker threads; each block's threads
//! run one after another ([`run`]), or — when the kernel uses barriers, shared memory or warps
//! ([`run_lanes`]) — as lanes, futures polled in turns on the block's host thread, each
//! returning `Pending` where it waits for the others at the block's `BlockSync`.

use crate::arch::cpu::{
    BLOCK_FAILED, BlockEnv, BlockSync, ThreadCtx, WarpOp, WarpShape, enter, in_turns, run_as, set_lane,
};
use crate::host::error::{Error, Result};
use crate::host::grid::Grid;
use crate::host::launch::cpu::{LanePlace, ThreadToken};
use std::cell::Cell;
use std::future::Future;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::task::{Context, Poll, Waker};

/// Lanes of the CPU backend's warps: `OFFLOAD_CPU_WARP_SIZE` (32 or 64), else 32.
pub fn warp_size() -> u32 {
    match crate::host::config::config().cpu_warp_size {
        Ok(size) => size.unwrap_or(32),
        Err(ref other) => {
            static WARNED: std::sync::Once = std::sync::Once::new();
            WARNED
                .call_once(|| eprintln!("offload: OFFLOAD_CPU_WARP_SIZE={other} is not 32 or 64; using 32"));
            32
        }
    }
}

/// Number of host threads the backend uses: `OFFLOAD_CPU_THREADS` or all cores.
pub fn worker_count() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        crate::host::config::config()
            .cpu_threads
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

struct Panicked {
    message: String,
    location: String,
    block: [u32; 3],
    thread: [u32; 3],
}

thread_local! {
    /// Where this thread's kernel panicked last (`file:line:column`), from the panic hook.
    static PANIC_PLACE: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Whether this thread runs a kernel's thread of a CPU-backend launch now.
pub(crate) fn in_kernel() -> bool {
    crate::arch::cpu::in_kernel()
}

/// A kernel thread's panic: its payload and where it happened (`file:line:column`).
type Panic = (Box<dyn std::any::Any + Send>, String);

/// Runs one kernel thread's body (or one poll of a lane), catching its panic with its place,
/// which a panic hook (installed once, chaining to the one before it for every other panic)
/// notes and keeps off stderr: the launch's `Err` reports it. (For lanes, `run_lanes`
/// installs the hook once per launch, not once per poll.)
#[inline(always)]
fn catch_kernel_panic<R>(body: impl FnOnce() -> R) -> Result<R, Panic> {
    // No other lane runs between a panic and this catch: the place read here is its own.
    catch_unwind(AssertUnwindSafe(body))
        .map_err(|payload| (payload, PANIC_PLACE.with_borrow_mut(std::mem::take)))
}

/// The panic hook of [`catch_kernel_panic`], installed once.
fn install_panic_hook() {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if in_kernel() {
                let place = info.location().map(|l| format!("{}:{}:{}", l.file(), l.line(), l.column()));
                PANIC_PLACE.with_borrow_mut(|p| *p = place.unwrap_or_default());
            } else {
                previous(info);
            }
        }));
    });
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

/// `5` for 1-D positions, `(5, 2, 0)` otherwise.
fn coords(c: [u32; 3]) -> String {
    if c[1] == 0 && c[2] == 0 { c[0].to_string() } else { format!("({}, {}, {})", c[0], c[1], c[2]) }
}

/// The emulated threads one call of a launch's body runs, one after another: every thread of
/// a block of a kernel without barriers (the body's loop over them is the kernel's own code,
/// so the kernel inlines into it). Each step makes its thread the current one (its indices,
/// for the kernel's intrinsics).
#[derive(Debug)]
pub struct BlockThreads<'a> {
    dim: [u32; 3],
    /// The thread the next step runs; `None` past the last.
    next: Option<[u32; 3]>,
    /// Where a step notes the thread running now, for the launch's error if it panics.
    at: &'a Cell<[u32; 3]>,
    /// The running emulated thread's context, which the intrinsics read.
    ctx: &'a Cell<ThreadCtx>,
}

impl BlockThreads<'_> {
    /// The next thread's indices, made current; `None` when every thread has run.
    #[inline(always)]
    pub fn next(&mut self) -> Option<[u32; 3]> {
        let t = self.next?;
        self.next = if t[0] + 1 < self.dim[0] {
            Some([t[0] + 1, t[1], t[2]])
        } else if t[1] + 1 < self.dim[1] {
            Some([0, t[1] + 1, t[2]])
        } else if t[2] + 1 < self.dim[2] {
            Some([0, 0, t[2] + 1])
        } else {
            None
        };
        self.enter(t);
        Some(t)
    }

    /// Runs `each` for thread `x` of every `x` in turn, made current, where the block is a row
    /// (its `y` and `z` extents 1): a counted loop, what [`BlockThreads::next`] steps through
    /// with no test of the other dimensions. Returns `false`, running nothing, where it is not.
    #[inline(always)]
    pub fn each_in_row(&mut self, mut each: impl FnMut(u32)) -> bool {
        if self.dim[1] != 1 || self.dim[2] != 1 || self.next != Some([0; 3]) {
            return false;
        }
        self.next = None;
        for x in 0..self.dim[0] {
            self.enter([x, 0, 0]);
            each(x);
        }
        true
    }

    /// Makes thread `t` the current one.
    #[inline(always)]
    fn enter(&self, t: [u32; 3]) {
        self.at.set(t);
        let mut ctx = self.ctx.get();
        ctx.thread = t;
        self.ctx.set(ctx);
    }
}

/// Runs `body` over every thread of `grid` (see [`BlockThreads`]), with each thread's indices
/// set. The first panic stops the launch and becomes [`Error::KernelPanicked`].
pub fn run(kernel: &str, grid: &Grid, body: &(impl Fn(&mut BlockThreads<'_>) + Sync)) -> Result<()> {
    let (block_dim, grid_dim) = (grid.block(), grid.blocks());
    install_panic_hook();
    schedule(kernel, grid, || (), &|(), block, record| {
        // The block's threads one after another, in one call of the body and under one catch:
        // the first panic ends the block, and `at` says whose it was.
        let at = Cell::new([0; 3]);
        let threads = || {
            let ctx = ThreadCtx { thread: [0; 3], block, block_dim, grid_dim, block_env: None };
            // SAFETY: no block environment to keep alive.
            unsafe {
                run_as(ctx, |ctx| {
                    body(&mut BlockThreads { dim: block_dim, next: Some([0; 3]), at: &at, ctx })
                })
            };
        };
        if let Err(panic) = catch_kernel_panic(threads) {
            record(panic, at.get());
        }
    })
}

/// What a worker thread keeps from block to block while it runs a launch's lanes: the block's
/// barrier state, shared memory, lanes and current thread, made once and reset for each block.
struct LaneWorker<F> {
    /// (First, so that lanes left by a failure are dropped before what they point to.)
    lanes: Vec<F>,
    sync: BlockSync,
    arena: Vec<u128>,
    live: Vec<u32>,
    /// The emulated thread being polled (the intrinsics read it).
    current: Cell<ThreadCtx>,
}

/// Runs the threads of each block of `grid` together, as lanes (see the module documentation):
/// `lane()` is the future of a thread, which reads its indices when it runs (each poll makes its
/// thread current), over `shared` bytes of zeroed shared memory per block. The first panic
/// stops the launch and becomes [`Error::KernelPanicked`]; threads that break the barrier
/// protocol fail it too.
pub(crate) fn run_lanes<F: Future<Output = ()>>(
    kernel: &str,
    grid: &Grid,
    shared: usize,
    lane: &(impl Fn() -> F + Sync),
) -> Result<()> {
    let (block_dim, grid_dim) = (grid.block(), grid.blocks());
    let threads = block_dim.iter().product::<u32>() as usize;
    let worker = || LaneWorker {
        lanes: Vec::with_capacity(threads),
        sync: BlockSync::new(threads, warp_size()),
        arena: vec![0u128; shared.div_ceil(16).max(1)],
        live: Vec::with_capacity(threads),
        current: Cell::new(ThreadCtx { thread: [0; 3], block: [0; 3], block_dim, grid_dim, block_env: None }),
    };
    install_panic_hook();
    schedule(kernel, grid, worker, &|w, block, record| {
        let LaneWorker { lanes, sync, arena, live, current } = w;
        sync.reset();
        arena.fill(0);
        lanes.extend((0..threads).map(|_| lane()));
        let shared = arena.as_mut_ptr().cast::<u8>();
        current.set(ThreadCtx {
            thread: [0; 3],
            block,
            block_dim,
            grid_dim,
            block_env: Some(BlockEnv { shared, sync: &*sync, serial: sync.serial(), tid: 0 }),
        });
        let mut cx = Context::from_waker(Waker::noop());
        // SAFETY: `current` (set above for the block, and to each lane before its poll) points
        // to the block's shared memory and `sync`, which outlive the guard: it is dropped at
        // the end of this block's run.
        let _entered = unsafe { enter(current) };
        let poll = |t: usize| {
            set_lane(current, t);
            // SAFETY: `lanes` is filled before the first poll and is neither grown nor
            // reordered until it is cleared, after the last: each future stays in place.
            let future = unsafe { Pin::new_unchecked(&mut lanes[t]) };
            match catch_kernel_panic(|| future.poll(&mut cx)) {
                Ok(Poll::Pending) => Poll::Pending,
                Ok(Poll::Ready(())) => {
                    sync.finish(t, false);
                    Poll::Ready(None)
                }
                Err(panic) => {
                    sync.finish(t, true);
                    Poll::Ready(Some(panic))
                }
            }
        };
        in_turns(threads, live, poll, &|| sync.stall(), |t, panic| {
            if let Some(panic) = panic {
                // (The lane's indices, as its intrinsics work them out.)
                set_lane(current, t);
                record(panic, current.get().thread());
            }
        });
        lanes.clear();
    })
}

/// Where a block's run reports a thread's panic (with the thread's indices).
type Record<'a> = &'a dyn Fn(Panic, [u32; 3]);

/// A launch's blocks as its workers take them, and its first panic.
struct Blocks {
    grid_dim: [u32; 3],
    count: u64,
    next: AtomicU64,
    stop: AtomicBool,
    first_panic: Mutex<Option<Panicked>>,
}

impl Blocks {
    fn new(grid: &Grid) -> Blocks {
        let grid_dim = grid.blocks();
        Blocks {
            grid_dim,
            count: grid_dim.iter().map(|&b| u64::from(b)).product::<u64>(),
            next: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            first_panic: Mutex::new(None),
        }
    }

    /// The next block's indices, or `None` when all are taken or the launch failed.
    #[inline]
    fn take(&self) -> Option<[u32; 3]> {
        if self.stop.load(Ordering::Relaxed) {
            return None;
        }
        let linear = self.next.fetch_add(1, Ordering::Relaxed);
        if linear >= self.count {
            return None;
        }
        let gx = u64::from(self.grid_dim[0]);
        let gy = u64::from(self.grid_dim[1]);
        Some([(linear % gx) as u32, ((linear / gx) % gy) as u32, (linear / (gx * gy)) as u32])
    }

    /// Notes thread `thread` of block `block` panicked, and stops the launch.
    fn record(&self, (payload, location): Panic, block: [u32; 3], thread: [u32; 3]) {
        self.stop.store(true, Ordering::Relaxed);
        let mut slot = self.first_panic.lock().unwrap_or_else(|e| e.into_inner());
        // A thread failing because another broke the barrier protocol is not the first
        // cause.
        let message = panic_message(&*payload);
        let secondary = |m: &str| m.contains(BLOCK_FAILED);
        if slot.is_none() || slot.as_ref().is_some_and(|p| secondary(&p.message)) && !secondary(&message) {
            *slot = Some(Panicked { message, location, block, thread });
        }
    }

    /// Runs `worker` on as many host threads as there are blocks to share, up to the
    /// backend's count; then the launch's result.
    fn run(self, kernel: &str, worker: impl Fn(&Blocks) + Sync) -> Result<()> {
        let workers = (worker_count() as u64).min(self.count).max(1);
        if workers == 1 {
            worker(&self);
        } else {
            std::thread::scope(|s| {
                for _ in 0..workers {
                    s.spawn(|| worker(&self));
                }
            });
        }
        // What the launch's threads printed, now that they are done.
        crate::host::kernel_output::flush();
        match self.first_panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
            None => Ok(()),
            Some(p) => Err(Error::KernelPanicked {
                kernel: kernel.to_owned(),
                message: p.message,
                location: p.location,
                block: coords(p.block),
                thread: coords(p.thread),
            }),
        }
    }
}

/// Spreads the blocks of `grid` over the worker threads, each with state `worker()` of its
/// own, `block` running each block (with the worker's state, the block's indices and its panic
/// report). The first panic stops the launch and becomes [`Error::KernelPanicked`].
fn schedule<W>(
    kernel: &str,
    grid: &Grid,
    worker_state: impl Fn() -> W + Sync,
    block: &(impl Fn(&mut W, [u32; 3], Record<'_>) + Sync),
) -> Result<()> {
    Blocks::new(grid).run(kernel, |blocks| {
        let mut state = worker_state();
        while let Some(at) = blocks.take() {
            block(&mut state, at, &|panic, thread| blocks.record(panic, at, thread));
        }
    })
}

/// Runs the blocks of `grid` with their threads in lockstep: `worker` is code the kernels
/// macro generates for a kernel whose barriers and warp operations all sit where the whole
/// block gets together (see `Lockstep`); it is called once per worker thread, and runs
/// blocks while [`Lockstep::next_block`] gives it one, over `shared` bytes of zeroed shared
/// memory per block. The first panic stops the launch and becomes
/// [`Error::KernelPanicked`], naming the lane that ran when it happened.
pub(crate) fn run_lockstep(
    kernel: &str,
    grid: &Grid,
    shared: usize,
    launch: u64,
    worker: &(impl Fn(&mut Lockstep<'_>) + Sync),
) -> Result<()> {
    let (block_dim, grid_dim) = (grid.block(), grid.blocks());
    let threads = block_dim.iter().product::<u32>() as usize;
    install_panic_hook();
    Blocks::new(grid).run(kernel, |blocks| {
        let mut sync = BlockSync::new(threads, warp_size());
        let mut arena = vec![0u128; shared.div_ceil(16).max(1)];
        let mut live = Vec::with_capacity(threads);
        let current =
            Cell::new(ThreadCtx { thread: [0; 3], block: [0; 3], block_dim, grid_dim, block_env: None });
        // SAFETY: `current`'s block environment, once `next_block` sets it, points to `arena`
        // and `sync`, which outlive the guard (declared after them, dropped before them) and
        // which only this host thread, running the block's lanes, uses.
        let _entered = unsafe { enter(&current) };
        let mut ls = Lockstep {
            current: &current,
            sync: &mut sync,
            arena: &mut arena,
            live: &mut live,
            blocks,
            block: None,
            place: LanePlace::default(),
            issued: Cell::new(0),
            threads,
            launch,
        };
        if let Err(panic) = catch_kernel_panic(|| worker(&mut ls)) {
            let (block, thread) = (ls.block.unwrap_or_default(), current.get().thread());
            blocks.record(panic, block, thread);
        }
    })
}

/// One worker's blocks, their threads run in lockstep by code the kernels macro generates
/// (`offload::__private`): for each block ([`next_block`](Self::next_block)), the kernel's
/// body between two barriers or warp operations runs as one loop over the block's lanes
/// ([`each`](Self::each) makes each current), locals that live on kept per lane; each
/// barrier or warp operation is every lane's wait, started in one loop and awaited together
/// ([`wait`](Self::wait)); each condition of a branch or loop that holds one is the same in
/// every lane ([`Agree`]). The macro generates this only where the uniformity analysis proves
/// every barrier and warp operation is reached by the whole block; other kernels run as
/// lanes polled in turns ([`run_lanes`]).
#[derive(Debug)]
pub struct Lockstep<'w> {
    current: &'w Cell<ThreadCtx>,
    sync: &'w mut BlockSync,
    arena: &'w mut Vec<u128>,
    live: &'w mut Vec<u32>,
    blocks: &'w Blocks,
    /// The block running now.
    block: Option<[u32; 3]>,
    /// Where its lanes are, for their tokens.
    place: LanePlace,
    /// Lanes of the block that have their token (they take them in order, once each).
    issued: Cell<usize>,
    threads: usize,
    launch: u64,
}

impl std::fmt::Debug for Blocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Blocks").field("grid_dim", &self.grid_dim).finish_non_exhaustive()
    }
}

impl Lockstep<'_> {
    /// Starts the worker's next block (its shared memory zeroed, its barrier new), or `false`
    /// when none is left.
    pub fn next_block(&mut self) -> bool {
        let Some(block) = self.blocks.take() else { return false };
        self.block = Some(block);
        self.sync.reset();
        self.arena.fill(0);
        let ctx = self.current.get();
        self.place = LanePlace::new(block, ctx.block_dim, ctx.grid_dim);
        self.issued.set(0);
        self.current.set(ThreadCtx {
            block,
            block_env: Some(BlockEnv {
                shared: self.arena.as_mut_ptr().cast::<u8>(),
                sync: &*self.sync,
                serial: self.sync.serial(),
                tid: 0,
            }),
            ..ctx
        });
        true
    }

    /// Threads of a block.
    #[inline(always)]
    pub fn lanes(&self) -> usize {
        self.threads
    }

    /// The block's lanes in order, each made the emulated thread that runs (its indices, for
    /// the intrinsics) as it is given: the loop of each piece of a lockstep kernel. (Only lanes
    /// of the block: a lane's index places its shared-memory slots.)
    #[inline(always)]
    pub fn each(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.threads).inspect(|&t| set_lane(self.current, t))
    }

    /// What `global_linear_id()` returns to lane `t` of the block (the kernels macro's
    /// lockstep loops call this where the kernel calls the intrinsic, which would read the
    /// emulated thread's context).
    #[inline(always)]
    pub fn linear_id(&self, t: usize) -> usize {
        self.place.linear_id(t)
    }

    /// What `thread_idx_x()` (`D = 0`) … `thread_idx_z()` return to lane `t` (see
    /// [`Lockstep::linear_id`]).
    #[inline(always)]
    pub fn thread_idx<const D: usize>(&self, t: usize) -> u32 {
        self.place.thread(t)[D]
    }

    /// What `global_id_x()` (`D = 0`) … `global_id_z()` return to lane `t` (see
    /// [`Lockstep::linear_id`]).
    #[inline(always)]
    pub fn global_id<const D: usize>(&self, t: usize) -> usize {
        self.place.global_id::<D>(t)
    }

    /// The token of lane `t` (for its parameters' views): once per lane and block, the lanes
    /// in order, in the block's first loop. (Each thread of the block gets one token at most,
    /// so no two lanes can hold views of one thread's elements.)
    ///
    /// # Panics
    ///
    /// When lane `t` has had its token, an earlier lane has not, or there is no lane `t` (a
    /// kernels-macro bug).
    #[inline(always)]
    pub fn token(&self, t: usize) -> ThreadToken {
        if self.block.is_none() || self.issued.get() != t || t >= self.threads {
            token_out_of_turn();
        }
        self.issued.set(t + 1);
        ThreadToken::lane(self.launch, &self.place, t)
    }

    /// Runs the round of each warp of the block on the lanes' parts in `steps`: the values in
    /// lane order, the warp's part once, then each lane's read.
    ///
    /// # Panics
    ///
    /// When a lane has put no part (a kernels-macro bug).
    pub fn warp<A, R, T>(&mut self, steps: &mut WarpSteps<A, R, T>)
    where
        A: FnOnce(&mut [u64; 64], WarpShape),
        R: FnOnce(&[u64; 64], WarpShape) -> T,
    {
        let size = self.sync.warp_size() as usize;
        let mut first = 0;
        while first < self.threads {
            let lanes = (self.threads - first).min(size);
            let mut values = [0u64; 64];
            values[..lanes].copy_from_slice(&steps.values[first..first + lanes]);
            let shape = WarpShape {
                size,
                lanes: crate::arch::lanes_below(lanes as u32),
                full: lanes == size,
                lane: 0,
            };
            for l in 0..lanes {
                // (A lane's value is read above whether it put one or not, but its round's
                // result only once it has: the block fails here otherwise.)
                let Some((all, read)) = steps.parts[first + l].take() else { not_waiting() };
                // (Every lane's part does the same for the warp: the first lane's runs.)
                if l == 0 {
                    all(&mut values, shape);
                }
                steps.done[first + l] = Some(read(&values, WarpShape { lane: l as u32, ..shape }));
            }
            first += size;
        }
    }

    /// Runs every lane's wait started in `steps` to its end, polling the lanes in turns as
    /// the futures backend does, so that a barrier's or warp operation's own checks apply.
    ///
    /// # Panics
    ///
    /// When the lanes cannot all finish (the block fails), or `steps` is not one per lane.
    pub fn wait<F: Future>(&mut self, steps: &mut Steps<F>) {
        if steps.pending == 0 {
            return;
        }
        assert!(
            steps.slots.len() == self.threads,
            "offload: a lockstep wait of {} lanes in a block of {}",
            steps.slots.len(),
            self.threads
        );
        let (current, sync) = (self.current, &*self.sync);
        let poll = |t: usize| {
            set_lane(current, t);
            steps.poll(t)
        };
        in_turns(self.threads, self.live, poll, &|| sync.stall(), |_, ()| {});
        steps.pending = 0;
    }
}

/// Each lane's part of a warp operation in [`Lockstep`], done for the whole block at once,
/// without futures: every lane puts its value ([`put`](Self::put)), then
/// [`Lockstep::warp`] runs each warp's round as the futures' exchange does (the same parts:
/// `arch::cpu::WarpOp`), and each lane takes its result ([`take`](Self::take)).
pub struct WarpSteps<A, R, T> {
    /// Each lane's value, in lane order (a warp's are copied out at once).
    values: Vec<u64>,
    /// Each lane's parts, until its warp's round.
    parts: Vec<Option<(A, R)>>,
    done: Vec<Option<T>>,
}

impl<A, R, T> std::fmt::Debug for WarpSteps<A, R, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WarpSteps").field("lanes", &self.parts.len()).finish()
    }
}

impl<A: FnOnce(&mut [u64; 64], WarpShape), R: FnOnce(&[u64; 64], WarpShape) -> T, T> WarpSteps<A, R, T> {
    /// A slot per lane.
    pub fn lanes(n: usize) -> WarpSteps<A, R, T> {
        WarpSteps {
            values: vec![0; n],
            parts: (0..n).map(|_| None).collect(),
            done: (0..n).map(|_| None).collect(),
        }
    }

    /// Lane `t`'s part.
    #[inline(always)]
    pub fn put(&mut self, t: usize, op: WarpOp<A, R>) {
        let WarpOp { value, all, read } = op;
        self.values[t] = value;
        self.parts[t] = Some((all, read));
    }

    /// Lane `t`'s result, once its warp's round has run.
    #[inline(always)]
    pub fn take(&mut self, t: usize) -> T {
        match self.done[t].take() {
            Some(out) => out,
            None => not_waiting(),
        }
    }
}

/// Each lane's barrier or warp operation in [`Lockstep`]: started by the lane
/// ([`start`](Self::start)), waited for with the block's other lanes ([`Lockstep::wait`]),
/// then its result taken ([`take`](Self::take)). Each lane's future stays where it was started
/// until it is dropped: the slots are a boxed slice that nothing reallocates or lends out.
pub struct Steps<F: Future> {
    slots: Box<[Step<F>]>,
    /// Lanes whose future has not finished.
    pending: usize,
}

impl<F: Future> std::fmt::Debug for Steps<F> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Steps").field("lanes", &self.slots.len()).field("pending", &self.pending).finish()
    }
}

enum Step<F: Future> {
    Empty,
    Waiting(F),
    Done(F::Output),
}

impl<F: Future> Steps<F> {
    /// A slot per lane.
    pub fn lanes(n: usize) -> Steps<F> {
        Steps { slots: (0..n).map(|_| Step::Empty).collect(), pending: 0 }
    }

    /// Starts lane `t`'s wait (lane `t` being the one that runs): polls `f` once, where it
    /// stays.
    #[inline(always)]
    pub fn start(&mut self, t: usize, f: F) {
        self.slots[t] = Step::Waiting(f);
        if self.poll(t).is_pending() {
            self.pending += 1;
        }
    }

    /// Polls lane `t`'s future, if it waits: ready once it is done.
    #[inline(always)]
    fn poll(&mut self, t: usize) -> Poll<()> {
        let slot = &mut self.slots[t];
        let Step::Waiting(f) = slot else { return Poll::Ready(()) };
        // SAFETY: the future is in a slot of a boxed slice that `Steps` never moves, reallocates
        // or lends out; it stays there until it is dropped in place: replaced by its result
        // below, by a later `start`, or dropped with the `Steps`.
        let f = unsafe { Pin::new_unchecked(f) };
        match f.poll(&mut Context::from_waker(Waker::noop())) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(out) => {
                *slot = Step::Done(out);
                Poll::Ready(())
            }
        }
    }

    /// Lane `t`'s result, once waited for.
    ///
    /// # Panics
    ///
    /// When the lane's wait has not finished.
    #[inline(always)]
    pub fn take(&mut self, t: usize) -> F::Output {
        match &self.slots[t] {
            Step::Done(_) => match std::mem::replace(&mut self.slots[t], Step::Empty) {
                Step::Done(out) => out,
                _ => unreachable!(),
            },
            _ => not_waiting(),
        }
    }
}

#[cold]
#[inline(never)]
fn not_waiting() -> ! {
    panic!("offload: a lockstep wait's result taken before it finished (a kernels-macro bug)")
}

/// A slot per lane for a local that lives from one lockstep loop to the next.
pub fn slots<T>(n: usize) -> Vec<Option<T>> {
    (0..n).map(|_| None).collect()
}

/// A local kept by [`slots`], taken back by its lane.
#[inline(always)]
pub fn restore<T>(slot: &mut Option<T>) -> T {
    match slot.take() {
        Some(v) => v,
        None => not_kept(),
    }
}

/// A local kept by [`slots`], used by its lane where it lies (the loop's code names it through
/// the reference, and it stays kept).
#[inline(always)]
pub fn lend<T>(slot: &mut Option<T>) -> &mut T {
    match slot {
        Some(v) => v,
        None => not_kept(),
    }
}

#[cold]
#[inline(never)]
fn token_out_of_turn() -> ! {
    panic!("offload: a lockstep lane's token asked for twice or out of turn (a kernels-macro bug)")
}

#[cold]
#[inline(never)]
fn not_kept() -> ! {
    panic!("offload: a lockstep local that was not kept (a kernels-macro bug)")
}

/// The condition of a branch or loop that holds a barrier or warp operation, in
/// [`Lockstep`]: every lane's must be the same.
#[derive(Debug, Default)]
pub struct Agree(Option<bool>);

impl Agree {
    /// Lane's value (lanes in order); the block fails at the first lane that differs from
    /// the first.
    #[inline(always)]
    #[track_caller]
    pub fn lane(&mut self, v: bool) {
        match self.0 {
            None => self.0 = Some(v),
            Some(first) if first != v => disagree(first),
            Some(_) => {}
        }
    }

    /// The lanes' common value.
    #[inline(always)]
    pub fn get(&self) -> bool {
        self.0.unwrap_or(false)
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn disagree(first: bool) -> ! {
    panic!(
        "threads of a block disagree on a condition that encloses barriers or warp operations: the block's first thread has {first}, this one {}; every thread must reach the same barriers and warp operations",
        !first
    )
}

#[cfg(test)]
mod tests {
    use super::Agree;
    use crate::host::error::Error;
    use crate::host::grid::Grid;

    #[test]
    fn lanes_that_agree_give_their_common_value() {
        for v in [true, false] {
            let mut a = Agree::default();
            for _ in 0..5 {
                a.lane(v);
            }
            assert_eq!(a.get(), v);
        }
    }

    #[test]
    fn a_lane_that_disagrees_fails_the_block() {
        let caught = std::panic::catch_unwind(|| {
            let mut a = Agree::default();
            a.lane(true);
            a.lane(true);
            a.lane(false);
        });
        let payload = caught.expect_err("a disagreeing lane panics");
        let message = payload.downcast_ref::<String>().cloned().unwrap_or_default();
        assert!(message.contains("disagree"), "{message}");
    }

    /// A lane's panic names the lane's own indices in a 2-D block (worked out from its index
    /// in the block, x fastest) and its block.
    #[test]
    fn a_lane_that_panics_is_named_by_its_indices_in_a_2d_block() {
        // Blocks of 4 × 3 threads, 2 × 1 blocks; lane 9 of block 1 is thread (1, 2, 0).
        let grid = Grid::threads_xy(8, 3).block_xy(4, 3);
        let lane = || async {
            let c = crate::arch::cpu::current();
            if c.block == [1, 0, 0] && c.thread() == [1, 2, 0] {
                panic!("this one");
            }
        };
        let err = super::run_lanes("k", &grid, 0, &lane).unwrap_err();
        let Error::KernelPanicked { message, block, thread, .. } = err else { panic!("{err}") };
        assert_eq!((message.as_str(), block.as_str(), thread.as_str()), ("this one", "1", "(1, 2, 0)"));
    }
    /// A lane's token comes once, lanes in order: asking out of turn or twice fails the launch
    /// (no two lanes can hold the views of one thread's elements).
    #[test]
    fn lane_tokens_come_once_and_in_order() {
        let grid = Grid::threads(8).block_size(4);
        let run = |order: &'static [usize]| {
            super::run_lockstep("k", &grid, 0, 1, &|ls: &mut super::Lockstep<'_>| {
                while ls.next_block() {
                    for &t in order {
                        let _ = ls.token(t);
                    }
                }
            })
        };
        run(&[0, 1, 2, 3]).expect("every lane once, in order");
        for order in [&[1usize][..], &[0, 0], &[0, 1, 2, 3, 4]] {
            let err = run(order).expect_err("out of turn");
            let Error::KernelPanicked { message, .. } = err else { panic!("{err}") };
            assert!(message.contains("out of turn"), "{order:?}: {message}");
        }
    }

    /// The indices a lockstep loop gives its lanes in place of the intrinsics are the ones the
    /// intrinsics read from each lane's context, for blocks that are rows and blocks that are
    /// not, in 1-, 2- and 3-D grids.
    #[test]
    fn lane_indices_are_the_intrinsics_values() {
        use crate::index::*;
        for (blocks, block) in
            [([3, 1, 1], [8, 1, 1]), ([2, 3, 1], [4, 2, 1]), ([2, 2, 3], [3, 2, 2]), ([1, 2, 2], [5, 1, 1])]
        {
            let [tx, ty, tz] = std::array::from_fn(|d| (blocks[d] * block[d]) as usize);
            let grid = Grid::threads_xyz(tx, ty, tz).block_xyz(block[0], block[1], block[2]);
            let seen = std::sync::atomic::AtomicUsize::new(0);
            super::run_lockstep("k", &grid, 0, 1, &|ls: &mut super::Lockstep<'_>| {
                while ls.next_block() {
                    for t in ls.each() {
                        assert_eq!(ls.linear_id(t), global_linear_id(), "{blocks:?} {block:?} lane {t}");
                        let thread = [thread_idx_x(), thread_idx_y(), thread_idx_z()];
                        assert_eq!(
                            [ls.thread_idx::<0>(t), ls.thread_idx::<1>(t), ls.thread_idx::<2>(t)],
                            thread
                        );
                        let global = [global_id_x(), global_id_y(), global_id_z()];
                        assert_eq!(
                            [ls.global_id::<0>(t), ls.global_id::<1>(t), ls.global_id::<2>(t)],
                            global
                        );
                        seen.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    }
                }
            })
            .expect("the lanes' indices agree");
            assert_eq!(seen.into_inner(), blocks.iter().chain(&block).product::<u32>() as usize);
        }
    }
}
