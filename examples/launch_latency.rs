//! Launch latency: the time from `launch` to the kernel's completion being known on the host,
//! for a kernel that does nothing — the fixed cost every launch pays. Prints the median and
//! other percentiles over many launches, as one JSON line for scripts and one human line.
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
    Ok(())
}
