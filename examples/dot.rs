//! A dot product with a reduction (`Sum<f64>`): threads fold their products, each block
//! reduces in shared memory, and one atomic per block adds to one of the result's copies (up
//! to eight, which the host adds up). The vectors live in device buffers, so repeated dot
//! products copy nothing but the result's copies (1 KiB).

use offload::DeviceBuffer;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn dot(x: &[f64], y: &[f64], mut total: Sum<f64>) {
        for i in (global_linear_id()..x.len()).step_by(global_threads()) {
            total.add(x[i] * y[i]);
        }
    }
}

fn main() -> anyhow::Result<()> {
    let n = 10_000_000;
    let dev = offload::Device::default()?;
    // Small integers: every order of the additions gives the exact same sum.
    let x: Vec<f64> = (0..n).map(|i| (i % 17) as f64 - 8.0).collect();
    let y: Vec<f64> = (0..n).map(|i| (i % 13) as f64).collect();
    let (dx, dy) = (DeviceBuffer::from_slice(&dev, &x)?, DeviceBuffer::from_slice(&dev, &y)?);
    let mut total = 0.0;
    gpu::dot::launch(&dev, 65_536, &dx, &dy, &mut total)?;
    let want: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
    anyhow::ensure!(total == want, "dot: got {total}, want {want}");
    println!("dot: {n} elements, grid-stride over 65536 threads, on {dev}: {total} (verified)");
    Ok(())
}
