//! The barrier of one emulated block. It also checks what a GPU leaves undefined: every
//! thread of the block must reach the same barrier (the same place in the kernel) the same
//! number of times. A thread that arrives at another barrier, or returns while others wait,
//! fails the launch instead of deadlocking or racing.

use super::super::Site;
use super::warp::WarpSync;
use std::sync::{Condvar, Mutex, MutexGuard};

/// Why a thread fails when another one broke the protocol first: never the first cause of a
/// failed launch.
pub(crate) const BLOCK_FAILED: &str = "another thread of the block failed";

#[derive(Debug)]
pub(crate) struct BlockSync {
    threads: usize,
    warp_size: usize,
    state: Mutex<State>,
    turn: Condvar,
    /// The block's warps, `warp_size()` consecutive threads each.
    warps: Vec<WarpSync>,
}

#[derive(Debug, Default)]
struct State {
    arrived: usize,
    finished: usize,
    generation: u64,
    /// Where the threads waiting now called the barrier.
    site: Option<Site>,
    /// Why the block failed (every waiting thread then panics with it).
    failed: Option<String>,
}

impl BlockSync {
    /// The barrier of a block of `threads` threads, in warps of `warp_size` lanes.
    pub(crate) fn new(threads: usize, warp_size: u32) -> BlockSync {
        let size = warp_size as usize;
        let warps = (0..threads.div_ceil(size))
            .map(|w| WarpSync::new((threads - w * size).min(size) as u32))
            .collect();
        BlockSync {
            threads,
            warp_size: size,
            state: Mutex::new(State::default()),
            turn: Condvar::new(),
            warps,
        }
    }

    /// Lanes per warp.
    pub(crate) fn warp_size(&self) -> u32 {
        self.warp_size as u32
    }

    /// The emulated warp of block thread `tid`, and the thread's lane in it.
    pub(crate) fn warp(&self, tid: usize) -> (&WarpSync, u32) {
        (&self.warps[tid / self.warp_size], (tid % self.warp_size) as u32)
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Marks the block failed and wakes every waiting thread, at barriers and in warps.
    fn fail(&self, s: &mut State, why: String) {
        s.failed.get_or_insert(why);
        self.turn.notify_all();
        for w in &self.warps {
            w.fail(BLOCK_FAILED);
        }
    }

    /// Thread `tid` waits at the barrier called at `site`.
    ///
    /// # Panics
    ///
    /// When the block fails: threads at different barriers, a thread that returned while
    /// others wait, a warp split between a barrier and a warp operation, or another thread's
    /// panic.
    pub(crate) fn wait(&self, site: Site, tid: usize) {
        let mut s = self.lock();
        if s.failed.is_none() {
            if s.finished > 0 {
                let why = format!(
                    "threads of a block passed different barriers: thread {tid} waits at the barrier at {site}, but a thread of its block has returned without reaching it"
                );
                self.fail(&mut s, why);
            } else if let Some(other) = s.site.filter(|&o| o != site) {
                let why = format!(
                    "threads of a block passed different barriers: some wait at {other}, thread {tid} at {site}"
                );
                self.fail(&mut s, why);
            }
        }
        if s.failed.is_none() {
            let (warp, lane) = self.warp(tid);
            if let Some(why) = warp.park(lane, site) {
                self.fail(&mut s, why);
            }
        }
        if let Some(why) = s.failed.clone() {
            drop(s);
            panic!("{why}");
        }
        s.site = Some(site);
        s.arrived += 1;
        if s.arrived == self.threads {
            s.arrived = 0;
            s.site = None;
            s.generation += 1;
            for w in &self.warps {
                w.unpark_all();
            }
            self.turn.notify_all();
            return;
        }
        let generation = s.generation;
        while s.generation == generation && s.failed.is_none() {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.generation == generation
            && let Some(why) = s.failed.clone()
        {
            drop(s);
            panic!("{why}");
        }
    }

    /// Thread `tid` is done (normally or by panicking): threads still waiting at a barrier can
    /// never be released, and its warp may not meet again without it.
    pub(crate) fn finish(&self, tid: usize, panicked: bool) {
        let mut s = self.lock();
        s.finished += 1;
        if panicked {
            self.fail(&mut s, BLOCK_FAILED.to_owned());
        } else if s.arrived > 0 {
            let site = s.site.map_or_else(String::new, |w| format!(" at {w}"));
            let why = format!(
                "threads of a block passed different barriers: thread {tid} returned while others wait at the barrier{site}"
            );
            self.fail(&mut s, why);
        }
        drop(s);
        let (warp, lane) = self.warp(tid);
        warp.finish(lane, panicked);
    }
}

#[cfg(test)]
mod tests {
    use super::BlockSync;
    use std::panic::{Location, catch_unwind};

    /// Runs `f(tid)` on `n` threads of one block; whether each panicked.
    fn block(n: usize, f: impl Fn(&BlockSync, usize) + Sync) -> Vec<bool> {
        let sync = BlockSync::new(n, 32);
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|t| {
                    let (sync, f) = (&sync, &f);
                    s.spawn(move || {
                        let failed = catch_unwind(std::panic::AssertUnwindSafe(|| f(sync, t))).is_err();
                        sync.finish(t, failed);
                        failed
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn threads_meet_at_the_same_barrier() {
        let site = Location::caller();
        assert_eq!(block(3, |s, t| s.wait(site, t)), [false; 3]);
    }

    #[test]
    fn different_barriers_fail_the_block() {
        let sites = [Location::caller(), Location::caller()];
        assert_eq!(block(2, |s, t| s.wait(sites[t], t)), [true, true]);
    }

    #[test]
    fn a_thread_that_returns_while_others_wait_fails_the_block() {
        let site = Location::caller();
        let failed = block(2, |s, t| {
            if t == 0 {
                s.wait(site, t);
            }
        });
        assert!(failed[0], "the waiting thread is released with an error");
    }
}
