//! `offload::blas` on the default device (cuBLAS on an NVIDIA GPU, the CPU backend here):
//! every routine against host arithmetic, in both layouts and with transposes, with host
//! data, device buffers and preloads, interleaved with kernels on the same buffers; and the
//! errors.

use offload::blas::{self, BlasError, Gemm, Gemv, Layout, Op};
use offload::{Device, DeviceBuffer, Error};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `x = x · s + t`.
    #[kernel]
    pub fn affine(s: f64, t: f64, mut x: Region<f64>) {
        if let Some(v) = x.mine() {
            *v = *v * s + t;
        }
    }
}

fn device() -> Device {
    Device::default().expect("a device")
}

fn values(n: usize, seed: u64) -> Vec<f64> {
    (0..n as u64).map(|i| ((i * 2_654_435_761 + seed * 97) % 1999) as f64 / 999.5 - 1.0).collect()
}

fn at(v: &[f64], layout: Layout, ld: usize, i: usize, j: usize) -> f64 {
    if layout == Layout::RowMajor { v[i * ld + j] } else { v[i + j * ld] }
}

fn close(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "element {i}: {g}, want {w}");
    }
}

#[test]
fn gemm_in_every_layout_and_transpose_matches_the_host() {
    let dev = device();
    let (m, n, k) = (37, 29, 41);
    for layout in [Layout::RowMajor, Layout::ColMajor] {
        for ta in [Op::N, Op::T] {
            for tb in [Op::N, Op::T] {
                let g = Gemm { layout, trans_a: ta, trans_b: tb, m, n, k, lda: None, ldb: None, ldc: None };
                let (a, b, c0) = (values(m * k, 1), values(k * n, 2), values(m * n, 3));
                let ld = |rows: usize, cols: usize| if layout == Layout::RowMajor { cols } else { rows };
                let (lda, ldb, ldc) = (
                    if ta == Op::N { ld(m, k) } else { ld(k, m) },
                    if tb == Op::N { ld(k, n) } else { ld(n, k) },
                    ld(m, n),
                );
                let mut want = c0.clone();
                for i in 0..m {
                    for j in 0..n {
                        let s: f64 = (0..k)
                            .map(|p| {
                                let av = if ta == Op::N {
                                    at(&a, layout, lda, i, p)
                                } else {
                                    at(&a, layout, lda, p, i)
                                };
                                let bv = if tb == Op::N {
                                    at(&b, layout, ldb, p, j)
                                } else {
                                    at(&b, layout, ldb, j, p)
                                };
                                av * bv
                            })
                            .sum();
                        let idx = if layout == Layout::RowMajor { i * ldc + j } else { i + j * ldc };
                        want[idx] = 2.0 * s - 0.5 * c0[idx];
                    }
                }
                let mut c = c0.clone();
                blas::gemm(&dev, &g, 2.0, &a, &b, -0.5, &mut c).unwrap();
                close(&c, &want, 1e-12);
                // f32, on device buffers.
                let f = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
                let (da, db) = (
                    DeviceBuffer::from_slice(&dev, &f(&a)).unwrap(),
                    DeviceBuffer::from_slice(&dev, &f(&b)).unwrap(),
                );
                let mut dc = DeviceBuffer::from_slice(&dev, &f(&c0)).unwrap();
                blas::gemm(&dev, &g, 2.0f32, &da, &db, -0.5, &mut dc).unwrap();
                let got: Vec<f64> = dc.to_vec().unwrap().into_iter().map(f64::from).collect();
                close(&got, &want, 1e-4);
            }
        }
    }
}

#[test]
fn kernels_and_blas_share_buffers_in_order() {
    let dev = device();
    let n = 64;
    let a = values(n * n, 4);
    let da = DeviceBuffer::from_slice(&dev, &a).unwrap();
    let mut x = DeviceBuffer::from_slice(&dev, &values(n, 5)).unwrap();
    let mut y = DeviceBuffer::<f64>::zeroed(&dev, n).unwrap();
    let mut want_x = values(n, 5);
    let mut want_y = vec![0.0; n];
    for round in 0..5 {
        // A kernel changes x (queued, not waited for), BLAS reads it and writes y, a kernel
        // changes y, BLAS reads y into x: each step must see the one before.
        gpu::affine::launch(&dev, n, 0.5, round as f64, &mut x).unwrap();
        want_x.iter_mut().for_each(|v| *v = *v * 0.5 + round as f64);
        blas::gemv(&dev, &Gemv::row_major(n, n), 1.0, &da, &x, 0.0, &mut y).unwrap();
        want_y = (0..n).map(|i| (0..n).map(|j| a[i * n + j] * want_x[j]).sum()).collect();
        gpu::affine::launch(&dev, n, 1.0 / 64.0, 1.0, &mut y).unwrap();
        want_y.iter_mut().for_each(|v| *v = *v / 64.0 + 1.0);
        blas::axpy(&dev, -0.25, &y, &mut x).unwrap();
        want_x.iter_mut().zip(&want_y).for_each(|(x, y)| *x -= 0.25 * y);
    }
    close(&x.to_vec().unwrap(), &want_x, 1e-10);
    close(&y.to_vec().unwrap(), &want_y, 1e-10);
}

#[test]
fn level_one_on_host_data_buffers_and_preloads() {
    let dev = device();
    let n = 10_001;
    let (x, y) = (values(n, 6), values(n, 7));
    let px = dev.preload(&x).unwrap();
    let dy = DeviceBuffer::from_slice(&dev, &y).unwrap();
    let want: f64 = x.iter().zip(&y).map(|(a, b)| a * b).sum();
    for got in [
        blas::dot(&dev, &x, &y).unwrap(),
        blas::dot(&dev, &px, &dy).unwrap(),
        blas::dot(&dev, &x, &dy).unwrap(),
    ] {
        // Summation orders differ between libraries: 10⁴ terms leave ~1e-11 of rounding.
        close(&[got], &[want], 1e-9);
    }
    let norm = x.iter().map(|v| v * v).sum::<f64>().sqrt();
    close(&[blas::nrm2(&dev, &px).unwrap()], &[norm], 1e-12);
    let mut z = y.clone();
    {
        let mut pz = dev.preload_mut(&mut z).unwrap();
        blas::axpy(&dev, 3.0, &px, &mut pz).unwrap();
        blas::scal(&dev, 0.5, &mut pz).unwrap();
        pz.finish().unwrap();
    }
    let want: Vec<f64> = x.iter().zip(&y).map(|(a, b)| (3.0 * a + b) * 0.5).collect();
    close(&z, &want, 1e-14);
    let mut h = x.clone();
    blas::scal(&dev, -1.0, &mut h).unwrap();
    close(&h, &x.iter().map(|v| -v).collect::<Vec<_>>(), 0.0);
}

#[test]
fn gemv_transposed_with_leading_dimension() {
    let dev = device();
    let (m, n, lda) = (13, 7, 16);
    let a = values(m * lda, 8); // column-major m×n in columns of 16: (n-1)·16 + m elements
    let a = &a[..(n - 1) * lda + m];
    let x = values(m, 9);
    let mut y = values(n, 10);
    let want: Vec<f64> =
        (0..n).map(|j| 1.5 * (0..m).map(|i| a[i + j * lda] * x[i]).sum::<f64>() + 2.0 * y[j]).collect();
    blas::gemv(&dev, &Gemv::col_major(m, n).transpose().lda(lda), 1.5, a, &x, 2.0, &mut y).unwrap();
    close(&y, &want, 1e-12);
}

#[test]
fn errors_name_what_is_wrong() {
    let dev = device();
    let mut c = vec![0.0f64; 12];
    let e = blas::gemm(&dev, &Gemm::row_major(3, 4, 2), 1.0, &[0.0; 6], &[0.0; 9], 0.0, &mut c).unwrap_err();
    assert_eq!(e.to_string(), "blas::gemm: argument `b` (row-major 2×4) needs 8 elements, got 9");
    let other = Device::cpu();
    let buffer = DeviceBuffer::from_slice(&other, &[1.0f64; 12]).unwrap();
    let e = blas::nrm2(&dev, &buffer).unwrap_err();
    assert!(matches!(e, Error::Blas(BlasError::WrongDevice { argument: "x", .. })), "{e}");
    let e = blas::gemm(&dev, &Gemm::col_major(3, 4, 2).lda(2), 1.0, &[0.0; 6], &[0.0; 8], 0.0, &mut c)
        .unwrap_err();
    assert!(matches!(e, Error::Blas(BlasError::InvalidArgument { .. })), "{e}");
}

#[test]
fn the_library_is_named() {
    let dev = device();
    let library = blas::library(&dev).unwrap();
    let expected = if dev.is_gpu() { ["cuBLAS", "rocBLAS"] } else { ["matrixmultiply", "matrixmultiply"] };
    assert!(expected.iter().any(|e| library.starts_with(e)), "{library}");
}
