//! The CPU emulation backend's scheduler: runs the host-compiled kernels module over the
//! launch grid on host threads. Blocks are spread over worker threads; each block's threads
//! run one after another ([`run`]), or — when the kernel uses barriers, shared memory or warps
//! ([`run_lanes`]) — as lanes, futures polled in turns on the block's host thread, each
//! returning `Pending` where it waits for the others at the block's `BlockSync`.

use crate::arch::cpu::{BLOCK_FAILED, BlockEnv, BlockSync, ThreadCtx, enter, in_turns, run_as, set_lane};
use crate::host::error::{Error, Result};
use crate::host::grid::Grid;
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
        self.at.set(t);
        crate::arch::cpu::set_thread(t);
        Some(t)
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
            let mut threads = BlockThreads { dim: block_dim, next: Some([0; 3]), at: &at };
            let ctx = ThreadCtx { thread: [0; 3], block, block_dim, grid_dim, block_env: None };
            // SAFETY: no block environment to keep alive.
            unsafe { run_as(ctx, || body(&mut threads)) };
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

/// Spreads the blocks of `grid` over the worker threads, each with state `worker()` of its
/// own, `block` running each block (with the worker's state, the block's indices and its panic
/// report). The first panic stops the launch and becomes [`Error::KernelPanicked`].
fn schedule<W>(
    kernel: &str,
    grid: &Grid,
    worker_state: impl Fn() -> W + Sync,
    block: &(impl Fn(&mut W, [u32; 3], Record<'_>) + Sync),
) -> Result<()> {
    let grid_dim = grid.blocks();
    let blocks = grid_dim.iter().map(|&b| u64::from(b)).product::<u64>();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let first_panic: Mutex<Option<Panicked>> = Mutex::new(None);
    let worker = || {
        let mut state = worker_state();
        while !stop.load(Ordering::Relaxed) {
            let linear = next.fetch_add(1, Ordering::Relaxed);
            if linear >= blocks {
                break;
            }
            let gx = u64::from(grid_dim[0]);
            let gy = u64::from(grid_dim[1]);
            let at = [(linear % gx) as u32, ((linear / gx) % gy) as u32, (linear / (gx * gy)) as u32];
            let record = |(payload, location): Panic, thread: [u32; 3]| {
                stop.store(true, Ordering::Relaxed);
                let mut slot = first_panic.lock().unwrap_or_else(|e| e.into_inner());
                // A thread failing because another broke the barrier protocol is not the first
                // cause.
                let message = panic_message(&*payload);
                let secondary = |m: &str| m.contains(BLOCK_FAILED);
                if slot.is_none()
                    || slot.as_ref().is_some_and(|p| secondary(&p.message)) && !secondary(&message)
                {
                    *slot = Some(Panicked { message, location, block: at, thread });
                }
            };
            block(&mut state, at, &record);
        }
    };
    let workers = (worker_count() as u64).min(blocks).max(1);
    if workers == 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..workers {
                s.spawn(worker);
            }
        });
    }
    // What the launch's threads printed, now that they are done.
    crate::host::kernel_output::flush();
    match first_panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
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

#[cfg(test)]
mod tests {
    use crate::host::error::Error;
    use crate::host::grid::Grid;

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
}
