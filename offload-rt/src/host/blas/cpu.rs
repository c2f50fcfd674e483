//! The CPU backend: every routine is one call of the `matrixmultiply` crate's strided GEMM
//! (level-1 routines as degenerate products), on the host memory that CPU-device buffers and
//! host slices hold.

use super::{Gemm, Gemv, InArg, Kind, Layout, Op, OutArg, Scalar};
use crate::host::args::{InData, OutData};
use crate::host::error::Result;

/// A strided matrix: first element, row stride, column stride.
struct Strided<P> {
    ptr: P,
    rs: isize,
    cs: isize,
}

/// `C = α·A·B + β·C` with `A` `m × k`, `B` `k × n`, `C` `m × n` (`dims = [m, k, n]`).
///
/// # Safety
///
/// Each pointer must be valid (reads for `a`, `b`; reads and writes for `c`) at every
/// element its strides reach within its dimensions, and `c`'s elements must not overlap
/// `a`'s or `b`'s.
unsafe fn product<T: Scalar>(
    [m, k, n]: [usize; 3],
    alpha: T,
    a: Strided<*const T>,
    b: Strided<*const T>,
    beta: T,
    c: Strided<*mut T>,
) {
    match T::KIND {
        // SAFETY: `T` is `f32` (its `KIND` says so), so the casts keep the element type; the
        // caller guarantees the pointers and strides. Converting through f64 is exact.
        Kind::F32 => unsafe {
            matrixmultiply::sgemm(
                m,
                k,
                n,
                alpha.to_f64() as f32,
                a.ptr.cast(),
                a.rs,
                a.cs,
                b.ptr.cast(),
                b.rs,
                b.cs,
                beta.to_f64() as f32,
                c.ptr.cast(),
                c.rs,
                c.cs,
            )
        },
        // SAFETY: as above, `T` is `f64`.
        Kind::F64 => unsafe {
            matrixmultiply::dgemm(
                m,
                k,
                n,
                alpha.to_f64(),
                a.ptr.cast(),
                a.rs,
                a.cs,
                b.ptr.cast(),
                b.rs,
                b.cs,
                beta.to_f64(),
                c.ptr.cast(),
                c.rs,
                c.cs,
            )
        },
    }
}

/// Row and column strides of `op(X)` for `X` stored in `layout` with leading dimension `ld`.
fn strides(layout: Layout, op: Op, ld: usize) -> (isize, isize) {
    let ld = ld as isize;
    let (rs, cs) = match layout {
        Layout::RowMajor => (ld, 1),
        Layout::ColMajor => (1, ld),
    };
    match op {
        Op::N => (rs, cs),
        Op::T => (cs, rs),
    }
}

/// The leading dimension of a matrix stored `rows × cols`, tight unless given.
fn ld(layout: Layout, rows: usize, cols: usize, given: Option<usize>) -> usize {
    given.unwrap_or(match layout {
        Layout::RowMajor => cols.max(1),
        Layout::ColMajor => rows.max(1),
    })
}

fn input<'s, T: Scalar>(data: &'s InData<'_, T>) -> &'s [T] {
    match data {
        InData::Host(h) => h,
        InData::Buffer(b) => b.host_slice().expect("a CPU device's buffers live in host memory"),
        InData::Part { buffer, start, len } => {
            &buffer.host_slice().expect("a CPU device's buffers live in host memory")[*start..*start + *len]
        }
    }
}

fn output<'s, T: Scalar>(data: &'s mut OutData<'_, T>) -> &'s mut [T] {
    match data {
        OutData::Host(h) => h,
        OutData::HostWriteOnly(h) => {
            // A write-only output starts from zeros, as it does for kernels.
            h.fill(crate::host::buffer::zero());
            h
        }
        OutData::Buffer(b) => {
            let len = b.len();
            let ptr = b.host_ptr().expect("a CPU device's buffers live in host memory");
            // SAFETY: a CPU device's buffer holds `len` initialised elements at `ptr`, and
            // `data` borrows the buffer mutably for as long as the slice lives.
            unsafe { std::slice::from_raw_parts_mut(ptr, len) }
        }
        OutData::Part { buffer, start, len } => {
            let base = buffer.host_ptr().expect("a CPU device's buffers live in host memory");
            // SAFETY: the part's `len` elements from `start` lie inside the buffer, and only
            // this part reaches them while `data` is borrowed.
            unsafe { std::slice::from_raw_parts_mut(base.add(*start), *len) }
        }
    }
}

fn strided_in<T>(s: &[T], (rs, cs): (isize, isize)) -> Strided<*const T> {
    Strided { ptr: s.as_ptr(), rs, cs }
}

fn strided_out<T>(s: &mut [T], (rs, cs): (isize, isize)) -> Strided<*mut T> {
    Strided { ptr: s.as_mut_ptr(), rs, cs }
}

pub(super) fn gemm<T: Scalar>(
    g: &Gemm,
    alpha: T,
    (a, _): InArg<'_, T>,
    (b, _): InArg<'_, T>,
    beta: T,
    (mut c, _, _): OutArg<'_, T>,
) -> Result<()> {
    let (ar, ac) = if g.trans_a == Op::N { (g.m, g.k) } else { (g.k, g.m) };
    let (br, bc) = if g.trans_b == Op::N { (g.k, g.n) } else { (g.n, g.k) };
    let sa = strides(g.layout, g.trans_a, ld(g.layout, ar, ac, g.lda));
    let sb = strides(g.layout, g.trans_b, ld(g.layout, br, bc, g.ldb));
    let sc = strides(g.layout, Op::N, ld(g.layout, g.m, g.n, g.ldc));
    let (a, b, c) = (input(&a), input(&b), output(&mut c));
    // SAFETY: `plan_gemm` checked that each slice holds every element its shape and leading
    // dimension reach; `c` is a unique borrow, so it overlaps neither input.
    unsafe {
        product([g.m, g.k, g.n], alpha, strided_in(a, sa), strided_in(b, sb), beta, strided_out(c, sc))
    };
    Ok(())
}

pub(super) fn gemv<T: Scalar>(
    g: &Gemv,
    alpha: T,
    (a, _): InArg<'_, T>,
    (x, _): InArg<'_, T>,
    beta: T,
    (mut y, _, _): OutArg<'_, T>,
) -> Result<()> {
    let (rows, cols) = if g.trans == Op::N { (g.m, g.n) } else { (g.n, g.m) };
    let sa = strides(g.layout, g.trans, ld(g.layout, g.m, g.n, g.lda));
    let (a, x, y) = (input(&a), input(&x), output(&mut y));
    // SAFETY: `plan_gemv` checked `a` against its shape, `x` has `cols` and `y` `rows`
    // elements (unit strides, one column); `y` is a unique borrow.
    unsafe {
        product(
            [rows, cols, 1],
            alpha,
            strided_in(a, sa),
            strided_in(x, (1, 1)),
            beta,
            strided_out(y, (1, 1)),
        )
    };
    Ok(())
}

pub(super) fn axpy<T: Scalar>(
    n: usize,
    alpha: T,
    (x, _): InArg<'_, T>,
    (mut y, _, _): OutArg<'_, T>,
) -> Result<()> {
    let one = [T::from_f64(1.0)];
    let (x, y) = (input(&x), output(&mut y));
    // SAFETY: `y (n×1) = α·x (n×1)·[1] + y`: `x` and `y` have `n` elements (checked), the
    // 1×1 factor is `one`; `y` is a unique borrow.
    unsafe {
        product(
            [n, 1, 1],
            alpha,
            strided_in(x, (1, 1)),
            strided_in(&one, (1, 1)),
            one[0],
            strided_out(y, (1, 1)),
        )
    };
    Ok(())
}

pub(super) fn dot<T: Scalar>(n: usize, (x, _): InArg<'_, T>, (y, _): InArg<'_, T>) -> Result<T> {
    Ok(dot_slices(n, input(&x), input(&y)))
}

/// `xᵀ·y` as a `1 × n` by `n × 1` product.
fn dot_slices<T: Scalar>(n: usize, x: &[T], y: &[T]) -> T {
    debug_assert!(x.len() == n && y.len() == n);
    let mut r = [T::from_f64(0.0)];
    // SAFETY: `x` and `y` hold `n` elements at unit stride; `r` is one local element.
    unsafe {
        product(
            [1, n, 1],
            T::from_f64(1.0),
            strided_in(x, (1, 1)),
            strided_in(y, (1, 1)),
            r[0],
            strided_out(&mut r, (1, 1)),
        )
    };
    r[0]
}

pub(super) fn nrm2<T: Scalar>(n: usize, (x, _): InArg<'_, T>) -> Result<T> {
    let x = input(&x);
    let ss = dot_slices(n, x, x).to_f64();
    // Squares can overflow, or underflow and lose precision: below this the plain sum of
    // squares is not trusted.
    let tiny = match T::KIND {
        Kind::F32 => f64::from(f32::MIN_POSITIVE / f32::EPSILON),
        Kind::F64 => f64::MIN_POSITIVE / f64::EPSILON,
    };
    if ss.is_finite() && ss >= tiny {
        return Ok(T::from_f64(ss.sqrt()));
    }
    // Scale by the largest magnitude first, as reference BLAS does.
    let scale = x.iter().map(|v| v.to_f64().abs()).fold(0.0f64, f64::max);
    if scale == 0.0 || !scale.is_finite() {
        return Ok(T::from_f64(scale));
    }
    let scaled: Vec<T> = x.iter().map(|v| T::from_f64(v.to_f64() / scale)).collect();
    Ok(T::from_f64(scale * dot_slices(n, &scaled, &scaled).to_f64().sqrt()))
}

pub(super) fn scal<T: Scalar>(n: usize, alpha: T, (mut x, _, _): OutArg<'_, T>) -> Result<()> {
    let x = output(&mut x);
    let none = std::ptr::NonNull::<T>::dangling().as_ptr().cast_const();
    // SAFETY: with k = 0 the product reads neither factor (dangling is fine) and sets
    // `x (n×1) = α·x`; `x` holds `n` elements.
    unsafe {
        product(
            [n, 0, 1],
            T::from_f64(0.0),
            Strided { ptr: none, rs: 1, cs: 1 },
            Strided { ptr: none, rs: 1, cs: 1 },
            alpha,
            strided_out(x, (1, 1)),
        )
    };
    Ok(())
}
