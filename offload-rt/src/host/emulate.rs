//! The CPU emulation backend: runs the host-compiled kernels module over the launch grid
//! on host threads. Blocks are spread over worker threads; each block's threads run one
//! after another with the thread indices set for each.

use super::error::{Error, Result};
use super::grid::Grid;
use super::warp_emu::{BLOCK_FAILED, SPLIT_MARK, WarpSync, warp_size};
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};

/// Indices of the emulated GPU thread running on this host thread.
#[derive(Clone, Copy, Debug)]
pub struct ThreadCtx {
    pub thread: [u32; 3],
    pub block: [u32; 3],
    pub block_dim: [u32; 3],
    pub grid_dim: [u32; 3],
    /// The block's shared memory and barrier, when the kernel uses them.
    pub block_env: Option<(*mut u8, *const BlockSync)>,
}

thread_local! {
    static CURRENT: Cell<Option<ThreadCtx>> = const { Cell::new(None) };
}

/// The indices of the emulated thread that calls this.
///
/// # Panics
///
/// When called outside a kernel launch: thread indices only exist inside kernels.
pub fn current() -> ThreadCtx {
    CURRENT.get().expect("offload: thread and block indices exist only inside a kernel launch")
}

/// Number of host threads the backend uses: `OFFLOAD_CPU_THREADS` or all cores.
pub fn worker_count() -> usize {
    static N: OnceLock<usize> = OnceLock::new();
    *N.get_or_init(|| {
        std::env::var("OFFLOAD_CPU_THREADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

struct Panicked {
    message: String,
    block: [u32; 3],
    thread: [u32; 3],
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

/// The barrier of one emulated block, which also checks that every thread passes the same
/// barriers: a thread that finishes while others wait, or arrives at another phase, fails
/// the launch instead of deadlocking or racing.
#[derive(Debug)]
pub struct BlockSync {
    threads: usize,
    state: Mutex<SyncState>,
    turn: Condvar,
    /// The block's warps, `warp_size()` consecutive threads each.
    warps: Vec<WarpSync>,
}

#[derive(Debug, Default)]
struct SyncState {
    arrived: usize,
    finished: usize,
    generation: u64,
    phase: Option<u32>,
    failed: bool,
}

const OUT_OF_STEP_MARK: &str = "passed different barriers";
const OUT_OF_STEP: &str = "threads of a block passed different barriers: every thread must call `sync` the same number of times (keep it out of divergent branches and early returns)";

impl BlockSync {
    pub(crate) fn new(threads: usize) -> BlockSync {
        let size = warp_size() as usize;
        let warps = (0..threads.div_ceil(size))
            .map(|w| WarpSync::new((threads - w * size).min(size) as u32))
            .collect();
        BlockSync { threads, state: Mutex::new(SyncState::default()), turn: Condvar::new(), warps }
    }

    /// The emulated warp of block thread `tid`, and the thread's lane in it.
    pub fn warp(&self, tid: usize) -> (&WarpSync, u32) {
        let size = warp_size() as usize;
        (&self.warps[tid / size], (tid % size) as u32)
    }

    /// Marks the block failed and wakes every waiting thread, at barriers and in warps.
    fn fail(&self, s: &mut SyncState) {
        s.failed = true;
        self.turn.notify_all();
        for w in &self.warps {
            w.fail();
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, SyncState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Thread `tid` waits at its barrier number `phase`.
    pub fn wait(&self, phase: u32, tid: usize) {
        let mut s = self.lock();
        if s.failed || s.finished > 0 || s.phase.is_some_and(|p| p != phase) {
            self.fail(&mut s);
            drop(s);
            panic!("{OUT_OF_STEP}");
        }
        let (warp, lane) = self.warp(tid);
        if let Some(why) = warp.park(lane) {
            self.fail(&mut s);
            drop(s);
            panic!("threads {SPLIT_MARK}: {why}");
        }
        s.phase = Some(phase);
        s.arrived += 1;
        if s.arrived == self.threads {
            s.arrived = 0;
            s.phase = None;
            s.generation += 1;
            for w in &self.warps {
                w.unpark_all();
            }
            self.turn.notify_all();
            return;
        }
        let generation = s.generation;
        while s.generation == generation && !s.failed {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.failed {
            drop(s);
            panic!("{OUT_OF_STEP}");
        }
    }

    /// Thread `tid` is done (normally or by panicking): threads still waiting at a barrier
    /// can never be released; its warp goes on without it.
    fn finish(&self, tid: usize, panicked: bool) {
        let mut s = self.lock();
        s.finished += 1;
        if panicked || s.arrived > 0 {
            self.fail(&mut s);
        }
        drop(s);
        let (warp, lane) = self.warp(tid);
        warp.finish(lane, panicked);
    }
}

/// `5` for 1-D positions, `(5, 2, 0)` otherwise.
fn coords(c: [u32; 3]) -> String {
    if c[1] == 0 && c[2] == 0 { c[0].to_string() } else { format!("({}, {}, {})", c[0], c[1], c[2]) }
}

/// Runs `body` once per thread of `grid`, with that thread's indices set. The first panic
/// stops the launch and becomes [`Error::KernelPanicked`].
pub fn run(kernel: &str, grid: &Grid, shared: Option<usize>, body: &(dyn Fn() + Sync)) -> Result<()> {
    let grid_dim = grid.blocks();
    let block_dim = grid.block();
    let blocks = grid_dim.iter().map(|&b| u64::from(b)).product::<u64>();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let first_panic: Mutex<Option<Panicked>> = Mutex::new(None);
    let record = |payload: Box<dyn std::any::Any + Send>, block: [u32; 3], thread: [u32; 3]| {
        stop.store(true, Ordering::Relaxed);
        let mut slot = first_panic.lock().unwrap_or_else(|e| e.into_inner());
        // A thread failing because another broke the barrier protocol is not the first cause.
        let message = panic_message(&*payload);
        let secondary = |m: &str| m.contains(OUT_OF_STEP_MARK) || m.contains(BLOCK_FAILED);
        if slot.is_none() || slot.as_ref().is_some_and(|p| secondary(&p.message)) && !secondary(&message) {
            *slot = Some(Panicked { message, block, thread });
        }
    };
    let worker = || {
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
                    for tz in 0..block_dim[2] {
                        for ty in 0..block_dim[1] {
                            for tx in 0..block_dim[0] {
                                CURRENT.set(Some(ctx([tx, ty, tz], None)));
                                let outcome = catch_unwind(AssertUnwindSafe(body));
                                CURRENT.set(None);
                                if let Err(payload) = outcome {
                                    return record(payload, block, [tx, ty, tz]);
                                }
                            }
                        }
                    }
                }
                Some(bytes) => {
                    // Barriers need every thread of the block running at once.
                    let threads = block_dim.iter().product::<u32>() as usize;
                    let mut arena = vec![0u128; bytes.div_ceil(16).max(1)];
                    let arena_ptr = arena.as_mut_ptr().cast::<u8>() as usize;
                    let sync = BlockSync::new(threads);
                    std::thread::scope(|s| {
                        for t in 0..threads as u32 {
                            let tid = [
                                t % block_dim[0],
                                (t / block_dim[0]) % block_dim[1],
                                t / (block_dim[0] * block_dim[1]),
                            ];
                            let (sync, ctx, record) = (&sync, &ctx, &record);
                            s.spawn(move || {
                                let env = (arena_ptr as *mut u8, sync as *const BlockSync);
                                CURRENT.set(Some(ctx(tid, Some(env))));
                                let outcome = catch_unwind(AssertUnwindSafe(body));
                                CURRENT.set(None);
                                sync.finish(t as usize, outcome.is_err());
                                if let Err(payload) = outcome {
                                    record(payload, block, tid);
                                }
                            });
                        }
                    });
                    drop(arena);
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
    match first_panic.into_inner().unwrap_or_else(|e| e.into_inner()) {
        None => Ok(()),
        Some(p) => Err(Error::KernelPanicked {
            kernel: kernel.to_owned(),
            message: p.message,
            block: coords(p.block),
            thread: coords(p.thread),
        }),
    }
}
