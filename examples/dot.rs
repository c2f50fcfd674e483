//! A dot product the way reductions are fastest: a grid that fills the device
//! with the kernel's blocks (`gpu::dot::resident`), each thread folding a grid-stride share of the products into a
//! `Sum<f64>`, then each block combining in shared memory and adding once to one of the
//! result's copies (up to eight, which the host adds up). The vectors live in device buffers,
//! so repeated dot products copy nothing but the result's copies.

use offload::DeviceBuffer;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn dot(x: &[f64], y: &[f64], mut total: Sum<f64>) {
        for i in grid_stride(x.len().min(y.len())) {
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
    let grid = gpu::dot::resident(&dev, 256)?;
    let mut total = 0.0;
    gpu::dot::launch(&dev, grid, &dx, &dy, &mut total)?;
    let want: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
    anyhow::ensure!(total == want, "dot: got {total}, want {want}");
    let threads = grid.blocks()[0] as usize * 256;
    println!("dot: {n} elements, grid-stride over {threads} threads, on {dev}: {total} (verified)");
    Ok(())
}
