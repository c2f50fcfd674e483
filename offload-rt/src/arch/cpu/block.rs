//! The barrier of one emulated block. It also checks what a GPU leaves undefined: every
//! thread of the block must reach the same barrier (the same place in the kernel) the same
//! number of times. A thread that arrives at another barrier, or returns while others wait,
//! fails the launch instead of deadlocking or racing.
//!
//! The block's threads are lanes that run one at a time on one host thread
//! ([`super::lanes`]): a thread that must wait pauses (its future returns `Pending`), and the
//! last to arrive releases the others. So the state is plain cells, and a block that can no longer make progress is seen
//! by its scheduler ([`BlockSync::stall`]) rather than left hanging.

use super::super::Site;
use super::lanes::arrived;
use super::warp::WarpSync;
use std::cell::{Cell, OnceCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// Why a thread fails when another one broke the protocol first: never the first cause of a
/// failed launch.
pub(crate) const BLOCK_FAILED: &str = "another thread of the block failed";

#[derive(Debug)]
pub(crate) struct BlockSync {
    threads: usize,
    /// Lanes per warp, a power of two: `1 << warp_shift`.
    warp_shift: u32,
    arrived: Cell<usize>,
    finished: Cell<usize>,
    generation: Cell<u64>,
    /// Where the threads waiting now called the barrier.
    site: Cell<Option<Site>>,
    /// Why the block failed (every waiting thread then panics with it).
    failed: OnceCell<String>,
    /// The block's warps, `warp_size()` consecutive threads each.
    warps: Vec<WarpSync>,
}

// SAFETY: a block's threads (and its scheduler) touch its `BlockSync` one at a time: they are
// lanes polled in turns on the one host thread that runs the block (`lanes`), so its cells are
// never used by two threads at once.
unsafe impl Sync for BlockSync {}

/// A thread's wait at a barrier ([`BlockSync::wait`]): arrives when first polled, then is
/// ready once the barrier's generation has ended. (One small state machine, written out: a
/// barrier is the CPU backend's most frequent wait.)
#[derive(Debug)]
pub(crate) struct BarrierWait<'s> {
    sync: &'s BlockSync,
    site: Site,
    tid: usize,
    /// The generation it waits to end, once arrived.
    generation: Option<u64>,
}

impl Future for BarrierWait<'_> {
    type Output = ();

    #[inline(always)]
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let w = &mut *self;
        match w.generation {
            None => match w.sync.arrive(w.site, w.tid) {
                None => Poll::Ready(()),
                Some(generation) => {
                    w.generation = Some(generation);
                    arrived();
                    Poll::Pending
                }
            },
            Some(generation) if w.sync.released(generation) => Poll::Ready(()),
            Some(_) => Poll::Pending,
        }
    }
}

impl BlockSync {
    /// The barrier of a block of `threads` threads, in warps of `warp_size` lanes.
    pub(crate) fn new(threads: usize, warp_size: u32) -> BlockSync {
        assert!(warp_size.is_power_of_two(), "offload: a warp size that is not a power of two");
        let size = warp_size as usize;
        let warps = (0..threads.div_ceil(size))
            .map(|w| WarpSync::new((threads - w * size).min(size) as u32))
            .collect();
        BlockSync {
            threads,
            warp_shift: warp_size.trailing_zeros(),
            arrived: Cell::new(0),
            finished: Cell::new(0),
            generation: Cell::new(0),
            site: Cell::new(None),
            failed: OnceCell::new(),
            warps,
        }
    }

    /// Back to the state of a new block's barrier (for the next block a worker runs).
    pub(crate) fn reset(&mut self) {
        self.arrived.set(0);
        self.finished.set(0);
        self.site.set(None);
        self.failed.take();
        for w in &mut self.warps {
            w.reset();
        }
    }

    /// Lanes per warp.
    #[inline(always)]
    pub(crate) fn warp_size(&self) -> u32 {
        1 << self.warp_shift
    }

    /// The emulated warp of block thread `tid`, and the thread's lane in it.
    #[inline(always)]
    pub(crate) fn warp(&self, tid: usize) -> (&WarpSync, u32) {
        (&self.warps[tid >> self.warp_shift], (tid & ((1 << self.warp_shift) - 1)) as u32)
    }

    /// Marks the block failed: every waiting thread, at barriers and in warps, panics with
    /// `why` when it runs next.
    fn fail(&self, why: String) {
        let _ = self.failed.set(why);
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
    pub(crate) fn wait(&self, site: Site, tid: usize) -> BarrierWait<'_> {
        BarrierWait { sync: self, site, tid, generation: None }
    }

    /// Thread `tid` arrives at the barrier at `site`: `None` if it was the last (the barrier
    /// releases the block), else the generation it waits to end.
    #[inline(always)]
    fn arrive(&self, site: Site, tid: usize) -> Option<u64> {
        // The common case, every check passing: nothing failed or returned, and the others (if
        // any) wait at this same barrier. (A lane of the thread's warp waiting in a warp
        // operation is not looked for here: then neither can ever go on, and `stall` names
        // them.)
        let same = self.site.get().is_none_or(|o| std::ptr::eq(o, site));
        if self.failed.get().is_some() || self.finished.get() > 0 || !same {
            self.check_arrival(site, tid);
        }
        self.site.set(Some(site));
        let arrived = self.arrived.get() + 1;
        if arrived == self.threads {
            self.arrived.set(0);
            self.site.set(None);
            self.generation.set(self.generation.get() + 1);
            return None;
        }
        self.arrived.set(arrived);
        Some(self.generation.get())
    }

    /// `arrive`'s checks in full, where the quick ones did not all pass: fails the block (and
    /// panics) when the thread may not wait here, else parks it in its warp.
    #[cold]
    #[inline(never)]
    fn check_arrival(&self, site: Site, tid: usize) {
        if self.failed.get().is_none() {
            if self.finished.get() > 0 {
                let why = format!(
                    "threads of a block passed different barriers: thread {tid} waits at the barrier at {site}, but a thread of its block has returned without reaching it"
                );
                self.fail(why);
            } else if let Some(other) = self.site.get().filter(|&o| !super::same_site(o, site)) {
                let why = format!(
                    "threads of a block passed different barriers: some wait at {other}, thread {tid} at {site}"
                );
                self.fail(why);
            }
        }
        if let Some(why) = self.failed.get() {
            panic!("{why}");
        }
    }

    /// Whether the barrier generation `generation` has ended.
    ///
    /// # Panics
    ///
    /// When the block failed while it lasted.
    #[inline(always)]
    fn released(&self, generation: u64) -> bool {
        if self.generation.get() != generation {
            return true;
        }
        if let Some(why) = self.failed.get() {
            panic!("{why}");
        }
        false
    }

    /// Thread `tid` is done (normally or by panicking): threads still waiting at a barrier can
    /// never be released, and its warp may not meet again without it.
    #[inline(always)]
    pub(crate) fn finish(&self, tid: usize, panicked: bool) {
        self.finished.set(self.finished.get() + 1);
        if panicked || self.arrived.get() > 0 {
            self.finish_while_others_wait(tid, panicked);
        }
        let (warp, lane) = self.warp(tid);
        warp.finish(lane, panicked);
    }

    /// [`finish`](Self::finish) by a panic, or while threads wait at a barrier: fails the
    /// block.
    #[cold]
    #[inline(never)]
    fn finish_while_others_wait(&self, tid: usize, panicked: bool) {
        if panicked {
            self.fail(BLOCK_FAILED.to_owned());
        } else if self.arrived.get() > 0 {
            let site = self.site.get().map_or_else(String::new, |w| format!(" at {w}"));
            let why = format!(
                "threads of a block passed different barriers: thread {tid} returned while others wait at the barrier{site}"
            );
            self.fail(why);
        }
    }

    /// The scheduler resumed every waiting thread and none moved: nothing can release them.
    /// Fails the block (they panic when resumed next). Where lanes of a warp wait in a warp
    /// operation while the warp's other lanes wait at the barrier, the warp's failure says so.
    pub(crate) fn stall(&self) {
        if let Some(site) = self.site.get().filter(|_| self.arrived.get() > 0) {
            for w in &self.warps {
                w.split_by_barrier(site);
            }
        }
        let at = self.site.get().map_or_else(String::new, |w| format!(" (a barrier at {w})"));
        let why = format!(
            "the threads of a block wait for each other and none can go on{at}: every thread must reach the same barriers and warp operations"
        );
        for w in &self.warps {
            w.fail(&why); // before `fail`'s own: lanes waiting in a warp say why too
        }
        self.fail(why);
    }
}

#[cfg(test)]
mod tests {
    use super::BlockSync;
    use crate::arch::cpu::tests::lanes_then;
    use std::panic::Location;

    /// Runs lane `t` of a block of `n` threads as `f(sync, t)`, each finishing as the backend's
    /// lanes do; whether each panicked.
    fn block<'s, F: Future<Output = ()>>(
        sync: &'s BlockSync,
        n: usize,
        f: impl Fn(&'s BlockSync, usize) -> F,
    ) -> Vec<bool> {
        lanes_then(n, sync, |t| f(sync, t), |t, failed| sync.finish(t, failed))
            .iter()
            .map(Result::is_err)
            .collect()
    }

    #[test]
    fn threads_meet_at_the_same_barrier() {
        let site = Location::caller();
        let sync = BlockSync::new(3, 32);
        assert_eq!(block(&sync, 3, |s, t| s.wait(site, t)), [false; 3]);
    }

    #[test]
    fn different_barriers_fail_the_block() {
        let sites = [Location::caller(), Location::caller()];
        let sync = BlockSync::new(2, 32);
        assert_eq!(block(&sync, 2, |s, t| s.wait(sites[t], t)), [true, true]);
    }

    #[test]
    fn a_warp_split_between_a_barrier_and_a_warp_operation_fails_naming_both() {
        let (barrier, op) = (Location::caller(), Location::caller());
        let sync = BlockSync::new(2, 32);
        let results = lanes_then(
            2,
            &sync,
            |t| {
                let sync = &sync;
                async move {
                    if t == 0 {
                        sync.wait(barrier, t).await;
                    } else {
                        sync.warp(t).0.exchange(1, 0, op, |_| ()).await;
                    }
                }
            },
            |t, failed| sync.finish(t, failed),
        );
        let why = |r: &std::thread::Result<()>| {
            let e = r.as_ref().expect_err("the lane fails");
            e.downcast_ref::<String>().cloned().expect("a message")
        };
        let in_warp = why(&results[1]);
        assert!(
            in_warp.contains(&format!("lane 0 waits at the block barrier at {barrier}"))
                && in_warp.contains(&format!("the warp operation at {op}")),
            "{in_warp}"
        );
        assert!(why(&results[0]).contains("none can go on"), "{}", why(&results[0]));
    }

    #[test]
    fn a_thread_that_returns_while_others_wait_fails_the_block() {
        let site = Location::caller();
        let sync = BlockSync::new(2, 32);
        let failed = block(&sync, 2, |s, t| async move {
            if t == 0 {
                s.wait(site, t).await;
            }
        });
        assert!(failed[0], "the waiting thread is released with an error");
    }
}
