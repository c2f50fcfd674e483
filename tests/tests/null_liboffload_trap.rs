//! The runtime's error path when a kernel faults, through `tests/null-liboffload` with
//! `NULL_OFFLOAD_TRAP=1` (every launch "traps"; every later wait or copy fails, as on a CUDA
//! context after a fault): the failure names the kernel and poisons the device.
//!
//! Ignored in a plain `cargo test`; `scripts/lib/null-backend-tests.sh` runs each test in a
//! process of its own (a fault poisons the device for the process).

use offload::{Device, DeviceBuffer, Error};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn faulting(x: &[u32], mut y: Region<u32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = x[i];
        }
    }
}

/// The stand-in's device, whose launches trap from the `first`th of the process on.
fn trapping_device(first: &str) -> Device {
    let dev = Device::default().expect("a device");
    assert!(dev.name().contains("null liboffload"), "not the stand-in's device: {dev}");
    assert_eq!(
        std::env::var("NULL_OFFLOAD_TRAP").as_deref(),
        Ok(first),
        "run with NULL_OFFLOAD_TRAP={first}"
    );
    dev
}

#[test]
#[ignore = "needs the stand-in liboffload with NULL_OFFLOAD_TRAP=1: scripts/lib/null-backend-tests.sh"]
fn a_queued_launch_that_faults_is_named_at_the_next_wait_and_poisons_the_device() {
    let dev = trapping_device("1");
    let x = DeviceBuffer::from_slice(&dev, &[1u32; 512]).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&dev, 512).unwrap();
    gpu::faulting::launch(&dev, 512, &x, &mut y).expect("only queued");
    let err = dev.sync().unwrap_err();
    assert!(matches!(err, Error::KernelFailed { .. }), "{err:?}");
    assert!(err.to_string().contains("gpu::faulting"), "{err}");
    assert!(err.to_string().contains("illegal instruction"), "the library's reason is kept: {err}");
    // Every later call fails fast with that cause.
    let again = y.to_vec().unwrap_err();
    assert!(matches!(again, Error::Poisoned { .. }), "{again:?}");
    let launch = gpu::faulting::launch(&dev, 512, &x, &mut y).unwrap_err();
    assert!(matches!(launch, Error::Poisoned { .. }), "{launch:?}");
}

#[test]
#[ignore = "needs the stand-in liboffload with NULL_OFFLOAD_TRAP=1: scripts/lib/null-backend-tests.sh"]
fn a_launch_on_host_data_that_faults_is_an_error_naming_the_kernel_and_leaves_the_output_alone() {
    let dev = trapping_device("1");
    let x = vec![1u32; 100_000];
    let mut y = vec![9u32; 100_000];
    let err = gpu::faulting::launch(&dev, y.len(), &x, &mut y).unwrap_err();
    assert!(matches!(err, Error::KernelFailed { .. }), "{err:?}");
    assert!(err.to_string().contains("gpu::faulting"), "{err}");
    assert!(y.iter().all(|v| *v == 9), "a failed copy back leaves the host data as it was");
}

#[test]
#[ignore = "needs the stand-in liboffload with NULL_OFFLOAD_TRAP=3: scripts/lib/null-backend-tests.sh"]
fn a_kernel_queued_again_after_a_wait_is_named_when_it_faults() {
    // The runtime notes each queued kernel once until a wait; after the wait it must note the
    // same kernel again, or a fault of its next launch would name no kernel.
    let dev = trapping_device("3");
    let x = DeviceBuffer::from_slice(&dev, &[1u32; 512]).unwrap();
    let mut y = DeviceBuffer::<u32>::zeroed(&dev, 512).unwrap();
    for _ in 0..2 {
        gpu::faulting::launch(&dev, 512, &x, &mut y).expect("only queued");
    }
    dev.sync().expect("the first two launches do not trap");
    gpu::faulting::launch(&dev, 512, &x, &mut y).expect("only queued");
    let err = dev.sync().unwrap_err();
    assert!(matches!(err, Error::KernelFailed { .. }), "{err:?}");
    assert!(err.to_string().contains("gpu::faulting"), "the kernel queued since the wait is named: {err}");
}
