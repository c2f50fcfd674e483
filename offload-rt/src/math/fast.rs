//! Opt-in fast `f32` math: the GPUs' approximate instructions, for kernels that trade the last
//! bits of accuracy for speed (n-body forces, ray marching, activations). Nothing else in
//! [`math`](super) changes: `math::sqrt(x)` stays correctly rounded; `fast::rsqrt(x)` is
//! one approximate instruction.
//!
//! ```
//! use offload::math::fast;
//! let r = fast::rsqrt(4.0);
//! assert!((r - 0.5).abs() <= 0.5 * fast::RSQRT_REL_ERROR);
//! ```
//!
//! | Function | NVIDIA | AMD | Bound, where |
//! |---|---|---|---|
//! | [`rsqrt(x)`](rsqrt) | `rsqrt.approx.f32` | `v_rsq_f32` | relative [`RSQRT_REL_ERROR`] (2⁻²²), `x` positive and normal |
//! | [`recip(x)`](recip) | `rcp.approx.f32` | `v_rcp_f32` | relative [`RECIP_REL_ERROR`] (2⁻²²), 2⁻¹²⁶ ≤ \|x\| ≤ 2¹²⁶ |
//! | [`div(a, b)`](div) | `div.approx.f32` | `a · v_rcp_f32(b)` | relative [`DIV_REL_ERROR`] (2⁻²¹), 2⁻¹²⁶ ≤ \|b\| ≤ 2¹²⁶ and a normal quotient |
//! | [`exp2(x)`](exp2) | `ex2.approx.f32` | `v_exp_f32` | relative [`EXP2_REL_ERROR`] (2⁻²¹), −126 ≤ x ≤ 127 |
//! | [`exp(x)`](exp) | `ex2.approx.f32` of `x·log₂e` | `v_exp_f32` of `x·log₂e` | relative 2⁻²¹ + \|x\|·2⁻²³ ([`exp_rel_error`]), −87 ≤ x ≤ 88 |
//! | [`log2(x)`](log2) | `lg2.approx.f32` | `v_log_f32` | absolute 2⁻²¹·max(1, \|log₂x\|) ([`log2_abs_error`]), `x` positive and normal |
//! | [`ln(x)`](ln) | `lg2.approx.f32` · ln 2 | `v_log_f32` · ln 2 | absolute 2⁻²⁰·max(1, \|ln x\|) ([`ln_abs_error`]), `x` positive and normal |
//! | [`sin(x)`](sin), [`cos(x)`](cos) | `sin.approx.f32`, `cos.approx.f32` | `v_sin_f32`, `v_cos_f32` of `x/2π` | absolute [`SINCOS_ABS_ERROR`] (2⁻²⁰), \|x\| ≤ π |
//!
//! Errors are against the exact result. The bounds hold on the CPU backend (each function is
//! evaluated in `f64` and rounded once) and were measured on an H200 over millions of
//! arguments by `tests/tests/fast_math.rs`, which asserts them on every backend it runs on
//! (the measured maxima are in `results/README.md`). AMD's instructions are built into code
//! objects and checked there, not run: there is no AMD GPU to measure them on.
//!
//! Outside the stated domains the functions still return a value, without a bound: `sin` and
//! `cos` lose accuracy as `|x|` grows past π (the hardware's argument reduction is short), and
//! results in the subnormal range may be flushed to zero. Use `math::sin` and friends there.

use crate::arch::fast as hw;

/// Bound on [`rsqrt`]'s relative error: 2⁻²².
pub const RSQRT_REL_ERROR: f32 = 1.0 / (1u32 << 22) as f32;
/// Bound on [`recip`]'s relative error: 2⁻²².
pub const RECIP_REL_ERROR: f32 = 1.0 / (1u32 << 22) as f32;
/// Bound on [`div`]'s relative error: 2⁻²¹.
pub const DIV_REL_ERROR: f32 = 1.0 / (1u32 << 21) as f32;
/// Bound on [`exp2`]'s relative error: 2⁻²¹.
pub const EXP2_REL_ERROR: f32 = 1.0 / (1u32 << 21) as f32;
/// Bound on [`sin`]'s and [`cos`]'s absolute error for `|x| ≤ π`: 2⁻²⁰.
pub const SINCOS_ABS_ERROR: f32 = 1.0 / (1u32 << 20) as f32;

/// Bound on [`exp`]'s relative error at `x`: 2⁻²¹ + |x|·2⁻²³ (the rounding of `x·log₂e` is
/// magnified by the exponential).
#[inline(always)]
pub fn exp_rel_error(x: f32) -> f32 {
    EXP2_REL_ERROR + x.abs() / (1u32 << 23) as f32
}

/// Bound on [`log2`]'s absolute error at `x`: 2⁻²¹·max(1, |log₂x|) (absolute near 1, where the
/// result is near zero; relative elsewhere).
#[inline(always)]
pub fn log2_abs_error(x: f32) -> f32 {
    let magnitude = super::abs(super::log2(x));
    (1.0 / (1u32 << 21) as f32) * if magnitude > 1.0 { magnitude } else { 1.0 }
}

/// Bound on [`ln`]'s absolute error at `x`: 2⁻²⁰·max(1, |ln x|).
#[inline(always)]
pub fn ln_abs_error(x: f32) -> f32 {
    let magnitude = super::abs(super::ln(x));
    (1.0 / (1u32 << 20) as f32) * if magnitude > 1.0 { magnitude } else { 1.0 }
}

/// `1 / √x`, approximately (CUDA's `rsqrtf`). `rsqrt(0.0)` is `+∞`; negative `x` gives NaN.
#[inline(always)]
pub fn rsqrt(x: f32) -> f32 {
    hw::rsqrt(x)
}

/// `1 / x`, approximately (CUDA's `__frcp_rn` without the rounding guarantee).
#[inline(always)]
pub fn recip(x: f32) -> f32 {
    hw::recip(x)
}

/// `a / b`, approximately (CUDA's `__fdividef`).
#[inline(always)]
pub fn div(a: f32, b: f32) -> f32 {
    hw::div(a, b)
}

/// `2^x`, approximately (CUDA's `exp2f` under `-use_fast_math`).
#[inline(always)]
pub fn exp2(x: f32) -> f32 {
    hw::exp2(x)
}

/// `eˣ`, approximately (CUDA's `__expf`).
#[inline(always)]
pub fn exp(x: f32) -> f32 {
    hw::exp2(x * core::f32::consts::LOG2_E)
}

/// `log₂x`, approximately (CUDA's `__log2f`).
#[inline(always)]
pub fn log2(x: f32) -> f32 {
    hw::log2(x)
}

/// `ln x`, approximately (CUDA's `__logf`).
#[inline(always)]
pub fn ln(x: f32) -> f32 {
    hw::log2(x) * core::f32::consts::LN_2
}

/// `sin x` (radians), approximately (CUDA's `__sinf`); bounded for `|x| ≤ π`.
#[inline(always)]
pub fn sin(x: f32) -> f32 {
    hw::sin(x)
}

/// `cos x` (radians), approximately (CUDA's `__cosf`); bounded for `|x| ≤ π`.
#[inline(always)]
pub fn cos(x: f32) -> f32 {
    hw::cos(x)
}

#[cfg(all(test, not(offload_gpu)))]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_backend_is_within_the_bounds() {
        // A few hundred thousand arguments per function; tests/tests/fast_math.rs sweeps more,
        // through kernels, on every backend.
        let mut x = f32::MIN_POSITIVE;
        while x < 1e30 {
            let want = 1.0 / f64::from(x).sqrt();
            assert!(((f64::from(rsqrt(x)) - want) / want).abs() <= f64::from(RSQRT_REL_ERROR), "rsqrt({x})");
            let want = 1.0 / f64::from(x);
            if x <= 2f32.powi(126) {
                assert!(
                    ((f64::from(recip(x)) - want) / want).abs() <= f64::from(RECIP_REL_ERROR),
                    "recip({x})"
                );
            }
            let l = f64::from(x).log2();
            assert!((f64::from(log2(x)) - l).abs() <= f64::from(log2_abs_error(x)), "log2({x})");
            x *= 1.0001;
        }
        let mut x = -87.0f32;
        while x <= 88.0 {
            let want = f64::from(x).exp();
            assert!(((f64::from(exp(x)) - want) / want).abs() <= f64::from(exp_rel_error(x)), "exp({x})");
            if x.abs() <= core::f32::consts::PI {
                assert!((f64::from(sin(x)) - f64::from(x).sin()).abs() <= f64::from(SINCOS_ABS_ERROR));
                assert!((f64::from(cos(x)) - f64::from(x).cos()).abs() <= f64::from(SINCOS_ABS_ERROR));
            }
            x += 0.001;
        }
        assert_eq!(rsqrt(0.0), f32::INFINITY);
        assert!(rsqrt(-1.0).is_nan());
        assert_eq!(div(1.0, 4.0), 0.25);
    }
}
