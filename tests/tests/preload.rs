//! Preloads: data staged once, used by many launches without copies, written back once.

use offload::{Device, transfer_report};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `y = a·x + y`.
    #[kernel]
    pub fn axpy(a: f64, x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi += a * x[i];
        }
    }

    /// `x = x / 2`.
    #[kernel]
    pub fn halve(mut x: Region<f64>) {
        if let Some(xi) = x.mine() {
            *xi *= 0.5;
        }
    }
}

#[test]
fn a_pipeline_on_preloaded_data_matches_the_host_and_copies_once() {
    offload::set_reporting(true);
    let dev = Device::default().unwrap();
    let n = 50_000;
    let x: Vec<f64> = (0..n).map(|i| (i % 97) as f64).collect();
    let mut y: Vec<f64> = (0..n).map(|i| (i % 5) as f64).collect();
    let mut z: Vec<f64> = vec![1024.0; n];
    let want_y: Vec<f64> = x.iter().zip(&y).map(|(x, y)| y + 20.0 * 0.5 * x).collect();
    offload::reset_transfer_report();
    {
        let px = dev.preload(&x).unwrap();
        let mut py = dev.preload_mut(&mut y).unwrap();
        let mut pz = dev.preload_mut(&mut z).unwrap();
        for _ in 0..20 {
            gpu::axpy::launch(&dev, n, 0.5, &px, &mut py).unwrap();
        }
        for _ in 0..10 {
            gpu::halve::launch(&dev, n, &mut pz).unwrap();
        }
        py.finish().unwrap();
        // `pz` is written back when it goes out of scope.
    }
    assert_eq!(y, want_y);
    assert!(z.iter().all(|v| *v == 1.0));
    let r = transfer_report();
    if dev.is_gpu() {
        assert_eq!(r.host_to_device.count, 3, "one copy in per preload");
        assert_eq!(r.device_to_host.count, 2, "one copy back per writable preload");
        assert_eq!(r.kernels["gpu::axpy"].queued, 20);
    }
}
