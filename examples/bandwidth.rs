//! Host↔device copy bandwidth of a 1 GiB array, from pageable memory (`Vec`: directly, and
//! staged through the runtime's pinned bounce buffers) and from pinned memory
//! (`PinnedBuffer`), through `DeviceBuffer` copies. Prints one JSON line per case;
//! `scripts/gpu check` runs it beside `examples/cuda/bandwidth.cu` (CUDA's `cudaMemcpy`
//! from `cudaMallocHost` memory) and prints the ratios.

use offload::{DeviceBuffer, PinnedBuffer};
use std::time::Instant;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Sum of all bytes, to check on the device what arrived there.
    #[kernel]
    pub fn byte_sum(x: &[u8], mut total: Sum<u64>) {
        for i in (global_linear_id()..x.len()).step_by(global_threads()) {
            total.add(u64::from(x[i]));
        }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let mib: usize = std::env::args().nth(1).map_or(Ok(1024), |s| s.parse())?;
    let reps = 5;
    let dev = offload::Device::default()?;
    let n = mib << 20;
    let bytes = n as f64;
    let mut pageable = vec![0u8; n];
    pageable.iter_mut().enumerate().for_each(|(i, b)| *b = i as u8);
    let mut pinned = PinnedBuffer::from_slice(&dev, &pageable)?;
    let mut device = DeviceBuffer::<u8>::zeroed(&dev, n)?;
    let time = |f: &mut dyn FnMut() -> offload::Result<()>| -> anyhow::Result<f64> {
        f()?; // warm-up
        let mut t = Vec::new();
        for _ in 0..reps {
            let start = Instant::now();
            f()?;
            t.push(start.elapsed().as_secs_f64());
        }
        Ok(median(t))
    };
    // Pageable memory twice: straight through the driver, and staged through the runtime's
    // pinned bounce buffers (the default for large copies).
    offload::set_staging(false);
    let h2d_direct = time(&mut || device.copy_from(&pageable))?;
    offload::set_staging(true);
    let h2d_pageable = time(&mut || device.copy_from(&pageable))?;
    let h2d_pinned = time(&mut || device.copy_from(&pinned))?;
    let mut on_device = 0u64;
    gpu::byte_sum::launch(&dev, 1 << 16, &device, &mut on_device)?;
    let on_host: u64 = pageable.iter().map(|b| u64::from(*b)).sum();
    anyhow::ensure!(
        on_device == on_host,
        "bandwidth: the device holds other bytes ({on_device} != {on_host})"
    );
    let d2h_pinned = time(&mut || device.copy_to(&mut pinned))?;
    offload::set_staging(false);
    let d2h_direct = time(&mut || device.copy_to(&mut pageable))?;
    offload::set_staging(true);
    let d2h_pageable = time(&mut || device.copy_to(&mut pageable))?;
    anyhow::ensure!(pinned[..] == pageable[..], "bandwidth: the round trips changed the data");
    anyhow::ensure!(pageable.iter().enumerate().all(|(i, b)| *b == i as u8), "bandwidth: data corrupted");
    for (dir, memory, seconds) in [
        ("h2d", "pageable_direct", h2d_direct),
        ("d2h", "pageable_direct", d2h_direct),
        ("h2d", "pageable", h2d_pageable),
        ("h2d", "pinned", h2d_pinned),
        ("d2h", "pinned", d2h_pinned),
        ("d2h", "pageable", d2h_pageable),
    ] {
        println!(
            "{{\"bench\":\"bandwidth\",\"side\":\"rust\",\"dir\":\"{dir}\",\"memory\":\"{memory}\",\"bytes\":{n},\"median_s\":{seconds:.6},\"gb_per_s\":{:.2}}}",
            bytes / seconds / 1e9
        );
    }
    eprintln!(
        "bandwidth on {dev}, {mib} MiB: H→D {:.1} GB/s pinned, {:.1} pageable staged, {:.1} pageable direct; D→H {:.1} pinned, {:.1} staged, {:.1} direct",
        bytes / h2d_pinned / 1e9,
        bytes / h2d_pageable / 1e9,
        bytes / h2d_direct / 1e9,
        bytes / d2h_pinned / 1e9,
        bytes / d2h_pageable / 1e9,
        bytes / d2h_direct / 1e9
    );
    Ok(())
}
