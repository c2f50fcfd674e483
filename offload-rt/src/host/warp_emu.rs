//! Emulated warps for the CPU backend: the lanes of a warp are host threads that meet at
//! each warp operation, publish their values, and each compute their result from everyone's.
//!
//! A round of an operation completes when every lane of the warp that is still running has
//! arrived: lanes that returned from the kernel are the inactive lanes of a GPU warp. Lanes
//! that arrive at different operations, or wait at a block barrier while others wait here,
//! split the warp: the launch fails with a message instead of deadlocking or guessing.

use std::panic::Location;
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

/// Lanes per emulated warp: `OFFLOAD_CPU_WARP_SIZE` (32 or 64), else 32.
pub fn warp_size() -> u32 {
    static SIZE: OnceLock<u32> = OnceLock::new();
    *SIZE.get_or_init(|| match std::env::var("OFFLOAD_CPU_WARP_SIZE").ok().as_deref() {
        None | Some("32") => 32,
        Some("64") => 64,
        Some(other) => {
            eprintln!("offload: OFFLOAD_CPU_WARP_SIZE={other} is not 32 or 64; using 32");
            32
        }
    })
}

pub(crate) const SPLIT_MARK: &str = "split a warp";
/// Why a warp fails when its block does: never the first cause of a failed launch.
pub(crate) const BLOCK_FAILED: &str = "another thread of the block failed";

/// The meeting point of one emulated warp.
#[derive(Debug)]
pub struct WarpSync {
    lanes: u32,
    state: Mutex<WarpState>,
    turn: Condvar,
}

#[derive(Debug)]
struct WarpState {
    /// Lanes waiting in the current round, lanes that returned, lanes at a block barrier.
    arrived: u64,
    finished: u64,
    parked: u64,
    /// The operation of the current round (where it was called).
    site: Option<&'static Location<'static>>,
    /// Values of the round in progress (`round % 2`) and of the one before, which slow
    /// lanes may still be reading.
    values: [[u64; 64]; 2],
    masks: [u64; 2],
    round: u64,
    failed: Option<String>,
}

impl WarpSync {
    pub(crate) fn new(lanes: u32) -> WarpSync {
        WarpSync {
            lanes,
            state: Mutex::new(WarpState {
                arrived: 0,
                finished: 0,
                parked: 0,
                site: None,
                values: [[0; 64]; 2],
                masks: [0; 2],
                round: 0,
                failed: None,
            }),
            turn: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, WarpState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn all(&self) -> u64 {
        if self.lanes >= 64 { u64::MAX } else { (1u64 << self.lanes) - 1 }
    }

    /// Lane `lane` calls the operation at `site` with `value`; returns every lane's value
    /// and the mask of lanes that took part.
    ///
    /// # Panics
    ///
    /// When the warp is split (see the module documentation).
    pub fn exchange(&self, lane: u32, value: u64, site: &'static Location<'static>) -> ([u64; 64], u64) {
        let mut s = self.lock();
        if s.failed.is_none() {
            if s.parked != 0 {
                s.failed = Some(format!(
                    "a lane waits at a block barrier while lane {lane} calls a warp operation at {site}"
                ));
            } else if let Some(other) = s.site.filter(|o| *o != site) {
                s.failed = Some(format!("lanes called different warp operations, at {other} and at {site}"));
            }
        }
        if let Some(why) = s.failed.clone() {
            self.turn.notify_all();
            drop(s);
            panic!("{}", split_message(&why));
        }
        let round = s.round;
        let slot = (round % 2) as usize;
        s.site = Some(site);
        s.arrived |= 1 << lane;
        s.values[slot][lane as usize] = value;
        self.complete_round(&mut s);
        while s.round == round && s.failed.is_none() {
            s = self.turn.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        if s.round == round
            && let Some(why) = s.failed.clone()
        {
            drop(s);
            panic!("{}", split_message(&why));
        }
        (s.values[slot], s.masks[slot])
    }

    /// Ends the round when every running lane has arrived.
    fn complete_round(&self, s: &mut WarpState) {
        if s.arrived != 0 && s.arrived | s.finished == self.all() {
            let slot = (s.round % 2) as usize;
            s.masks[slot] = s.arrived;
            s.arrived = 0;
            s.site = None;
            s.round += 1;
            self.turn.notify_all();
        }
    }

    /// Lane `lane` returned from the kernel (or panicked, which fails the warp).
    pub(crate) fn finish(&self, lane: u32, panicked: bool) {
        let mut s = self.lock();
        s.finished |= 1 << lane;
        if panicked && s.arrived != 0 && s.failed.is_none() {
            s.failed = Some(format!("lane {lane} stopped while others waited at a warp operation"));
            self.turn.notify_all();
        }
        self.complete_round(&mut s);
    }

    /// Lane `lane` waits at a block barrier. Returns why that splits the warp, if it does.
    pub(crate) fn park(&self, lane: u32) -> Option<String> {
        let mut s = self.lock();
        if s.arrived != 0 && s.failed.is_none() {
            s.failed =
                Some(format!("lane {lane} waits at a block barrier while others wait at a warp operation"));
            self.turn.notify_all();
        }
        s.parked |= 1 << lane;
        s.failed.clone()
    }

    /// The block barrier released every lane.
    pub(crate) fn unpark_all(&self) {
        self.lock().parked = 0;
    }

    /// Fails the warp (another thread of the block broke the barrier protocol).
    pub(crate) fn fail(&self) {
        let mut s = self.lock();
        if s.failed.is_none() {
            s.failed = Some(BLOCK_FAILED.to_owned());
        }
        self.turn.notify_all();
    }
}

fn split_message(why: &str) -> String {
    format!(
        "threads {SPLIT_MARK}: {why}; call warp operations from code that every lane of the warp reaches (not inside branches that depend on the lane)"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lanes_meet_and_see_every_value() {
        let w = WarpSync::new(4);
        let site = Location::caller();
        let results: Vec<_> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..4u32)
                .map(|l| {
                    s.spawn({
                        let w = &w;
                        move || w.exchange(l, u64::from(l) * 10, site)
                    })
                })
                .collect();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for (values, mask) in results {
            assert_eq!(mask, 0b1111);
            assert_eq!(&values[..4], &[0, 10, 20, 30]);
        }
    }

    #[test]
    fn finished_lanes_are_inactive() {
        let w = WarpSync::new(3);
        w.finish(1, false);
        let site = Location::caller();
        let masks: Vec<u64> = std::thread::scope(|s| {
            let handles: Vec<_> = [0u32, 2]
                .map(|l| {
                    s.spawn({
                        let w = &w;
                        move || w.exchange(l, 1, site).1
                    })
                })
                .into();
            handles.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(masks, [0b101, 0b101]);
    }

    #[test]
    fn different_operations_split_the_warp() {
        let w = WarpSync::new(2);
        let (a, b) = (Location::caller(), Location::caller());
        assert_ne!(a, b);
        let outcomes: Vec<bool> = std::thread::scope(|s| {
            let ha = s.spawn(|| std::panic::catch_unwind(|| w.exchange(0, 0, a)).is_err());
            let hb = s.spawn(|| std::panic::catch_unwind(|| w.exchange(1, 0, b)).is_err());
            vec![ha.join().unwrap(), hb.join().unwrap()]
        });
        assert_eq!(outcomes, [true, true]);
    }
}
