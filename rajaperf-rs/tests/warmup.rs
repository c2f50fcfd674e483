//! The untimed warm-up before each variant's timed passes: its launches happen, and they are
//! not counted in the results. Alone in this binary: it reads the process-wide launch counts.

use offload::{reset_transfer_report, transfer_report};
use rajaperf::problem::KernelId;
use rajaperf::runner::{Options, Runner, Variant};

/// Launches so far of the kernels whose path ends with `::name`.
fn launches(name: &str) -> u64 {
    let suffix = format!("::{name}");
    transfer_report()
        .kernels
        .iter()
        .filter(|(path, _)| path.ends_with(&suffix))
        .map(|(_, s)| s.launches)
        .sum()
}

fn run(kernel: KernelId, name: &str, reps: usize, warmup_reps: usize, verify_reps: Option<usize>) -> u64 {
    let mut runner = Runner { device: Some(offload::Device::cpu()), ..Runner::default() };
    let opts = Options {
        size: Some(4096),
        reps: Some(reps),
        npasses: 2,
        variants: vec![Variant::Rust],
        verify_reps,
        warmup_reps,
    };
    reset_transfer_report();
    let results = runner.run_kernel(kernel, &opts).unwrap();
    assert!(results[0].verification.passed(), "{kernel}: {:?}", results[0].verification);
    assert_eq!(results[0].npasses, 2, "the warm-up is not a timed pass");
    launches(name)
}

#[test]
fn each_variant_warms_up_before_its_timed_passes_unless_it_ran_untimed_already() {
    // Two timed passes of 3 repetitions, plus the warm-up's.
    assert_eq!(run(KernelId::Copy, "copy", 3, 0, None), 6);
    assert_eq!(run(KernelId::Copy, "copy", 3, 1, None), 7);
    assert_eq!(run(KernelId::Copy, "copy", 3, 2, None), 8);
    // Never more than the timed passes' repetitions.
    assert_eq!(run(KernelId::Copy, "copy", 3, 10, None), 9);
    // COPY's reference does not depend on the repetition count, so --verify-reps adds no
    // untimed check and the warm-up stays.
    assert!(!KernelId::Copy.accumulates());
    assert_eq!(run(KernelId::Copy, "copy", 3, 1, Some(1)), 7);
    // DAXPY's does: its untimed check of 1 repetition is the warm-up.
    assert!(KernelId::Daxpy.accumulates());
    assert_eq!(run(KernelId::Daxpy, "daxpy", 3, 1, Some(1)), 7);
    assert_eq!(run(KernelId::Daxpy, "daxpy", 3, 0, None), 6);
}
