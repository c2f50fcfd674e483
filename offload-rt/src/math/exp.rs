//! `e^x` built from fused multiply-adds only: argument reduction by `ln 2` and a polynomial,
//! no division and no table. The same operations run on every backend, so the bits agree;
//! on GPUs it is several times cheaper than a division-based routine (libm's), and it stays
//! within one unit in the last place of libm's result.

use core::intrinsics::{fmaf32, fmaf64};

/// `1/k!` for k = 13 down to 2 (Taylor coefficients; with |r| ≤ ln2/2 the first omitted term
/// is below 2^-60 relative).
const F64_TAYLOR: [f64; 12] = [
    1.6059043836821613e-10,
    2.08767569878681e-09,
    2.505210838544172e-08,
    2.755731922398589e-07,
    2.7557319223985893e-06,
    2.48015873015873e-05,
    0.0001984126984126984,
    0.001388888888888889,
    0.008333333333333333,
    0.041666666666666664,
    0.16666666666666666,
    0.5,
];

/// `ln 2` in two parts: the high part has trailing zero bits, so `n · LN2_HI` is exact.
const LN2_HI: f64 = 0.6931471803691238;
const LN2_LO: f64 = 1.9082149292705877e-10;
/// Adding then subtracting 1.5 · 2^52 rounds to the nearest integer.
const ROUND: f64 = 6755399441055744.0;

/// `2^n` as an `f64`, for `-1022 <= n <= 1023`.
#[inline(always)]
fn pow2_f64(n: i32) -> f64 {
    f64::from_bits(((n + 1023) as u64) << 52)
}

/// `e^r · 2^n` for the reduced argument: the part every input goes through.
#[inline(always)]
fn exp_f64_reduced(x: f64) -> (f64, i32) {
    let n = fmaf64(x, core::f64::consts::LOG2_E, ROUND) - ROUND;
    let r = fmaf64(-n, LN2_LO, fmaf64(-n, LN2_HI, x));
    let mut p = F64_TAYLOR[0];
    for c in &F64_TAYLOR[1..] {
        p = fmaf64(p, r, *c);
    }
    p = fmaf64(p, r, 1.0);
    (fmaf64(p, r, 1.0), n as i32)
}

#[inline(always)]
pub(crate) fn exp_f64(x: f64) -> f64 {
    // The polynomial once, for every input (for NaN and huge |x| its value is unused): the
    // rare path below reuses it, so a kernel carries one copy of it, not two.
    let (p, n) = exp_f64_reduced(x);
    // One test on the common path: for |x| < 708 the scale 2^n is a normal number.
    if x.abs() < 708.0 {
        return p * pow2_f64(n);
    }
    exp_f64_edges(x, p, n)
}

/// NaN, infinities, overflow, and results near the limits or subnormal; `(p, n)` is
/// `exp_f64_reduced(x)`.
#[cold]
fn exp_f64_edges(x: f64, p: f64, n: i32) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x > 709.782712893384 {
        return f64::INFINITY;
    }
    if x < -745.1332191019412 {
        return 0.0;
    }
    if (-1022..=1023).contains(&n) {
        p * pow2_f64(n)
    } else {
        // Results near overflow or in the subnormal range: scale in two steps.
        let half = n / 2;
        p * pow2_f64(half) * pow2_f64(n - half)
    }
}

/// `1/k!` for k = 7 down to 2.
const F32_TAYLOR: [f32; 6] = [1.0 / 5040.0, 1.0 / 720.0, 1.0 / 120.0, 1.0 / 24.0, 1.0 / 6.0, 0.5];
const LN2_HI_F32: f32 = 0.693_145_75; // 0x3f317200: trailing zero bits
const LN2_LO_F32: f32 = 1.428_606_8e-6;
const ROUND_F32: f32 = 12_582_912.0; // 1.5 · 2^23

#[inline(always)]
fn pow2_f32(n: i32) -> f32 {
    f32::from_bits(((n + 127) as u32) << 23)
}

#[inline(always)]
pub(crate) fn exp_f32(x: f32) -> f32 {
    if x.is_nan() {
        return x;
    }
    if x > 88.722_84 {
        return f32::INFINITY;
    }
    if x < -103.972_08 {
        return 0.0;
    }
    let n = fmaf32(x, core::f32::consts::LOG2_E, ROUND_F32) - ROUND_F32;
    let r = fmaf32(-n, LN2_LO_F32, fmaf32(-n, LN2_HI_F32, x));
    let mut p = F32_TAYLOR[0];
    for c in &F32_TAYLOR[1..] {
        p = fmaf32(p, r, *c);
    }
    p = fmaf32(p, r, 1.0);
    p = fmaf32(p, r, 1.0);
    let n = n as i32;
    if (-126..=127).contains(&n) {
        p * pow2_f32(n)
    } else {
        let half = n / 2;
        p * pow2_f32(half) * pow2_f32(n - half)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units in the last place between two values of one sign.
    fn ulps64(a: f64, b: f64) -> u64 {
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    fn ulps32(a: f32, b: f32) -> u32 {
        (a.to_bits() as i32 - b.to_bits() as i32).unsigned_abs()
    }

    /// A deterministic spread of `n` inputs over `[lo, hi]`.
    fn samples(lo: f64, hi: f64, n: u64) -> impl Iterator<Item = f64> {
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        (0..n).map(move |_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            lo + (hi - lo) * ((s >> 11) as f64 / (1u64 << 53) as f64)
        })
    }

    #[test]
    fn f64_is_within_one_ulp_of_libm() {
        let mut worst = 0;
        for x in samples(-745.0, 709.7, 2_000_000).chain(samples(-1.0, 1.0, 500_000)) {
            let (got, want) = (exp_f64(x), libm::exp(x));
            if want >= f64::MIN_POSITIVE {
                worst = worst.max(ulps64(got, want));
            }
        }
        assert!(worst <= 1, "worst difference from libm: {worst} ulp");
    }

    #[test]
    fn f32_is_within_one_ulp_of_the_rounded_f64_result() {
        let mut worst = 0;
        for x in samples(-87.0, 88.7, 2_000_000) {
            let x = x as f32;
            let (got, want) = (exp_f32(x), libm::exp(f64::from(x)) as f32);
            if want >= f32::MIN_POSITIVE {
                worst = worst.max(ulps32(got, want));
            }
        }
        assert!(worst <= 1, "worst difference: {worst} ulp");
    }

    #[test]
    fn special_values() {
        assert!(exp_f64(f64::NAN).is_nan() && exp_f32(f32::NAN).is_nan());
        assert_eq!(exp_f64(f64::INFINITY), f64::INFINITY);
        assert_eq!(exp_f64(f64::NEG_INFINITY), 0.0);
        assert_eq!((exp_f64(0.0), exp_f32(0.0)), (1.0, 1.0));
        assert_eq!(exp_f64(710.0), f64::INFINITY);
        assert_eq!(exp_f32(89.0), f32::INFINITY);
        assert!(ulps64(exp_f64(1.0), core::f64::consts::E) <= 1);
        // Near overflow and in the subnormal range, through the two-step scaling.
        assert!(ulps64(exp_f64(709.7), libm::exp(709.7)) <= 1);
        let tiny = exp_f64(-740.0);
        assert!(tiny > 0.0 && tiny < f64::MIN_POSITIVE);
        assert!(ulps64(tiny, libm::exp(-740.0)) <= 1);
    }
}
