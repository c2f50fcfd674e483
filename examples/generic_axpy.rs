//! One generic kernel used with two element types: `#[kernel(f32, f64)]` compiles an entry
//! point for each, and launching with any other type does not compile.

#[offload::kernels]
mod gpu {
    use offload::math::Float;
    use offload::prelude::*;

    #[kernel(f32, f64)]
    pub fn axpy<T: Float>(a: T, x: &[T], mut y: Region<T>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = math::fma(a, x[i], *yi);
        }
    }
}

fn check<
    T: offload::KernelScalar + offload::math::Float + PartialEq + std::fmt::Debug + gpu::axpy::Instance,
>(
    dev: &offload::Device,
    a: T,
    x: Vec<T>,
    y0: Vec<T>,
) -> anyhow::Result<()> {
    let mut y = y0.clone();
    gpu::axpy::launch(dev, x.len(), a, &x, &mut y)?;
    for i in 0..x.len() {
        let want = offload::math::fma(a, x[i], y0[i]);
        anyhow::ensure!(
            y[i] == want,
            "axpy<{}>: element {i} is {:?}, want {want:?}",
            std::any::type_name::<T>(),
            y[i]
        );
    }
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let n = 100_000;
    let dev = offload::Device::default()?;
    check(&dev, 1.5f32, (0..n).map(|i| i as f32 * 1e-3).collect(), vec![2.0f32; n])?;
    check(&dev, -0.25f64, (0..n).map(|i| (i as f64).sqrt()).collect(), (0..n).map(|i| i as f64).collect())?;
    println!("generic_axpy: the same kernel for f32 and f64, {n} elements each, on {dev}: verified");
    Ok(())
}
