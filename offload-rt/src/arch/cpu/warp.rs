//! Emulated warps: the lanes of a warp meet at each warp operation, publish their values,
//! and each compute their result from everyone's.
//!
//! A round completes when every lane of the warp has arrived at the same operation; lanes that
//! arrive earlier pause (the block's lanes run one at a time: [`super::lanes`]). A lane
//! that arrives at another operation, waits at a block barrier, or returns while others wait
//! here splits the warp — undefined on a GPU, where the kernels macro rejects the code that
//! could do it — and fails the launch with a message naming the places.

use super::super::Site;
use super::block::Caller;
use super::lanes::arrived;
use std::cell::{Cell, OnceCell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A lane's part in a warp operation ([`BlockSync::exchange_then`](super::BlockSync::exchange_then)):
/// arrives with its value when first polled, then, once the round is complete, is ready with
/// what `read` makes of the round's values. (One small state machine, written out, as for
/// barriers; like theirs, each poll first checks that its caller is the lane being polled.)
#[derive(Debug)]
pub(crate) struct Exchange<A, R> {
    caller: Caller,
    value: u64,
    site: Site,
    all: Option<A>,
    read: Option<R>,
    /// The round it waits to end, once arrived.
    round: Option<u64>,
}

impl<A, R> Exchange<A, R> {
    #[inline(always)]
    pub(crate) fn new(caller: Caller, value: u64, site: Site, all: A, read: R) -> Exchange<A, R> {
        Exchange { caller, value, site, all: Some(all), read: Some(read), round: None }
    }
}

impl<A: FnOnce(&mut [u64; 64]) + Unpin, R: FnOnce(&[u64; 64]) -> T + Unpin, T> Future for Exchange<A, R> {
    type Output = T;

    #[inline(always)]
    fn poll(mut self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<T> {
        let x = &mut *self;
        let (warp, lane) = x.caller.block().warp(x.caller.tid());
        let slot = match x.round {
            None => match warp.arrive(lane, x.value, x.site) {
                Ok(slot) => {
                    let all = x.all.take().expect("a lane's operation completes once");
                    all(&mut warp.values.borrow_mut()[slot]);
                    slot
                }
                Err(round) => {
                    x.round = Some(round);
                    arrived();
                    return Poll::Pending;
                }
            },
            Some(round) => match warp.released(round) {
                Some(slot) => slot,
                None => return Poll::Pending,
            },
        };
        let read = x.read.take().expect("a lane's operation completes once");
        Poll::Ready(read(&warp.values.borrow()[slot]))
    }
}

/// The meeting point of one emulated warp.
#[derive(Debug)]
pub(crate) struct WarpSync {
    lanes: u32,
    /// The lanes that exist, one bit each (`lanes` of them, from lane 0).
    mask: u64,
    /// Lanes waiting in the current round, lanes that returned.
    arrived: Cell<u64>,
    finished: Cell<u64>,
    /// The operation of the current round (where it was called).
    site: Cell<Option<Site>>,
    /// Values of the round in progress (`round % 2`) and of the one before, which lanes
    /// resumed later may still be reading.
    values: RefCell<[[u64; 64]; 2]>,
    round: Cell<u64>,
    failed: OnceCell<String>,
}

impl WarpSync {
    pub(crate) fn new(lanes: u32) -> WarpSync {
        WarpSync {
            lanes,
            mask: super::super::lanes_below(lanes),
            arrived: Cell::new(0),
            finished: Cell::new(0),
            site: Cell::new(None),
            values: RefCell::new([[0; 64]; 2]),
            round: Cell::new(0),
            failed: OnceCell::new(),
        }
    }

    /// Back to the state of a new warp (for the next block a worker runs). The values of old
    /// rounds stay: a round's values are all written before any is read.
    pub(crate) fn reset(&mut self) {
        self.arrived.set(0);
        self.finished.set(0);
        self.site.set(None);
        self.failed.take();
    }

    /// Lanes that exist in this warp.
    #[inline(always)]
    pub(crate) fn lanes(&self) -> u32 {
        self.lanes
    }

    /// The lanes that exist, one bit each.
    #[inline(always)]
    pub(crate) fn mask(&self) -> u64 {
        self.mask
    }

    fn split(&self, why: String) {
        let _ = self.failed.set(format!(
            "lanes of a warp diverged: {why}; call warp operations from code that every lane of the warp reaches"
        ));
    }

    /// Lane `lane` arrives with `value`: `Ok(slot)` of the round's values if it was the last,
    /// else `Err(round)` it waits to end.
    #[inline(always)]
    fn arrive(&self, lane: u32, value: u64, site: Site) -> Result<usize, u64> {
        // The common case, every check passing: nothing failed or returned, and the lanes here
        // already (if any) called this same operation. (Lanes waiting at a block barrier
        // instead are named when the block stalls: `split_by_barrier`.)
        let same = self.site.get().is_none_or(|o| std::ptr::eq(o, site));
        if self.failed.get().is_some()
            || self.finished.get() != 0
            || !same
            || self.arrived.get() & 1 << lane != 0
        {
            self.check_arrival(lane, site);
        }
        let round = self.round.get();
        let slot = (round % 2) as usize;
        self.site.set(Some(site));
        let arrived = self.arrived.get() | 1 << lane;
        self.values.borrow_mut()[slot][lane as usize] = value;
        if arrived == self.mask {
            self.arrived.set(0);
            self.site.set(None);
            self.round.set(round + 1);
            return Ok(slot);
        }
        self.arrived.set(arrived);
        Err(round)
    }

    /// `arrive`'s checks in full, where the quick ones did not all pass: splits the warp (and
    /// panics) when the lane may not take part here.
    #[cold]
    #[inline(never)]
    fn check_arrival(&self, lane: u32, site: Site) {
        if self.failed.get().is_none() {
            if self.arrived.get() & 1 << lane != 0 {
                self.split(format!(
                    "lane {lane} arrived at the warp operation at {site} while it already waits in one (a wait polled by hand, not awaited by the kernels macro?)"
                ));
            } else if self.finished.get() != 0 {
                let gone = self.finished.get().trailing_zeros();
                self.split(format!(
                    "lane {lane} calls the warp operation at {site}, but lane {gone} has returned"
                ));
            } else if let Some(other) = self.site.get().filter(|&o| !super::same_site(o, site)) {
                self.split(format!("lanes called different warp operations, at {other} and at {site}"));
            }
        }
        if let Some(why) = self.failed.get() {
            panic!("{why}");
        }
    }

    /// The slot of round `round`'s values once it has ended.
    ///
    /// # Panics
    ///
    /// When the warp failed while it lasted.
    #[inline(always)]
    fn released(&self, round: u64) -> Option<usize> {
        if self.round.get() != round {
            return Some((round % 2) as usize);
        }
        if let Some(why) = self.failed.get() {
            panic!("{why}");
        }
        None
    }

    /// Lane `lane` returned from the kernel (or panicked).
    #[inline(always)]
    pub(crate) fn finish(&self, lane: u32, panicked: bool) {
        self.finished.set(self.finished.get() | 1 << lane);
        if self.arrived.get() != 0 && self.failed.get().is_none() {
            self.finish_while_others_wait(lane, panicked);
        }
    }

    /// [`finish`](Self::finish) while lanes wait in a warp operation: splits the warp.
    #[cold]
    #[inline(never)]
    fn finish_while_others_wait(&self, lane: u32, panicked: bool) {
        let why = if panicked {
            super::BLOCK_FAILED.to_owned()
        } else {
            let site = self.site.get().map_or_else(String::new, |w| format!(" at {w}"));
            format!("lane {lane} returned while others wait at the warp operation{site}")
        };
        self.split(why);
    }

    /// The block stalled with threads waiting at the barrier at `site`: if lanes of this warp
    /// wait in a warp operation, the warp's other lanes that have not returned wait at that
    /// barrier, and the warp is split between the two.
    pub(crate) fn split_by_barrier(&self, site: Site) {
        let at_barrier = self.mask & !self.arrived.get() & !self.finished.get();
        if self.arrived.get() != 0 && at_barrier != 0 && self.failed.get().is_none() {
            let op = self.site.get().map_or_else(String::new, |w| format!(" at {w}"));
            self.split(format!(
                "lane {} waits at the block barrier at {site} while others wait at the warp operation{op}",
                at_barrier.trailing_zeros()
            ));
        }
    }

    /// Fails the warp because the block failed.
    pub(crate) fn fail(&self, why: &str) {
        if self.failed.get().is_none() {
            let _ = self.failed.set(why.to_owned());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::super::BlockSync;
    use crate::arch::cpu::tests::{lanes_at, lanes_then};
    use std::future::Future;
    use std::panic::Location;

    /// A block of one warp of `lanes` lanes.
    fn warp(lanes: usize) -> BlockSync {
        BlockSync::new(lanes, 64)
    }

    /// Thread `tid` of `b` calls the warp operation at `site` with `value`; `read` gets every
    /// lane's value.
    pub(crate) fn exchange<'b, R>(
        b: &'b BlockSync,
        tid: usize,
        value: u64,
        site: &'static Location<'static>,
        read: impl FnOnce(&[u64; 64]) -> R + Unpin + 'b,
    ) -> impl Future<Output = R> + 'b {
        b.exchange_then(tid, value, site, |_: &mut [u64; 64]| {}, read)
    }

    #[test]
    fn lanes_meet_and_see_every_value() {
        let b = warp(4);
        let site = Location::caller();
        let meet = |l: usize| exchange(&b, l, l as u64 * 10, site, |v| *v);
        for values in lanes_then(4, &b, meet, |_, _| {}) {
            assert_eq!(&values.expect("no lane fails")[..4], &[0, 10, 20, 30]);
        }
    }

    #[test]
    fn a_lane_that_returned_splits_the_warp() {
        let b = warp(3);
        b.warp(0).0.finish(1, false);
        let site = Location::caller();
        let failed = lanes_at(&[0, 2], &b, |l| exchange(&b, l, 1, site, |_| ()), |_, _| {});
        assert!(failed.iter().all(Result::is_err));
    }

    #[test]
    fn different_operations_split_the_warp() {
        let b = warp(2);
        let sites = [Location::caller(), Location::caller()];
        assert_ne!(sites[0], sites[1]);
        let failed = lanes_then(2, &b, |l| exchange(&b, l, 0, sites[l], |_| ()), |_, _| {});
        assert!(failed.iter().all(Result::is_err));
    }

    #[test]
    fn lanes_that_wait_for_a_lane_that_never_comes_are_failed_not_left_hanging() {
        // Lane 1 of the warp waits for lane 0 forever: lane 0 is not among the lanes run.
        let b = warp(2);
        let site = Location::caller();
        let failed = lanes_at(&[1], &b, |t| exchange(&b, t, 7, site, |_| ()), |_, _| {});
        let why = failed[0].as_ref().expect_err("the stalled lane fails");
        let why = why.downcast_ref::<String>().expect("a message");
        assert!(why.contains("wait for each other and none can go on"), "{why}");
    }
}
