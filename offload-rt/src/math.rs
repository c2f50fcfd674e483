//! Math for kernels, the same on NVIDIA, AMD and the CPU backend.
//!
//! Kernels modules are `no_std`, where `f64::sqrt` and friends do not exist, so kernels call
//! these free functions (`math::sqrt(x)`). Operations the GPUs have in hardware (square root,
//! fused multiply-add, rounding, absolute value, min/max) lower to single instructions;
//! `exp` is our own division-free routine (fused multiply-adds only, within 1 ulp of libm);
//! the other transcendental functions come from the `libm` crate. Either way every backend
//! runs the same operations and computes the same bits.
//!
//! Rust never contracts `a * b + c` into a fused multiply-add (CUDA C++ does): write
//! [`fma`] where that is wanted.
//!
//! [`fast`] holds the opt-in approximate `f32` functions (reciprocal square root, division,
//! exponentials, logarithms, sine and cosine as single GPU instructions) with their error
//! bounds.

use core::intrinsics;

mod exp;
pub mod fast;

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// `f32` or `f64`.
pub trait Float:
    sealed::Sealed + Copy + PartialOrd + core::ops::Add<Output = Self> + core::ops::Mul<Output = Self>
{
    #[doc(hidden)]
    fn sqrt_(self) -> Self;
    #[doc(hidden)]
    fn fma_(self, b: Self, c: Self) -> Self;
    #[doc(hidden)]
    fn floor_(self) -> Self;
    #[doc(hidden)]
    fn ceil_(self) -> Self;
    #[doc(hidden)]
    fn trunc_(self) -> Self;
    #[doc(hidden)]
    fn round_(self) -> Self;
    #[doc(hidden)]
    fn abs_(self) -> Self;
    #[doc(hidden)]
    fn copysign_(self, sign: Self) -> Self;
    #[doc(hidden)]
    fn exp_(self) -> Self;
    #[doc(hidden)]
    fn exp2_(self) -> Self;
    #[doc(hidden)]
    fn ln_(self) -> Self;
    #[doc(hidden)]
    fn log2_(self) -> Self;
    #[doc(hidden)]
    fn log10_(self) -> Self;
    #[doc(hidden)]
    fn pow_(self, e: Self) -> Self;
    #[doc(hidden)]
    fn sin_(self) -> Self;
    #[doc(hidden)]
    fn cos_(self) -> Self;
    #[doc(hidden)]
    fn tan_(self) -> Self;
    #[doc(hidden)]
    fn asin_(self) -> Self;
    #[doc(hidden)]
    fn acos_(self) -> Self;
    #[doc(hidden)]
    fn atan_(self) -> Self;
    #[doc(hidden)]
    fn atan2_(self, x: Self) -> Self;
    #[doc(hidden)]
    fn sinh_(self) -> Self;
    #[doc(hidden)]
    fn cosh_(self) -> Self;
    #[doc(hidden)]
    fn tanh_(self) -> Self;
    #[doc(hidden)]
    fn cbrt_(self) -> Self;
    #[doc(hidden)]
    fn hypot_(self, y: Self) -> Self;
}

macro_rules! float_impl {
    ($t:ty, $sqrt:ident, $fma:ident, $floor:ident, $ceil:ident, $trunc:ident, $round:ident,
     $copysign:ident, $exp:ident, $exp2:ident, $ln:ident, $log2:ident, $log10:ident, $pow:ident,
     $sin:ident, $cos:ident, $tan:ident, $asin:ident, $acos:ident, $atan:ident, $atan2:ident,
     $sinh:ident, $cosh:ident, $tanh:ident, $cbrt:ident, $hypot:ident) => {
        impl Float for $t {
            #[inline(always)]
            fn sqrt_(self) -> Self {
                intrinsics::$sqrt(self)
            }
            #[inline(always)]
            fn fma_(self, b: Self, c: Self) -> Self {
                intrinsics::$fma(self, b, c)
            }
            #[inline(always)]
            fn floor_(self) -> Self {
                intrinsics::$floor(self)
            }
            #[inline(always)]
            fn ceil_(self) -> Self {
                intrinsics::$ceil(self)
            }
            #[inline(always)]
            fn trunc_(self) -> Self {
                intrinsics::$trunc(self)
            }
            #[inline(always)]
            fn round_(self) -> Self {
                intrinsics::$round(self)
            }
            #[inline(always)]
            fn abs_(self) -> Self {
                self.abs()
            }
            #[inline(always)]
            fn copysign_(self, sign: Self) -> Self {
                libm::$copysign(self, sign)
            }
            #[inline(always)]
            fn exp_(self) -> Self {
                exp::$exp(self)
            }
            #[inline(always)]
            fn exp2_(self) -> Self {
                libm::$exp2(self)
            }
            #[inline(always)]
            fn ln_(self) -> Self {
                libm::$ln(self)
            }
            #[inline(always)]
            fn log2_(self) -> Self {
                libm::$log2(self)
            }
            #[inline(always)]
            fn log10_(self) -> Self {
                libm::$log10(self)
            }
            #[inline(always)]
            fn pow_(self, e: Self) -> Self {
                libm::$pow(self, e)
            }
            #[inline(always)]
            fn sin_(self) -> Self {
                libm::$sin(self)
            }
            #[inline(always)]
            fn cos_(self) -> Self {
                libm::$cos(self)
            }
            #[inline(always)]
            fn tan_(self) -> Self {
                libm::$tan(self)
            }
            #[inline(always)]
            fn asin_(self) -> Self {
                libm::$asin(self)
            }
            #[inline(always)]
            fn acos_(self) -> Self {
                libm::$acos(self)
            }
            #[inline(always)]
            fn atan_(self) -> Self {
                libm::$atan(self)
            }
            #[inline(always)]
            fn atan2_(self, x: Self) -> Self {
                libm::$atan2(self, x)
            }
            #[inline(always)]
            fn sinh_(self) -> Self {
                libm::$sinh(self)
            }
            #[inline(always)]
            fn cosh_(self) -> Self {
                libm::$cosh(self)
            }
            #[inline(always)]
            fn tanh_(self) -> Self {
                libm::$tanh(self)
            }
            #[inline(always)]
            fn cbrt_(self) -> Self {
                libm::$cbrt(self)
            }
            #[inline(always)]
            fn hypot_(self, y: Self) -> Self {
                libm::$hypot(self, y)
            }
        }
    };
}

float_impl!(
    f32, sqrtf32, fmaf32, floorf32, ceilf32, truncf32, roundf32, copysignf, exp_f32, exp2f, logf, log2f,
    log10f, powf, sinf, cosf, tanf, asinf, acosf, atanf, atan2f, sinhf, coshf, tanhf, cbrtf, hypotf
);
float_impl!(
    f64, sqrtf64, fmaf64, floorf64, ceilf64, truncf64, roundf64, copysign, exp_f64, exp2, log, log2, log10,
    pow, sin, cos, tan, asin, acos, atan, atan2, sinh, cosh, tanh, cbrt, hypot
);

macro_rules! unary {
    ($($(#[$doc:meta])* $name:ident => $method:ident;)*) => {$(
        $(#[$doc])*
        #[inline(always)]
        pub fn $name<F: Float>(x: F) -> F {
            x.$method()
        }
    )*};
}

unary! {
    /// Square root (correctly rounded; one instruction on GPUs).
    sqrt => sqrt_;
    /// Largest integer not above `x`.
    floor => floor_;
    /// Smallest integer not below `x`.
    ceil => ceil_;
    /// `x` with its fraction dropped.
    trunc => trunc_;
    /// Nearest integer, halves away from zero.
    round => round_;
    /// Absolute value.
    abs => abs_;
    /// `e^x`, within 1 ulp of the correctly rounded result (fused multiply-adds only, no
    /// division: cheap on GPUs).
    exp => exp_;
    /// `2^x`.
    exp2 => exp2_;
    /// Natural logarithm.
    ln => ln_;
    /// Base-2 logarithm.
    log2 => log2_;
    /// Base-10 logarithm.
    log10 => log10_;
    /// Sine (radians).
    sin => sin_;
    /// Cosine (radians).
    cos => cos_;
    /// Tangent (radians).
    tan => tan_;
    /// Arcsine.
    asin => asin_;
    /// Arccosine.
    acos => acos_;
    /// Arctangent.
    atan => atan_;
    /// Hyperbolic sine.
    sinh => sinh_;
    /// Hyperbolic cosine.
    cosh => cosh_;
    /// Hyperbolic tangent.
    tanh => tanh_;
    /// Cube root.
    cbrt => cbrt_;
}

/// `a * b + c` with one rounding (a fused multiply-add instruction on GPUs).
#[inline(always)]
pub fn fma<F: Float>(a: F, b: F, c: F) -> F {
    a.fma_(b, c)
}

/// `x^e`.
#[inline(always)]
pub fn pow<F: Float>(x: F, e: F) -> F {
    x.pow_(e)
}

/// Angle of the point `(x, y)`, in `(-π, π]`.
#[inline(always)]
pub fn atan2<F: Float>(y: F, x: F) -> F {
    y.atan2_(x)
}

/// `sqrt(x² + y²)` without undue overflow.
#[inline(always)]
pub fn hypot<F: Float>(x: F, y: F) -> F {
    x.hypot_(y)
}

/// Magnitude of `x` with the sign of `sign`.
#[inline(always)]
pub fn copysign<F: Float>(x: F, sign: F) -> F {
    x.copysign_(sign)
}

/// The smaller of two values (NaN-ignoring, like `f64::min`).
#[inline(always)]
#[expect(clippy::eq_op, reason = "`a != a` is the NaN test that works for every Float")]
pub fn min<F: Float>(a: F, b: F) -> F {
    if b < a || a != a { b } else { a }
}

/// The larger of two values (NaN-ignoring, like `f64::max`).
#[inline(always)]
#[expect(clippy::eq_op, reason = "`a != a` is the NaN test that works for every Float")]
pub fn max<F: Float>(a: F, b: F) -> F {
    if b > a || a != a { b } else { a }
}

#[cfg(all(test, not(offload_gpu)))]
mod tests {
    use super::*;

    #[test]
    fn agrees_with_std() {
        for x in [0.0f64, 0.5, 1.0, 2.0, 10.0, 1e-3, 123.456] {
            assert_eq!(sqrt(x), x.sqrt());
            assert_eq!(fma(x, 3.0, -1.0), x.mul_add(3.0, -1.0));
            assert_eq!(floor(x + 0.5), (x + 0.5).floor());
            assert!((exp(x / 10.0) - (x / 10.0).exp()).abs() <= 1e-15 * (x / 10.0).exp());
            assert!((sin(x) - x.sin()).abs() <= 1e-15);
            assert!((pow(x, 1.5) - x.powf(1.5)).abs() <= 1e-12 * x.powf(1.5).max(1.0));
        }
        assert_eq!(sqrt(2.0f32), 2.0f32.sqrt());
        assert_eq!(abs(-3.5f32), 3.5);
        assert_eq!(min(1.0, f64::NAN), 1.0);
        assert_eq!(max(f64::NAN, 2.0), 2.0);
        assert_eq!(min(-0.5f32, 0.25), -0.5);
    }
}
