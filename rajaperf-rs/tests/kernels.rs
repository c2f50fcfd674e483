//! Every kernel on the CPU emulation backend, through the library API: outputs checked element
//! by element against the sequential reference, checksums compared across variants and with
//! values computed independently (glibc's `rand()`, `long double` sums, as RAJAPerf does).

use rajaperf::checksum::relative_difference;
use rajaperf::problem::KernelId;
use rajaperf::runner::{BASIS_REFERENCE, CHECKSUM_RTOL, ElementCheck, Options, Runner, Variant, verify};
use rajaperf::{kernels, reference, setup};

fn cpu_runner() -> Runner {
    Runner { device: Some(offload::Device::cpu()), ..Runner::default() }
}

#[test]
fn every_kernel_matches_the_reference_element_by_element() {
    let mut runner = cpu_runner();
    let opts = Options {
        size: Some(10_000),
        reps: Some(3),
        npasses: 2,
        variants: vec![Variant::Rust, Variant::Cpu],
        verify_reps: None,
        warmup_reps: 1,
    };
    for k in KernelId::ALL {
        let results = runner.run_kernel(k, &opts).unwrap();
        assert_eq!(results.len(), 2, "{k}");
        let (rust, cpu) = (&results[0], &results[1]);
        // Every output element, in each of the two passes (reductions have only a few).
        let outputs: usize = setup::setup(k, 10_000).outputs.iter().map(|a| a.data.len()).sum();
        let least = (2 * outputs).min(4096);
        for r in &results {
            assert!(r.verification.passed(), "{k} {:?}: {:?}", r.variant, r.verification);
            assert!(r.verification.elements >= least, "{k}: {} elements compared", r.verification.elements);
            assert!(r.checksum.is_finite() && r.checksum != 0.0, "{k}: checksum {}", r.checksum);
            assert!(r.checksum_agrees, "{k}: {} vs {:?}", r.checksum, r.reference_checksum);
            assert_eq!(r.npasses, 2);
            // Without --verify-reps: the timed passes, all repetitions, against the reference.
            assert_eq!((r.verified_reps, r.element_check), (3, ElementCheck::Timed), "{k}");
            assert_eq!(r.checksum_basis, BASIS_REFERENCE, "{k}");
            assert_eq!(r.reference_checksum, Some(r.basis_checksum), "{k}");
        }
        assert!(
            (rust.checksum - cpu.checksum).abs() <= 1e-12 * cpu.checksum.abs(),
            "{k}: rust {} cpu {}",
            rust.checksum,
            cpu.checksum
        );
    }
}

#[test]
fn verify_reps_checks_a_shorter_untimed_run_and_compares_the_full_checksums() {
    let mut runner = cpu_runner();
    let (size, reps) = (10_000, 4);
    let opts = Options {
        size: Some(size),
        reps: Some(reps),
        npasses: 2,
        variants: vec![Variant::Rust, Variant::Cpu],
        verify_reps: Some(1),
        warmup_reps: 1,
    };
    let mut untimed = 0;
    for k in KernelId::ALL {
        let results = runner.run_kernel(k, &opts).unwrap();
        let outputs: usize = setup::setup(k, size).outputs.iter().map(|a| a.data.len()).sum();
        // The full reference, computed here independently of the runner.
        let mut full = setup::setup(k, size);
        reference::run(&mut full, reps);
        let full = full.checksum();
        for r in &results {
            assert_eq!(r.reps, reps, "{k}: the timed passes run every repetition");
            assert!(r.verification.passed(), "{k} {:?}: {:?}", r.variant, r.verification);
            assert!(r.checksum_agrees, "{k} {:?}: {} vs {}", r.variant, r.checksum, r.basis_checksum);
            // The full-repetition results are right, although nothing in the run said so.
            assert!(
                relative_difference(r.checksum, full) <= CHECKSUM_RTOL,
                "{k} {:?}: {} vs full reference {full}",
                r.variant,
                r.checksum
            );
            if k.accumulates() {
                // One element-checked repetition, on its own run; the checksum goes against
                // the first variant's first timed pass, and no full reference is claimed.
                assert_eq!((r.verified_reps, r.element_check), (1, ElementCheck::Untimed), "{k}");
                assert_eq!(r.checksum_basis, "rust", "{k}");
                assert_eq!(r.basis_checksum, results[0].basis_checksum, "{k}");
                assert_eq!(r.reference_checksum, None, "{k}");
                // One run checked, not the two passes.
                assert_eq!(r.verification.elements, outputs, "{k}");
                untimed += 1;
            } else {
                // The reference does not depend on the count: the full check costs no more.
                assert_eq!((r.verified_reps, r.element_check), (reps, ElementCheck::Timed), "{k}");
                assert_eq!(r.checksum_basis, BASIS_REFERENCE, "{k}");
                assert_eq!(r.reference_checksum, Some(r.basis_checksum), "{k}");
                assert_eq!(r.verification.elements, 2 * outputs, "{k}: both timed passes");
            }
        }
    }
    assert_eq!(untimed, 2 * KernelId::ALL.iter().filter(|k| k.accumulates()).count());

    // As many or more repetitions to verify than to run: the same as without the option.
    let opts = Options { verify_reps: Some(reps + 5), npasses: 1, ..opts };
    for k in [KernelId::Daxpy, KernelId::Jacobi1d, KernelId::Copy] {
        for r in runner.run_kernel(k, &opts).unwrap() {
            assert_eq!((r.verified_reps, r.element_check), (reps, ElementCheck::Timed), "{k}");
            assert_eq!(r.checksum_basis, BASIS_REFERENCE, "{k}");
            assert!(r.verification.passed() && r.checksum_agrees, "{k}");
        }
    }
}

#[test]
fn stream_kernels_report_their_bytes_and_bandwidth() {
    let mut runner = cpu_runner();
    let opts = Options {
        size: Some(4096),
        reps: Some(2),
        npasses: 1,
        variants: vec![Variant::Rust],
        verify_reps: None,
        warmup_reps: 1,
    };
    for (k, arrays) in
        [(KernelId::Copy, 2), (KernelId::Triad, 3), (KernelId::Daxpy, 3), (KernelId::Copy8, 16)]
    {
        let r = &runner.run_kernel(k, &opts).unwrap()[0];
        assert_eq!(r.bytes_per_rep, Some(arrays * 8 * 4096), "{k}");
        let gbs = r.gb_per_s.unwrap();
        assert!((gbs - (arrays * 8 * 4096) as f64 / r.time_per_rep_avg_s / 1e9).abs() <= 1e-9 * gbs, "{k}");
        // No copy bandwidth measured, and the CPU emulation is no GPU: no fraction.
        assert_eq!(r.fraction_of_copy_bandwidth, None, "{k}");
    }
    assert_eq!(runner.run_kernel(KernelId::Ltimes, &opts).unwrap()[0].bytes_per_rep, None);
}

#[test]
fn the_rust_kernels_compute_rajaperfs_formulas() {
    // Spot checks from the formulas themselves, independent of the reference code.
    let dev = offload::Device::cpu();
    let mut p = setup::setup(KernelId::Triad, 1000);
    kernels::run_rust(&dev, &mut p, 1).unwrap();
    let alpha = p.scalar("alpha");
    for i in [0, 1, 500, 999] {
        let (b, c) =
            (0.1 * (i as f64 + 1.1) / (i as f64 + 1.12345), 0.2 * (i as f64 + 1.1) / (i as f64 + 1.12345));
        assert_eq!(p.output("a")[i], b + alpha * c, "TRIAD element {i}");
    }

    let mut p = setup::setup(KernelId::Daxpy, 1000);
    kernels::run_rust(&dev, &mut p, 4).unwrap();
    let (a, x) = (p.scalar("a"), p.input("x")[7]);
    assert!((p.output("y")[7] - 4.0 * a * x).abs() < 1e-15, "DAXPY accumulates over repetitions");

    let mut p = setup::setup(KernelId::Fir, 1000);
    kernels::run_rust(&dev, &mut p, 1).unwrap();
    let input = p.input("in");
    let want: f64 = setup::FIR_COEFF.iter().zip(&input[10..26]).map(|(c, x)| c * x).sum();
    assert!((p.output("out")[10] - want).abs() < 1e-15);
    assert!(p.output("out")[984..].iter().all(|v| *v == 0.0), "FIR leaves the last coefflen outputs");

    let mut p = setup::setup(KernelId::Ltimes, 5000);
    kernels::run_rust(&dev, &mut p, 2).unwrap();
    let (num_d, num_m, num_g) = (p.param("num_d"), p.param("num_m"), p.param("num_g"));
    let (m, g, z) = (3, 5, 1);
    let ell = &p.input("ell")[m * num_d..(m + 1) * num_d];
    let psi = &p.input("psi")[num_d * (g + num_g * z)..][..num_d];
    let once: f64 = ell.iter().zip(psi).map(|(e, s)| e * s).sum();
    let got = p.output("phi")[m + num_m * (g + num_g * z)];
    assert!((got - 2.0 * once).abs() < 1e-12 * once.abs(), "LTIMES {got} vs {}", 2.0 * once);
}

#[test]
fn a_wrong_element_is_caught() {
    let mut want = setup::setup(KernelId::Hydro1d, 2000);
    reference::run(&mut want, 1);
    let mut got = want.clone();
    assert!(verify(&got, &want).passed());
    got.outputs[0].data[1234] *= 1.0 + 1e-8;
    let v = verify(&got, &want);
    assert_eq!(v.mismatches, 1);
    assert!(v.max_rel_err > 9e-9 && v.max_rel_err < 1.1e-8, "{v:?}");
    got.outputs[0].data[1234] = f64::NAN;
    assert_eq!(verify(&got, &want).mismatches, 1);
}

#[test]
fn checksums_match_an_independent_long_double_computation() {
    // Size 5000, 3 repetitions, printed by a separate C++ program that initialises data with
    // glibc's srand/rand and sums in long double with Kahan compensation, as RAJAPerf does.
    let expected = [
        (KernelId::Triad, 679.618_751_750_662_6),
        (KernelId::Daxpy, 333.87798292116368),
        (KernelId::IfQuad, 28.791437763724083),
        (KernelId::Hydro1d, 117.97477779166498),
        (KernelId::Fir, -0.00041701418450007946),
        (KernelId::Ltimes, 1703.8142736895173),
        (KernelId::Pressure, 556.487_052_143_944_4),
        (KernelId::Eos, 16.704452246160923),
        (KernelId::FirstDiff, 0.002606305556214853),
        (KernelId::IntPredict, 7_790.818_730_015_222),
        (KernelId::DiffPredict, 48_307.307_143_103_04),
        (KernelId::Planckian, 177.90612008307872),
        (KernelId::InitView1d, 17.479614553428741),
        (KernelId::Copy8, 6_819.913_089_323_297),
        // Later tiers, from a second C++ program written the same way (RAJAPerf's set-up and
        // loop bodies, glibc's rand(), long double Kahan sums).
        (KernelId::Energy, 556.487_052_143_944_4),
        (KernelId::GenLinRecur, 2_396.478_919_848_734_8),
        (KernelId::DelDotVec2d, 568.431_270_213_922_8),
        (KernelId::Matvec3dStencil, 465_955.497_689_691_5),
        (KernelId::NodalAccumulation3d, 3_409.784_157_572_432),
        (KernelId::Hydro2d, 316.494_116_575_339_8),
        (KernelId::Jacobi2d, 46.951_796_403_004_22),
        (KernelId::Histogram, 5_729.637_600_254_323),
        (KernelId::Reduce3Int, -402.0),
        (KernelId::TrapInt, 31.256_948_204_105_846),
    ];
    for (k, want) in expected {
        let mut p = setup::setup(k, 5000);
        reference::run(&mut p, reference::reps_needed(k, 3));
        let got = p.checksum();
        assert!((got - want).abs() <= 1e-14 * want.abs(), "{k}: {got} vs {want}");
    }
}

#[test]
fn the_reductions_compute_rajaperfs_results() {
    // Spot checks of the scalar results from their definitions, independent of the reference.
    let dev = offload::Device::cpu();
    let mut p = setup::setup(KernelId::PiReduce, 20_000);
    kernels::run_rust(&dev, &mut p, 2).unwrap();
    assert!((p.output("pi")[0] - std::f64::consts::PI).abs() < 1e-9, "PI_REDUCE {}", p.output("pi")[0]);

    let mut p = setup::setup(KernelId::PiAtomic, 20_000);
    kernels::run_rust(&dev, &mut p, 1).unwrap();
    assert!((p.output("pi_final")[0] - std::f64::consts::PI).abs() < 1e-9);

    let mut p = setup::setup(KernelId::FirstMin, 9_999);
    kernels::run_rust(&dev, &mut p, 3).unwrap();
    assert_eq!(p.output("minloc")[0], 4_999.0, "FIRST_MIN finds x[N/2] = -1e10");
    assert_eq!(p.checksum(), 4_999.0, "a scalar result enters the checksum unweighted");

    // DOT adds every repetition's dot product (m_dot += dot).
    let mut p = setup::setup(KernelId::Dot, 1000);
    kernels::run_rust(&dev, &mut p, 3).unwrap();
    let once: f64 = p.input("a").iter().zip(p.input("b")).map(|(a, b)| a * b).sum();
    assert!((p.output("dot")[0] - 3.0 * once).abs() < 1e-12 * once, "DOT {}", p.output("dot")[0]);

    // REDUCE3_INT: ±1 data with one -58 and one 19; the sum adds up over repetitions.
    let mut p = setup::setup(KernelId::Reduce3Int, 10_000);
    kernels::run_rust(&dev, &mut p, 2).unwrap();
    let sum: i64 = p.index_list("vec").iter().sum();
    assert_eq!(p.output("vmin")[0], -58.0);
    assert_eq!(p.output("vmax")[0], 19.0);
    assert_eq!(p.output("vsum")[0], (2 * sum) as f64);

    // REDUCE_SUM keeps the last sum, and RAJAPerf weighs it like element 0 of an array.
    let mut p = setup::setup(KernelId::ReduceSum, 1000);
    kernels::run_rust(&dev, &mut p, 3).unwrap();
    let sum: f64 = p.input("x").iter().sum();
    assert!((p.output("sum")[0] - sum).abs() < 1e-12 * sum);
    assert!((p.checksum() - sum * (1.0f64.sin() + 0.5)).abs() < 1e-12 * sum);
}
