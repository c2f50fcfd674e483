//! The recorder: one process-wide log of events behind a mutex, kept only while someone
//! records (`OFFLOAD_TIMELINE`, or a live [`Recording`](super::Recording)). The hooks in the
//! rest of the runtime first ask [`on`] (one relaxed atomic load) and do nothing else when it
//! says no.

use serde_json::{Value, json};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

/// The most events one process keeps; later ones are counted as dropped.
pub const MAX_EVENTS: usize = 1_000_000;

/// Who records: 1 for `OFFLOAD_TIMELINE` (for the whole run), plus one per live `Recording`.
static ACTIVE: AtomicU32 = AtomicU32::new(0);

/// Whether anything records: the one check every hook makes.
#[inline(always)]
pub(crate) fn on() -> bool {
    ACTIVE.load(Ordering::Relaxed) != 0
}

/// The start of an interval, when recording.
#[inline(always)]
pub(crate) fn start() -> Option<Instant> {
    if on() { Some(Instant::now()) } else { None }
}

/// The CPU emulation backend's queue track (every CPU device shares it).
pub(crate) const CPU_QUEUE: u32 = 900;

/// The queue track of GPU `index`.
pub(crate) fn gpu_queue_track(index: usize) -> u32 {
    1000 + u32::try_from(index).unwrap_or(u32::MAX - 1000)
}

/// What host memory a copy reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum HostKind {
    /// The caller's own memory: pinned if it is a `PinnedBuffer`, else pageable.
    User,
    /// A `PinnedBuffer` (asynchronous copies).
    Pinned,
    /// The pinned arena of a launch's small arguments.
    Arena,
    /// A pinned bounce buffer of a staged copy of pageable memory.
    Bounce,
    /// The CPU backend's memory (host memory on both sides).
    Cpu,
}

impl HostKind {
    pub(crate) fn describe(self, host: *const u8, bytes: usize) -> &'static str {
        match self {
            // (By address only: the memory may be a copy's destination, being written now.)
            HostKind::User => {
                if crate::host::pinned::is_pinned_range(host as usize, bytes) {
                    "pinned"
                } else {
                    "pageable"
                }
            }
            HostKind::Pinned => "pinned",
            HostKind::Arena => "pinned (small-argument arena)",
            HostKind::Bounce => "pinned (staging bounce buffer)",
            HostKind::Cpu => "host memory (CPU backend)",
        }
    }
}

/// One complete event.
#[derive(Debug)]
pub(crate) struct Event {
    pub name: String,
    pub cat: &'static str,
    pub tid: u32,
    pub start: Instant,
    pub end: Instant,
    pub args: Value,
}

/// Work queued on a GPU that no wait has yet observed complete.
#[derive(Debug)]
struct Queued {
    tid: u32,
    seq: u64,
    name: String,
    queued_at: Instant,
    /// When the call that queued it returned.
    queued_until: Instant,
    args: Value,
}

#[derive(Debug, Default)]
pub(super) struct Store {
    pub events: Vec<Event>,
    /// Events cleared since the process started: `events[0]` is event number `base`.
    pub base: usize,
    pub dropped: u64,
    /// Track names by track id.
    pub tracks: BTreeMap<u32, String>,
    pending: Vec<Queued>,
    /// Per queue track, the number of operations queued on it so far.
    queued_ops: BTreeMap<u32, u64>,
}

impl Store {
    fn push(&mut self, event: Event) {
        if ACTIVE.load(Ordering::Relaxed) == 0 {
            return; // begun while a recording ran, ended after the last one stopped
        }
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
            return;
        }
        self.dropped += 1;
        if self.dropped == 1 {
            eprintln!(
                "offload: warning: the timeline holds {MAX_EVENTS} events; later ones are dropped (and counted in its otherData)"
            );
        }
    }

    fn track(&mut self, tid: u32, name: impl FnOnce() -> String) {
        self.tracks.entry(tid).or_insert_with(name);
    }

    /// Queued work not yet observed complete.
    pub fn pending(&self) -> usize {
        self.pending.len()
    }
}

/// The instant times are measured from (the first time anything recorded).
pub(super) fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

pub(super) fn store() -> MutexGuard<'static, Store> {
    static STORE: Mutex<Store> = Mutex::new(Store {
        events: Vec::new(),
        base: 0,
        dropped: 0,
        tracks: BTreeMap::new(),
        pending: Vec::new(),
        queued_ops: BTreeMap::new(),
    });
    STORE.lock().unwrap_or_else(|e| e.into_inner())
}

/// One more recorder.
pub(super) fn activate() {
    epoch();
    ACTIVE.fetch_add(1, Ordering::Relaxed);
}

/// One recorder fewer; when none is left the log is emptied.
pub(super) fn deactivate() {
    let mut s = store();
    if ACTIVE.fetch_sub(1, Ordering::Relaxed) == 1 {
        s.base += s.events.len();
        s.events = Vec::new();
        s.pending.clear();
    }
}

/// This thread's host track, named on first use.
pub(super) fn host_track(s: &mut Store) -> u32 {
    static NEXT: AtomicU32 = AtomicU32::new(1);
    thread_local! {
        static TID: Cell<u32> = const { Cell::new(0) };
    }
    let tid = TID.try_with(|t| {
        if t.get() == 0 {
            t.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        t.get()
    });
    let tid = tid.unwrap_or(999); // a thread-local's destructor: a track for all of them
    s.track(tid, || match std::thread::current().name() {
        Some(name) => format!("host thread {tid} ({name})"),
        None => format!("host thread {tid}"),
    });
    tid
}

/// Records a host call from `start` until now on this thread's track.
pub(crate) fn host(start: Instant, cat: &'static str, name: String, args: Value) {
    let end = Instant::now();
    let mut s = store();
    let tid = host_track(&mut s);
    s.push(Event { name, cat, tid, start, end, args });
}

/// Records work a device did from `start` until now on queue track `tid` (the CPU backend's
/// synchronous queue: measured).
pub(crate) fn device(
    tid: u32,
    track: impl FnOnce() -> String,
    start: Instant,
    name: String,
    mut args: Value,
) {
    let end = Instant::now();
    if let Some(a) = args.as_object_mut() {
        a.insert("device_time".into(), json!("measured (the CPU backend runs it before the call returns)"));
    }
    let mut s = store();
    s.track(tid, track);
    s.push(Event { name, cat: "device", tid, start, end, args });
}

/// Notes work queued on GPU queue track `tid` at `queued_at` (the call returned now); it
/// becomes an event when a wait observes it complete ([`observed`]).
pub(crate) fn queued(
    tid: u32,
    track: impl FnOnce() -> String,
    queued_at: Instant,
    name: String,
    args: Value,
) {
    let queued_until = Instant::now();
    let mut s = store();
    s.track(tid, track);
    let count = s.queued_ops.entry(tid).or_default();
    let seq = *count;
    *count += 1;
    // (Work that no wait observes yet is bounded like the events: a program that queues
    // without ever waiting would otherwise grow this without end.)
    if ACTIVE.load(Ordering::Relaxed) == 0 {
        return; // the recording stopped while this was being queued
    }
    if s.pending.len() + s.events.len() >= MAX_EVENTS {
        s.dropped += 1;
        return;
    }
    s.pending.push(Queued { tid, seq, name, queued_at, queued_until, args });
}

/// The number of operations queued on track `tid` so far: an event made now follows them.
pub(crate) fn mark(tid: u32) -> u64 {
    store().queued_ops.get(&tid).copied().unwrap_or(0)
}

/// A wait by `call` on queue track `tid` returned at `at`: the work queued before mark
/// `upto` (`None`: all of it) is complete. Returns how many operations that completed.
pub(crate) fn observed(tid: u32, upto: Option<u64>, at: Instant, call: &'static str) -> usize {
    let mut s = store();
    let (done, left): (Vec<_>, Vec<_>) = std::mem::take(&mut s.pending)
        .into_iter()
        .partition(|q| q.tid == tid && upto.is_none_or(|m| q.seq < m));
    s.pending = left;
    let n = done.len();
    for q in done {
        let mut args = q.args;
        if let Some(a) = args.as_object_mut() {
            a.insert("device_time".into(), json!("unknown (liboffload 22 has no event timer)"));
            a.insert(
                "interval".into(),
                json!(format!("upper bound: from when it was queued to when {call} observed it complete")),
            );
            let call_us = q.queued_until.saturating_duration_since(q.queued_at).as_nanos() as f64 / 1e3;
            a.insert("queue_call_us".into(), json!(call_us));
        }
        s.push(Event { name: q.name, cat: "queue", tid, start: q.queued_at, end: at, args });
    }
    n
}
