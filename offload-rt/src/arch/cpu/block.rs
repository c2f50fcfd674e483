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
use super::warp::{Exchange, WarpSync};
use std::cell::{Cell, OnceCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
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
    /// Per thread, the barrier generation it waits in, plus one (a thread's second arrival in
    /// one generation fails the block: one thread must not count as two).
    waiting: Box<[Cell<u64>]>,
    /// Which block this is, of all blocks of all launches (see [`Caller`]).
    serial: Cell<u64>,
    /// Where the threads waiting now called the barrier.
    site: Cell<Option<Site>>,
    /// Why the block failed (every waiting thread then panics with it).
    failed: OnceCell<String>,
    /// The block's warps, `warp_size()` consecutive threads each.
    warps: Vec<WarpSync>,
}

// SAFETY: a block's threads (and its scheduler) touch its `BlockSync` one at a time: they are
// lanes polled in turns on the one host thread that runs the block (`lanes`), so its cells are
// never used by two threads at once. (The waits that reach it hold a `Caller`, which is
// neither `Send` nor `Sync` and checks, before each use, that the block's own thread polls it.)
unsafe impl Sync for BlockSync {}

/// Serial numbers of blocks ([`BlockSync::serial`]): never reused while the process lives.
static SERIALS: AtomicU64 = AtomicU64::new(1);

/// The thread that called a collective operation, in the block it called it in: the one
/// thing that may poll the operation's wait. A wait is a future that kernel code can hold and
/// poll itself (`Future::poll` is safe to call), keep past its block in a thread-local, or
/// poll in another thread's turn; each poll of a wait therefore checks first that the lane
/// being polled now is its caller, in the same block (serial included, since a worker keeps
/// its `BlockSync` from one block to the next), and only then touches the block. A raw
/// pointer, so a wait is neither `Send` nor `Sync`, and holds no reference that could dangle.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Caller {
    sync: *const BlockSync,
    serial: u64,
    tid: usize,
}

impl Caller {
    /// The caller's block, when the lane being polled on this host thread is the caller.
    ///
    /// # Panics
    ///
    /// When polled by another lane, outside its block or outside any kernel.
    #[inline(always)]
    pub(crate) fn block(&self) -> &BlockSync {
        if super::polled_is(self.serial, self.tid) {
            // SAFETY: the lane being polled now runs in the block whose serial this is, and
            // serials are never reused: `self.sync` is that block's `BlockSync`, which
            // `run_as`'s and `enter`'s contracts keep alive while the lane runs (this poll is
            // part of it).
            return unsafe { &*self.sync };
        }
        foreign_poll()
    }

    /// The calling thread's index in its block.
    #[inline(always)]
    pub(crate) fn tid(&self) -> usize {
        self.tid
    }
}

#[cold]
#[inline(never)]
fn foreign_poll() -> ! {
    panic!(
        "offload: a barrier's or warp operation's wait was polled by another thread than the one that called it, or outside its block: only the kernels macro's `.await` in the calling thread may wait"
    )
}

/// A thread's wait at a barrier ([`BlockSync::wait`]): arrives when first polled, then is
/// ready once the barrier's generation has ended. (One small state machine, written out: a
/// barrier is the CPU backend's most frequent wait.)
#[derive(Debug)]
pub(crate) struct BarrierWait {
    caller: Caller,
    site: Site,
    /// The generation it waits to end, once arrived.
    generation: Option<u64>,
}

impl Future for BarrierWait {
    type Output = ();

    #[inline(always)]
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        let w = &mut *self;
        let sync = w.caller.block();
        match w.generation {
            None => match sync.arrive(w.site, w.caller.tid) {
                None => Poll::Ready(()),
                Some(generation) => {
                    w.generation = Some(generation);
                    arrived();
                    Poll::Pending
                }
            },
            Some(generation) if sync.released(generation) => Poll::Ready(()),
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
            waiting: (0..threads).map(|_| Cell::new(0)).collect(),
            serial: Cell::new(SERIALS.fetch_add(1, Ordering::Relaxed)),
            site: Cell::new(None),
            failed: OnceCell::new(),
            warps,
        }
    }

    /// Back to the state of a new block's barrier (for the next block a worker runs).
    pub(crate) fn reset(&mut self) {
        self.serial.set(SERIALS.fetch_add(1, Ordering::Relaxed));
        // (A new generation, so that no thread counts as waiting in it.)
        self.generation.set(self.generation.get() + 1);
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
    pub(crate) fn wait(&self, site: Site, tid: usize) -> BarrierWait {
        BarrierWait { caller: self.caller(tid), site, generation: None }
    }

    /// Thread `tid` meets the other lanes of its warp at the operation at `site` with `value`
    /// (the lane that completes the round first runs `all` over the
    /// round's values, once for the warp, before any lane's `read` of them).
    #[inline(always)]
    pub(crate) fn exchange_then<A: FnOnce(&mut [u64; 64]) + Unpin, R: FnOnce(&[u64; 64]) -> T + Unpin, T>(
        &self,
        tid: usize,
        value: u64,
        site: Site,
        all: A,
        read: R,
    ) -> Exchange<A, R> {
        Exchange::new(self.caller(tid), value, site, all, read)
    }

    /// Which block this is, of all blocks of all launches: a new number at every
    /// [`reset`](Self::reset).
    #[inline(always)]
    pub(crate) fn serial(&self) -> u64 {
        self.serial.get()
    }

    #[inline(always)]
    fn caller(&self, tid: usize) -> Caller {
        Caller { sync: self, serial: self.serial.get(), tid }
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
        let now = self.generation.get() + 1;
        if self.failed.get().is_some() || self.finished.get() > 0 || !same || self.waiting[tid].get() == now {
            self.check_arrival(site, tid);
        }
        self.waiting[tid].set(now);
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
            if self.waiting[tid].get() == self.generation.get() + 1 {
                let why = format!(
                    "thread {tid} arrived at the barrier at {site} while it already waits at a barrier: a thread counts once (a barrier's wait polled by hand, not awaited by the kernels macro?)"
                );
                self.fail(why);
            } else if self.finished.get() > 0 {
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

    /// Threads 0 and 1 of a block of two, running `zero` and `one`, finishing as the backend's
    /// lanes do; whether each returned, or its panic.
    fn two_threads<A: Future<Output = ()>, B: Future<Output = ()>>(
        sync: &BlockSync,
        zero: impl Fn() -> A,
        one: impl Fn() -> B,
    ) -> Vec<std::thread::Result<()>> {
        let (zero, one) = (&zero, &one);
        lanes_then(
            2,
            sync,
            |t| async move { if t == 0 { zero().await } else { one().await } },
            |t, failed| sync.finish(t, failed),
        )
    }

    #[test]
    fn a_warp_split_between_a_barrier_and_a_warp_operation_fails_naming_both() {
        let (barrier, op) = (Location::caller(), Location::caller());
        let sync = BlockSync::new(2, 32);
        let results = two_threads(
            &sync,
            || sync.wait(barrier, 0),
            || crate::arch::cpu::warp::tests::exchange(&sync, 1, 0, op, |_| ()),
        );
        let in_warp = why(&results[1]);
        assert!(
            in_warp.contains(&format!("lane 0 waits at the block barrier at {barrier}"))
                && in_warp.contains(&format!("the warp operation at {op}")),
            "{in_warp}"
        );
        assert!(why(&results[0]).contains("none can go on"), "{}", why(&results[0]));
    }

    /// The message of a lane that failed.
    fn why<T>(r: &std::thread::Result<T>) -> String {
        let e = r.as_ref().err().expect("the lane fails");
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .expect("a message")
    }

    /// Polls `f` once, by hand (as kernel code could with `Future::poll`).
    fn poll_once<F: Future>(f: std::pin::Pin<&mut F>) -> std::task::Poll<F::Output> {
        f.poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
    }

    #[test]
    fn a_thread_that_arrives_twice_at_a_barrier_fails_the_block_rather_than_releasing_it_alone() {
        // Thread 0 of two arrives by polling one wait by hand, then awaits another: counted
        // twice, it would release the barrier while thread 1 has not arrived.
        let site = Location::caller();
        let sync = BlockSync::new(2, 32);
        let results = two_threads(
            &sync,
            || async {
                let first = std::pin::pin!(sync.wait(site, 0));
                assert!(poll_once(first).is_pending());
                sync.wait(site, 0).await;
            },
            || sync.wait(site, 1),
        );
        assert!(why(&results[0]).contains("thread 0 arrived at the barrier"), "{}", why(&results[0]));
        assert!(results[1].is_err(), "thread 1 is not released");
    }

    #[test]
    fn a_wait_polled_by_another_thread_or_after_its_block_panics_before_touching_the_block() {
        let site = Location::caller();
        let mut sync = BlockSync::new(2, 32);
        // Thread 0's wait, polled in thread 1's turn.
        let kept = std::cell::RefCell::new(None);
        let results = lanes_then(
            2,
            &sync,
            |t| {
                let (sync, kept) = (&sync, &kept);
                async move {
                    if t == 0 {
                        *kept.borrow_mut() = Some(Box::pin(sync.wait(site, t)));
                    } else {
                        let mut wait = kept.borrow_mut().take().expect("thread 0 ran first");
                        let _ = poll_once(wait.as_mut());
                    }
                }
            },
            |t, failed| sync.finish(t, failed),
        );
        assert!(results[0].is_ok());
        assert!(why(&results[1]).contains("polled by another thread"), "{}", why(&results[1]));
        // A wait of thread 0 made in one block, polled by thread 0 of the next block.
        sync.reset();
        let stale = std::cell::RefCell::new(Some(Box::pin(sync.wait(site, 0))));
        sync.reset();
        let results = lanes_then(
            1,
            &sync,
            |_| async { poll_once(stale.borrow_mut().as_mut().unwrap().as_mut()).is_ready() },
            |_, _| {},
        );
        assert!(why(&results[0]).contains("outside its block"), "{}", why(&results[0]));
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
