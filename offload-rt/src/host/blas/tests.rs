//! Every routine on the CPU backend against straightforward reference math, with every kind
//! of argument; and the errors.

use super::*;
use crate::{DeviceBuffer, Error};

/// Element `(i, j)` of a matrix stored in `layout` with leading dimension `ld`.
fn at(data: &[f64], layout: Layout, ld: usize, i: usize, j: usize) -> f64 {
    match layout {
        Layout::RowMajor => data[i * ld + j],
        Layout::ColMajor => data[i + j * ld],
    }
}

/// Deterministic values in [-1, 1).
fn values(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn convert<T: Scalar>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&x| T::from_f64(x)).collect()
}

fn back<T: Scalar>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64()).collect()
}

/// `C = α·op(A)·op(B) + β·C` by the definition, in f64.
fn reference_gemm(g: &Gemm, alpha: f64, a: &[f64], b: &[f64], beta: f64, c: &mut [f64], lds: [usize; 3]) {
    for i in 0..g.m {
        for j in 0..g.n {
            let mut s = 0.0;
            for p in 0..g.k {
                let av = if g.trans_a == Op::N {
                    at(a, g.layout, lds[0], i, p)
                } else {
                    at(a, g.layout, lds[0], p, i)
                };
                let bv = if g.trans_b == Op::N {
                    at(b, g.layout, lds[1], p, j)
                } else {
                    at(b, g.layout, lds[1], j, p)
                };
                s += av * bv;
            }
            let idx = match g.layout {
                Layout::RowMajor => i * lds[2] + j,
                Layout::ColMajor => i + j * lds[2],
            };
            c[idx] = alpha * s + if beta == 0.0 { 0.0 } else { beta * c[idx] };
        }
    }
}

fn assert_close(got: &[f64], want: &[f64], tol: f64, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "{what}: element {i} is {g}, want {w}");
    }
}

fn tolerance<T: Scalar>() -> f64 {
    match T::KIND {
        Kind::F32 => 1e-4,
        Kind::F64 => 1e-12,
    }
}

fn gemm_case<T: Scalar>(g: Gemm) {
    let dev = Device::cpu();
    let (ar, ac) = if g.trans_a == Op::N { (g.m, g.k) } else { (g.k, g.m) };
    let (br, bc) = if g.trans_b == Op::N { (g.k, g.n) } else { (g.n, g.k) };
    let inner = |r: usize, c: usize| if g.layout == Layout::RowMajor { c } else { r };
    let outer = |r: usize, c: usize| if g.layout == Layout::RowMajor { r } else { c };
    let lds = [
        g.lda.unwrap_or(inner(ar, ac).max(1)),
        g.ldb.unwrap_or(inner(br, bc).max(1)),
        g.ldc.unwrap_or(inner(g.m, g.n).max(1)),
    ];
    let len = |r: usize, c: usize, ld: usize| {
        if r == 0 || c == 0 { 0 } else { (outer(r, c) - 1) * ld + inner(r, c) }
    };
    let a = values(len(ar, ac, lds[0]), 1);
    let b = values(len(br, bc, lds[1]), 2);
    let c0 = values(len(g.m, g.n, lds[2]), 3);
    let (alpha, beta) = (0.75, -0.5);
    let mut want = c0.clone();
    reference_gemm(&g, alpha, &a, &b, beta, &mut want, lds);
    let (ta, tb) = (convert::<T>(&a), convert::<T>(&b));
    let mut c = convert::<T>(&c0);
    gemm(&dev, &g, T::from_f64(alpha), &ta, &tb, T::from_f64(beta), &mut c).unwrap();
    assert_close(&back(&c), &want, tolerance::<T>(), &format!("{g:?}"));
}

#[test]
fn gemm_matches_the_definition_in_every_layout_and_transpose() {
    for layout in [Layout::RowMajor, Layout::ColMajor] {
        for ta in [Op::N, Op::T] {
            for tb in [Op::N, Op::T] {
                for (m, n, k) in [(7, 5, 3), (1, 9, 4), (33, 17, 65), (4, 4, 1)] {
                    let g =
                        Gemm { layout, trans_a: ta, trans_b: tb, m, n, k, lda: None, ldb: None, ldc: None };
                    gemm_case::<f32>(g);
                    gemm_case::<f64>(g);
                }
            }
        }
    }
}

#[test]
fn gemm_with_leading_dimensions() {
    gemm_case::<f64>(Gemm::row_major(6, 5, 4).lda(7).ldb(9).ldc(8));
    gemm_case::<f32>(Gemm::col_major(6, 5, 4).transpose_a().lda(6).ldc(10));
    gemm_case::<f64>(Gemm::col_major(6, 5, 4).transpose_b().ldb(11));
}

#[test]
fn gemm_with_k_zero_scales_c() {
    let dev = Device::cpu();
    let mut c = vec![1.0f64, 2.0, 3.0, 4.0];
    gemm(&dev, &Gemm::row_major(2, 2, 0), 1.0, &[], &[], 3.0, &mut c).unwrap();
    assert_eq!(c, [3.0, 6.0, 9.0, 12.0]);
}

#[test]
fn gemm_with_beta_zero_ignores_nan_in_c() {
    let dev = Device::cpu();
    let mut c = vec![f32::NAN; 4];
    gemm(&dev, &Gemm::row_major(2, 2, 1), 2.0, &[1.0, 2.0], &[3.0, 4.0], 0.0, &mut c).unwrap();
    assert_eq!(c, [6.0, 8.0, 12.0, 16.0]);
}

fn gemv_case<T: Scalar>(g: Gemv) {
    let dev = Device::cpu();
    let ld = g.lda.unwrap_or(if g.layout == Layout::RowMajor { g.n } else { g.m }.max(1));
    let outer = if g.layout == Layout::RowMajor { g.m } else { g.n };
    let inner = if g.layout == Layout::RowMajor { g.n } else { g.m };
    let a = values((outer - 1) * ld + inner, 4);
    let (xl, yl) = if g.trans == Op::N { (g.n, g.m) } else { (g.m, g.n) };
    let (x, y0) = (values(xl, 5), values(yl, 6));
    let (alpha, beta) = (1.5, 0.25);
    let want: Vec<f64> = (0..yl)
        .map(|i| {
            let s: f64 = (0..xl)
                .map(|p| if g.trans == Op::N { at(&a, g.layout, ld, i, p) } else { at(&a, g.layout, ld, p, i) } * x[p])
                .sum();
            alpha * s + beta * y0[i]
        })
        .collect();
    let mut y = convert::<T>(&y0);
    gemv(&dev, &g, T::from_f64(alpha), &convert::<T>(&a), &convert::<T>(&x), T::from_f64(beta), &mut y)
        .unwrap();
    assert_close(&back(&y), &want, tolerance::<T>(), &format!("{g:?}"));
}

#[test]
fn gemv_matches_the_definition() {
    for g in [
        Gemv::row_major(7, 5),
        Gemv::col_major(7, 5),
        Gemv::row_major(7, 5).transpose(),
        Gemv::col_major(3, 9).transpose(),
        Gemv::row_major(4, 3).lda(6),
        Gemv::col_major(4, 3).transpose().lda(5),
    ] {
        gemv_case::<f32>(g);
        gemv_case::<f64>(g);
    }
}

#[test]
fn level_one_routines_match_the_definition() {
    let dev = Device::cpu();
    let n = 1001;
    let (x, y0) = (values(n, 7), values(n, 8));
    // axpy
    let mut y = y0.clone();
    axpy(&dev, 0.5, &x, &mut y).unwrap();
    let want: Vec<f64> = x.iter().zip(&y0).map(|(a, b)| 0.5 * a + b).collect();
    assert_close(&y, &want, 1e-15, "daxpy");
    let mut y32 = convert::<f32>(&y0);
    axpy(&dev, 0.5f32, &convert::<f32>(&x), &mut y32).unwrap();
    assert_close(&back(&y32), &want, 1e-6, "saxpy");
    // dot
    let want: f64 = x.iter().zip(&y0).map(|(a, b)| a * b).sum();
    assert_close(&[dot(&dev, &x, &y0).unwrap()], &[want], 1e-12, "ddot");
    assert_close(
        &[dot(&dev, &convert::<f32>(&x), &convert::<f32>(&y0)).unwrap().to_f64()],
        &[want],
        1e-4,
        "sdot",
    );
    // nrm2
    let want = x.iter().map(|a| a * a).sum::<f64>().sqrt();
    assert_close(&[nrm2(&dev, &x).unwrap()], &[want], 1e-14, "dnrm2");
    assert_close(&[f64::from(nrm2(&dev, &convert::<f32>(&x)).unwrap())], &[want], 1e-5, "snrm2");
    // scal
    let mut s = x.clone();
    scal(&dev, -2.0, &mut s).unwrap();
    assert_eq!(s, x.iter().map(|a| -2.0 * a).collect::<Vec<_>>());
}

#[test]
fn nrm2_neither_overflows_nor_underflows() {
    let dev = Device::cpu();
    let relative = |got: f64, want: f64| (got - want).abs() / want;
    assert!(relative(nrm2(&dev, &[3e200f64, 4e200]).unwrap(), 5e200) < 1e-15);
    assert!(relative(nrm2(&dev, &[3e-200f64, 4e-200]).unwrap(), 5e-200) < 1e-15);
    assert!(relative(nrm2(&dev, &[3e30f32, 4e30]).unwrap().into(), 5e30) < 1e-6);
    assert!(relative(nrm2(&dev, &[3e-30f32, 4e-30]).unwrap().into(), 5e-30) < 1e-6);
    assert_eq!(nrm2(&dev, &[0.0f32; 5]).unwrap(), 0.0);
    assert!(nrm2(&dev, &[1.0, f64::NAN]).unwrap().is_nan());
    assert_eq!(nrm2::<f64>(&dev, &[]).unwrap(), 0.0);
}

#[test]
fn buffers_and_preloads_are_used_in_place() {
    let dev = Device::cpu();
    let a = vec![1.0f64, 2.0, 3.0, 4.0]; // 2×2 row-major
    let b = vec![5.0f64, 6.0, 7.0, 8.0];
    let da = DeviceBuffer::from_slice(&dev, &a).unwrap();
    let pb = dev.preload(&b).unwrap();
    let mut dc = DeviceBuffer::<f64>::zeroed(&dev, 4).unwrap();
    gemm(&dev, &Gemm::row_major(2, 2, 2), 1.0, &da, &pb, 0.0, &mut dc).unwrap();
    assert_eq!(dc.to_vec().unwrap(), [19.0, 22.0, 43.0, 50.0]);
    // The result feeds the next call with no copy, and back into a preload.
    let mut d = vec![1.0f64; 4];
    {
        let mut pd = dev.preload_mut(&mut d).unwrap();
        gemm(&dev, &Gemm::row_major(2, 2, 2).transpose_b(), 1.0, &dc, &da, 1.0, &mut pd).unwrap();
        axpy(&dev, 1.0, &dc, &mut pd).unwrap();
        scal(&dev, 0.5, &mut pd).unwrap();
        assert_eq!(dot(&dev, &pd, &pd).unwrap(), nrm2(&dev, &pd).unwrap().powi(2));
        pd.finish().unwrap();
    }
    // C·Aᵀ = [[19+44, 57+88], [43+100, 129+200]] + 1, plus C, halved.
    assert_eq!(d, [(64.0 + 19.0) / 2.0, (146.0 + 22.0) / 2.0, (144.0 + 43.0) / 2.0, (330.0 + 50.0) / 2.0]);
}

#[test]
fn a_buffer_of_another_device_is_refused_before_any_call() {
    let (dev, other) = (Device::cpu(), Device::cpu());
    let x = DeviceBuffer::from_slice(&other, &[1.0f32, 2.0]).unwrap();
    let mut y = vec![0.0f32; 2];
    let e = axpy(&dev, 1.0, &x, &mut y).unwrap_err();
    assert!(
        matches!(&e, Error::Blas(BlasError::WrongDevice { routine: "blas::axpy", argument: "x", .. })),
        "{e}"
    );
    assert!(e.to_string().contains("hint: call on the Device"), "{e}");
    assert_eq!(y, [0.0, 0.0], "nothing ran");
    let mut c = DeviceBuffer::<f32>::zeroed(&other, 4).unwrap();
    let e = gemm(&dev, &Gemm::row_major(2, 2, 1), 1.0, &[1.0, 2.0], &[1.0, 2.0], 0.0, &mut c).unwrap_err();
    assert!(matches!(&e, Error::Blas(BlasError::WrongDevice { argument: "c", .. })), "{e}");
}

#[test]
fn shape_errors_come_before_any_call() {
    let dev = Device::cpu();
    let mut c = vec![7.0f64; 6];
    let e = gemm(&dev, &Gemm::row_major(2, 3, 2), 1.0, &[0.0; 4], &[0.0; 5], 0.0, &mut c).unwrap_err();
    assert_eq!(e.to_string(), "blas::gemm: argument `b` (row-major 2×3) needs 6 elements, got 5");
    assert_eq!(c, [7.0; 6], "c untouched");
    let e = dot(&dev, &[1.0f32; 3], &[1.0f32; 4]).unwrap_err();
    assert!(matches!(&e, Error::Blas(BlasError::Shape { argument: "y", expected: 3, actual: 4, .. })), "{e}");
    let mut y = vec![0.0f64; 3];
    let e = gemv(&dev, &Gemv::row_major(3, 2), 1.0, &[0.0; 6], &[0.0; 3], 0.0, &mut y).unwrap_err();
    assert!(matches!(&e, Error::Blas(BlasError::Shape { argument: "x", expected: 2, actual: 3, .. })), "{e}");
}

#[test]
fn the_cpu_library_is_named() {
    assert_eq!(library(&Device::cpu()).unwrap(), "matrixmultiply (CPU backend)");
}
