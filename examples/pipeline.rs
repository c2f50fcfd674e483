//! A pipeline of ten dependent kernels over the same arrays, repeated, run four ways:
//!
//! 1. host-slice launches: host slices on every launch (a copy in and out each time);
//! 2. a launch scope (`dev.scope`): the same launch calls, data staged once;
//! 3. preloads (`dev.preload`, `dev.preload_mut`): explicit staging;
//! 4. hand-written `DeviceBuffer`s: the baseline a CUDA programmer would write.
//!
//! Each prints its time and its transfer report, and all four must give the same result as
//! a plain CPU loop. One JSON line per variant goes to stdout for `scripts/gpu check`.
//!
//! With `--timeline DIR` the last round of each variant is recorded
//! ([`offload::timeline::Recording`]) and written to `DIR/pipeline-<variant>.json` (Chrome
//! trace / Perfetto JSON): the host-slice trace shows a copy in and out around every launch,
//! the others one copy each way for the whole pipeline.
//!
//! Usage: pipeline [ELEMENTS] [REPS] [--timeline DIR]   (defaults 1048576 and 100)

use offload::timeline::Recording;
use offload::{Device, DeviceBuffer, TransferReport};
use std::path::PathBuf;
use std::time::Instant;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `dst = (1 - w)·dst + w·src`.
    #[kernel]
    pub fn relax(w: f64, src: &[f64], mut dst: Region<f64>) {
        let i = dst.index();
        if let Some(d) = dst.mine() {
            *d = (1.0 - w) * *d + w * src[i];
        }
    }
}

/// Kernels per repetition, alternating direction: `a → b`, `b → a`, …
const STAGES: usize = 10;

fn weight(stage: usize) -> f64 {
    0.1 + 0.05 * stage as f64
}

fn inputs(n: usize) -> (Vec<f64>, Vec<f64>) {
    ((0..n).map(|i| (i % 97) as f64).collect(), (0..n).map(|i| (i % 13) as f64 * 0.5).collect())
}

fn reference(n: usize, reps: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut a, mut b) = inputs(n);
    for _ in 0..reps {
        for s in 0..STAGES {
            let w = weight(s);
            let (src, dst) = if s % 2 == 0 { (&a, &mut b) } else { (&b, &mut a) };
            for (d, &x) in dst.iter_mut().zip(src.iter()) {
                *d = (1.0 - w) * *d + w * x;
            }
        }
    }
    (a, b)
}

fn naive(dev: &Device, n: usize, reps: usize, a: &mut [f64], b: &mut [f64]) -> offload::Result<()> {
    for _ in 0..reps {
        for s in 0..STAGES {
            if s % 2 == 0 {
                gpu::relax::launch(dev, n, weight(s), &*a, &mut *b)?;
            } else {
                gpu::relax::launch(dev, n, weight(s), &*b, &mut *a)?;
            }
        }
    }
    Ok(())
}

fn scoped(dev: &Device, n: usize, reps: usize, a: &mut [f64], b: &mut [f64]) -> offload::Result<()> {
    dev.scope(|s| {
        let (mut a, mut b) = (s.in_out(a)?, s.in_out(b)?);
        for _ in 0..reps {
            for stage in 0..STAGES {
                if stage % 2 == 0 {
                    gpu::relax::launch(s, n, weight(stage), &a, &mut b)?;
                } else {
                    gpu::relax::launch(s, n, weight(stage), &b, &mut a)?;
                }
            }
        }
        Ok(())
    })
}

fn preloaded(dev: &Device, n: usize, reps: usize, a: &mut [f64], b: &mut [f64]) -> offload::Result<()> {
    let (mut a, mut b) = (dev.preload_mut(a)?, dev.preload_mut(b)?);
    for _ in 0..reps {
        for s in 0..STAGES {
            if s % 2 == 0 {
                gpu::relax::launch(dev, n, weight(s), &a, &mut b)?;
            } else {
                gpu::relax::launch(dev, n, weight(s), &b, &mut a)?;
            }
        }
    }
    a.finish()?;
    b.finish()
}

fn buffers(dev: &Device, n: usize, reps: usize, a: &mut [f64], b: &mut [f64]) -> offload::Result<()> {
    let (mut da, mut db) = (DeviceBuffer::from_slice(dev, a)?, DeviceBuffer::from_slice(dev, b)?);
    for _ in 0..reps {
        for s in 0..STAGES {
            if s % 2 == 0 {
                gpu::relax::launch(dev, n, weight(s), &da, &mut db)?;
            } else {
                gpu::relax::launch(dev, n, weight(s), &db, &mut da)?;
            }
        }
    }
    da.copy_to(a)?;
    db.copy_to(b)
}

type Variant = fn(&Device, usize, usize, &mut [f64], &mut [f64]) -> offload::Result<()>;

fn main() -> anyhow::Result<()> {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut timeline = None;
    if let Some(at) = args.iter().position(|a| a == "--timeline") {
        anyhow::ensure!(at + 1 < args.len(), "--timeline needs a directory");
        timeline = Some(PathBuf::from(args.remove(at + 1)));
        args.remove(at);
        std::fs::create_dir_all(timeline.as_ref().expect("just set"))?;
    }
    let mut args = args.into_iter();
    let n: usize = args.next().map_or(Ok(1 << 20), |s| s.parse())?;
    let reps: usize = args.next().map_or(Ok(100), |s| s.parse())?;
    let dev = Device::default()?;
    let expected = reference(n, reps);
    let variants: [(&str, Variant); 4] = [
        ("host slices", naive),
        ("launch scope", scoped),
        ("preloads", preloaded),
        ("hand-written DeviceBuffer", buffers),
    ];
    // The timeline files' names, by variant.
    let files = ["host-slices", "launch-scope", "preloads", "buffers"];
    offload::set_reporting(true);
    // Rounds interleave the variants so that all see the same machine state; each variant's
    // time is its median over the rounds, its report that of the last round.
    let rounds = 5;
    let mut times = vec![Vec::new(); variants.len()];
    let mut reports = vec![TransferReport::default(); variants.len()];
    for round in 0..=rounds {
        for (v, (name, run)) in variants.iter().enumerate() {
            let (mut a, mut b) = inputs(n);
            dev.sync()?;
            offload::reset_transfer_report();
            // The last round's run is recorded when asked to (recording costs time: the
            // round's time still counts, as the other rounds' median decides).
            let recording = timeline.as_ref().filter(|_| round == rounds).map(|_| Recording::start());
            let start = Instant::now();
            run(&dev, n, reps, &mut a, &mut b)?;
            let seconds = start.elapsed().as_secs_f64();
            if let (Some(recording), Some(dir)) = (recording, &timeline) {
                let path = dir.join(format!("pipeline-{}.json", files[v]));
                recording.save(&path)?;
                eprintln!("timeline of {name}: {}", path.display());
            }
            anyhow::ensure!((a, b) == expected, "{name}: result differs from the CPU reference");
            if round > 0 {
                // round 0 is a warm-up (module loading, first allocations)
                times[v].push(seconds);
                reports[v] = offload::transfer_report();
            }
        }
    }
    let results: Vec<(&str, f64, TransferReport)> = variants
        .iter()
        .zip(times)
        .zip(reports)
        .map(|(((name, _), mut t), r)| {
            t.sort_by(f64::total_cmp);
            (*name, t[t.len() / 2], r)
        })
        .collect();
    let baseline = results[3].1;
    eprintln!("{n} elements, {reps} × {STAGES} dependent kernels on {dev}, median of {rounds} rounds\n");
    for (name, seconds, report) in &results {
        eprintln!("== {name}: {:.3} s ({:.2}× the hand-written time)\n{report}", seconds, seconds / baseline);
        println!(
            "{{\"variant\":\"{name}\",\"elements\":{n},\"reps\":{reps},\"seconds\":{seconds:.6},\"vs_hand_written\":{:.4},\"h2d_copies\":{},\"h2d_bytes\":{},\"d2h_copies\":{},\"d2h_bytes\":{}}}",
            seconds / baseline,
            report.host_to_device.count,
            report.host_to_device.bytes,
            report.device_to_host.count,
            report.device_to_host.bytes
        );
    }
    Ok(())
}
