//! RAJAPerf's deterministic data initialisation, value for value.
//!
//! RAJAPerf fills arrays with `initData`, `initDataConst`, `initDataRandSign` and
//! `initDataRandValue` (`src/common/DataUtils.cpp`). The non-random values depend on how many
//! initialisations came before in the same kernel set-up (a counter reset before each
//! variant runs), and the random ones on glibc's `rand()` after `srand(4793)`. Both are
//! reproduced exactly here so that checksums can be compared with RAJAPerf's own.

/// glibc's `RAND_MAX`.
pub const RAND_MAX: i32 = 2_147_483_647;

/// The seed RAJAPerf passes to `srand` before every random initialisation.
const RAJAPERF_SEED: u32 = 4793;

/// glibc's `rand()`/`srand()`: the default TYPE_3 additive feedback generator
/// (`r[i] = r[i-3] + r[i-31]`, output `r[i] >> 1`), seeded by a Lehmer generator and warmed up
/// by 310 discarded outputs, exactly as `srandom_r`/`random_r` do.
#[derive(Clone, Debug)]
pub struct GlibcRand {
    state: [u32; 31],
    front: usize,
    rear: usize,
}

impl GlibcRand {
    /// The generator after `srand(seed)`.
    pub fn new(seed: u32) -> GlibcRand {
        // glibc treats seed 0 as 1 (the Lehmer step would otherwise stay at 0).
        let seed = if seed == 0 { 1 } else { seed };
        let mut state = [0u32; 31];
        state[0] = seed;
        // glibc computes 16807 * word mod (2^31 - 1) with Schrage's method on a signed 32-bit
        // word; the seed is reinterpreted as signed first, which matters for seeds >= 2^31.
        let mut word = i64::from(seed as i32);
        for slot in state.iter_mut().skip(1) {
            let (hi, lo) = (word / 127_773, word % 127_773);
            word = 16_807 * lo - 2_836 * hi;
            if word < 0 {
                word += 2_147_483_647;
            }
            *slot = word as u32;
        }
        let mut rng = GlibcRand { state, front: 3, rear: 0 };
        for _ in 0..310 {
            rng.next_rand();
        }
        rng
    }

    /// The next value of `rand()`, in `0..=RAND_MAX`.
    pub fn next_rand(&mut self) -> i32 {
        let sum = self.state[self.front].wrapping_add(self.state[self.rear]);
        self.state[self.front] = sum;
        self.front = (self.front + 1) % 31;
        self.rear = (self.rear + 1) % 31;
        (sum >> 1) as i32
    }

    /// `Real_type(rand())/RAND_MAX`, as RAJAPerf writes it.
    fn next_unit(&mut self) -> f64 {
        f64::from(self.next_rand()) / f64::from(RAND_MAX)
    }
}

/// RAJAPerf's initialisation routines with their shared call counter. Make one per kernel
/// set-up (RAJAPerf resets the counter before each variant) and call the routines in the
/// order the kernel's `setUp` does.
#[derive(Debug, Default)]
pub struct DataInit {
    count: u64,
}

impl DataInit {
    /// A fresh counter, as after RAJAPerf's `resetDataInitCount()`.
    pub fn new() -> DataInit {
        DataInit::default()
    }

    /// How many initialisations have been made.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Alternates between 0.2 and 0.1 with every initialisation, as `initData` does.
    fn factor(&self) -> f64 {
        if self.count % 2 == 1 { 0.1 } else { 0.2 }
    }

    /// `initData(Real_ptr, len)`: positive values in (0, 1) from the index and the counter.
    pub fn data(&mut self, len: usize) -> Vec<f64> {
        let factor = self.factor();
        self.count += 1;
        (0..len).map(|i| factor * (i as f64 + 1.1) / (i as f64 + 1.12345)).collect()
    }

    /// `initDataConst(Real_ptr, len, val)`.
    pub fn constant(&mut self, len: usize, value: f64) -> Vec<f64> {
        self.count += 1;
        vec![value; len]
    }

    /// `initDataConst` on an integer array (an index list this crate fills itself): only the
    /// counter moves.
    pub fn count_int_constant(&mut self) {
        self.count += 1;
    }

    /// `initDataRandSign(Real_ptr, len)`: `initData`'s values with a sign drawn from `rand()`.
    pub fn rand_sign(&mut self, len: usize) -> Vec<f64> {
        let factor = self.factor();
        self.count += 1;
        let mut rng = GlibcRand::new(RAJAPERF_SEED);
        (0..len)
            .map(|i| {
                let sign = if rng.next_unit() < 0.5 { -1.0 } else { 1.0 };
                sign * factor * (i as f64 + 1.1) / (i as f64 + 1.12345)
            })
            .collect()
    }

    /// `initDataRandValue(Real_ptr, len)`: `rand()/RAND_MAX` in [0, 1].
    pub fn rand_value(&mut self, len: usize) -> Vec<f64> {
        self.count += 1;
        let mut rng = GlibcRand::new(RAJAPERF_SEED);
        (0..len).map(|_| rng.next_unit()).collect()
    }

    /// `initData(Int_ptr, len)`: -1 or 1 by the sign of `rand()`, then one element at a
    /// random position set to -58 and another to 19.
    pub fn int_data(&mut self, len: usize) -> Vec<i64> {
        self.count += 1;
        let mut rng = GlibcRand::new(RAJAPERF_SEED);
        let mut data: Vec<i64> = (0..len).map(|_| if rng.next_unit() < 0.5 { -1 } else { 1 }).collect();
        for value in [-58, 19] {
            // `Int_type at = len * signfact`, truncated.
            let at = (len as f64 * rng.next_unit()) as usize;
            if let Some(slot) = data.get_mut(at) {
                *slot = value;
            }
        }
        data
    }

    /// `initData(Real_type&)`: one scalar, like one element 0 of `initData`.
    pub fn scalar(&mut self) -> f64 {
        let factor = self.factor();
        self.count += 1;
        factor * 1.1 / 1.12345
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_counter_alternates_the_factor_and_counts_constants() {
        let mut init = DataInit::new();
        let zeros = init.constant(3, 0.0);
        let first = init.data(2);
        let scalar = init.scalar();
        assert_eq!(zeros, vec![0.0; 3]);
        // The constant fill counted, so `data` is the second call and uses 0.1.
        assert_eq!(first[0], 0.1 * 1.1 / 1.12345);
        assert_eq!(first[1], 0.1 * 2.1 / 2.12345);
        assert_eq!(scalar, 0.2 * 1.1 / 1.12345);
        assert_eq!(init.count(), 3);
    }

    #[test]
    fn int_data_is_signs_with_two_markers() {
        let mut init = DataInit::new();
        let v = init.int_data(1000);
        assert_eq!(init.count(), 1);
        assert_eq!(v.iter().filter(|&&x| x == -58).count(), 1);
        assert_eq!(v.iter().filter(|&&x| x == 19).count(), 1);
        assert!(v.iter().all(|&x| x == 1 || x == -1 || x == -58 || x == 19));
        // The signs are those of the same rand() sequence as initDataRandSign's.
        let signs = DataInit::new().rand_sign(1000);
        let agree = v.iter().zip(&signs).filter(|(i, r)| (**i < 0) == (**r < 0.0)).count();
        assert!(agree >= 998, "{agree}");
    }

    #[test]
    fn random_signs_follow_rand_from_seed_4793() {
        let mut init = DataInit::new();
        let values = init.rand_sign(1000);
        let mut rng = GlibcRand::new(4793);
        for (i, v) in values.iter().enumerate() {
            let negative = f64::from(rng.next_rand()) / f64::from(RAND_MAX) < 0.5;
            assert_eq!(*v < 0.0, negative, "sign of element {i}");
            assert_eq!(v.abs(), 0.2 * (i as f64 + 1.1) / (i as f64 + 1.12345));
        }
        assert!(values.iter().any(|v| *v < 0.0) && values.iter().any(|v| *v > 0.0));
    }
}
