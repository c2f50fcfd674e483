//! The CPU emulation backend's scheduler: runs the host-compiled kernels module over the
//! launch grid on host threads. Blocks are spread over worker threads; each block's threads
//! run one after another, or — when the kernel uses barriers, shared memory or warps — as
//! lanes that take turns on the block's host thread, pausing where they wait for each other
//! and meeting at the block's `BlockSync`.

use crate::arch::cpu::{
    BLOCK_FAILED, BlockEnv, BlockSync, LANE_STACK_BYTES, LaneCrew, ThreadCtx, in_turns, run_as,
};
use crate::host::error::{Error, Result};
use crate::host::grid::Grid;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

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

/// Runs one kernel thread's body, catching its panic with its place, which a panic hook
/// (installed once, chaining to the one before it for every other panic) notes and keeps off
/// stderr: the launch's `Err` reports it.
#[inline(always)]
fn catch_kernel_panic(body: impl FnOnce()) -> Result<(), Panic> {
    install_panic_hook();
    // No lane pauses between its panic and this catch: the place read here is its own.
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

/// A block's shared memory, handed to each of its threads.
#[derive(Clone, Copy)]
struct SharedMemory(*mut u8);

impl SharedMemory {
    /// (A method, so that closures capture the whole value, not its raw field.)
    fn get(self) -> *mut u8 {
        self.0
    }
}

// SAFETY: the block's threads use the memory only as the kernel's shared-memory types allow
// (each its own elements between barriers, reads after them), one at a time (they are lanes
// taking turns), and it outlives them (it is freed after the lanes have returned).
unsafe impl Sync for SharedMemory {}

/// `5` for 1-D positions, `(5, 2, 0)` otherwise.
fn coords(c: [u32; 3]) -> String {
    if c[1] == 0 && c[2] == 0 { c[0].to_string() } else { format!("({}, {}, {})", c[0], c[1], c[2]) }
}

/// The emulated threads one call of a launch's body runs, one after another: every thread of
/// a block for a kernel without barriers (the body's loop over them is the kernel's own code,
/// so the kernel inlines into it), or the one thread of a lane. Each step makes its thread the
/// current one (its indices, for the kernel's intrinsics).
#[derive(Debug)]
pub struct BlockThreads<'a> {
    dim: [u32; 3],
    /// The thread the next step runs; `None` past the last.
    next: Option<[u32; 3]>,
    /// Where a step notes the thread running now, for the launch's error if it panics; `None`
    /// for a lane, whose one thread is noted and made current around it already (the steps
    /// then make no thread current).
    at: Option<&'a std::cell::Cell<[u32; 3]>>,
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
        if let Some(at) = self.at {
            at.set(t);
            crate::arch::cpu::set_thread(t);
        }
        Some(t)
    }
}

/// Runs `body` over every thread of `grid` (see [`BlockThreads`]), with each thread's indices
/// set. The first panic stops the launch and becomes [`Error::KernelPanicked`].
pub fn run(
    kernel: &str,
    grid: &Grid,
    shared: Option<usize>,
    body: &(impl Fn(&mut BlockThreads<'_>) + Sync),
) -> Result<()> {
    let grid_dim = grid.blocks();
    let block_dim = grid.block();
    let blocks = grid_dim.iter().map(|&b| u64::from(b)).product::<u64>();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let first_panic: Mutex<Option<Panicked>> = Mutex::new(None);
    let launch_error: Mutex<Option<Error>> = Mutex::new(None);
    let record = |(payload, location): Panic, block: [u32; 3], thread: [u32; 3]| {
        stop.store(true, Ordering::Relaxed);
        let mut slot = first_panic.lock().unwrap_or_else(|e| e.into_inner());
        // A thread failing because another broke the barrier protocol is not the first cause.
        let message = panic_message(&*payload);
        let secondary = |m: &str| m.contains(BLOCK_FAILED);
        if slot.is_none() || slot.as_ref().is_some_and(|p| secondary(&p.message)) && !secondary(&message) {
            *slot = Some(Panicked { message, location, block, thread });
        }
    };
    let lane_stack = crate::host::config::config().cpu_stack_bytes.unwrap_or(LANE_STACK_BYTES);
    let worker = || {
        let mut crew = LaneCrew::new(lane_stack);
        while !stop.load(Ordering::Relaxed) {
            let linear = next.fetch_add(1, Ordering::Relaxed);
            if linear >= blocks {
                break;
            }
            let gx = u64::from(grid_dim[0]);
            let gy = u64::from(grid_dim[1]);
            let block = [(linear % gx) as u32, ((linear / gx) % gy) as u32, (linear / (gx * gy)) as u32];
            let ctx =
                |thread: [u32; 3], block_env| ThreadCtx { thread, block, block_dim, grid_dim, block_env };
            match shared {
                None => {
                    // The block's threads one after another, in one call of the body and under
                    // one catch: the first panic ends the block, and `at` says whose it was.
                    let at = std::cell::Cell::new([0; 3]);
                    let threads = || {
                        let mut threads = BlockThreads { dim: block_dim, next: Some([0; 3]), at: Some(&at) };
                        // SAFETY: no block environment to keep alive.
                        unsafe { run_as(ctx([0; 3], None), || body(&mut threads)) };
                    };
                    if let Err(panic) = catch_kernel_panic(threads) {
                        return record(panic, block, at.get());
                    }
                }
                Some(bytes) => {
                    // Barriers need every thread of the block under way at once: lanes.
                    let threads = block_dim.iter().product::<u32>() as usize;
                    let mut arena = vec![0u128; bytes.div_ceil(16).max(1)];
                    let arena_ptr = SharedMemory(arena.as_mut_ptr().cast::<u8>());
                    let sync = BlockSync::new(threads, warp_size());
                    let tid = |t: usize| {
                        let t = t as u32;
                        if block_dim[1] == 1 && block_dim[2] == 1 {
                            [t, 0, 0]
                        } else {
                            [
                                t % block_dim[0],
                                (t / block_dim[0]) % block_dim[1],
                                t / (block_dim[0] * block_dim[1]),
                            ]
                        }
                    };
                    let lane = |t: usize| {
                        let env = BlockEnv { shared: arena_ptr.get(), sync: &sync, tid: t };
                        // The lane's one thread (`run_as` makes it current).
                        let one = || body(&mut BlockThreads { dim: [1; 3], next: Some(tid(t)), at: None });
                        // SAFETY: the arena and `sync` outlive the lanes (`in_turns` returns
                        // when all have), which are the block's threads and the only users.
                        let outcome = unsafe { run_as(ctx(tid(t), Some(env)), || catch_kernel_panic(one)) };
                        sync.finish(t, outcome.is_err());
                        outcome
                    };
                    let ran = in_turns(&mut crew, threads, &lane, &|| sync.stall(), |t, outcome| {
                        if let Err(panic) = outcome {
                            record(panic, block, tid(t));
                        }
                    });
                    drop(arena);
                    if let Err(e) = ran {
                        stop.store(true, Ordering::Relaxed);
                        let what = format!("the stacks of a CPU-backend block of {threads} threads");
                        let request = format!("{threads} × {} KiB: {e}", lane_stack >> 10);
                        launch_error
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .get_or_insert(Error::OutOfMemory { what, request });
                        return;
                    }
                }
            }
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
    if let Some(e) = launch_error.into_inner().unwrap_or_else(|e| e.into_inner()) {
        return Err(e);
    }
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
