//! The transfer report counts every launch and, on a GPU, every byte copied each way, per
//! kernel. Own binary: the report is process-wide.

use offload::{Device, DeviceBuffer, transfer_report};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn scale(k: f32, x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = k * x[i];
        }
    }
}

#[test]
fn launches_and_bytes_are_counted_per_kernel_and_direction() {
    offload::set_reporting(true);
    offload::reset_transfer_report();
    let dev = Device::default().unwrap();
    let n = 10_000;
    let x = vec![1.0f32; n];
    let mut y = vec![0.0f32; n];
    for _ in 0..3 {
        gpu::scale::launch(&dev, n, 2.0, &x, &mut y).unwrap();
    }
    let dx = DeviceBuffer::from_slice(&dev, &x).unwrap();
    let mut dy = DeviceBuffer::<f32>::zeroed(&dev, n).unwrap();
    gpu::scale::launch(&dev, n, 3.0, &dx, &mut dy).unwrap();
    assert!(dy.to_vec().unwrap().iter().all(|v| *v == 3.0));

    let r = transfer_report();
    let k = &r.kernels["gpu::scale"];
    assert_eq!(k.launches, 4);
    let bytes = (n * 4) as u64;
    if dev.is_gpu() {
        assert_eq!(k.queued, 1, "the launch on buffers only queued");
        // x and y are small arguments: each launch gathers them and copies them in together.
        assert_eq!((k.host_to_device.count, k.host_to_device.bytes), (3, 6 * bytes));
        assert_eq!((k.device_to_host.count, k.device_to_host.bytes), (3, 3 * bytes));
        // Kernel copies plus the buffers' own: one in (x; y is zeroed on the device), one out
        // (to_vec).
        assert_eq!((r.host_to_device.count, r.host_to_device.bytes), (4, 7 * bytes));
        assert_eq!((r.device_to_host.count, r.device_to_host.bytes), (4, 4 * bytes));
        assert!(!r.host_to_device.time.is_zero() && !k.time.is_zero());
    } else {
        // The CPU backend copies nothing: kernels read host memory in place.
        assert_eq!((r.host_to_device.count, r.device_to_host.count), (0, 0));
        assert_eq!(k.queued, 0);
    }
    let text = r.to_string();
    assert!(text.contains("gpu::scale") && text.contains("host → device"), "{text}");
}
