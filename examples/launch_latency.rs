//! Launch latency: the time from `launch` to the kernel's completion being known on the host,
//! for a kernel that does nothing — the fixed cost every launch pays. Prints the median and
//! other percentiles over many launches, as one JSON line for scripts and one human line.
//!
//! Then launch throughput: many launches of a kernel that takes two device buffers (a read-only
//! input and a region, like most RAJAPerf kernels), queued back to back and waited for once —
//! the host-side cost per launch, which bounds how fast kernels of a few microseconds can run.
//!
//! `scripts/gpu-check.sh` runs it beside `examples/cuda/launch_latency.cu` (CUDA C++, the same
//! measurement) and prints the ratio.

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Does nothing with its argument; only the launch is measured.
    #[kernel]
    pub fn empty(token: u32) {
        let _ = (token, thread_idx_x());
    }

    /// Copies one element: a launch with the argument shape of a streaming kernel.
    #[kernel]
    pub fn copy_one(x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(v) = y.mine() {
            *v = x[i];
        }
    }
}

fn main() -> anyhow::Result<()> {
    let reps: usize = std::env::args().nth(1).map_or(Ok(1000), |s| s.parse())?;
    let dev = offload::Device::default()?;
    for i in 0..100 {
        gpu::empty::launch(&dev, 1, i)?;
        dev.sync()?;
    }
    let mut times = Vec::with_capacity(reps);
    for i in 0..reps {
        let start = std::time::Instant::now();
        // A launch with scalar arguments only is queued asynchronously: wait for it, as the
        // CUDA baseline does.
        gpu::empty::launch(&dev, 1, i as u32)?;
        dev.sync()?;
        times.push(start.elapsed().as_secs_f64() * 1e6);
    }
    times.sort_by(f64::total_cmp);
    let pct = |p: f64| times[((times.len() - 1) as f64 * p).round() as usize];
    println!(
        "{{\"bench\":\"launch_latency\",\"side\":\"rust\",\"device\":\"{dev}\",\"reps\":{reps},\"median_us\":{:.2},\"p10_us\":{:.2},\"p90_us\":{:.2}}}",
        pct(0.5),
        pct(0.1),
        pct(0.9)
    );
    eprintln!("launch+sync of an empty kernel on {dev}: median {:.2} µs over {reps} launches", pct(0.5));

    let x = offload::DeviceBuffer::from_slice(&dev, &[1.0f64; 256])?;
    let mut y = offload::DeviceBuffer::<f64>::zeroed(&dev, 256)?;
    let batch = 10 * reps;
    let mut per_launch = Vec::new();
    for _ in 0..5 {
        dev.sync()?;
        let start = std::time::Instant::now();
        for _ in 0..batch {
            gpu::copy_one::launch(&dev, 256, &x, &mut y)?;
        }
        dev.sync()?;
        per_launch.push(start.elapsed().as_secs_f64() * 1e6 / batch as f64);
    }
    per_launch.sort_by(f64::total_cmp);
    println!(
        "{{\"bench\":\"launch_throughput\",\"side\":\"rust\",\"launches\":{batch},\"per_launch_us\":{:.3}}}",
        per_launch[2]
    );
    eprintln!("{batch} queued launches of a two-buffer kernel: {:.3} µs each (median of 5)", per_launch[2]);
    Ok(())
}
