//! The Chrome trace event format (as Perfetto reads it): complete events (`"ph": "X"`) with
//! `ts` and `dur` in microseconds, one `tid` per track, and metadata events naming them.

use super::record::{Event, MAX_EVENTS, Store, epoch};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::time::Instant;

/// A second, third… track of a queue holds the bounds that would cross those of the first.
const LANE_STRIDE: u32 = 100_000;

fn micros(t: Instant) -> f64 {
    t.saturating_duration_since(epoch()).as_nanos() as f64 / 1e3
}

/// The trace of `s.events[from..]`, with `dropped` events said to be missing.
pub(super) fn render(s: &Store, from: usize, dropped: u64) -> Vec<u8> {
    let events = &s.events[from..];
    let lanes = lanes(events);
    let pid = std::process::id();
    let mut used: BTreeMap<u32, (u32, usize)> = BTreeMap::new(); // tid → (track, lane)
    let mut out = Vec::with_capacity(events.len() + 16);
    for (e, &lane) in events.iter().zip(&lanes) {
        let tid = e.tid + LANE_STRIDE * lane as u32;
        used.entry(tid).or_insert((e.tid, lane));
        let start = micros(e.start);
        let dur = e.end.saturating_duration_since(e.start).as_nanos() as f64 / 1e3;
        out.push(json!({
            "name": e.name, "cat": e.cat, "ph": "X", "pid": pid, "tid": tid,
            "ts": start, "dur": dur, "args": e.args,
        }));
    }
    let program = std::env::args().next().unwrap_or_default();
    let mut meta = vec![json!({
        "name": "process_name", "ph": "M", "pid": pid, "tid": 0,
        "args": { "name": format!("offload: {program}") },
    })];
    for (&tid, &(track, lane)) in &used {
        let base = s.tracks.get(&track).cloned().unwrap_or_else(|| format!("track {track}"));
        let name = if lane == 0 { base } else { format!("{base} (crossing bounds, {})", lane + 1) };
        meta.push(
            json!({ "name": "thread_name", "ph": "M", "pid": pid, "tid": tid, "args": { "name": name } }),
        );
        meta.push(json!({ "name": "thread_sort_index", "ph": "M", "pid": pid, "tid": tid, "args": { "sort_index": tid } }));
    }
    meta.extend(out);
    let trace = json!({
        "traceEvents": Value::Array(meta),
        "displayTimeUnit": "ns",
        "otherData": {
            "producer": concat!("offload-rt ", env!("CARGO_PKG_VERSION")),
            "clock": "host monotonic clock, microseconds since the runtime first recorded",
            "device_time": "CPU backend: measured (its queue is synchronous). GPU (liboffload 22): unknown — liboffload 22 has no event timer, so queued work is drawn from when it was queued to when a wait observed it complete, an upper bound",
            "max_events": MAX_EVENTS,
            "dropped_events": dropped,
            "unobserved_queued_operations": s.pending(),
        },
    });
    serde_json::to_vec(&trace).expect("a JSON value serialises")
}

/// A lane per event, so that the events of each lane of a track nest or follow each other:
/// bounds of queued work that a partial wait (an event) ended cross those that a later wait
/// ended, and go to a further lane. Host tracks are call stacks and never need one.
pub(super) fn lanes(events: &[Event]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..events.len()).collect();
    // By start, the longer first, so that an interval comes before those nested in it.
    order.sort_by(|&a, &b| {
        let (a, b) = (&events[a], &events[b]);
        (a.tid, a.start, b.end).cmp(&(b.tid, b.start, a.end))
    });
    let mut lane_of = vec![0; events.len()];
    // Per lane of the current track, the ends of the intervals open at the current start.
    let mut stacks: Vec<Vec<Instant>> = Vec::new();
    let mut track = None;
    for i in order {
        let e = &events[i];
        if track != Some(e.tid) {
            track = Some(e.tid);
            stacks.clear();
        }
        let fits = |stack: &mut Vec<Instant>| {
            while stack.last().is_some_and(|&end| end <= e.start) {
                stack.pop();
            }
            stack.last().is_none_or(|&end| end >= e.end)
        };
        let lane = match stacks.iter_mut().position(fits) {
            Some(l) => l,
            None => {
                stacks.push(Vec::new());
                stacks.len() - 1
            }
        };
        stacks[lane].push(e.end);
        lane_of[i] = lane;
    }
    lane_of
}
