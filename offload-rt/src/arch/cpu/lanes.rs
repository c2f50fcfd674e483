//! The threads of one emulated block as cooperative lanes on the host thread that runs the
//! block: each lane runs until it must wait for the others (a barrier, a warp operation),
//! [`pause`]s, and the block's scheduler resumes the next one. One host thread per block
//! instead of one per emulated thread: a context switch costs nanoseconds, where waking an OS
//! thread cost microseconds, and a block of 1,024 threads no longer needs 1,024 of them.
//!
//! A lane is a stackful coroutine (`corosensei`) with a stack of [`STACK_BYTES`]; a host thread
//! keeps its lanes from block to block (a [`Crew`]), and their stacks outlive the launch. Under Miri, which cannot
//! switch stacks, each lane is a host thread instead, and lanes hand one baton around, so that
//! one lane runs at a time there too: the block's logic Miri checks is the one that runs.

/// What a lane's [`resume`](Lanes::resume) ended with.
#[derive(Debug)]
pub(crate) enum Step<O> {
    /// The lane paused; `progress`: it arrived somewhere new (rather than found itself still
    /// waiting). A round of resumes without progress means nothing can change any more.
    Paused { progress: bool },
    /// The lane returned `O`.
    Done(O),
}

/// Bytes of each lane's stack by default (the CPU backend takes `OFFLOAD_CPU_STACK_KIB`): far
/// more than a GPU thread gets (CUDA's default is 1 KiB), so a kernel that runs on a GPU fits.
pub(crate) const STACK_BYTES: usize = 256 << 10;

/// Runs `schedule` over lanes `0..n` of `lane`, none started yet, from `crew` (the lanes of
/// this host thread, made on first use, for every block it runs); `schedule` resumes them
/// (each until it pauses or returns) and must run each to the end. Fails when the lanes'
/// stacks cannot be allocated.
#[inline(always)]
pub(crate) fn with_lanes<O: Send, R>(
    crew: &mut Crew,
    n: usize,
    lane: &(impl Fn(usize) -> O + Sync),
    schedule: impl FnOnce(&mut Lanes<'_, O>) -> R,
) -> std::io::Result<R> {
    imp::with_lanes(crew, n, lane, schedule)
}

/// Pauses the calling lane until the scheduler resumes it.
///
/// # Panics
///
/// Outside a lane.
#[inline(always)]
pub(crate) fn pause(progress: bool) {
    imp::pause(progress);
}

pub(crate) use imp::{Crew, Lanes};

#[cfg(not(miri))]
mod imp {
    use super::{STACK_BYTES, Step};
    use corosensei::stack::{DefaultStack, Stack, StackPointer};
    use corosensei::{Coroutine, CoroutineResult, Yielder};
    use std::cell::Cell;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A lane's stack: a [`DefaultStack`] whose top is moved down by a few cache lines and
    /// pages, different from one stack to the next. Tops a whole number of pages apart would
    /// land in the same cache sets, and a block's lanes, switched in turn, would evict each
    /// other's frames (measured: twice as slow a switch with 256 lanes).
    pub(crate) struct LaneStack {
        stack: DefaultStack,
        offset: usize,
        /// The size asked for.
        bytes: usize,
    }

    impl LaneStack {
        fn new(bytes: usize) -> std::io::Result<LaneStack> {
            static MADE: AtomicUsize = AtomicUsize::new(0);
            let offset = offset(MADE.fetch_add(1, Ordering::Relaxed), bytes);
            Ok(LaneStack { stack: DefaultStack::new(bytes)?, offset, bytes })
        }
    }

    /// How far below its base stack number `k` of `bytes` starts: up to 60 cache lines and 6
    /// pages (< 28 KiB), and never more than a quarter of the stack; a multiple of 64.
    pub(super) fn offset(k: usize, bytes: usize) -> usize {
        let spread = (k % 61) * 64 + (k / 61 % 7) * 4096;
        spread.min(bytes / 4) & !63
    }

    // SAFETY: the stack is `stack`'s from its limit up to `offset` bytes below its base: within
    // it (`offset` is at most a quarter of its size), aligned like it (`offset` is a multiple of
    // 64), and owned with it.
    unsafe impl Stack for LaneStack {
        #[inline]
        fn base(&self) -> StackPointer {
            StackPointer::new(self.stack.base().get() - self.offset).expect("a stack above address 0")
        }

        #[inline]
        fn limit(&self) -> StackPointer {
            self.stack.limit()
        }
    }

    /// What the scheduler hands a lane when it resumes it.
    enum Job {
        /// Run the block's lane function (a `*const &dyn Fn(usize)`, alive for the block).
        Run(*const ()),
        /// Go on from a pause.
        Go,
        /// End: the crew is being dropped, or the block abandoned.
        Quit,
    }

    /// What a lane hands back (its result goes into the block's slot for it).
    enum Event {
        Paused(bool),
        Done,
    }

    type Lane = Coroutine<Job, Event, (), LaneStack>;

    thread_local! {
        /// The running lane's way back to its scheduler.
        static YIELDER: Cell<*const Yielder<Job, Event>> = const { Cell::new(std::ptr::null()) };
    }

    /// The payload of a lane unwound because its block was abandoned.
    struct Abandoned;

    /// Stacks of finished launches, for the next ones (at most [`KEPT`]).
    static KEPT_STACKS: Mutex<Vec<LaneStack>> = Mutex::new(Vec::new());
    const KEPT: usize = 4096;

    /// The lanes of one host thread that runs blocks: made when a block first needs them (on
    /// stacks kept from earlier launches where there are some), then handed from block to
    /// block — a lane that returned waits for its next block's function — and ended when the
    /// crew is dropped, their stacks kept again.
    pub(crate) struct Crew {
        lanes: Vec<Lane>,
        /// Bytes of each lane's stack.
        stack: usize,
    }

    impl Default for Crew {
        fn default() -> Self {
            Crew::new(STACK_BYTES)
        }
    }

    impl Crew {
        /// A crew whose lanes get `stack` bytes of stack each.
        pub(crate) fn new(stack: usize) -> Crew {
            Crew { lanes: Vec::new(), stack }
        }

        /// At least `n` lanes.
        fn grow(&mut self, n: usize) -> std::io::Result<()> {
            if self.lanes.len() >= n {
                return Ok(());
            }
            let mut stacks = {
                let mut kept = KEPT_STACKS.lock().unwrap_or_else(|e| e.into_inner());
                let mut taken = Vec::new();
                while taken.len() < n - self.lanes.len() {
                    match kept.iter().rposition(|s| s.bytes == self.stack) {
                        Some(i) => taken.push(kept.swap_remove(i)),
                        None => break,
                    }
                }
                taken
            };
            while self.lanes.len() < n {
                let t = self.lanes.len();
                let stack = match stacks.pop() {
                    Some(s) => s,
                    None => LaneStack::new(self.stack)?,
                };
                self.lanes.push(Coroutine::with_stack(stack, move |yielder: &Yielder<Job, Event>, first| {
                    let mut job = first;
                    loop {
                        let lane = match job {
                            Job::Run(lane) => lane,
                            Job::Go => unreachable!("offload: an idle lane was told to go on"),
                            Job::Quit => return,
                        };
                        YIELDER.set(yielder);
                        // SAFETY: `with_lanes` hands `Run` a pointer to the block's lane
                        // function, which outlives the block; this lane uses it until it
                        // returns, within the block (an abandoned block unwinds its lanes
                        // before it returns).
                        let lane = unsafe { &*lane.cast::<&dyn Fn(usize)>() };
                        lane(t);
                        job = yielder.suspend(Event::Done);
                    }
                }));
            }
            Ok(())
        }
    }

    impl Drop for Crew {
        fn drop(&mut self) {
            let mut stacks = Vec::with_capacity(self.lanes.len());
            for mut lane in self.lanes.drain(..) {
                // Idle lanes wait for a job: `Quit` ends them (a lane mid-block was unwound
                // by its block already).
                if !lane.done() && matches!(lane.resume(Job::Quit), CoroutineResult::Return(())) {
                    stacks.push(lane.into_stack());
                }
            }
            let mut kept = KEPT_STACKS.lock().unwrap_or_else(|e| e.into_inner());
            let room = KEPT.saturating_sub(kept.len()).min(stacks.len());
            kept.extend(stacks.drain(..room));
        }
    }

    /// The lanes of one block, of a crew.
    pub(crate) struct Lanes<'c, O> {
        lanes: &'c mut [Lane],
        /// The block's lane function, for lanes that start.
        job: *const (),
        /// Each lane's result, once it has returned.
        results: &'c [Cell<Option<O>>],
        /// Which lanes are under way (started, not returned).
        running: Vec<bool>,
    }

    impl<O> Lanes<'_, O> {
        /// Runs lane `t` until it pauses or returns.
        #[inline(always)]
        pub(crate) fn resume(&mut self, t: usize) -> Step<O> {
            let job = if self.running[t] { Job::Go } else { Job::Run(self.job) };
            self.running[t] = true;
            match self.lanes[t].resume(job) {
                CoroutineResult::Yield(Event::Paused(progress)) => Step::Paused { progress },
                CoroutineResult::Yield(Event::Done) => {
                    self.running[t] = false;
                    Step::Done(self.results[t].take().expect("offload: a lane returned no result"))
                }
                CoroutineResult::Return(()) => unreachable!("offload: a lane ended mid-block"),
            }
        }
    }

    impl<O> Drop for Lanes<'_, O> {
        fn drop(&mut self) {
            // A block left with lanes under way (its scheduler panicked): unwind them now,
            // while the function they run is alive.
            for (lane, running) in self.lanes.iter_mut().zip(&self.running) {
                if *running {
                    let _ = lane.resume(Job::Quit);
                }
            }
        }
    }

    #[inline(always)]
    pub(super) fn with_lanes<O: Send, R>(
        crew: &mut Crew,
        n: usize,
        lane: &(impl Fn(usize) -> O + Sync),
        schedule: impl FnOnce(&mut Lanes<'_, O>) -> R,
    ) -> std::io::Result<R> {
        crew.grow(n)?;
        let results: Vec<Cell<Option<O>>> = (0..n).map(|_| Cell::new(None)).collect();
        let run = |t: usize| results[t].set(Some(lane(t)));
        let job: &dyn Fn(usize) = &run;
        let mut lanes = Lanes {
            lanes: &mut crew.lanes[..n],
            job: std::ptr::from_ref(&job).cast(),
            results: &results,
            running: vec![false; n],
        };
        let out = schedule(&mut lanes);
        drop(lanes);
        Ok(out)
    }

    #[inline(always)]
    pub(super) fn pause(progress: bool) {
        let yielder = YIELDER.get();
        assert!(!yielder.is_null(), "offload: a lane paused outside a block's lanes");
        // SAFETY: `YIELDER` is the running lane's: set when it starts a block's function and
        // restored below whenever it runs again, so it is the yielder its coroutine was given,
        // alive for as long as the coroutine runs — and it runs, since this is its code.
        let job = unsafe { &*yielder }.suspend(Event::Paused(progress));
        YIELDER.set(yielder);
        if !matches!(job, Job::Go) {
            // The scheduler left mid-block (it panicked): leave the lane by unwinding.
            std::panic::resume_unwind(Box::new(Abandoned));
        }
    }
}

#[cfg(miri)]
mod imp {
    //! Lanes as host threads that take turns: the scheduler hands a lane the baton and waits
    //! until the lane hands it back (pausing or returning).

    use super::Step;
    use std::cell::RefCell;
    use std::sync::{Arc, Condvar, Mutex};

    #[derive(Clone, Copy, Debug, PartialEq)]
    enum Turn {
        Scheduler,
        Lane,
        Paused {
            progress: bool,
        },
        Returned,
        /// A panic left the lane (the lane's body catches the kernel's own).
        Escaped,
        /// The scheduler is gone: the lane unwinds at its next pause.
        Abandoned,
    }

    #[derive(Debug)]
    struct Baton {
        turn: Mutex<Turn>,
        changed: Condvar,
    }

    impl Baton {
        fn set(&self, turn: Turn) {
            *self.turn.lock().unwrap_or_else(|e| e.into_inner()) = turn;
            self.changed.notify_all();
        }

        fn wait_while(&self, busy: impl Fn(Turn) -> bool) -> Turn {
            let guard = self.turn.lock().unwrap_or_else(|e| e.into_inner());
            *self.changed.wait_while(guard, |t| busy(*t)).unwrap_or_else(|e| e.into_inner())
        }
    }

    thread_local! {
        static MINE: RefCell<Option<Arc<Baton>>> = const { RefCell::new(None) };
    }

    struct Abandoned;

    pub(crate) struct Lanes<'a, O> {
        batons: Vec<Arc<Baton>>,
        results: &'a [Mutex<Option<O>>],
    }

    impl<O> Lanes<'_, O> {
        pub(crate) fn resume(&mut self, t: usize) -> Step<O> {
            let baton = &self.batons[t];
            baton.set(Turn::Lane);
            match baton.wait_while(|t| t == Turn::Lane) {
                Turn::Paused { progress } => Step::Paused { progress },
                Turn::Escaped => panic!("offload: a panic escaped lane {t}"),
                Turn::Returned => Step::Done(
                    self.results[t]
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .take()
                        .expect("offload: a finished lane was resumed"),
                ),
                other => unreachable!("a lane handed back {other:?}"),
            }
        }
    }

    impl<O> Drop for Lanes<'_, O> {
        fn drop(&mut self) {
            for baton in &self.batons {
                baton.set(Turn::Abandoned);
            }
        }
    }

    /// Nothing to keep: lanes are host threads, made per block, here.
    #[derive(Default)]
    pub(crate) struct Crew;

    impl Crew {
        /// (Host threads' stacks are the default size.)
        pub(crate) fn new(_stack: usize) -> Crew {
            Crew
        }
    }

    pub(super) fn with_lanes<O: Send, R>(
        _crew: &mut Crew,
        n: usize,
        lane: &(impl Fn(usize) -> O + Sync),
        schedule: impl FnOnce(&mut Lanes<'_, O>) -> R,
    ) -> std::io::Result<R> {
        let batons: Vec<Arc<Baton>> = (0..n)
            .map(|_| Arc::new(Baton { turn: Mutex::new(Turn::Scheduler), changed: Condvar::new() }))
            .collect();
        let results: Vec<Mutex<Option<O>>> = (0..n).map(|_| Mutex::new(None)).collect();
        std::thread::scope(|s| {
            for (t, baton) in batons.iter().enumerate() {
                let (baton, result) = (Arc::clone(baton), &results[t]);
                std::thread::Builder::new().spawn_scoped(s, move || {
                    if baton.wait_while(|t| t == Turn::Scheduler) == Turn::Abandoned {
                        return;
                    }
                    MINE.with_borrow_mut(|m| *m = Some(Arc::clone(&baton)));
                    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| lane(t)));
                    match out {
                        Ok(out) => {
                            *result.lock().unwrap_or_else(|e| e.into_inner()) = Some(out);
                            baton.set(Turn::Returned);
                        }
                        Err(payload) if payload.is::<Abandoned>() => {}
                        Err(_) => baton.set(Turn::Escaped),
                    }
                })?;
            }
            let mut lanes = Lanes { batons: batons.clone(), results: &results };
            Ok(schedule(&mut lanes))
        })
    }

    pub(super) fn pause(progress: bool) {
        let baton = MINE.with_borrow(Option::clone).expect("offload: a lane paused outside a block's lanes");
        baton.set(Turn::Paused { progress });
        if baton.wait_while(|t| matches!(t, Turn::Paused { .. })) == Turn::Abandoned {
            std::panic::resume_unwind(Box::new(Abandoned));
        }
    }
}

#[cfg(all(test, not(miri)))]
mod tests {
    #[test]
    fn stack_tops_move_within_a_quarter_of_the_stack_and_stay_aligned() {
        for bytes in [16 << 10, 64 << 10, 256 << 10] {
            let offsets: Vec<usize> = (0..500).map(|k| super::imp::offset(k, bytes)).collect();
            assert!(offsets.iter().all(|&o| o <= bytes / 4 && o % 64 == 0), "{bytes}: {offsets:?}");
            assert!(offsets.iter().any(|&o| o != offsets[0]), "{bytes}: the tops differ");
        }
    }
}
