use super::json::lanes;
use super::record::{CPU_QUEUE, Event, host_track, on, store};
use super::*;
use crate::host::config::config;
use crate::{Device, DeviceBuffer};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// Recordings are process-wide: these tests take turns.
static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Copies, a wait, an allocation and a free on the CPU backend.
fn some_work() {
    let dev = Device::cpu();
    let b = DeviceBuffer::from_slice(&dev, &[1.0f64; 100]).expect("a buffer");
    assert_eq!(b.to_vec().expect("read back"), vec![1.0; 100]);
    dev.sync().expect("a wait");
}

#[test]
fn with_the_variable_unset_nothing_is_recorded() {
    let _turn = turn();
    if config().timeline.is_some() {
        return; // the run records on purpose
    }
    let count = || {
        let s = store();
        (s.base + s.events.len(), s.pending())
    };
    let before = count();
    some_work();
    assert!(!on(), "nothing records");
    assert_eq!(count(), before, "no event was recorded");
}

#[test]
fn a_recording_holds_what_happened_during_its_life_and_stops_with_it() {
    let _turn = turn();
    some_work();
    let recording = Recording::start();
    assert!(recording.is_empty());
    some_work();
    // Other tests of this process (BLAS, buffers) run on other threads while this one
    // records: count this thread's track, and the CPU queue's copies from below.
    let (mine, queue_copies) = {
        let mut s = store();
        let me = host_track(&mut s);
        let from = recording.first.saturating_sub(s.base);
        let events = &s.events[from.min(s.events.len())..];
        let mine: Vec<&str> = events.iter().filter(|e| e.tid == me).map(|e| e.name.as_str()).collect();
        let copies = events.iter().filter(|e| e.tid == CPU_QUEUE && e.name.ends_with(" 800 B")).count();
        (mine.into_iter().map(str::to_owned).collect::<Vec<_>>(), copies)
    };
    // alloc, copy in, copy out, `sync`, the buffer's wait, free on this thread's track
    assert_eq!(
        mine,
        ["alloc 800 B", "copy H→D 800 B", "copy D→H 800 B", "wait", "wait", "free 800 B"],
        "this thread's events"
    );
    assert!(queue_copies >= 2, "both copies on the CPU queue's track: {queue_copies}");
    assert!(recording.len() >= 8, "{}", recording.len());
    let path = std::env::temp_dir().join(format!("offload-timeline-unit-{}.json", std::process::id()));
    recording.save(&path).expect("saved");
    let trace: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).expect("read")).expect("JSON");
    std::fs::remove_file(&path).ok();
    let names: Vec<&str> = trace["traceEvents"]
        .as_array()
        .expect("events")
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter_map(|e| e["name"].as_str())
        .collect();
    assert!(names.iter().filter(|n| **n == "copy H→D 800 B").count() >= 2, "{names:?}");
    assert!(names.contains(&"wait") && names.contains(&"alloc 800 B") && names.contains(&"free 800 B"));
    drop(recording);
    if config().timeline.is_none() {
        assert!(!on());
        assert!(store().events.is_empty(), "the log is emptied when nobody records");
    }
}

#[test]
fn saving_where_no_file_can_be_written_names_the_path() {
    let _turn = turn();
    let recording = Recording::start();
    let path = std::env::temp_dir().join("no-such-directory-for-offload").join("trace.json");
    let e = recording.save(&path).expect_err("no such directory").to_string();
    assert!(e.contains("cannot write the timeline to") && e.contains(&path.display().to_string()), "{e}");
}

#[test]
fn bounds_that_cross_go_to_another_lane_and_nested_ones_stay() {
    let t0 = Instant::now();
    let at = |us: u64| t0 + Duration::from_micros(us);
    let event = |tid, start, end| Event {
        name: String::new(),
        cat: "queue",
        tid,
        start: at(start),
        end: at(end),
        args: serde_json::Value::Null,
    };
    // Nested (same end), following, crossing, and the same crossing on another track.
    let events = [
        event(1, 0, 10),
        event(1, 2, 10),
        event(1, 10, 12),
        event(1, 11, 20),
        event(2, 5, 30),
        event(2, 6, 40),
    ];
    assert_eq!(lanes(&events), [0, 0, 0, 1, 0, 1]);
}
