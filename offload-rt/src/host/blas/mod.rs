//! Vendor libraries: BLAS on the same data kernels use.
//!
//! `gemm`, `gemv`, `axpy`, `dot`, `nrm2` and `scal` for `f32` and `f64`, with arguments taken
//! the way kernel parameters take them: host slices (copied in, and back for the written
//! argument), [`DeviceBuffer`](crate::DeviceBuffer)s and preloads (used in place). The
//! backend follows the [`Device`]:
//!
//! | Device | Backend |
//! |---|---|
//! | NVIDIA GPU | cuBLAS (`libcublas.so.13`, else `.12`), loaded at run time |
//! | AMD GPU | rocBLAS (`librocblas.so`) and the HIP runtime, loaded at run time (**not yet run on AMD hardware**) |
//! | CPU backend | the [`matrixmultiply`](https://docs.rs/matrixmultiply) crate |
//!
//! ```
//! use offload::blas::{self, Gemm};
//!
//! fn main() -> offload::Result<()> {
//!     let dev = offload::Device::cpu();
//!     let (m, n, k) = (2, 2, 3);
//!     let a = [1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0]; // 2×3, row-major
//!     let b = [1.0f32, 0.0, 0.0, 1.0, 1.0, 1.0]; // 3×2, row-major
//!     let mut c = vec![0.0f32; m * n];
//!     blas::gemm(&dev, &Gemm::row_major(m, n, k), 1.0, &a, &b, 0.0, &mut c)?;
//!     assert_eq!(c, [4.0, 5.0, 10.0, 11.0]);
//!     Ok(())
//! }
//! ```
//!
//! # Matrix layout
//!
//! Each call states its layout: [`Layout::RowMajor`] (element `(i, j)` at `i·ld + j`, what
//! `a[i * cols + j]` indexing in Rust means) or [`Layout::ColMajor`] (at `i + j·ld`, Fortran
//! and BLAS order). Vendor BLAS libraries are column-major; a row-major call is passed to
//! them as the transposed problem (`Cᵀ = op(B)ᵀ·op(A)ᵀ`), which swaps the operands and the
//! dimensions but copies nothing. Leading dimensions default to the tight one (the number of
//! columns for row-major, of rows for column-major); a larger one may be set, for matrices
//! inside larger arrays.
//!
//! # Checks
//!
//! Every shape is checked before anything is copied or called: a wrong length is
//! [`BlasError::Shape`], naming the argument, its shape and the expected and actual element
//! counts; a leading dimension too small or a dimension over `i32::MAX` is
//! [`BlasError::InvalidArgument`]; a buffer of another device is [`BlasError::WrongDevice`];
//! a missing vendor library is [`BlasError::LibraryMissing`], saying what to install.
//!
//! # Ordering with kernels
//!
//! A BLAS call sees every kernel queued before it and its result is visible to every kernel
//! queued after it. liboffload 22 does not expose the native stream behind its queue, so a
//! GPU call waits for the device's queue (as [`Device::sync`] does), runs on the BLAS
//! library's own stream, and waits for that stream before returning. Each call is thus
//! synchronous: a queue synchronisation on each side, a few microseconds (the GEMM benchmark
//! measures it).

mod cpu;
mod cuda;
mod dispatch;
mod gpu;
mod rocm;
mod shape;
#[cfg(test)]
mod tests;

use super::args::{In, InOut};
use super::device::Device;
use super::error::{Error, Result};
pub(crate) use dispatch::{InArg, OutArg};
use dispatch::{check_in, check_out, in_len, out_len, run};

/// The element types BLAS routines take: `f32` and `f64`.
pub trait Scalar: super::args::KernelScalar + PartialOrd + std::fmt::Debug + sealed::Sealed {
    /// Which one it is, for the backends.
    #[doc(hidden)]
    const KIND: Kind;
    #[doc(hidden)]
    fn to_f64(self) -> f64;
    #[doc(hidden)]
    fn from_f64(x: f64) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// The element type behind a [`Scalar`].
#[doc(hidden)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    F32,
    F64,
}

impl Scalar for f32 {
    const KIND: Kind = Kind::F32;
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn from_f64(x: f64) -> Self {
        x as f32
    }
}

impl Scalar for f64 {
    const KIND: Kind = Kind::F64;
    fn to_f64(self) -> f64 {
        self
    }
    fn from_f64(x: f64) -> Self {
        x
    }
}

/// How a matrix is stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    /// Row after row: element `(i, j)` at `i·ld + j` (`ld` ≥ columns).
    RowMajor,
    /// Column after column: element `(i, j)` at `i + j·ld` (`ld` ≥ rows).
    ColMajor,
}

/// Whether an operand is used as stored or transposed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// As stored.
    N,
    /// Transposed.
    T,
}

impl Op {
    fn flip(self) -> Op {
        match self {
            Op::N => Op::T,
            Op::T => Op::N,
        }
    }
}

/// The shape of a matrix product `C = α·op(A)·op(B) + β·C`, with `op(A)` `m × k`, `op(B)`
/// `k × n` and `C` `m × n`, all in one [`Layout`]. Built with [`Gemm::row_major`] or
/// [`Gemm::col_major`], then refined:
///
/// ```
/// # use offload::blas::{Gemm, Op};
/// // C (64×32) = A (64×16) · Bᵀ, where B is stored 32×16, row-major.
/// let g = Gemm::row_major(64, 32, 16).transpose_b();
/// assert_eq!(g.trans_b, Op::T);
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gemm {
    /// How `A`, `B` and `C` are stored.
    pub layout: Layout,
    /// `op(A)`.
    pub trans_a: Op,
    /// `op(B)`.
    pub trans_b: Op,
    /// Rows of `op(A)` and `C`.
    pub m: usize,
    /// Columns of `op(B)` and `C`.
    pub n: usize,
    /// Columns of `op(A)`, rows of `op(B)`.
    pub k: usize,
    /// Leading dimension of `A` as stored; `None`: tight.
    pub lda: Option<usize>,
    /// Leading dimension of `B` as stored; `None`: tight.
    pub ldb: Option<usize>,
    /// Leading dimension of `C`; `None`: tight.
    pub ldc: Option<usize>,
}

impl Gemm {
    /// `C (m×n) = α·A (m×k)·B (k×n) + β·C`, every matrix row-major.
    pub fn row_major(m: usize, n: usize, k: usize) -> Gemm {
        Gemm {
            layout: Layout::RowMajor,
            trans_a: Op::N,
            trans_b: Op::N,
            m,
            n,
            k,
            lda: None,
            ldb: None,
            ldc: None,
        }
    }

    /// `C (m×n) = α·A (m×k)·B (k×n) + β·C`, every matrix column-major.
    pub fn col_major(m: usize, n: usize, k: usize) -> Gemm {
        Gemm { layout: Layout::ColMajor, ..Gemm::row_major(m, n, k) }
    }

    /// Uses `Aᵀ`: `A` is stored `k × m`.
    pub fn transpose_a(self) -> Gemm {
        Gemm { trans_a: self.trans_a.flip(), ..self }
    }

    /// Uses `Bᵀ`: `B` is stored `n × k`.
    pub fn transpose_b(self) -> Gemm {
        Gemm { trans_b: self.trans_b.flip(), ..self }
    }

    /// Sets `A`'s leading dimension (the slice may then be longer than the matrix).
    pub fn lda(self, lda: usize) -> Gemm {
        Gemm { lda: Some(lda), ..self }
    }

    /// Sets `B`'s leading dimension.
    pub fn ldb(self, ldb: usize) -> Gemm {
        Gemm { ldb: Some(ldb), ..self }
    }

    /// Sets `C`'s leading dimension.
    pub fn ldc(self, ldc: usize) -> Gemm {
        Gemm { ldc: Some(ldc), ..self }
    }
}

/// The shape of a matrix-vector product `y = α·op(A)·x + β·y`, with `A` stored `m × n`:
/// `x` has `n` elements and `y` `m` (`op = N`), or `x` `m` and `y` `n` (`op = T`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Gemv {
    /// How `A` is stored.
    pub layout: Layout,
    /// `op(A)`.
    pub trans: Op,
    /// Rows of `A` as stored.
    pub m: usize,
    /// Columns of `A` as stored.
    pub n: usize,
    /// Leading dimension of `A`; `None`: tight.
    pub lda: Option<usize>,
}

impl Gemv {
    /// `y (m) = α·A (m×n, row-major)·x (n) + β·y`.
    pub fn row_major(m: usize, n: usize) -> Gemv {
        Gemv { layout: Layout::RowMajor, trans: Op::N, m, n, lda: None }
    }

    /// `y (m) = α·A (m×n, column-major)·x (n) + β·y`.
    pub fn col_major(m: usize, n: usize) -> Gemv {
        Gemv { layout: Layout::ColMajor, ..Gemv::row_major(m, n) }
    }

    /// Uses `Aᵀ`: `y (n) = α·Aᵀ·x (m) + β·y`.
    pub fn transpose(self) -> Gemv {
        Gemv { trans: self.trans.flip(), ..self }
    }

    /// Sets `A`'s leading dimension.
    pub fn lda(self, lda: usize) -> Gemv {
        Gemv { lda: Some(lda), ..self }
    }
}

/// What went wrong in a BLAS call (inside [`Error::Blas`]).
#[derive(Clone, Debug, thiserror::Error)]
#[non_exhaustive]
pub enum BlasError {
    /// The vendor library (or the runtime it needs) could not be loaded.
    #[error("{library} could not be loaded: {reason}\n  hint: {hint}")]
    LibraryMissing {
        /// The library, e.g. `libcublas.so.13`.
        library: &'static str,
        /// Where it was looked for and what failed.
        reason: String,
        /// What to install.
        hint: &'static str,
    },
    /// An argument's length does not fit the shape.
    #[error(
        "{routine}: argument `{argument}` ({shape}) needs {}{expected} elements, got {actual}",
        if *.at_least { "at least " } else { "" }
    )]
    Shape {
        /// `blas::gemm`, …
        routine: &'static str,
        /// The argument's name (`a`, `b`, `c`, `x`, `y`).
        argument: &'static str,
        /// Its shape as the call describes it, e.g. `row-major 64×32`.
        shape: String,
        /// The elements the shape needs.
        expected: usize,
        /// The elements passed.
        actual: usize,
        /// Whether more than `expected` is accepted (an explicit leading dimension).
        at_least: bool,
    },
    /// A leading dimension too small, or a dimension the library cannot take.
    #[error("{routine}: {reason}")]
    InvalidArgument {
        /// `blas::gemm`, …
        routine: &'static str,
        /// What is wrong.
        reason: String,
    },
    /// A device buffer of another device.
    #[error(
        "{routine}: argument `{argument}` lives on {buffer}, but the call is on {device}\n  hint: call on the Device (or a clone of it) that created the buffer"
    )]
    WrongDevice {
        /// `blas::gemm`, …
        routine: &'static str,
        /// The argument's name.
        argument: &'static str,
        /// The buffer's device.
        buffer: String,
        /// The call's device.
        device: String,
    },
    /// The vendor library reported a failure.
    #[error("{routine}: {call} failed: {status}")]
    Failed {
        /// `blas::gemm`, …
        routine: &'static str,
        /// The library function, e.g. `cublasSgemm_v2`.
        call: &'static str,
        /// The status the library returned, with its name.
        status: String,
    },
}

impl From<BlasError> for Error {
    fn from(e: BlasError) -> Error {
        Error::Blas(e)
    }
}

/// `C = α·op(A)·op(B) + β·C` (see [`Gemm`] for the shapes and layout). `a` and `b` take what
/// a `&[T]` kernel parameter takes, `c` what a `Region<T>` takes. With `beta == 0`, `c` is
/// not read (NaNs in it do not propagate), and a host `c` is not copied in.
pub fn gemm<'a, T: Scalar>(
    device: &Device,
    shape: &Gemm,
    alpha: T,
    a: impl In<'a, T>,
    b: impl In<'a, T>,
    beta: T,
    c: impl InOut<'a, T>,
) -> Result<()> {
    const ROUTINE: &str = "blas::gemm";
    let (a, b, c) = (a.in_data(), b.in_data(), c.out_data());
    let call = shape::plan_gemm(ROUTINE, shape, [in_len(&a), in_len(&b), out_len(&c)])?;
    check_in(device, ROUTINE, [(&a, "a"), (&b, "b")])?;
    check_out(device, ROUTINE, (&c, "c"))?;
    if shape.m == 0 || shape.n == 0 {
        return Ok(());
    }
    let reads_c = beta != T::from_f64(0.0);
    let label = || format!("gemm {}×{}×{}", shape.m, shape.n, shape.k);
    run(device, ROUTINE, label, |backend| {
        backend.gemm(shape, &call, alpha, (a, "a"), (b, "b"), beta, (c, "c", reads_c))
    })
}

/// `y = α·op(A)·x + β·y` (see [`Gemv`] for the shapes and layout). With `beta == 0`, `y` is
/// not read.
pub fn gemv<'a, T: Scalar>(
    device: &Device,
    shape: &Gemv,
    alpha: T,
    a: impl In<'a, T>,
    x: impl In<'a, T>,
    beta: T,
    y: impl InOut<'a, T>,
) -> Result<()> {
    const ROUTINE: &str = "blas::gemv";
    let (a, x, y) = (a.in_data(), x.in_data(), y.out_data());
    let call = shape::plan_gemv(ROUTINE, shape, [in_len(&a), in_len(&x), out_len(&y)])?;
    check_in(device, ROUTINE, [(&a, "a"), (&x, "x")])?;
    check_out(device, ROUTINE, (&y, "y"))?;
    if out_len(&y) == 0 {
        return Ok(());
    }
    let reads_y = beta != T::from_f64(0.0);
    let label = || format!("gemv {}×{}", shape.m, shape.n);
    run(device, ROUTINE, label, |backend| {
        backend.gemv(shape, &call, alpha, (a, "a"), (x, "x"), beta, (y, "y", reads_y))
    })
}

/// `y = α·x + y`; `x` and `y` have the same length.
pub fn axpy<'a, T: Scalar>(device: &Device, alpha: T, x: impl In<'a, T>, y: impl InOut<'a, T>) -> Result<()> {
    const ROUTINE: &str = "blas::axpy";
    let (x, y) = (x.in_data(), y.out_data());
    let n = shape::same_length(ROUTINE, ("x", in_len(&x)), ("y", out_len(&y)))?;
    check_in(device, ROUTINE, [(&x, "x")])?;
    check_out(device, ROUTINE, (&y, "y"))?;
    if n == 0 {
        return Ok(());
    }
    run(device, ROUTINE, || format!("axpy {n}"), |backend| backend.axpy(n, alpha, (x, "x"), (y, "y", true)))
}

/// `x · y`; `x` and `y` have the same length.
pub fn dot<'a, T: Scalar>(device: &Device, x: impl In<'a, T>, y: impl In<'a, T>) -> Result<T> {
    const ROUTINE: &str = "blas::dot";
    let (x, y) = (x.in_data(), y.in_data());
    let n = shape::same_length(ROUTINE, ("x", in_len(&x)), ("y", in_len(&y)))?;
    check_in(device, ROUTINE, [(&x, "x"), (&y, "y")])?;
    if n == 0 {
        return Ok(T::from_f64(0.0));
    }
    run(device, ROUTINE, || format!("dot {n}"), |backend| backend.dot(n, (x, "x"), (y, "y")))
}

/// The Euclidean norm `‖x‖₂`, without overflow or underflow in the squares.
pub fn nrm2<'a, T: Scalar>(device: &Device, x: impl In<'a, T>) -> Result<T> {
    const ROUTINE: &str = "blas::nrm2";
    let x = x.in_data();
    let n = shape::length(ROUTINE, "x", in_len(&x))?;
    check_in(device, ROUTINE, [(&x, "x")])?;
    if n == 0 {
        return Ok(T::from_f64(0.0));
    }
    run(device, ROUTINE, || format!("nrm2 {n}"), |backend| backend.nrm2(n, (x, "x")))
}

/// `x = α·x`.
pub fn scal<'a, T: Scalar>(device: &Device, alpha: T, x: impl InOut<'a, T>) -> Result<()> {
    const ROUTINE: &str = "blas::scal";
    let x = x.out_data();
    let n = shape::length(ROUTINE, "x", out_len(&x))?;
    check_out(device, ROUTINE, (&x, "x"))?;
    if n == 0 {
        return Ok(());
    }
    run(device, ROUTINE, || format!("scal {n}"), |backend| backend.scal(n, alpha, (x, "x", true)))
}

/// Which library BLAS calls on `device` use, and where it was loaded from, e.g.
/// `cuBLAS (libcublas.so.13)`; loading it if needed, so that a missing library is reported
/// here ([`BlasError::LibraryMissing`]) rather than at the first call.
pub fn library(device: &Device) -> Result<String> {
    match device.backend().gpu() {
        None => Ok("matrixmultiply (CPU backend)".to_owned()),
        Some(g) => Ok(gpu::Gpu::new(device, g, "blas::library")?.library()),
    }
}
