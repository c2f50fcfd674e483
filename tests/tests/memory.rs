//! Device memory returns to its starting level after many allocate/copy/free cycles: checked
//! through the runtime's own count of the bytes it holds and, on NVIDIA, through the driver's
//! free-memory figure. 100 000 cycles on a GPU (the GPU check runs this), 2 000 on the CPU
//! backend, where only the data is checked.

use offload::{Device, DeviceBuffer};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Sum of the buffer, to check on the device what each cycle copied there.
    #[kernel]
    pub fn total(x: &[f32], mut sum: Sum<f32>) {
        for i in (global_linear_id()..x.len()).step_by(global_threads()) {
            sum.add(x[i]);
        }
    }
}

#[test]
fn device_memory_returns_to_its_level_after_many_cycles() {
    let dev = Device::default().expect("a device");
    let cycles = if dev.is_gpu() { 100_000 } else { 2_000 };
    let data: Vec<f32> = (0..4096).map(|i| i as f32).collect();
    let cycle = |i: usize| {
        let mut b = DeviceBuffer::from_slice(&dev, &data).unwrap();
        b.copy_from(&data).unwrap();
        if i.is_multiple_of(997) {
            assert_eq!(b.to_vec().unwrap(), data, "cycle {i}");
            let mut sum = 0.0f32;
            gpu::total::launch(&dev, 1024, &b, &mut sum).unwrap();
            assert_eq!(sum, (0..4096).sum::<i32>() as f32, "cycle {i}");
        }
    };
    for i in 0..100 {
        cycle(i); // warm-up: the allocator's first pools
    }
    let (held, driver) = (dev.allocated_bytes(), dev.memory_info());
    let started = std::time::Instant::now();
    let mut peak = 0;
    for i in 0..cycles {
        cycle(i);
        peak = peak.max(dev.allocated_bytes());
    }
    let (held_after, driver_after) = (dev.allocated_bytes(), dev.memory_info());
    eprintln!(
        "{{\"cycles\":{cycles},\"seconds\":{:.3},\"held_before\":{held},\"held_after\":{held_after},\"free_before\":{},\"free_after\":{},\"device\":\"{dev}\"}}",
        started.elapsed().as_secs_f64(),
        driver.map_or(-1, |(free, _)| free as i64),
        driver_after.map_or(-1, |(free, _)| free as i64),
    );
    assert_eq!(held_after, held, "bytes the runtime holds");
    if dev.is_gpu() {
        assert!(peak <= held + 2 * data.len() * 4, "a cycle's buffer was not freed at once (peak {peak})");
    }
    if let (Some((free, _)), Some((free_after, _))) = (driver, driver_after) {
        // The driver's pools may round: allow 2 MiB, far below 100 000 leaked 16 KiB buffers.
        assert!(free_after + (2 << 20) >= free, "free device memory fell from {free} to {free_after}");
    }
}
