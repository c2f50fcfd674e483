//! The CPU emulation backend: runs the host-compiled kernels module over the launch grid
//! on host threads. Blocks are spread over worker threads; each block's threads run one
//! after another with the thread indices set for each.

use super::error::{Error, Result};
use super::launch::Grid;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};

/// Indices of the emulated GPU thread running on this host thread.
#[derive(Clone, Copy, Debug)]
pub struct ThreadCtx {
    pub thread: [u32; 3],
    pub block: [u32; 3],
    pub block_dim: [u32; 3],
    pub grid_dim: [u32; 3],
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

/// `5` for 1-D positions, `(5, 2, 0)` otherwise.
fn coords(c: [u32; 3]) -> String {
    if c[1] == 0 && c[2] == 0 { c[0].to_string() } else { format!("({}, {}, {})", c[0], c[1], c[2]) }
}

/// Runs `body` once per thread of `grid`, with that thread's indices set. The first panic
/// stops the launch and becomes [`Error::KernelPanicked`].
pub fn run(kernel: &str, grid: &Grid, body: &(dyn Fn() + Sync)) -> Result<()> {
    let grid_dim = grid.blocks();
    let block_dim = grid.block();
    let blocks = grid_dim.iter().map(|&b| u64::from(b)).product::<u64>();
    let next = AtomicU64::new(0);
    let stop = AtomicBool::new(false);
    let first_panic: Mutex<Option<Panicked>> = Mutex::new(None);
    let worker = || {
        while !stop.load(Ordering::Relaxed) {
            let linear = next.fetch_add(1, Ordering::Relaxed);
            if linear >= blocks {
                break;
            }
            let gx = u64::from(grid_dim[0]);
            let gy = u64::from(grid_dim[1]);
            let block = [(linear % gx) as u32, ((linear / gx) % gy) as u32, (linear / (gx * gy)) as u32];
            for tz in 0..block_dim[2] {
                for ty in 0..block_dim[1] {
                    for tx in 0..block_dim[0] {
                        CURRENT.set(Some(ThreadCtx { thread: [tx, ty, tz], block, block_dim, grid_dim }));
                        let outcome = catch_unwind(AssertUnwindSafe(body));
                        CURRENT.set(None);
                        if let Err(payload) = outcome {
                            stop.store(true, Ordering::Relaxed);
                            let mut slot = first_panic.lock().unwrap_or_else(|e| e.into_inner());
                            slot.get_or_insert(Panicked {
                                message: panic_message(&*payload),
                                block,
                                thread: [tx, ty, tz],
                            });
                            return;
                        }
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
