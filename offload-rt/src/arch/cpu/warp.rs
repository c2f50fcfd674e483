//! Emulated warps: the lanes of a warp are host threads that meet at each warp operation,
//! publish their values, and each compute their result from everyone's.
//!
//! A round completes when every lane of the warp has arrived at the same operation. A lane
//! that arrives at another operation, waits at a block barrier, or returns while others wait
//! here splits the warp — undefined on a GPU, where the kernels macro rejects the code that
//! could do it — and fails the launch with a message naming the places.

use super::super::Site;
use std::sync::{Condvar, Mutex, MutexGuard};

/// The meeting point of one emulated warp.
#[derive(Debug)]
pub(crate) struct WarpSync {
    lanes: u32,
    state: Mutex<State>,
    turn: Condvar,
}

#[derive(Debug)]
struct State {
    /// Lanes waiting in the current round, lanes that returned, lanes at a block barrier.
    arrived: u64,
    finished: u64,
    parked: u64,
    /// The operation of the current round (where it was called).
    site: Option<Site>,
    /// Values of the round in progress (`round % 2`) and of the one before, which slow
    /// lanes may still be reading.
    values: [[u64; 64]; 2],
    round: u64,
    failed: Option<String>,
}

impl WarpSync {
    pub(crate) fn new(lanes: u32) -> WarpSync {
        WarpSync {
            lanes,
            state: Mutex::new(State {
                arrived: 0,
                finished: 0,
                parked: 0,
                site: None,
                values: [[0; 64]; 2],
                round: 0,
                failed: None,
            }),
            turn: Condvar::new(),
        }
    }

    /// Lanes that exist in this warp.
    pub(crate) fn lanes(&self) -> u32 {
        self.lanes
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn all(&self) -> u64 {
        super::super::lanes_below(self.lanes)
    }

    fn split(&self, s: &mut State, why: String) {
        s.failed.get_or_insert(format!(
            "lanes of a warp diverged: {why}; call warp operations from code that every lane of the warp reaches"
        ));
        self.turn.notify_all();
    }

    /// Lane `lane` calls the operation at `site` with `value`; returns every lane's value.
    ///
    /// # Panics
    ///
    /// When the warp is split (see the module documentation).
    pub(crate) fn exchange(&self, lane: u32, value: u64, site: Site) -> [u64; 64] {
        let mut s = self.lock();
        if s.failed.is_none() {
            if s.finished != 0 {
                let gone = s.finished.trailing_zeros();
                self.split(
                    &mut s,
                    format!("lane {lane} calls the warp operation at {site}, but lane {gone} has returned"),
                );
            } else if s.parked != 0 {
                let parked = s.parked.trailing_zeros();
                self.split(
                    &mut s,
                    format!("lane {parked} waits at a block barrier while lane {lane} calls the warp operation at {site}"),
                );
            } else if let Some(other) = s.site.filter(|&o| o != site) {
                self.split(
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
            self.turn.notify_all();
        }
        while s.round == round && s.failed.is_none() {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.round == round
            && let Some(why) = s.failed.clone()
        {
            drop(s);
            panic!("{why}");
        }
        s.values[slot]
    }

    /// Lane `lane` returned from the kernel (or panicked).
    pub(crate) fn finish(&self, lane: u32, panicked: bool) {
        let mut s = self.lock();
        s.finished |= 1 << lane;
        if s.arrived != 0 && s.failed.is_none() {
            let why = if panicked {
                super::BLOCK_FAILED.to_owned()
            } else {
                let site = s.site.map_or_else(String::new, |w| format!(" at {w}"));
                format!("lane {lane} returned while others wait at the warp operation{site}")
            };
            self.split(&mut s, why);
        }
    }

    /// Lane `lane` waits at the block barrier at `site`. Returns why that splits the warp, if
    /// it does.
    pub(crate) fn park(&self, lane: u32, site: Site) -> Option<String> {
        let mut s = self.lock();
        if s.arrived != 0 && s.failed.is_none() {
            let at = s.site.map_or_else(String::new, |w| format!(" at {w}"));
            self.split(
                &mut s,
                format!("lane {lane} waits at the block barrier at {site} while others wait at the warp operation{at}"),
            );
        }
        s.parked |= 1 << lane;
        s.failed.clone()
    }

    /// The block barrier released every lane.
    pub(crate) fn unpark_all(&self) {
        self.lock().parked = 0;
    }

    /// Fails the warp because the block failed.
    pub(crate) fn fail(&self, why: &str) {
        let mut s = self.lock();
        s.failed.get_or_insert_with(|| why.to_owned());
        self.turn.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::panic::Location;

    fn lanes<R: Send>(n: u32, f: impl Fn(u32) -> R + Sync) -> Vec<R> {
        std::thread::scope(|s| {
            let handles: Vec<_> = (0..n)
                .map(|l| {
                    s.spawn({
                        let f = &f;
                        move || f(l)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        })
    }

    #[test]
    fn lanes_meet_and_see_every_value() {
        let w = WarpSync::new(4);
        let site = Location::caller();
        for values in lanes(4, |l| w.exchange(l, u64::from(l) * 10, site)) {
            assert_eq!(&values[..4], &[0, 10, 20, 30]);
        }
    }

    #[test]
    fn a_lane_that_returned_splits_the_warp() {
        let w = WarpSync::new(3);
        w.finish(1, false);
        let site = Location::caller();
        let failed = lanes(2, |l| std::panic::catch_unwind(|| w.exchange(l * 2, 1, site)).is_err());
        assert_eq!(failed, [true, true]);
    }

    #[test]
    fn different_operations_split_the_warp() {
        let w = WarpSync::new(2);
        let sites = [Location::caller(), Location::caller()];
        assert_ne!(sites[0], sites[1]);
        let failed = lanes(2, |l| std::panic::catch_unwind(|| w.exchange(l, 0, sites[l as usize])).is_err());
        assert_eq!(failed, [true, true]);
    }
}
