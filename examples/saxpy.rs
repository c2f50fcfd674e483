//! SAXPY, `y = a·x + y`, written once and run on the GPU when one is present (through
//! liboffload) or on the CPU emulation backend otherwise.
//!
//! ```text
//! cargo offload run --example saxpy            # GPU images embedded, GPU if present
//! cargo run --example saxpy                    # plain cargo: CPU emulation
//! ```

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// One thread per element: `y[i] = a * x[i] + y[i]`.
    #[kernel]
    pub fn saxpy(a: f32, x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi += a * x[i];
        }
    }
}

fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args().nth(1).map_or(Ok(1 << 20), |s| s.parse())?;
    let dev = offload::Device::default()?;
    let a = 2.5f32;
    let x: Vec<f32> = (0..n).map(|i| (i % 1000) as f32 * 0.5).collect();
    let mut y: Vec<f32> = (0..n).map(|i| (i % 7) as f32).collect();
    let expected: Vec<f32> = x.iter().zip(&y).map(|(x, y)| a * x + y).collect();

    let start = std::time::Instant::now();
    gpu::saxpy::launch(&dev, n, a, &x, &mut y)?;
    let elapsed = start.elapsed();

    let wrong = y.iter().zip(&expected).filter(|(got, want)| got != want).count();
    if wrong > 0 {
        let i = y.iter().zip(&expected).position(|(g, w)| g != w).unwrap_or(0);
        anyhow::bail!(
            "saxpy: {wrong} of {n} results wrong (first at {i}: got {}, want {})",
            y[i],
            expected[i]
        );
    }
    println!(
        "saxpy: {n} elements on {dev}: verified against the host ({:.3} ms including copies)",
        elapsed.as_secs_f64() * 1e3
    );
    Ok(())
}
