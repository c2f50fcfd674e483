//! Kernels that use crates besides `offload` and `core`: `num-traits` from crates.io (with
//! `libm`, `no_std`) for a generic `Float` function, and `shared-math`, a `no_std` crate of
//! this workspace whose functions the host code calls too. Both are listed in this package's
//! manifest:
//!
//! ```toml
//! [package.metadata.offload]
//! device-dependencies = ["num-traits", "shared-math"]
//! ```
//!
//! so the device compile gets them with the versions and features of the host build, and a
//! kernels module that `use`s a crate not listed there is a compile error at the host build.

#[offload::kernels]
mod gpu {
    use num_traits::Float;
    use offload::prelude::*;
    use shared_math::{logistic, smoothstep};

    /// `x`'s distance from 0 through a soft threshold: generic over the float type.
    fn soft<T: Float>(x: T, edge: T) -> T {
        smoothstep(-edge, edge, x) * x.abs().sqrt()
    }

    #[kernel(f32, f64)]
    pub fn activate<T: Float>(edge: T, x: &[T], mut y: Region<T>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = logistic(x[i]) + soft(x[i], edge);
        }
    }
}

/// The same formula on the host, through the same crates.
fn host<T: num_traits::Float>(edge: T, x: T) -> T {
    shared_math::logistic(x) + shared_math::smoothstep(-edge, edge, x) * x.abs().sqrt()
}

fn main() -> anyhow::Result<()> {
    let dev = offload::Device::default()?;
    let n = 100_000;
    let x: Vec<f32> = (0..n).map(|i| (i as f32 - n as f32 / 2.0) / 5000.0).collect();
    let mut y = vec![0.0f32; n];
    gpu::activate::launch::<f32>(&dev, n, 2.0, &x, &mut y)?;
    let worst = x.iter().zip(&y).map(|(&x, &y)| (y - host(2.0, x)).abs()).fold(0.0f32, f32::max);
    // The GPU's `exp` and `sqrt` may round differently from the host's in the last bit.
    anyhow::ensure!(worst <= 4.0 * f32::EPSILON, "f32: off by {worst}");
    let xd: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    let mut yd = vec![0.0f64; n];
    gpu::activate::launch::<f64>(&dev, n, 2.0, &xd, &mut yd)?;
    let worst_d = xd.iter().zip(&yd).map(|(&x, &y)| (y - host(2.0, x)).abs()).fold(0.0f64, f64::max);
    anyhow::ensure!(worst_d <= 4.0 * f64::EPSILON, "f64: off by {worst_d}");
    println!(
        "device_deps: num-traits and shared-math in kernels, {n} values in f32 and f64 on {dev}: within {worst:.1e} and {worst_d:.1e} of the host (verified)"
    );
    Ok(())
}
