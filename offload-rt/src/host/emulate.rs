//! The CPU emulation backend: runs the host-compiled kernels module over the launch grid
//! on host threads. Blocks are spread over worker threads; each block's threads run one
//! after another with the thread indices set for each.

use super::error::{Error, Result};
use super::launch::Grid;
use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
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
    block: u32,
    thread: u32,
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

/// Runs `body` once per thread of `grid`, with that thread's indices set. The first panic
/// stops the launch and becomes [`Error::KernelPanicked`].
pub fn run(kernel: &str, grid: &Grid, body: &(dyn Fn() + Sync)) -> Result<()> {
    let blocks = grid.blocks();
    let block_dim = grid.block();
    let next = AtomicU32::new(0);
    let stop = AtomicBool::new(false);
    let first_panic: Mutex<Option<Panicked>> = Mutex::new(None);
    let worker = || {
        while !stop.load(Ordering::Relaxed) {
            let b = next.fetch_add(1, Ordering::Relaxed);
            if b >= blocks {
                break;
            }
            for t in 0..block_dim {
                CURRENT.set(Some(ThreadCtx {
                    thread: [t, 0, 0],
                    block: [b, 0, 0],
                    block_dim: [block_dim, 1, 1],
                    grid_dim: [blocks, 1, 1],
                }));
                let outcome = catch_unwind(AssertUnwindSafe(body));
                CURRENT.set(None);
                if let Err(payload) = outcome {
                    stop.store(true, Ordering::Relaxed);
                    let mut slot = first_panic.lock().unwrap_or_else(|e| e.into_inner());
                    slot.get_or_insert(Panicked { message: panic_message(&*payload), block: b, thread: t });
                    return;
                }
            }
        }
    };
    let workers = worker_count().min(blocks as usize).max(1);
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
            block: p.block,
            thread: p.thread,
        }),
    }
}
