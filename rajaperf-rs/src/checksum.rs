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
///
/// Large arrays form their terms `weight(j) · x[j]` on all the host's threads (the sines are
/// most of the work), then add them in order on one: the same terms in the same order as the
/// sequential loop, so the same bits.
pub fn array_checksum(data: &[f64], scale: f64) -> f64 {
    let mut sum = KahanSum::new();
    if data.len() < PARALLEL_TERMS_FROM {
        for (j, &x) in data.iter().enumerate() {
            sum.add(weight(j) * x);
        }
    } else {
        for x in weighted_terms(data) {
            sum.add(x);
        }
    }
    sum.value() * scale
}

/// Arrays at least this long have their checksum terms formed on several threads.
const PARALLEL_TERMS_FROM: usize = 1 << 16;

/// `weight(j) · data[j]` for every `j`, computed on all the host's threads.
fn weighted_terms(data: &[f64]) -> Vec<f64> {
    let mut terms = vec![0.0; data.len()];
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let chunk = data.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (c, (out, input)) in terms.chunks_mut(chunk).zip(data.chunks(chunk)).enumerate() {
            scope.spawn(move || {
                for (k, (t, &x)) in out.iter_mut().zip(input).enumerate() {
                    *t = weight(c * chunk + k) * x;
                }
            });
        }
    });
    terms
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
    fn the_threaded_terms_give_the_sequential_sum_bit_for_bit() {
        // Long enough for the threaded path, with values whose sum depends on the order.
        let n = PARALLEL_TERMS_FROM * 3 + 17;
        let data: Vec<f64> =
            (0..n).map(|j| ((j * 7919) % 1013) as f64 * 1e-3 - 0.4 + 1e8 * (j % 3) as f64).collect();
        let mut sequential = KahanSum::new();
        for (j, &x) in data.iter().enumerate() {
            sequential.add(weight(j) * x);
        }
        assert_eq!(array_checksum(&data, 1.0).to_bits(), sequential.value().to_bits());
        assert_eq!(array_checksum(&data, 1e-3).to_bits(), (sequential.value() * 1e-3).to_bits());
    }

    #[test]
    fn relative_difference_handles_a_zero_reference() {
        assert_eq!(relative_difference(2.0, 0.0), 2.0);
        assert!((relative_difference(1.0 + 1e-12, 1.0) - 1e-12).abs() < 1e-15);
        assert!((relative_difference(-1.5, -1.0) - 0.5).abs() < 1e-15);
    }
}
