//! `math::fast` within its documented error bounds, on whatever backend runs the test: every
//! function over a sweep of its stated domain (exponentially spaced magnitudes with varied
//! mantissas, or evenly spaced arguments), computed by a kernel and checked on the host
//! against an `f64` reference. `cargo test` checks the CPU backend; the GPU script runs the
//! same binary on the H200 with `--nocapture`, which prints each function's largest error as a
//! fraction of its bound (`results/README.md` records them).

use offload::Device;
use offload::math::fast;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `y[i] = f(x[i])` for the fast function numbered `which` (see `FUNCTIONS`).
    #[kernel]
    pub fn unary(which: u32, x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            let v = x[i];
            *yi = match which {
                0 => math::fast::rsqrt(v),
                1 => math::fast::recip(v),
                2 => math::fast::exp2(v),
                3 => math::fast::exp(v),
                4 => math::fast::log2(v),
                5 => math::fast::ln(v),
                6 => math::fast::sin(v),
                _ => math::fast::cos(v),
            };
        }
    }

    /// `q[i] = a[i] / b[i]`, approximately.
    #[kernel]
    pub fn div(a: &[f32], b: &[f32], mut q: Region<f32>) {
        let i = q.index();
        if let Some(qi) = q.mine() {
            *qi = math::fast::div(a[i], b[i]);
        }
    }
}

/// The kernel's functions, in its numbering: name, domain generator, exact value, bound of the
/// error at `x`, and whether that bound is relative.
type Exact = fn(f64) -> f64;
type Bound = fn(f32) -> f32;
const FUNCTIONS: [(&str, Domain, Exact, Bound, bool); 8] = [
    (
        "rsqrt",
        Domain::Magnitudes { min_exp: -126, max_exp: 127, signed: false },
        |x| 1.0 / x.sqrt(),
        |_| fast::RSQRT_REL_ERROR,
        true,
    ),
    (
        "recip",
        Domain::Magnitudes { min_exp: -126, max_exp: 125, signed: true },
        |x| 1.0 / x,
        |_| fast::RECIP_REL_ERROR,
        true,
    ),
    ("exp2", Domain::Even { lo: -126.0, hi: 127.0 }, f64::exp2, |_| fast::EXP2_REL_ERROR, true),
    ("exp", Domain::Even { lo: -87.0, hi: 88.0 }, f64::exp, fast::exp_rel_error, true),
    (
        "log2",
        Domain::Magnitudes { min_exp: -126, max_exp: 127, signed: false },
        f64::log2,
        fast::log2_abs_error,
        false,
    ),
    (
        "ln",
        Domain::Magnitudes { min_exp: -126, max_exp: 127, signed: false },
        f64::ln,
        fast::ln_abs_error,
        false,
    ),
    (
        "sin",
        Domain::Even { lo: -std::f32::consts::PI, hi: std::f32::consts::PI },
        f64::sin,
        |_| fast::SINCOS_ABS_ERROR,
        false,
    ),
    (
        "cos",
        Domain::Even { lo: -std::f32::consts::PI, hi: std::f32::consts::PI },
        f64::cos,
        |_| fast::SINCOS_ABS_ERROR,
        false,
    ),
];

#[derive(Clone, Copy)]
enum Domain {
    /// `±m · 2^e` for `e` in `min_exp..=max_exp`, mantissas `m` in `[1, 2)` spread over the
    /// whole range.
    Magnitudes { min_exp: i32, max_exp: i32, signed: bool },
    /// Evenly spaced in `[lo, hi]`, both ends included.
    Even { lo: f32, hi: f32 },
}

impl Domain {
    fn points(self, n: usize) -> Vec<f32> {
        match self {
            Domain::Magnitudes { min_exp, max_exp, signed } => {
                let exps = (max_exp - min_exp + 1) as usize;
                (0..n)
                    .map(|i| {
                        let e = min_exp + (i % exps) as i32;
                        // A multiplicative hash spreads the mantissas of each exponent.
                        let m =
                            1.0 + ((i as u32).wrapping_mul(2_654_435_761) >> 9) as f32 / (1u32 << 23) as f32;
                        let v = m * 2f32.powi(e);
                        if signed && i % 2 == 1 { -v } else { v }
                    })
                    .collect()
            }
            Domain::Even { lo, hi } => (0..n)
                .map(|i| lo + (hi - lo) * (i as f64 / (n - 1) as f64) as f32)
                .map(|x| x.clamp(lo, hi))
                .collect(),
        }
    }
}

/// The largest error over `x` as a fraction of its bound, and the argument where it occurs.
fn worst(x: &[f32], y: &[f32], exact: Exact, bound: Bound, relative: bool) -> (f64, f32) {
    let mut worst = (0.0f64, f32::NAN);
    for (&xi, &yi) in x.iter().zip(y) {
        let want = exact(f64::from(xi));
        let err = (f64::from(yi) - want).abs();
        let err = if relative { err / want.abs() } else { err };
        // A NaN error (a NaN result) is the worst there is.
        let fraction = if err.is_nan() { f64::INFINITY } else { err / f64::from(bound(xi)) };
        if fraction > worst.0 {
            worst = (fraction, xi);
        }
    }
    worst
}

#[test]
fn fast_math_is_within_its_bounds() -> offload::Result<()> {
    let dev = Device::default()?;
    let n = if dev.is_gpu() { 1 << 22 } else { 1 << 17 };
    let mut failures = Vec::new();
    for (which, (name, domain, exact, bound, relative)) in FUNCTIONS.iter().enumerate() {
        let x = domain.points(n);
        let mut y = vec![0.0f32; n];
        gpu::unary::launch(&dev, n, which as u32, &x, &mut y)?;
        let (fraction, at) = worst(&x, &y, *exact, *bound, *relative);
        let kind = if *relative { "relative" } else { "absolute" };
        println!(
            "fast::{name:<6} largest {kind} error {fraction:.3} of the bound (at x = {at:e}), {n} arguments, {dev}"
        );
        if fraction > 1.0 {
            failures.push(format!("fast::{name}: error {fraction:.3}× its bound at x = {at:e}"));
        }
    }
    // Division: divisors over 2^-126..2^126 of both signs; numerators `b · m · 2^k` with
    // mantissas `m` in [1, 2) unlike the divisor's and `k` in -20..=20, so that the quotients
    // are normal and inexact (a numerator that would leave the normal range is the divisor).
    let b = Domain::Magnitudes { min_exp: -126, max_exp: 125, signed: true }.points(n);
    let a: Vec<f32> = b
        .iter()
        .enumerate()
        .map(|(i, &b)| {
            let m = 1.0
                + f64::from((i as u32).wrapping_mul(0x9E37_79B9).rotate_left(11) >> 9)
                    / f64::from(1u32 << 23);
            let a = (f64::from(b) * m * 2f64.powi((i % 41) as i32 - 20)) as f32;
            if a.is_normal() { a } else { b }
        })
        .collect();
    let mut q = vec![0.0f32; n];
    gpu::div::launch(&dev, n, &a, &b, &mut q)?;
    let mut worst_div = (0.0f64, 0.0f32, 0.0f32);
    for i in 0..n {
        let want = f64::from(a[i]) / f64::from(b[i]);
        let err = ((f64::from(q[i]) - want) / want).abs() / f64::from(fast::DIV_REL_ERROR);
        let err = if err.is_nan() { f64::INFINITY } else { err };
        if err > worst_div.0 {
            worst_div = (err, a[i], b[i]);
        }
    }
    println!(
        "fast::div    largest relative error {:.3} of the bound (at {:e} / {:e}), {n} arguments, {dev}",
        worst_div.0, worst_div.1, worst_div.2
    );
    if worst_div.0 > 1.0 {
        failures.push(format!(
            "fast::div: error {:.3}× its bound at {:e} / {:e}",
            worst_div.0, worst_div.1, worst_div.2
        ));
    }
    assert!(
        failures.is_empty(),
        "fast math outside its documented bounds on {dev}:\n{}",
        failures.join("\n")
    );
    Ok(())
}

#[test]
fn the_fast_functions_approximate_the_exact_ones_at_familiar_points() -> offload::Result<()> {
    let dev = Device::default()?;
    let x = [4.0f32, 0.25, 1.0, 2.0];
    let mut y = [0.0f32; 4];
    gpu::unary::launch(&dev, 4, 0, &x, &mut y)?;
    for (got, want) in y.iter().zip([0.5f32, 2.0, 1.0, std::f32::consts::FRAC_1_SQRT_2]) {
        assert!((got - want).abs() <= want * fast::RSQRT_REL_ERROR, "rsqrt: {got} for {want}");
    }
    Ok(())
}
