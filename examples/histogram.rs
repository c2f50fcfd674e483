//! A histogram with atomic scatter updates: every thread adds one to the bin of its value.

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn histogram(values: &[u32], bins: Atomics<u32>) {
        let i = global_linear_id();
        if i < values.len() {
            bins.add(values[i] as usize % bins.len(), 1);
        }
    }
}

fn main() -> anyhow::Result<()> {
    let n = 2_000_000;
    let dev = offload::Device::default()?;
    // A skewed, deterministic distribution: low bins are hot (contended atomics).
    let values: Vec<u32> =
        (0..n as u64).map(|i| ((i * 2_654_435_761) % 1_000_003 % 4096) as u32 / 16).collect();
    let mut bins = vec![0u32; 256];
    gpu::histogram::launch(&dev, n, &values, &mut bins)?;
    let mut want = vec![0u32; 256];
    for v in &values {
        want[*v as usize % 256] += 1;
    }
    anyhow::ensure!(bins == want, "histogram: bins differ from the host's");
    println!("histogram: {n} values into 256 bins with atomics on {dev}: verified against the host");
    Ok(())
}
