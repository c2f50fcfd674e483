//! The threads of one emulated block as cooperative lanes on the host thread that runs the
//! block: each lane runs until it must wait for the others (a barrier, a warp operation),
//! [`pause`]s, and the block's scheduler resumes the next one. One host thread per block
//! instead of one per emulated thread: a context switch costs nanoseconds, where waking an OS
//! thread cost microseconds, and a block of 1,024 threads no longer needs 1,024 of them.
//!
//! A lane is a stackful coroutine (`corosensei`) with a stack of [`STACK_BYTES`], as large as
//! a host thread's by default; stacks are kept for the next block. Under Miri, which cannot
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

/// Bytes of each lane's stack: a host thread's default.
pub(crate) const STACK_BYTES: usize = 256 << 10;

/// Runs `schedule` over lanes `0..n` of `lane`, none started yet, on stacks from `stacks`;
/// `schedule` resumes them (each until it pauses or returns) and must run each to the end.
/// Fails when the lanes' stacks cannot be allocated.
pub(crate) fn with_lanes<O: Send, R>(
    stacks: &mut Stacks,
    n: usize,
    lane: &(dyn Fn(usize) -> O + Sync),
    schedule: impl FnOnce(&mut Lanes<'_, O>) -> R,
) -> std::io::Result<R> {
    imp::with_lanes(stacks, n, lane, schedule)
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

pub(crate) use imp::{Lanes, Stacks};

#[cfg(not(miri))]
mod imp {
    use super::{STACK_BYTES, Step};
    use corosensei::stack::{DefaultStack, Stack, StackPointer};
    use corosensei::{Coroutine, CoroutineResult, Yielder};
    use std::cell::Cell;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicUsize, Ordering};

    type Lane<O> = Coroutine<(), bool, O, LaneStack>;

    /// A lane's stack: a [`DefaultStack`] whose top is moved down by a few cache lines and
    /// pages, different from one stack to the next. Tops a whole number of pages apart would
    /// land in the same cache sets, and a block's lanes, switched in turn, would evict each
    /// other's frames (measured: twice as slow a switch with 256 lanes).
    pub(crate) struct LaneStack {
        stack: DefaultStack,
        offset: usize,
    }

    impl LaneStack {
        fn new() -> std::io::Result<LaneStack> {
            static MADE: AtomicUsize = AtomicUsize::new(0);
            let k = MADE.fetch_add(1, Ordering::Relaxed);
            // Up to 60 lines and 6 pages: < 28 KiB of the stack, 16-byte aligned.
            let offset = (k % 61) * 64 + (k / 61 % 7) * 4096;
            Ok(LaneStack { stack: DefaultStack::new(STACK_BYTES)?, offset })
        }
    }

    // SAFETY: the stack is `stack`'s from its limit up to `offset` bytes below its base: within
    // it (`offset` is far below its size), aligned like it (`offset` is a multiple of 64), and
    // owned with it.
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

    thread_local! {
        /// The running lane's way back to its scheduler.
        static YIELDER: Cell<*const Yielder<(), bool>> = const { Cell::new(std::ptr::null()) };
    }

    /// Stacks of finished launches, for the next ones (at most [`KEPT`]).
    static KEPT_STACKS: Mutex<Vec<LaneStack>> = Mutex::new(Vec::new());
    const KEPT: usize = 4096;

    /// The lane stacks of one host thread that runs blocks: taken from those kept when it
    /// needs them, handed from block to block, and kept again when it is dropped.
    #[derive(Default)]
    pub(crate) struct Stacks(Vec<LaneStack>);

    impl Stacks {
        /// `n` stacks, made or taken from those of earlier launches.
        fn take(&mut self, n: usize) -> std::io::Result<Vec<LaneStack>> {
            if self.0.len() < n {
                let mut kept = KEPT_STACKS.lock().unwrap_or_else(|e| e.into_inner());
                let at = kept.len().saturating_sub(n - self.0.len());
                self.0.extend(kept.drain(at..));
            }
            while self.0.len() < n {
                self.0.push(LaneStack::new()?);
            }
            Ok(self.0.split_off(self.0.len() - n))
        }
    }

    impl Drop for Stacks {
        fn drop(&mut self) {
            let mut kept = KEPT_STACKS.lock().unwrap_or_else(|e| e.into_inner());
            let room = KEPT.saturating_sub(kept.len()).min(self.0.len());
            kept.extend(self.0.drain(..room));
        }
    }

    /// The lanes of one block.
    pub(crate) struct Lanes<'a, O> {
        lanes: Vec<Option<Lane<O>>>,
        /// Where finished lanes' stacks go.
        stacks: &'a mut Stacks,
    }

    impl<O> Lanes<'_, O> {
        /// Runs lane `t` until it pauses or returns.
        ///
        /// # Panics
        ///
        /// When lane `t` has returned already.
        #[inline(always)]
        pub(crate) fn resume(&mut self, t: usize) -> Step<O> {
            let lane = self.lanes[t].as_mut().expect("offload: a finished lane was resumed");
            match lane.resume(()) {
                CoroutineResult::Yield(progress) => Step::Paused { progress },
                CoroutineResult::Return(out) => {
                    if let Some(done) = self.lanes[t].take() {
                        self.stacks.0.push(done.into_stack());
                    }
                    Step::Done(out)
                }
            }
        }
    }

    pub(super) fn with_lanes<O: Send, R>(
        stacks: &mut Stacks,
        n: usize,
        lane: &(dyn Fn(usize) -> O + Sync),
        schedule: impl FnOnce(&mut Lanes<'_, O>) -> R,
    ) -> std::io::Result<R> {
        let lanes = stacks
            .take(n)?
            .into_iter()
            .enumerate()
            .map(|(t, stack)| {
                let body = move |yielder: &Yielder<(), bool>, ()| {
                    YIELDER.set(yielder);
                    lane(t)
                };
                // SAFETY: the coroutine borrows `lane`, which outlives this function, and every
                // coroutine made here is dropped before it returns (run to the end by
                // `schedule`, or dropped with `lanes` — which unwinds a suspended one's stack —
                // if `schedule` panics); none is forgotten.
                Some(unsafe { Coroutine::with_stack_unchecked(stack, body) })
            })
            .collect();
        let mut lanes = Lanes { lanes, stacks };
        Ok(schedule(&mut lanes))
    }

    #[inline(always)]
    pub(super) fn pause(progress: bool) {
        let yielder = YIELDER.get();
        assert!(!yielder.is_null(), "offload: a lane paused outside a block's lanes");
        // SAFETY: `YIELDER` is the running lane's: set when it started and restored below
        // whenever it runs again, so it is the yielder its coroutine was given, alive for as
        // long as the coroutine runs — and the coroutine is running, since this is its code.
        unsafe { &*yielder }.suspend(progress);
        YIELDER.set(yielder);
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

    /// Nothing to keep: lanes are host threads here.
    #[derive(Default)]
    pub(crate) struct Stacks;

    pub(super) fn with_lanes<O: Send, R>(
        _stacks: &mut Stacks,
        n: usize,
        lane: &(dyn Fn(usize) -> O + Sync),
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
