//! Kernels and vendor BLAS on the same device data: a kernel writes a matrix
//! that `gemm` multiplies, a kernel transforms the product, and BLAS takes it from there —
//! no copy to the host in between. On an NVIDIA GPU the BLAS calls run in cuBLAS, on AMD in
//! rocBLAS, on the CPU backend in the `matrixmultiply` crate. The result is checked against
//! the same program on the CPU backend and against plain host arithmetic.
//!
//! `gemm bench [sizes…]` instead times `blas::gemm` on device buffers (f32 and f64, square
//! sizes, default 1024 2048 4096 8192) and prints one JSON line per type and size, for
//! `scripts/gpu blas` to compare with cuBLAS called from C.

use offload::blas::{self, Gemm, Gemv};
use offload::{Device, DeviceBuffer};
use std::time::{Duration, Instant};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// A deterministic pattern, written on the device.
    #[kernel]
    pub fn fill(scale: f32, mut out: Region<f32>) {
        let i = out.index();
        if let Some(o) = out.mine() {
            *o = scale * ((i % 13) as f32 - 6.0);
        }
    }

    /// `c = max(c + bias[column], 0)` over a row-major matrix of `n` columns.
    #[kernel]
    pub fn bias_relu(n: usize, bias: &[f32], mut c: Region<f32>) {
        let i = c.index();
        if let Some(v) = c.mine() {
            let x = *v + bias[i % n];
            *v = if x > 0.0 { x } else { 0.0 };
        }
    }
}

/// Deterministic host data in [-1, 1).
fn values(n: usize, seed: usize) -> Vec<f32> {
    (0..n).map(|i| ((i * 7919 + seed * 104_729) % 2003) as f32 / 1001.5 - 1.0).collect()
}

/// What the pipeline computes.
struct Results {
    d: Vec<f32>,
    y: Vec<f32>,
    norm: f32,
    dot: f32,
}

/// The pipeline, on any device: every matrix stays on `dev` from start to end.
fn pipeline(dev: &Device, m: usize, n: usize, k: usize) -> offload::Result<Results> {
    let (a_host, bias, x) = (values(m * k, 1), values(n, 2), values(k, 3));
    let a = dev.preload(&a_host)?; // staged once (a preload)
    let mut b = DeviceBuffer::<f32>::zeroed(dev, k * n)?;
    gpu::fill::launch(dev, k * n, 0.01, &mut b)?; // a kernel writes B
    let mut c = DeviceBuffer::<f32>::zeroed(dev, m * n)?;
    blas::gemm(dev, &Gemm::row_major(m, n, k), 1.0, &a, &b, 0.0, &mut c)?; // C = A·B
    gpu::bias_relu::launch(dev, m * n, n, &bias, &mut c)?; // a kernel on BLAS's output
    let mut d = DeviceBuffer::<f32>::zeroed(dev, m * k)?;
    blas::gemm(dev, &Gemm::row_major(m, k, n).transpose_b(), 0.5, &c, &b, 0.0, &mut d)?; // D = ½·C·Bᵀ
    blas::axpy(dev, -1.0, &a, &mut d)?; // D −= A
    let norm = blas::nrm2(dev, &d)?;
    blas::scal(dev, 1.0 / norm, &mut d)?; // D /= ‖D‖
    let mut y = vec![0.0f32; m];
    blas::gemv(dev, &Gemv::row_major(m, k), 1.0, &d, &x, 0.0, &mut y)?; // host x and y (host slices)
    let dot = blas::dot(dev, &d, &a)?;
    Ok(Results { d: d.to_vec()?, y, norm, dot })
}

/// The pipeline in plain f64 host arithmetic.
fn reference(m: usize, n: usize, k: usize) -> Results {
    let (a, bias, x) = (values(m * k, 1), values(n, 2), values(k, 3));
    let (a, bias, x): (Vec<f64>, Vec<f64>, Vec<f64>) = (
        a.iter().map(|&v| v.into()).collect(),
        bias.iter().map(|&v| v.into()).collect(),
        x.iter().map(|&v| v.into()).collect(),
    );
    let b: Vec<f64> = (0..k * n).map(|i| f64::from(0.01f32 * ((i % 13) as f32 - 6.0))).collect();
    let mut c = vec![0.0f64; m * n];
    for i in 0..m {
        for j in 0..n {
            let s: f64 = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
            c[i * n + j] = (s + bias[j]).max(0.0);
        }
    }
    let mut d = vec![0.0f64; m * k];
    for i in 0..m {
        for j in 0..k {
            let s: f64 = (0..n).map(|p| c[i * n + p] * b[j * n + p]).sum();
            d[i * k + j] = 0.5 * s - a[i * k + j];
        }
    }
    let norm = d.iter().map(|v| v * v).sum::<f64>().sqrt();
    d.iter_mut().for_each(|v| *v /= norm);
    let y: Vec<f64> = (0..m).map(|i| (0..k).map(|j| d[i * k + j] * x[j]).sum()).collect();
    let dot = d.iter().zip(&a).map(|(p, q)| p * q).sum::<f64>();
    let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect();
    Results { d: f(&d), y: f(&y), norm: norm as f32, dot: dot as f32 }
}

/// Largest difference relative to the largest magnitude.
fn max_relative_error(got: &[f32], want: &[f32]) -> f64 {
    let scale = want.iter().fold(f64::MIN_POSITIVE, |s, &w| s.max(f64::from(w).abs()));
    got.iter().zip(want).map(|(&g, &w)| (f64::from(g) - f64::from(w)).abs() / scale).fold(0.0, f64::max)
}

fn check(name: &str, got: &Results, want: &Results, tolerance: f64) -> anyhow::Result<()> {
    for (what, g, w) in [
        ("D", &got.d[..], &want.d[..]),
        ("y", &got.y[..], &want.y[..]),
        ("‖D‖", &[got.norm][..], &[want.norm][..]),
        ("D·A", &[got.dot][..], &[want.dot][..]),
    ] {
        let e = max_relative_error(g, w);
        anyhow::ensure!(
            e <= tolerance,
            "{name}: {what} differs by {e:.2e} (relative), more than {tolerance:.0e}"
        );
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str) == Some("bench") {
        return bench(&args[1..]);
    }
    let (m, n, k) = (300, 250, 200);
    let dev = Device::default()?;
    let got = pipeline(&dev, m, n, k)?;
    let want = reference(m, n, k);
    check("device vs host arithmetic", &got, &want, 1e-4)?;
    let cpu = pipeline(&Device::cpu(), m, n, k)?;
    check("device vs CPU backend", &got, &cpu, 1e-4)?;
    println!(
        "gemm: kernel → gemm → kernel → gemm, axpy, nrm2, scal, gemv, dot ({m}×{k} · {k}×{n}, f32) on {dev} with {}: verified against the CPU backend and host arithmetic",
        blas::library(&dev)?
    );
    Ok(())
}

/// `blas::gemm` on device buffers: per call, the time from the call to its return (the
/// ordering with the device's queue included), median of many.
fn bench(sizes: &[String]) -> anyhow::Result<()> {
    let dev = Device::default()?;
    let sizes: Vec<usize> = if sizes.is_empty() {
        if dev.is_gpu() { vec![1024, 2048, 4096, 8192] } else { vec![256, 512] }
    } else {
        sizes.iter().map(|s| s.parse()).collect::<Result<_, _>>()?
    };
    let library = blas::library(&dev)?;
    bench_type::<f32>(&dev, "f32", &sizes, &library)?;
    bench_type::<f64>(&dev, "f64", &sizes, &library)?;
    // The fixed cost of a call: a 1×1×1 product, and an idle queue synchronisation.
    let one = [1.0f32];
    let mut c = DeviceBuffer::<f32>::zeroed(&dev, 1)?;
    let (a, b) = (DeviceBuffer::from_slice(&dev, &one)?, DeviceBuffer::from_slice(&dev, &one)?);
    let per_call = median_of(1000, || blas::gemm(&dev, &Gemm::row_major(1, 1, 1), 1.0, &a, &b, 0.0, &mut c))?;
    let sync = median_of(1000, || dev.sync())?;
    println!(
        "{{\"side\":\"rust\",\"what\":\"latency\",\"gemm_1x1x1_us\":{:.3},\"idle_sync_us\":{:.3}}}",
        per_call.as_secs_f64() * 1e6,
        sync.as_secs_f64() * 1e6
    );
    Ok(())
}

fn median_of(reps: usize, mut f: impl FnMut() -> offload::Result<()>) -> offload::Result<Duration> {
    let mut times = Vec::with_capacity(reps);
    for _ in 0..reps {
        let t = Instant::now();
        f()?;
        times.push(t.elapsed());
    }
    times.sort();
    Ok(times[times.len() / 2])
}

fn bench_type<T: blas::Scalar + From<f32>>(
    dev: &Device,
    name: &str,
    sizes: &[usize],
    library: &str,
) -> anyhow::Result<()> {
    for &n in sizes {
        let host: Vec<T> = values(n * n, 5).into_iter().map(T::from).collect();
        let a = DeviceBuffer::from_slice(dev, &host)?;
        let b = DeviceBuffer::from_slice(dev, &host)?;
        let mut c = DeviceBuffer::<T>::zeroed(dev, n * n)?;
        let (one, zero) = (T::from(1.0), T::from(0.0));
        let shape = Gemm::row_major(n, n, n);
        let mut call = || blas::gemm(dev, &shape, one, &a, &b, zero, &mut c);
        call()?;
        call()?;
        let t = Instant::now();
        call()?;
        let once = t.elapsed().as_secs_f64();
        let reps = ((0.5 / once) as usize).clamp(5, 200);
        let median = median_of(reps, call)?.as_secs_f64();
        let tflops = 2.0 * (n as f64).powi(3) / median / 1e12;
        println!(
            "{{\"side\":\"rust\",\"what\":\"gemm\",\"type\":\"{name}\",\"n\":{n},\"reps\":{reps},\"median_ms\":{:.4},\"tflops\":{tflops:.3},\"library\":{library:?}}}",
            median * 1e3
        );
    }
    Ok(())
}
