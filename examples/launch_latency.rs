//! Launch latency: the time from `launch` to the kernel's completion being known on the host,
//! for a kernel that does nothing — the fixed cost every launch pays. Prints the median and
//! other percentiles over many launches, as one JSON line for scripts and one human line.
//!
//! Then launch throughput: many launches of a kernel that takes two device buffers (a read-only
//! input and a region, like most RAJAPerf kernels), queued back to back and waited for once —
//! the host-side cost per launch, which bounds how fast kernels of a few microseconds can run.
//! And the same for a wider kernel, four input buffers, a region and four scalars (the
//! argument shape of RAJAPerf's EOS): whether the cost per launch grows with the arguments.
//!
//! Last, a reduction's round trip: a sum over 2,048 elements (8 blocks, so the result is spread
//! over slots as in RAJAPerf's sums), launched and waited for one at a time — what a one-value
//! reduction's repetition costs besides its kernel (the result in, the launch, the result back,
//! the wait). Every result is checked.
//!
//! `scripts/gpu check` runs it beside `examples/cuda/launch_latency.cu` (CUDA C++, the same
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

    /// One element of an EOS-shaped update: four inputs, a region, four scalars.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn wide_one(
        n: usize,
        q: f64,
        r: f64,
        t: f64,
        a: &[f64],
        b: &[f64],
        c: &[f64],
        d: &[f64],
        mut y: Region<f64>,
    ) {
        let i = y.index();
        if i >= n {
            return;
        }
        if let Some(v) = y.mine() {
            *v = a[i] + q * b[i] + r * c[i] + t * d[i];
        }
    }

    /// `total += x[i]`: a reduction with the shape of RAJAPerf's REDUCE_SUM.
    #[kernel]
    pub fn sum_all(x: &[f64], mut total: Sum<f64>) {
        let i = global_linear_id();
        if i < x.len() {
            total.add(x[i]);
        }
    }
}

/// Seconds per launch of `batch` queued launches of `launch`, the median of five batches.
fn queued(
    dev: &offload::Device,
    batch: usize,
    mut launch: impl FnMut() -> offload::Result<()>,
) -> anyhow::Result<f64> {
    let mut per_launch = Vec::new();
    for _ in 0..5 {
        dev.sync()?;
        let start = std::time::Instant::now();
        for _ in 0..batch {
            launch()?;
        }
        dev.sync()?;
        per_launch.push(start.elapsed().as_secs_f64() * 1e6 / batch as f64);
    }
    per_launch.sort_by(f64::total_cmp);
    Ok(per_launch[2])
}

/// The median, 10th and 90th percentiles of `times`.
fn percentiles(mut times: Vec<f64>) -> [f64; 3] {
    times.sort_by(f64::total_cmp);
    [0.5, 0.1, 0.9].map(|p| times[((times.len() - 1) as f64 * p).round() as usize])
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
    let [median, p10, p90] = percentiles(times);
    println!(
        "{{\"bench\":\"launch_latency\",\"side\":\"rust\",\"device\":\"{dev}\",\"reps\":{reps},\"median_us\":{median:.2},\"p10_us\":{p10:.2},\"p90_us\":{p90:.2}}}"
    );
    eprintln!("launch+sync of an empty kernel on {dev}: median {median:.2} µs over {reps} launches");

    let x = offload::DeviceBuffer::from_slice(&dev, &[1.0f64; 256])?;
    let mut y = offload::DeviceBuffer::<f64>::zeroed(&dev, 256)?;
    let batch = 10 * reps;
    let per_launch = queued(&dev, batch, || gpu::copy_one::launch(&dev, 256, &x, &mut y))?;
    println!(
        "{{\"bench\":\"launch_throughput\",\"side\":\"rust\",\"launches\":{batch},\"per_launch_us\":{per_launch:.3}}}"
    );
    eprintln!("{batch} queued launches of a two-buffer kernel: {per_launch:.3} µs each (median of 5)");

    let inputs: Vec<_> =
        (0..4).map(|_| offload::DeviceBuffer::from_slice(&dev, &[1.0f64; 256])).collect::<Result<_, _>>()?;
    let [a, b, c, d] = &inputs[..] else { unreachable!() };
    let per_launch =
        queued(&dev, batch, || gpu::wide_one::launch(&dev, 256, 256, 0.5, 0.25, 0.125, a, b, c, d, &mut y))?;
    println!(
        "{{\"bench\":\"launch_throughput_wide\",\"side\":\"rust\",\"launches\":{batch},\"per_launch_us\":{per_launch:.3}}}"
    );
    eprintln!(
        "{batch} queued launches of a five-buffer, four-scalar kernel: {per_launch:.3} µs each (median of 5)"
    );

    // The reduction round trip: each launch returns with its result on the host.
    const SUM_N: usize = 2048;
    let ones = offload::DeviceBuffer::from_slice(&dev, &[1.0f64; SUM_N])?;
    let (mut times, mut wrong) = (Vec::with_capacity(reps), 0);
    for r in 0..reps + 100 {
        let mut total = 0.0;
        let start = std::time::Instant::now();
        gpu::sum_all::launch(&dev, SUM_N, &ones, &mut total)?;
        let elapsed = start.elapsed().as_secs_f64() * 1e6;
        // Counted, not fatal: against the stand-in liboffload (scripts/lib/launch-overhead.sh) no
        // kernel runs; the GPU check fails on any wrong result.
        wrong += usize::from(total != SUM_N as f64);
        if r >= 100 {
            times.push(elapsed); // the first 100 are warm-up
        }
    }
    let [median, p10, p90] = percentiles(times);
    println!(
        "{{\"bench\":\"reduce_roundtrip\",\"side\":\"rust\",\"n\":{SUM_N},\"reps\":{reps},\"median_us\":{median:.2},\"p10_us\":{p10:.2},\"p90_us\":{p90:.2},\"wrong\":{wrong}}}"
    );
    eprintln!(
        "a {SUM_N}-element sum, launched and its result back on the host: median {median:.2} µs, {wrong} wrong results"
    );
    Ok(())
}
