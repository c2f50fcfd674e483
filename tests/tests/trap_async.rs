//! A kernel that traps while queued asynchronously (device buffers only) is reported by the
//! next call that waits for the device, naming the kernel. Own binary: a GPU trap poisons the
//! device for the process.

use offload::{Device, DeviceBuffer, Error};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Reads `x[i + shift]`, out of bounds for the last `shift` threads.
    #[kernel]
    pub fn shifted(shift: usize, x: &[u32], mut y: Region<u32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = x[i + shift];
        }
    }
}

#[test]
fn a_queued_kernel_that_traps_is_named_when_the_device_is_next_waited_for() {
    let dev = Device::default().unwrap();
    let x = DeviceBuffer::from_slice(&dev, &vec![7u32; 2048]).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&dev, 2048).unwrap();
    let launched = gpu::shifted::launch(&dev, 2048, 1usize, &x, &mut y);
    let err = if dev.is_gpu() {
        // Queued: the trap is only known once the host waits.
        launched.expect("the launch is only queued");
        dev.sync().unwrap_err()
    } else {
        launched.unwrap_err()
    };
    assert!(err.to_string().contains("gpu::shifted"), "{err}");
    assert!(matches!(err, Error::KernelFailed { .. } | Error::KernelPanicked { .. }), "{err:?}");
    if dev.is_gpu() {
        let again = y.to_vec().unwrap_err();
        assert!(matches!(again, Error::Poisoned { .. }), "{again}");
    }
}
