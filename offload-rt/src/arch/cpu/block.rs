//! The barrier of one emulated block. It also checks what a GPU leaves undefined: every
//! thread of the block must reach the same barrier (the same place in the kernel) the same
//! number of times. A thread that arrives at another barrier, or returns while others wait,
//! fails the launch instead of deadlocking or racing.
//!
//! The block's threads are lanes that run one at a time on one host thread
//! ([`super::lanes`]): a thread that must wait pauses, and the last to arrive releases the
//! others. So the state is plain cells, and a block that can no longer make progress is seen
//! by its scheduler ([`BlockSync::stall`]) rather than left hanging.

use super::super::Site;
use super::pause;
use super::warp::WarpSync;
use std::cell::RefCell;

/// Why a thread fails when another one broke the protocol first: never the first cause of a
/// failed launch.
pub(crate) const BLOCK_FAILED: &str = "another thread of the block failed";

#[derive(Debug)]
pub(crate) struct BlockSync {
    threads: usize,
    warp_size: usize,
    state: RefCell<State>,
    /// The block's warps, `warp_size()` consecutive threads each.
    warps: Vec<WarpSync>,
}

// SAFETY: a block's threads (and its scheduler) touch its `BlockSync` one at a time: they are
// lanes that take turns on one host thread — or, under Miri, host threads that hand a baton
// around through a mutex (`lanes`) — so its cells are never used by two threads at once, and
// each use happens after the one before it.
unsafe impl Sync for BlockSync {}

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
        BlockSync { threads, warp_size: size, state: RefCell::new(State::default()), warps }
    }

    /// Lanes per warp.
    pub(crate) fn warp_size(&self) -> u32 {
        self.warp_size as u32
    }

    /// The emulated warp of block thread `tid`, and the thread's lane in it.
    pub(crate) fn warp(&self, tid: usize) -> (&WarpSync, u32) {
        (&self.warps[tid / self.warp_size], (tid % self.warp_size) as u32)
    }

    /// Marks the block failed: every waiting thread, at barriers and in warps, panics with
    /// `why` when it runs next.
    fn fail(&self, s: &mut State, why: String) {
        s.failed.get_or_insert(why);
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
    #[inline(always)]
    pub(crate) fn wait(&self, site: Site, tid: usize) {
        if let Some(generation) = self.arrive(site, tid) {
            // Inlined into the kernel, so that few returns follow the switch of stacks: each
            // mispredicts (the processor's return stack holds the other lane's).
            let mut progress = true;
            loop {
                pause(std::mem::take(&mut progress));
                if self.released(generation) {
                    return;
                }
            }
        }
    }

    /// Thread `tid` arrives at the barrier at `site`: `None` if it was the last (the barrier
    /// releases the block), else the generation it waits to end.
    fn arrive(&self, site: Site, tid: usize) -> Option<u64> {
        let generation = {
            let mut s = self.state.borrow_mut();
            if s.failed.is_none() {
                if s.finished > 0 {
                    let why = format!(
                        "threads of a block passed different barriers: thread {tid} waits at the barrier at {site}, but a thread of its block has returned without reaching it"
                    );
                    self.fail(&mut s, why);
                } else if let Some(other) = s.site.filter(|&o| !super::same_site(o, site)) {
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
                return None;
            }
            s.generation
        };
        Some(generation)
    }

    /// Whether the barrier generation `generation` has ended.
    ///
    /// # Panics
    ///
    /// When the block failed while it lasted.
    fn released(&self, generation: u64) -> bool {
        let s = self.state.borrow();
        if s.generation != generation {
            return true;
        }
        if let Some(why) = s.failed.clone() {
            drop(s);
            panic!("{why}");
        }
        false
    }

    /// Thread `tid` is done (normally or by panicking): threads still waiting at a barrier can
    /// never be released, and its warp may not meet again without it.
    pub(crate) fn finish(&self, tid: usize, panicked: bool) {
        let mut s = self.state.borrow_mut();
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

    /// The scheduler resumed every waiting thread and none moved: nothing can release them.
    /// Fails the block (they panic when resumed next).
    pub(crate) fn stall(&self) {
        let mut s = self.state.borrow_mut();
        let at = s.site.map_or_else(String::new, |w| format!(" (a barrier at {w})"));
        let why = format!(
            "the threads of a block wait for each other and none can go on{at}: every thread must reach the same barriers and warp operations"
        );
        for w in &self.warps {
            w.fail(&why); // before `fail`'s own: lanes waiting in a warp say why too
        }
        self.fail(&mut s, why);
    }
}

#[cfg(test)]
mod tests {
    use super::BlockSync;
    use std::panic::{Location, catch_unwind};

    /// Runs `f(tid)` on `n` threads of one block; whether each panicked.
    fn block(n: usize, f: impl Fn(&BlockSync, usize) + Sync) -> Vec<bool> {
        let sync = BlockSync::new(n, 32);
        crate::arch::cpu::tests::lanes_then(n, &sync, |t| {
            let failed = catch_unwind(std::panic::AssertUnwindSafe(|| f(&sync, t))).is_err();
            sync.finish(t, failed);
            failed
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
