//! A kernel that panics (here: an out-of-bounds index) is an `Err` naming the kernel, never
//! a crash or silent corruption; afterwards the device fails fast with the same cause. In its
//! own test binary because on a GPU the trap poisons the device for the whole process.

use offload::{Device, Error};

/// The panic-site mode this test was built with (`scripts/gpu bundle` builds the tests with
/// `kernel`).
const SITES: Option<&str> = option_env!("OFFLOAD_PANIC_SITES");

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Reads `x[i + shift]`, which is out of bounds for the last `shift` threads.
    #[kernel]
    pub fn shifted_copy(shift: usize, x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = x[i + shift];
        }
    }
}

/// The line of this file where `shifted_copy` reads out of bounds.
fn read_line() -> u32 {
    let line = include_str!("trap.rs").lines().position(|l| l.trim() == "*yi = x[i + shift];");
    line.expect("the read is in this file") as u32 + 1
}

#[test]
fn out_of_bounds_read_is_an_error_naming_the_kernel_and_poisons_the_gpu() {
    let dev = Device::default().unwrap();
    let x = vec![1.0f32; 4096];
    let mut y = vec![0.0f32; 4096];
    gpu::shifted_copy::launch(&dev, 4096, 0usize, &x, &mut y).expect("in-bounds launch");
    assert!(y.iter().all(|v| *v == 1.0));

    let err = gpu::shifted_copy::launch(&dev, 4096, 10usize, &x, &mut y).unwrap_err();
    let text = err.to_string();
    assert!(text.contains("gpu::shifted_copy"), "error does not name the kernel: {text}");
    match (&err, dev.is_gpu()) {
        (Error::KernelPanicked { message, .. }, false) => {
            assert!(message.contains("index out of bounds"), "{message}");
        }
        (Error::KernelFailed { panic: None, .. }, true) if SITES.is_none_or(|s| s == "off") => {
            assert!(text.contains("OFFLOAD_PANIC_SITES"), "no hint at panic sites: {text}");
        }
        (Error::KernelFailed { panic, .. }, true) => {
            // Built with panic sites: the first panicking thread recorded the place.
            let panic = panic.as_ref().unwrap_or_else(|| panic!("no panic place recorded: {text}"));
            // (The kernel's one failure path names its sites; the read's is among them.)
            let line = read_line();
            let read = std::iter::once(&panic.place).chain(&panic.others).find(|p| p.line == line);
            let read = read.unwrap_or_else(|| panic!("line {line} is not among the panic sites: {text}"));
            assert_eq!(read.kind, "index out of bounds", "{text}");
            assert!(read.file.ends_with("trap.rs") && read.column > 0, "{text}");
            assert!(
                panic.thread[0] < 256 && panic.block[0] >= 4086 / 256,
                "not a thread past the end: {text}"
            );
        }
        (other, on_gpu) => panic!("unexpected error (on GPU: {on_gpu}): {other:?}"),
    }
    if dev.is_gpu() {
        // The trap poisoned the CUDA context: later calls fail fast, naming the first cause.
        let again = gpu::shifted_copy::launch(&dev, 4096, 0usize, &x, &mut y).unwrap_err();
        assert!(matches!(again, Error::Poisoned { .. }), "{again}");
        assert!(again.to_string().contains("gpu::shifted_copy"), "{again}");
    }
}
