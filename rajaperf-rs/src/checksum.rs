//! RAJAPerf's checksum: a weighted, compensated sum of each output array.
//!
//! `calcChecksum` weighs element `j` by `|sin(j+1)| + 0.5` (so that swapped or misplaced
//! values change the sum), adds the terms with Kahan compensation and multiplies the total by
//! a per-kernel scale factor. A kernel's checksum is the plain sum of its arrays' checksums.
//! RAJAPerf accumulates in `long double` (80-bit on x86); this uses `f64` with the same
//! compensation, which agrees to about one part in 10^15.

/// Kahan (compensated) summation.
#[derive(Clone, Copy, Debug, Default)]
pub struct KahanSum {
    sum: f64,
    compensation: f64,
}

impl KahanSum {
    /// An empty sum.
    pub fn new() -> KahanSum {
        KahanSum::default()
    }

    /// Adds `x`, carrying the rounding error of the running sum into the next addition.
    pub fn add(&mut self, x: f64) {
        let y = x - self.compensation;
        let t = self.sum + y;
        // Without fast-math (Rust never reassociates floats) this is the exact lost part.
        self.compensation = (t - self.sum) - y;
        self.sum = t;
    }

    /// The sum so far.
    pub fn value(&self) -> f64 {
        self.sum
    }
}

/// The weight RAJAPerf gives element `j`.
pub fn weight(j: usize) -> f64 {
    (j as f64 + 1.0).sin().abs() + 0.5
}

/// `calcChecksum(ptr, len, scale_factor)` for one array.
pub fn array_checksum(data: &[f64], scale: f64) -> f64 {
    let mut sum = KahanSum::new();
    for (j, &x) in data.iter().enumerate() {
        sum.add(weight(j) * x);
    }
    sum.value() * scale
}

/// Relative difference of `value` from `reference`, as RAJAPerf reports it (absolute when the
/// reference is zero).
pub fn relative_difference(value: f64, reference: f64) -> f64 {
    let diff = (value - reference).abs();
    if reference == 0.0 { diff } else { (diff / reference).abs() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tiny_array_by_hand() {
        // (|sin 1| + 0.5)·1 + (|sin 2| + 0.5)·2 + (|sin 3| + 0.5)·(-4), sines to 16 digits.
        let by_hand = (0.8414709848078965 + 0.5) * 1.0 + (0.9092974268256817 + 0.5) * 2.0
            - (0.1411200080598672 + 0.5) * 4.0;
        let got = array_checksum(&[1.0, 2.0, -4.0], 1.0);
        assert!((got - by_hand).abs() < 1e-14, "{got} vs {by_hand}");
        assert!((array_checksum(&[1.0, 2.0, -4.0], 0.001) - by_hand * 0.001).abs() < 1e-17);
    }

    #[test]
    fn compensation_keeps_what_naive_summation_loses() {
        let mut kahan = KahanSum::new();
        let mut naive = 1.0f64;
        kahan.add(1.0);
        for _ in 0..10_000 {
            kahan.add(1e-16);
            naive += 1e-16;
        }
        assert_eq!(naive, 1.0);
        assert!((kahan.value() - (1.0 + 1e-12)).abs() < 1e-15, "{}", kahan.value());
    }

    #[test]
    fn relative_difference_handles_a_zero_reference() {
        assert_eq!(relative_difference(2.0, 0.0), 2.0);
        assert!((relative_difference(1.0 + 1e-12, 1.0) - 1e-12).abs() < 1e-15);
        assert!((relative_difference(-1.5, -1.0) - 0.5).abs() < 1e-15);
    }
}
