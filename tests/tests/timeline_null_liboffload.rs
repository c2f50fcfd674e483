//! The timeline of the GPU host path, through `tests/null-liboffload` (a stand-in for
//! liboffload 22 that runs no kernels): launches, copies, fills and waits on the queue's
//! track, with the bounds liboffload 22 allows (it has no event timer).
//!
//! Ignored in a plain `cargo test`; `scripts/lib/null-backend-tests.sh` runs it with
//! `--ignored`. Own binary: recordings are process-wide.

#[path = "support/trace.rs"]
#[allow(dead_code, reason = "each test binary uses part of it")]
mod trace;

use offload::timeline::Recording;
use offload::{Device, DeviceBuffer};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn relax(w: f64, src: &[f64], mut dst: Region<f64>) {
        let i = dst.index();
        if let Some(d) = dst.mine() {
            *d = (1.0 - w) * *d + w * src[i];
        }
    }
}

const LAUNCHES: usize = 4;

fn null_device() -> Device {
    let dev = Device::default().expect("a device");
    assert!(
        dev.is_gpu(),
        "not on the stand-in's GPU but {dev}: run through scripts/lib/null-backend-tests.sh"
    );
    dev
}

fn recorded(name: &str, body: impl FnOnce()) -> trace::Trace {
    let recording = Recording::start();
    body();
    let path = std::env::temp_dir().join(format!("offload-timeline-gpu-{name}-{}.json", std::process::id()));
    recording.save(&path).expect("the timeline is written");
    let t = trace::read(&path);
    std::fs::remove_file(&path).ok();
    t
}

fn bytes(e: &serde_json::Value) -> u64 {
    e["args"]["bytes"].as_u64().expect("bytes")
}

fn ts(e: &serde_json::Value) -> f64 {
    e["ts"].as_f64().unwrap()
}

#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn host_slice_launches_show_a_copy_in_and_out_around_every_launch_on_the_queue() {
    let dev = null_device();
    let gather = std::env::var("OFFLOAD_GATHER").map_or(true, |v| v != "0");
    // Gathered in the small-argument arena (one copy in of both arrays), and own allocations.
    for n in [1000usize, 100_000] {
        let (a, mut b) = (vec![1.0f64; n], vec![2.0f64; n]);
        let t = recorded("host-slices", || {
            for _ in 0..LAUNCHES {
                gpu::relax::launch(&dev, n, 0.5, &a, &mut b).unwrap();
            }
        });
        let queue = t.track("GPU 0: null liboffload");
        assert!(t.tracks[&queue].ends_with("queue"));
        let host = t.track("host thread");
        let launches = t.on(queue, "launch gpu::relax");
        assert_eq!(launches.len(), LAUNCHES, "n = {n}");
        for l in &launches {
            assert_eq!(l["args"]["kernel"], "gpu::relax");
            assert_eq!(l["args"]["device_time"], "unknown (liboffload 22 has no event timer)");
            assert!(l["args"]["interval"].as_str().unwrap().starts_with("upper bound"));
        }
        assert_eq!(t.on(host, "launch gpu::relax").len(), LAUNCHES);
        let array = (n * 8) as u64;
        let (ins, outs) = (t.on(queue, "copy H→D"), t.on(queue, "copy D→H"));
        if gather && n * 8 <= 64 * 1024 {
            assert_eq!(ins.len(), LAUNCHES, "n = {n}: one gathered copy in per launch");
            assert!(ins.iter().all(|c| bytes(c) >= 2 * array), "both arrays: {ins:?}");
            assert!(ins.iter().all(|c| c["args"]["host"].as_str().unwrap().contains("arena")));
        } else {
            assert_eq!(ins.len(), 2 * LAUNCHES, "n = {n}: one copy in per array and launch");
            assert!(ins.iter().all(|c| bytes(c) == array), "{ins:?}");
        }
        assert_eq!(outs.len(), LAUNCHES, "n = {n}: one copy back per launch");
        assert!(outs.iter().all(|c| bytes(c) == array), "{outs:?}");
        // Every launch waits: its copies and the kernel are complete at its wait.
        let waits = t.on(host, "wait");
        assert!(waits.len() >= LAUNCHES, "a wait per launch: {waits:?}");
        assert!(waits.iter().all(|w| w["args"]["call"] == "olSyncQueue"));
        // In queue order: each launch's copy in, then the kernel, then its copy back.
        let mut order: Vec<_> = t
            .on(queue, "")
            .into_iter()
            .filter(|e| !e["name"].as_str().unwrap().starts_with("fill"))
            .collect();
        order.sort_by(|a, b| ts(a).total_cmp(&ts(b)));
        let names: Vec<_> = order
            .iter()
            .map(|e| e["name"].as_str().unwrap().split(' ').take(2).collect::<Vec<_>>().join(" "))
            .collect();
        let per_launch = names.len() / LAUNCHES;
        for chunk in names.chunks(per_launch) {
            assert!(
                chunk[0] == "copy H→D"
                    && chunk[per_launch - 2] == "launch gpu::relax"
                    && chunk[per_launch - 1] == "copy D→H",
                "{names:?}"
            );
        }
    }
}

#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn buffers_only_queue_their_launches_and_staged_copies_wait_on_events() {
    let dev = null_device();
    // Above the staging threshold (16 MiB): pageable data goes through bounce buffers, with
    // events between the chunks.
    let n = 3 << 20;
    let host_data = vec![1.0f64; n];
    let mut back = vec![0.0f64; n];
    let t = recorded("buffers", || {
        let (x, mut y) = (
            DeviceBuffer::from_slice(&dev, &host_data).unwrap(),
            DeviceBuffer::<f64>::zeroed(&dev, n).unwrap(),
        );
        for _ in 0..LAUNCHES {
            gpu::relax::launch(&dev, n, 0.5, &x, &mut y).unwrap();
        }
        y.copy_to(&mut back).unwrap();
    });
    assert_eq!(back, vec![0.0; n], "no kernel ran: y is still zeros");
    let queue = "GPU 0: null liboffload";
    let host = t.track("host thread");
    assert_eq!(t.on_all(queue, "launch gpu::relax").len(), LAUNCHES);
    assert_eq!(t.on_all(queue, "fill").len(), 1, "the zeroed buffer");
    let chunks = t.on_all(queue, "copy H→D");
    assert_eq!(chunks.iter().map(|c| bytes(c)).sum::<u64>(), (n * 8) as u64);
    assert!(
        chunks.len() >= 3 && chunks.iter().all(|c| c["args"]["host"].as_str().unwrap().contains("bounce"))
    );
    assert!(!t.on(host, "wait (event)").is_empty(), "staged copies wait on events");
    // The chunks' bounds end at the event waits that observed them, and cross those of work
    // queued before them that a later wait observed: they are drawn on a second track.
    assert!(t.tracks.values().any(|n| n.contains(queue) && n.contains("crossing bounds")), "{:?}", t.tracks);
    let host_copies = t.on(host, "copy H→D");
    assert_eq!(host_copies.len(), 1, "one host call");
    assert_eq!(bytes(host_copies[0]), (n * 8) as u64);
    assert_eq!(host_copies[0]["args"]["host"], "pageable");
    assert_eq!(t.on(host, "alloc").len(), 2);
    assert_eq!(t.on(host, "free").len(), 2);
    assert_eq!(t.other["unobserved_queued_operations"], 0, "every queued operation was waited for");
}

#[test]
#[ignore = "needs the stand-in liboffload: scripts/lib/null-backend-tests.sh"]
fn the_report_says_gpu_device_times_are_unknown_while_recording() {
    let dev = null_device();
    offload::reset_transfer_report();
    let recording = Recording::start();
    let (a, mut b) = (vec![1.0f64; 100], vec![2.0f64; 100]);
    gpu::relax::launch(&dev, 100, 0.5, &a, &mut b).unwrap();
    drop(recording);
    let report = offload::transfer_report();
    assert_eq!(report.kernels["gpu::relax"].device_time, offload::DeviceTime::Unknown);
    let text = report.to_string();
    assert!(text.contains("unknown") && text.contains("liboffload 22 has no event timer"), "{text}");
}
