//! `c = a + b` on `f64`, with a launch in blocks of 128 threads: written once, run on the GPU
//! when one is present or on the CPU emulation backend otherwise.

use offload::Grid;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `c[i] = a[i] + b[i]`; `c` is written only (its old contents are overwritten).
    #[kernel]
    pub fn vector_add(a: &[f64], b: &[f64], mut c: Region<f64>) {
        let i = c.index();
        if let Some(ci) = c.mine() {
            *ci = a[i] + b[i];
        }
    }
}

fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args().nth(1).map_or(Ok(1_000_003), |s| s.parse())?;
    let dev = offload::Device::default()?;
    let a: Vec<f64> = (0..n).map(|i| (i as f64).sin()).collect();
    let b: Vec<f64> = (0..n).map(|i| (i as f64).cos() * 3.0).collect();
    let mut c = vec![f64::NAN; n];

    gpu::vector_add::launch(&dev, Grid::threads(n).block_size(128), &a, &b, &mut c)?;

    for (i, ((a, b), c)) in a.iter().zip(&b).zip(&c).enumerate() {
        anyhow::ensure!(*c == a + b, "vector_add: element {i} is {c}, want {}", a + b);
    }
    println!("vector_add: {n} elements (f64, blocks of 128) on {dev}: verified against the host");
    Ok(())
}
