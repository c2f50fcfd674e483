//! Launch scopes and write-only outputs: data staged once, launches queued, results back at
//! the end of the scope; write-only outputs start from zeros on every backend.

use offload::{Device, Out};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `y[i] += a·x[i]`.
    #[kernel]
    pub fn axpy(a: f64, x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi += a * x[i];
        }
    }

    /// Writes `2·x[i]` to the even elements only.
    #[kernel]
    pub fn evens(x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine()
            && i % 2 == 0
        {
            *yi = 2.0 * x[i];
        }
    }
}

const N: usize = 10_000;

fn device() -> Device {
    Device::default().expect("a device")
}

#[test]
fn a_scope_stages_once_and_writes_back_at_the_end() {
    let dev = device();
    let x: Vec<f64> = (0..N).map(|i| i as f64).collect();
    let (mut y, mut z) = (vec![1.0; N], vec![7.0; N]);
    let launches = dev
        .scope(|s| {
            let xs = s.input(&x)?;
            let mut ys = s.in_out(&mut y)?;
            let mut zs = s.output(&mut z)?;
            for _ in 0..10 {
                gpu::axpy::launch(s, N, 0.5, &xs, &mut ys)?;
            }
            gpu::evens::launch(s, N, &ys, &mut zs)?;
            Ok(11)
        })
        .unwrap();
    assert_eq!(launches, 11);
    for i in 0..N {
        let yi = 1.0 + 10.0 * 0.5 * i as f64;
        assert_eq!(y[i], yi, "y[{i}]");
        assert_eq!(z[i], if i % 2 == 0 { 2.0 * yi } else { 0.0 }, "z[{i}]");
    }
}

#[test]
fn an_error_inside_a_scope_is_returned_and_data_still_comes_back() {
    let dev = device();
    let x = vec![1.0; N];
    let mut y = vec![0.0; N];
    let result = dev.scope(|s| {
        let mut ys = s.in_out(&mut y)?;
        gpu::axpy::launch(s, N, 1.0, &x, &mut ys)?;
        let small = offload::DeviceBuffer::<f64>::zeroed(s, 5)?;
        small.copy_to(&mut [0.0; 3])?; // wrong length: an error, not a panic
        gpu::axpy::launch(s, N, 1.0, &x, &mut ys)?; // not reached
        Ok(())
    });
    let e = result.unwrap_err().to_string();
    assert!(e.contains('5') && e.contains('3'), "{e}");
    assert!(y.iter().all(|&v| v == 1.0), "the first launch's result came back");
}

#[test]
fn write_only_outputs_start_from_zeros() {
    let dev = device();
    let x: Vec<f64> = (0..N).map(|i| i as f64).collect();
    let mut y = vec![7.0; N];
    gpu::evens::launch(&dev, N, &x, Out(&mut y)).unwrap();
    for (i, &v) in y.iter().enumerate() {
        assert_eq!(v, if i % 2 == 0 { 2.0 * i as f64 } else { 0.0 }, "y[{i}]");
    }
    let mut z = vec![7.0; N];
    let mut pz = dev.preload_out(&mut z).unwrap();
    gpu::evens::launch(&dev, N, &x, &mut pz).unwrap();
    pz.finish().unwrap();
    assert_eq!(z, y);
}

#[test]
fn asynchronous_copies_through_pinned_memory() {
    let dev = device();
    let x: Vec<f64> = (0..N).map(|i| i as f64).collect();
    let src = offload::PinnedBuffer::from_slice(&dev, &x).unwrap();
    let mut buffer = offload::DeviceBuffer::<f64>::zeroed(&dev, N).unwrap();
    buffer.copy_from_async(&src).unwrap().wait().unwrap();
    let mut y = offload::DeviceBuffer::<f64>::zeroed(&dev, N).unwrap();
    gpu::evens::launch(&dev, N, &buffer, &mut y).unwrap(); // queued
    let mut back = offload::PinnedBuffer::<f64>::zeroed(&dev, N).unwrap();
    let pending = y.copy_to_async(&mut back).unwrap();
    // Even a leaked `Pending` cannot let the host read the memory before the copy is done.
    std::mem::forget(pending);
    for (i, &v) in back.iter().enumerate() {
        assert_eq!(v, if i % 2 == 0 { 2.0 * i as f64 } else { 0.0 }, "back[{i}]");
    }
}
