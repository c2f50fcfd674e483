//! The generator behind RAJAPerf's random initialisations must be glibc's `rand()` exactly.
//! Expected values were printed by glibc itself (`srand(s)` then `rand()`).

use rajaperf::data::GlibcRand;

fn first(seed: u32, n: usize) -> Vec<i32> {
    let mut rng = GlibcRand::new(seed);
    (0..n).map(|_| rng.next_rand()).collect()
}

#[test]
fn seed_1_gives_glibcs_well_known_sequence() {
    assert_eq!(first(1, 5), [1804289383, 846930886, 1681692777, 1714636915, 1957747793]);
}

#[test]
fn seed_4793_the_one_rajaperf_uses() {
    assert_eq!(first(4793, 5), [409947506, 1819792417, 1214619971, 1612387690, 581787817]);
}

#[test]
fn seed_0_behaves_like_seed_1() {
    assert_eq!(first(0, 3), first(1, 3));
}

#[test]
fn seeds_above_i32_max_wrap_as_in_glibc() {
    assert_eq!(first(3_000_000_000, 3), [2058147116, 854483408, 922419988]);
}

#[test]
fn values_stay_within_rand_max() {
    let mut rng = GlibcRand::new(4793);
    assert!((0..100_000).map(|_| rng.next_rand()).all(|v| (0..=rajaperf::data::RAND_MAX).contains(&v)));
}
