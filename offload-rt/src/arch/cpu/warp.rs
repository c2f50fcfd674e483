//! Emulated warps: the lanes of a warp meet at each warp operation, publish their values,
//! and each compute their result from everyone's.
//!
//! A round completes when every lane of the warp has arrived at the same operation; lanes that
//! arrive earlier pause (the block's lanes run one at a time: [`super::lanes`]). A lane
//! that arrives at another operation, waits at a block barrier, or returns while others wait
//! here splits the warp — undefined on a GPU, where the kernels macro rejects the code that
//! could do it — and fails the launch with a message naming the places.

use super::super::Site;
use super::pause;
use std::cell::RefCell;

/// The meeting point of one emulated warp.
#[derive(Debug)]
pub(crate) struct WarpSync {
    lanes: u32,
    state: RefCell<State>,
}

#[derive(Debug)]
struct State {
    /// Lanes waiting in the current round, lanes that returned, lanes at a block barrier.
    arrived: u64,
    finished: u64,
    parked: u64,
    /// The operation of the current round (where it was called).
    site: Option<Site>,
    /// Values of the round in progress (`round % 2`) and of the one before, which lanes
    /// resumed later may still be reading.
    values: [[u64; 64]; 2],
    round: u64,
    failed: Option<String>,
}

impl WarpSync {
    pub(crate) fn new(lanes: u32) -> WarpSync {
        WarpSync {
            lanes,
            state: RefCell::new(State {
                arrived: 0,
                finished: 0,
                parked: 0,
                site: None,
                values: [[0; 64]; 2],
                round: 0,
                failed: None,
            }),
        }
    }

    /// Lanes that exist in this warp.
    pub(crate) fn lanes(&self) -> u32 {
        self.lanes
    }

    fn all(&self) -> u64 {
        super::super::lanes_below(self.lanes)
    }

    fn split(s: &mut State, why: String) {
        s.failed.get_or_insert(format!(
            "lanes of a warp diverged: {why}; call warp operations from code that every lane of the warp reaches"
        ));
    }

    /// Lane `lane` calls the operation at `site` with `value`; `read` gets every lane's value.
    ///
    /// # Panics
    ///
    /// When the warp is split (see the module documentation).
    #[inline(always)]
    pub(crate) fn exchange<R>(
        &self,
        lane: u32,
        value: u64,
        site: Site,
        read: impl FnOnce(&[u64; 64]) -> R,
    ) -> R {
        match self.arrive(lane, value, site) {
            Ok(slot) => read(&self.state.borrow().values[slot]),
            Err(round) => {
                // Inlined, so that few returns follow the switch of stacks (see `BlockSync::wait`).
                let mut progress = true;
                loop {
                    pause(std::mem::take(&mut progress));
                    if let Some(slot) = self.released(round) {
                        return read(&self.state.borrow().values[slot]);
                    }
                }
            }
        }
    }

    /// Lane `lane` arrives with `value`: `Ok(slot)` of the round's values if it was the last,
    /// else `Err(round)` it waits to end.
    fn arrive(&self, lane: u32, value: u64, site: Site) -> Result<usize, u64> {
        {
            let mut s = self.state.borrow_mut();
            if s.failed.is_none() {
                if s.finished != 0 {
                    let gone = s.finished.trailing_zeros();
                    Self::split(
                        &mut s,
                        format!(
                            "lane {lane} calls the warp operation at {site}, but lane {gone} has returned"
                        ),
                    );
                } else if s.parked != 0 {
                    let parked = s.parked.trailing_zeros();
                    Self::split(
                        &mut s,
                        format!(
                            "lane {parked} waits at a block barrier while lane {lane} calls the warp operation at {site}"
                        ),
                    );
                } else if let Some(other) = s.site.filter(|&o| !super::same_site(o, site)) {
                    Self::split(
                        &mut s,
                        format!("lanes called different warp operations, at {other} and at {site}"),
                    );
                }
            }
            if let Some(why) = s.failed.clone() {
                drop(s);
                panic!("{why}");
            }
            let round = s.round;
            let slot = (round % 2) as usize;
            s.site = Some(site);
            s.arrived |= 1 << lane;
            s.values[slot][lane as usize] = value;
            if s.arrived == self.all() {
                s.arrived = 0;
                s.site = None;
                s.round += 1;
                return Ok(slot);
            }
            Err(round)
        }
    }

    /// The slot of round `round`'s values once it has ended.
    ///
    /// # Panics
    ///
    /// When the warp failed while it lasted.
    fn released(&self, round: u64) -> Option<usize> {
        let s = self.state.borrow();
        if s.round != round {
            return Some((round % 2) as usize);
        }
        if let Some(why) = s.failed.clone() {
            drop(s);
            panic!("{why}");
        }
        None
    }

    /// Lane `lane` returned from the kernel (or panicked).
    pub(crate) fn finish(&self, lane: u32, panicked: bool) {
        let mut s = self.state.borrow_mut();
        s.finished |= 1 << lane;
        if s.arrived != 0 && s.failed.is_none() {
            let why = if panicked {
                super::BLOCK_FAILED.to_owned()
            } else {
                let site = s.site.map_or_else(String::new, |w| format!(" at {w}"));
                format!("lane {lane} returned while others wait at the warp operation{site}")
            };
            Self::split(&mut s, why);
        }
    }

    /// Lane `lane` waits at the block barrier at `site`. Returns why that splits the warp, if
    /// it does.
    pub(crate) fn park(&self, lane: u32, site: Site) -> Option<String> {
        let mut s = self.state.borrow_mut();
        if s.arrived != 0 && s.failed.is_none() {
            let at = s.site.map_or_else(String::new, |w| format!(" at {w}"));
            Self::split(
                &mut s,
                format!(
                    "lane {lane} waits at the block barrier at {site} while others wait at the warp operation{at}"
                ),
            );
        }
        s.parked |= 1 << lane;
        s.failed.clone()
    }

    /// The block barrier released every lane.
    pub(crate) fn unpark_all(&self) {
        self.state.borrow_mut().parked = 0;
    }

    /// Fails the warp because the block failed.
    pub(crate) fn fail(&self, why: &str) {
        self.state.borrow_mut().failed.get_or_insert_with(|| why.to_owned());
    }
}

#[cfg(test)]
mod tests {
    use super::super::BlockSync;
    use crate::arch::cpu::tests::lanes_then;
    use std::panic::{AssertUnwindSafe, Location, catch_unwind};

    /// A block of one warp of `lanes` lanes.
    fn warp(lanes: usize) -> BlockSync {
        BlockSync::new(lanes, 64)
    }

    #[test]
    fn lanes_meet_and_see_every_value() {
        let b = warp(4);
        let site = Location::caller();
        for values in lanes_then(4, &b, |l| b.warp(0).0.exchange(l as u32, l as u64 * 10, site, |v| *v)) {
            assert_eq!(&values[..4], &[0, 10, 20, 30]);
        }
    }

    #[test]
    fn a_lane_that_returned_splits_the_warp() {
        let b = warp(3);
        b.warp(0).0.finish(1, false);
        let site = Location::caller();
        let failed = lanes_then(2, &b, |l| {
            catch_unwind(AssertUnwindSafe(|| b.warp(0).0.exchange(l as u32 * 2, 1, site, |_| ()))).is_err()
        });
        assert_eq!(failed, [true, true]);
    }

    #[test]
    fn different_operations_split_the_warp() {
        let b = warp(2);
        let sites = [Location::caller(), Location::caller()];
        assert_ne!(sites[0], sites[1]);
        let failed = lanes_then(2, &b, |l| {
            catch_unwind(AssertUnwindSafe(|| b.warp(0).0.exchange(l as u32, 0, sites[l], |_| ()))).is_err()
        });
        assert_eq!(failed, [true, true]);
    }

    #[test]
    fn lanes_that_wait_for_a_lane_that_never_comes_are_failed_not_left_hanging() {
        // Lane 1 of the warp waits for lane 0 forever: lane 0 is not among the lanes run.
        let b = warp(2);
        let site = Location::caller();
        let failed = lanes_then(1, &b, |_| {
            catch_unwind(AssertUnwindSafe(|| b.warp(0).0.exchange(1, 7, site, |_| ())))
        });
        let why = failed[0].as_ref().expect_err("the stalled lane fails");
        let why = why.downcast_ref::<String>().expect("a message");
        assert!(why.contains("wait for each other and none can go on"), "{why}");
    }
}
