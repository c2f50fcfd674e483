//! The timeline on the CPU backend: a small pipeline of dependent launches, run the ways
//! `examples/pipeline.rs` runs it, recorded with `offload::timeline::Recording`, written and
//! read back. Own binary: recordings are process-wide, and the tests here take turns.

#[path = "support/trace.rs"]
#[allow(dead_code, reason = "each test binary uses part of it")]
mod trace;

use offload::timeline::Recording;
use offload::{Device, DeviceBuffer};
use std::path::PathBuf;
use std::sync::Mutex;

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

const N: usize = 1000;
const LAUNCHES: usize = 6;
const BYTES: u64 = (N * 8) as u64;

static TURN: Mutex<()> = Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURN.lock().unwrap_or_else(|e| e.into_inner())
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("offload-timeline-{name}-{}.json", std::process::id()))
}

/// Runs `body` under a recording and returns the trace it saved.
fn recorded(name: &str, body: impl FnOnce()) -> trace::Trace {
    let recording = Recording::start();
    body();
    let path = temp(name);
    recording.save(&path).expect("the timeline is written");
    let trace = trace::read(&path);
    std::fs::remove_file(&path).ok();
    trace
}

fn host_slices(dev: &Device, a: &mut [f64], b: &mut [f64]) {
    for s in 0..LAUNCHES {
        if s % 2 == 0 {
            gpu::relax::launch(dev, N, 0.5, &*a, &mut *b).unwrap();
        } else {
            gpu::relax::launch(dev, N, 0.5, &*b, &mut *a).unwrap();
        }
    }
}

fn buffers(dev: &Device, a: &mut [f64], b: &mut [f64]) {
    let (mut da, mut db) =
        (DeviceBuffer::from_slice(dev, a).unwrap(), DeviceBuffer::from_slice(dev, b).unwrap());
    for s in 0..LAUNCHES {
        if s % 2 == 0 {
            gpu::relax::launch(dev, N, 0.5, &da, &mut db).unwrap();
        } else {
            gpu::relax::launch(dev, N, 0.5, &db, &mut da).unwrap();
        }
    }
    da.copy_to(a).unwrap();
    db.copy_to(b).unwrap();
}

fn bytes(e: &serde_json::Value) -> u64 {
    e["args"]["bytes"].as_u64().expect("a copy says its bytes")
}

#[test]
fn host_slice_launches_are_recorded_on_the_host_thread_and_the_queue() {
    let _turn = turn();
    let dev = Device::cpu();
    let (mut a, mut b) = (vec![1.0; N], vec![2.0; N]);
    let t = recorded("host-slices", || host_slices(&dev, &mut a, &mut b));
    let host = t.track("host thread");
    let queue = t.track("CPU emulation backend");
    for tid in [host, queue] {
        let launches = t.on(tid, "launch gpu::relax");
        assert_eq!(launches.len(), LAUNCHES, "one launch event per launch on {:?}", t.tracks[&tid]);
        for l in &launches {
            assert_eq!(l["args"]["kernel"], "gpu::relax");
            let threads =
                l["args"]["blocks"][0].as_u64().unwrap() * l["args"]["threads"][0].as_u64().unwrap();
            assert!(threads >= N as u64, "the grid covers the elements: {l}");
        }
    }
    // The CPU backend runs kernels on host memory: host slices are used in place, not copied.
    assert!(t.on(host, "copy").is_empty() && t.on(queue, "copy").is_empty(), "no copies on the CPU backend");
    // The CPU backend's launches run one after the other.
    t.sequential(queue);
    let measured = &t.on(queue, "launch")[0]["args"]["device_time"];
    assert!(measured.as_str().unwrap().starts_with("measured"), "{measured}");
    assert_eq!(t.other["dropped_events"], 0);
}

#[test]
fn buffers_show_one_copy_each_way_per_array_and_the_waits() {
    let _turn = turn();
    let dev = Device::cpu();
    let (mut a, mut b) = (vec![1.0; N], vec![2.0; N]);
    let t = recorded("buffers", || buffers(&dev, &mut a, &mut b));
    let host = t.track("host thread");
    let queue = t.track("CPU emulation backend");
    assert_eq!(t.on(queue, "launch gpu::relax").len(), LAUNCHES);
    for (way, tid) in [("copy H→D", host), ("copy D→H", host), ("copy H→D", queue), ("copy D→H", queue)]
    {
        let copies = t.on(tid, way);
        assert_eq!(copies.len(), 2, "{way}: one per array on {:?}", t.tracks[&tid]);
        assert!(copies.iter().all(|c| bytes(c) == BYTES), "{way} of {BYTES} bytes: {copies:?}");
        assert_eq!(copies[0]["name"], format!("{way} 8.0 kB"));
    }
    assert!(t.on(host, "wait").len() >= 2, "each buffer waits for the device before it is freed");
    assert_eq!(t.on(host, "alloc").len(), 2);
    assert_eq!(t.on(host, "free").len(), 2);
    t.sequential(queue);
}

#[test]
fn scopes_and_preloads_copy_once_and_the_report_has_measured_device_times() {
    let _turn = turn();
    let dev = Device::cpu();
    let (mut a, mut b) = (vec![1.0; N], vec![2.0; N]);
    offload::reset_transfer_report();
    let t = recorded("scope", || {
        dev.scope(|s| {
            let (mut a, mut b) = (s.in_out(&mut a)?, s.in_out(&mut b)?);
            for _ in 0..LAUNCHES / 2 {
                gpu::relax::launch(s, N, 0.5, &a, &mut b)?;
                gpu::relax::launch(s, N, 0.5, &b, &mut a)?;
            }
            Ok(())
        })
        .unwrap();
    });
    let host = t.track("host thread");
    assert_eq!(t.on(host, "launch gpu::relax").len(), LAUNCHES);
    assert_eq!(t.on(host, "copy H→D").len(), 2, "staged once");
    assert_eq!(t.on(host, "copy D→H").len(), 2, "written back once");
    assert!(!t.on(host, "wait").is_empty(), "the scope waits once at its end");
    let report = offload::transfer_report();
    let k = &report.kernels["gpu::relax"];
    assert!(matches!(k.device_time, offload::DeviceTime::Measured(d) if !d.is_zero()), "{k:?}");
    assert!(report.to_string().contains("device time"), "{report}");

    let t = recorded("preloads", || {
        let (mut pa, mut pb) = (dev.preload_mut(&mut a).unwrap(), dev.preload_mut(&mut b).unwrap());
        gpu::relax::launch(&dev, N, 0.5, &pa, &mut pb).unwrap();
        gpu::relax::launch(&dev, N, 0.5, &pb, &mut pa).unwrap();
        pa.finish().unwrap();
        pb.finish().unwrap();
    });
    let host = t.track("host thread");
    assert_eq!(t.on(host, "launch gpu::relax").len(), 2);
    assert_eq!(t.on(host, "copy H→D").len(), 2);
    assert_eq!(t.on(host, "copy D→H").len(), 2);
}

#[test]
fn two_recordings_at_once_each_hold_their_own_part() {
    let _turn = turn();
    let dev = Device::cpu();
    let (mut a, mut b) = (vec![1.0; N], vec![2.0; N]);
    let outer = Recording::start();
    gpu::relax::launch(&dev, N, 0.5, &a, &mut b).unwrap();
    let t = recorded("inner", || host_slices(&dev, &mut a, &mut b));
    let path = temp("outer");
    outer.save(&path).unwrap();
    let o = trace::read(&path);
    std::fs::remove_file(&path).ok();
    assert_eq!(t.on(t.track("host thread"), "launch").len(), LAUNCHES);
    assert_eq!(o.on(o.track("host thread"), "launch").len(), LAUNCHES + 1);
}

/// Run by `the_variable_writes_the_file_when_the_last_device_goes` in a process of its own.
#[test]
#[ignore = "run by the_variable_writes_the_file_when_the_last_device_goes, with OFFLOAD_TIMELINE set"]
fn child_pipeline() {
    if std::env::var_os("OFFLOAD_TIMELINE").is_none() {
        return;
    }
    let dev = Device::cpu();
    let (mut a, mut b) = (vec![1.0; N], vec![2.0; N]);
    buffers(&dev, &mut a, &mut b);
}

fn child(timeline: &std::path::Path) -> std::process::Output {
    std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--ignored", "--exact", "child_pipeline", "--nocapture"])
        .env("OFFLOAD_TIMELINE", timeline)
        .env_remove("OFFLOAD_QUIET")
        .output()
        .unwrap()
}

#[test]
fn the_variable_writes_the_file_when_the_last_device_goes() {
    let path = temp("at-exit");
    let out = child(&path);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let t = trace::read(&path);
    std::fs::remove_file(&path).ok();
    assert_eq!(t.on(t.track("CPU emulation backend"), "launch gpu::relax").len(), LAUNCHES);

    // A file that cannot be written: the process still succeeds, and says why on stderr.
    let bad = std::env::temp_dir().join("no-such-directory-for-offload").join("trace.json");
    let out = child(&bad);
    assert!(out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("cannot write the timeline to {}", bad.display()))
            && stderr.contains("No such file or directory"),
        "{stderr}"
    );
}
