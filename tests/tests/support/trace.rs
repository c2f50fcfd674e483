//! Reading a timeline file back and checking what every trace must satisfy.

use serde_json::Value;
use std::collections::BTreeMap;

/// A timeline file, parsed and checked.
pub struct Trace {
    /// The complete (`"ph": "X"`) events.
    pub events: Vec<Value>,
    /// Track names by `tid`, from the metadata events.
    pub tracks: BTreeMap<u64, String>,
    pub other: Value,
}

/// Reads `path` and checks the format: a JSON object with `traceEvents`, complete events with
/// `ts >= 0` and `dur >= 0` on named tracks, and on every track events that nest or follow
/// each other (never cross).
pub fn read(path: &std::path::Path) -> Trace {
    let text = std::fs::read(path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let trace: Value = serde_json::from_slice(&text).expect("the timeline is JSON");
    assert!(trace.is_object(), "a JSON object");
    assert_eq!(trace["displayTimeUnit"], "ns");
    let all = trace["traceEvents"].as_array().expect("traceEvents is an array");
    let mut tracks = BTreeMap::new();
    let mut events = Vec::new();
    for e in all {
        match e["ph"].as_str() {
            Some("M") if e["name"] == "thread_name" => {
                let name = e["args"]["name"].as_str().expect("a track name").to_owned();
                tracks.insert(e["tid"].as_u64().expect("tid"), name);
            }
            Some("M") => {}
            Some("X") => events.push(e.clone()),
            other => panic!("unexpected event phase {other:?}: {e}"),
        }
    }
    for e in &events {
        assert!(e["ts"].as_f64().expect("ts") >= 0.0, "ts >= 0: {e}");
        assert!(e["dur"].as_f64().expect("dur") >= 0.0, "dur >= 0: {e}");
        assert!(e["name"].as_str().is_some_and(|n| !n.is_empty()), "a name: {e}");
        let tid = e["tid"].as_u64().expect("tid");
        assert!(tracks.contains_key(&tid), "track {tid} is named by a metadata event");
        assert_eq!(e["pid"], events[0]["pid"], "one process");
    }
    let trace = Trace { events, tracks, other: trace["otherData"].clone() };
    for &tid in trace.tracks.keys() {
        trace.nested(tid);
    }
    trace
}

/// Rounding of microseconds printed from nanoseconds.
const SLACK: f64 = 1e-3;

fn span(e: &Value) -> (f64, f64) {
    let ts = e["ts"].as_f64().expect("ts");
    (ts, ts + e["dur"].as_f64().expect("dur"))
}

impl Trace {
    /// The `tid` of the one track whose name contains `name`.
    pub fn track(&self, name: &str) -> u64 {
        let found: Vec<_> = self.tracks.iter().filter(|(_, n)| n.contains(name)).collect();
        assert_eq!(found.len(), 1, "one track named like {name:?}: {:?}", self.tracks);
        *found[0].0
    }

    /// The events on track `tid` whose name starts with `prefix`.
    pub fn on(&self, tid: u64, prefix: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| e["tid"] == tid && e["name"].as_str().is_some_and(|n| n.starts_with(prefix)))
            .collect()
    }

    /// The events whose name starts with `prefix` on every track whose name contains `track`
    /// (a queue's first track and those of its crossing bounds).
    pub fn on_all(&self, track: &str, prefix: &str) -> Vec<&Value> {
        let tids: Vec<u64> = self.tracks.iter().filter(|(_, n)| n.contains(track)).map(|(&t, _)| t).collect();
        tids.into_iter().flat_map(|tid| self.on(tid, prefix)).collect()
    }

    /// Every event on track `tid` in order of start.
    fn sorted(&self, tid: u64) -> Vec<(f64, f64)> {
        let mut spans: Vec<_> = self.events.iter().filter(|e| e["tid"] == tid).map(span).collect();
        spans.sort_by(|a, b| a.0.total_cmp(&b.0).then(b.1.total_cmp(&a.1)));
        spans
    }

    /// Checks that the events of track `tid` nest or follow each other.
    pub fn nested(&self, tid: u64) {
        let mut open: Vec<f64> = Vec::new();
        for (start, end) in self.sorted(tid) {
            while open.last().is_some_and(|&e| e <= start + SLACK) {
                open.pop();
            }
            if let Some(&outer) = open.last() {
                assert!(
                    end <= outer + SLACK,
                    "on {:?} an event [{start}, {end}] crosses one ending at {outer}",
                    self.tracks[&tid]
                );
            }
            open.push(end);
        }
    }

    /// Checks that the events of track `tid` follow each other: none overlaps another.
    pub fn sequential(&self, tid: u64) {
        let spans = self.sorted(tid);
        for w in spans.windows(2) {
            assert!(
                w[1].0 + SLACK >= w[0].1,
                "on {:?} [{}, {}] overlaps [{}, {}]",
                self.tracks[&tid],
                w[0].0,
                w[0].1,
                w[1].0,
                w[1].1
            );
        }
    }
}
