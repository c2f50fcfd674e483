//! The `rajaperf` binary end to end: options, files written, exit status, and the `cuda`
//! variant's protocol against the host stand-in of the baselines (built when a C++ compiler
//! is present).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn rajaperf(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rajaperf"))
        .args(args)
        .env("OFFLOAD_DEVICE", "cpu")
        .env_remove("RAJAPERF_CUDA")
        .output()
        .expect("rajaperf runs")
}

fn text(out: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
}

fn rows(dir: &Path) -> Vec<csv::StringRecord> {
    let mut reader = csv::Reader::from_path(dir.join("results.csv")).expect("results.csv");
    let headers = reader.headers().expect("a header").clone();
    assert_eq!(&headers[0], "kernel");
    assert!(headers.iter().any(|h| h == "time_per_rep_avg_s"));
    reader.records().map(|r| r.expect("a CSV row")).collect()
}

fn json(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).expect("results.json"))
        .expect("valid JSON")
}

#[test]
fn rust_and_cpu_variants_write_csv_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("out");
    let out = rajaperf(&[
        "--size",
        "5000",
        "--reps",
        "2",
        "--variants",
        "rust,cpu",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("LTIMES") && stdout.contains("rust us/rep"), "{stdout}");
    assert!(text(&out).contains("CPU emulation"), "the device is named: {}", text(&out));

    let rows = rows(&out_dir);
    assert_eq!(rows.len(), 94, "47 kernels x 2 variants");
    assert!(rows.iter().all(|r| &r[18] == "true"), "every row verified");
    let report = json(&out_dir);
    let results = report["results"].as_array().unwrap();
    assert_eq!(results.len(), 94);
    assert_eq!(report["definitions"], "RAJAPerf v2024.07");
    assert!(report["verify_reps"].is_null(), "no --verify-reps");
    assert!(
        results.iter().all(|r| r["element_check"] == "timed" && r["verified_reps"] == 2),
        "every timed pass"
    );
    assert!(results.iter().all(|r| r["checksum"].as_f64().is_some_and(f64::is_finite)));
}

#[test]
fn kernels_and_groups_select_and_unknown_names_fail() {
    let dir = tempfile::tempdir().unwrap();
    let out = rajaperf(&[
        "--kernels",
        "triad,Apps_FIR",
        "--groups",
        "lcals",
        "--size",
        "3000",
        "--reps",
        "1",
        "--npasses",
        "2",
        "--variants",
        "cpu",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let kernels: Vec<String> = rows(dir.path()).iter().map(|r| r[0].to_owned()).collect();
    assert_eq!(
        kernels,
        [
            "TRIAD",
            "HYDRO_1D",
            "FIR",
            "EOS",
            "FIRST_DIFF",
            "INT_PREDICT",
            "DIFF_PREDICT",
            "PLANCKIAN",
            "FIRST_SUM",
            "TRIDIAG_ELIM",
            "GEN_LIN_RECUR",
            "FIRST_MIN",
            "HYDRO_2D"
        ]
    );
    // Each pass's time is in the JSON, and the slowest in the CSV's last column.
    let report = json(dir.path());
    for r in report["results"].as_array().unwrap() {
        let passes: Vec<f64> =
            r["time_per_rep_passes_s"].as_array().unwrap().iter().map(|t| t.as_f64().unwrap()).collect();
        assert_eq!(passes.len(), 2, "{r}");
        let (min, max) = (
            passes.iter().copied().fold(f64::INFINITY, f64::min),
            passes.iter().copied().fold(0.0, f64::max),
        );
        assert_eq!(
            (r["time_per_rep_min_s"].as_f64(), r["time_per_rep_max_s"].as_f64()),
            (Some(min), Some(max))
        );
        assert!(
            (r["time_per_rep_avg_s"].as_f64().unwrap() - (passes[0] + passes[1]) / 2.0).abs() <= 1e-12 * max
        );
    }
    let mut reader = csv::Reader::from_path(dir.path().join("results.csv")).unwrap();
    let headers: Vec<String> = reader.headers().unwrap().iter().map(str::to_owned).collect();
    assert_eq!(headers[headers.len() - 2..], ["time_per_rep_max_s", "cuda_tuning"]);

    let out = rajaperf(&["--kernels", "NOPE", "--variants", "cpu"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("unknown kernel \"NOPE\""), "{}", text(&out));

    let out = rajaperf(&["--variants", "cuda", "--cuda", "/nonexistent/rajaperf-cuda", "--kernels", "COPY"]);
    assert!(!out.status.success());
    assert!(text(&out).contains("no CUDA baseline at"), "{}", text(&out));
}

/// Builds the host stand-in of the CUDA baselines, or `None` without a C++ compiler.
fn host_stub(dir: &Path) -> Option<PathBuf> {
    if Command::new("c++").arg("--version").output().is_err() {
        eprintln!("no C++ compiler: the protocol test against the host stand-in is skipped");
        return None;
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("cuda/build.sh");
    let out = Command::new("bash").arg(script).arg("--host-stub").arg(dir).output().unwrap();
    assert!(out.status.success(), "build.sh --host-stub: {}", text(&out));
    Some(dir.join("rajaperf-cuda"))
}

#[test]
fn the_cuda_variant_speaks_the_protocol_with_the_host_stand_in() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stub) = host_stub(&dir.path().join("stub")) else { return };
    let out_dir = dir.path().join("out");
    let out = rajaperf(&[
        "--size",
        "4000",
        "--reps",
        "2",
        // Two passes at two paddings: each request carries its own (a helper that read the
        // field wrongly would lose its place in the stream).
        "--npasses",
        "2",
        "--pad-mib",
        "0,3",
        "--variants",
        "rust,cuda",
        "--cuda",
        stub.to_str().unwrap(),
        "--copy-bandwidth-size",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
        "--plot",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let rows = rows(&out_dir);
    let cuda: Vec<_> = rows.iter().filter(|r| &r[2] == "cuda").collect();
    assert_eq!(cuda.len(), 47);
    assert!(cuda.iter().all(|r| &r[3] == "host stand-in, not a GPU" && &r[18] == "true"));
    assert!(rows.iter().filter(|r| &r[2] == "rust").all(|r| r[9].parse::<f64>().is_ok()), "ratios");
    // Transfers: the stand-in counts one copy per non-empty array, like the CUDA baseline
    // (ADD: a and b and c in, c back; VOL3D's three coordinate arrays, its output and none
    // of NODAL's index lists twice); the Rust variant on the CPU backend copies nothing.
    let named = named_rows(&out_dir);
    let copies = |kernel: &str, variant: &str| {
        let r = named.iter().find(|r| r["kernel"] == kernel && r["variant"] == variant).expect("a row");
        (r["h2d_copies"].parse::<u64>().unwrap(), r["d2h_copies"].parse::<u64>().unwrap())
    };
    assert_eq!(copies("ADD", "cuda"), (3, 1));
    assert_eq!(copies("VOL3D", "cuda"), (4, 1));
    assert_eq!(copies("NODAL_ACCUMULATION_3D", "cuda"), (3, 1));
    assert_eq!(copies("ADD", "rust"), (0, 0));
    let report = text(&out);
    assert!(report.contains("Transfers (whole run"), "{report}");
    let svg = std::fs::read_to_string(out_dir.join("ratios.svg")).expect("ratios.svg");
    assert!(svg.starts_with("<svg") && svg.contains("LTIMES"), "{}", &svg[..200.min(svg.len())]);
    assert!(json(&out_dir)["copy_bandwidth"].is_null(), "--copy-bandwidth-size 0 measures nothing");
}

/// The rows of `results.csv` as (header, value) maps.
fn named_rows(dir: &Path) -> Vec<std::collections::HashMap<String, String>> {
    let mut reader = csv::Reader::from_path(dir.join("results.csv")).expect("results.csv");
    let headers = reader.headers().expect("a header").clone();
    reader
        .records()
        .map(|r| {
            headers
                .iter()
                .zip(r.expect("a CSV row").iter())
                .map(|(h, v)| (h.to_owned(), v.to_owned()))
                .collect()
        })
        .collect()
}

#[test]
fn the_copy_bandwidth_is_measured_through_the_baseline_and_compared_with() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stub) = host_stub(&dir.path().join("stub")) else { return };
    let out_dir = dir.path().join("out");
    let out = rajaperf(&[
        "--kernels",
        "COPY,TRIAD,LTIMES",
        "--size",
        "4000",
        "--reps",
        "2",
        "--variants",
        "rust,cuda",
        "--cuda",
        stub.to_str().unwrap(),
        "--copy-bandwidth-size",
        "100000",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("device copy bandwidth"), "{}", text(&out));
    let copy = &json(&out_dir)["copy_bandwidth"];
    assert_eq!(copy["elements"], 100_000);
    assert_eq!(copy["bytes"], 1_600_000, "read plus written");
    assert_eq!(copy["trials"], 5);
    let copy_gbs = copy["gb_per_s"].as_f64().unwrap();
    let best = copy["best_seconds"].as_f64().unwrap();
    assert!(copy_gbs > 0.0 && (copy_gbs - 1.6e6 / best / 1e9).abs() <= 1e-9 * copy_gbs, "{copy}");
    for row in named_rows(&out_dir) {
        let (kernel, variant) = (row["kernel"].as_str(), row["variant"].as_str());
        match (kernel, variant) {
            ("LTIMES", _) => {
                assert!(row["bytes_per_rep"].is_empty() && row["gb_per_s"].is_empty(), "{row:?}")
            }
            (_, "cuda") => {
                let arrays = if kernel == "COPY" { 2.0 } else { 3.0 };
                assert_eq!(row["bytes_per_rep"].parse::<f64>().unwrap(), arrays * 8.0 * 4000.0, "{row:?}");
                let gbs: f64 = row["gb_per_s"].parse().unwrap();
                let fraction: f64 = row["fraction_of_copy_bandwidth"].parse().unwrap();
                // serde_json parses floats to within an ulp (no `float_roundtrip`), the CSV
                // reader exactly: the two copies of the bandwidth agree to rounding.
                let row_copy: f64 = row["copy_gb_per_s"].parse().unwrap();
                assert!((row_copy - copy_gbs).abs() <= 1e-12 * copy_gbs, "{row:?} vs {copy_gbs}");
                assert!((fraction - gbs / copy_gbs).abs() <= 1e-9 * fraction, "{row:?}");
            }
            // The rust variant runs on the CPU emulation here: no fraction of a GPU's copy.
            _ => assert!(
                row["fraction_of_copy_bandwidth"].is_empty() && !row["gb_per_s"].is_empty(),
                "{row:?}"
            ),
        }
    }
}

#[test]
fn a_baseline_that_cannot_measure_the_copy_bandwidth_leaves_it_out() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stub) = host_stub(&dir.path().join("stub")) else { return };
    let out_dir = dir.path().join("out");
    // 2^62 doubles: the helper cannot allocate them and answers with a failure.
    let out = rajaperf(&[
        "--kernels",
        "COPY",
        "--size",
        "1000",
        "--reps",
        "1",
        "--variants",
        "cuda",
        "--cuda",
        stub.to_str().unwrap(),
        "--copy-bandwidth-size",
        "4611686018427387904",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("no device copy bandwidth"), "{}", text(&out));
    assert!(json(&out_dir)["copy_bandwidth"].is_null());
    let rows = named_rows(&out_dir);
    assert!(rows[0]["fraction_of_copy_bandwidth"].is_empty() && !rows[0]["gb_per_s"].is_empty(), "{rows:?}");
}

#[test]
fn verify_reps_says_which_check_each_result_had() {
    let dir = tempfile::tempdir().unwrap();
    let out = rajaperf(&[
        "--kernels",
        "COPY,DAXPY,JACOBI_1D,DOT",
        "--size",
        "3000",
        "--reps",
        "3",
        "--npasses",
        "2",
        "--verify-reps",
        "1",
        "--variants",
        "rust,cpu",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("untimed") && stdout.contains("timed"), "{stdout}");
    let rows = named_rows(dir.path());
    assert_eq!(rows.len(), 8);
    for row in &rows {
        assert_eq!(row["reps"], "3", "{row:?}");
        assert_eq!(row["verified"], "true", "{row:?}");
        assert_eq!(row["checksum_agrees"], "true", "{row:?}");
        if row["kernel"] == "COPY" {
            assert_eq!(
                (
                    row["verified_reps"].as_str(),
                    row["element_check"].as_str(),
                    row["checksum_basis"].as_str()
                ),
                ("3", "timed", "reference"),
                "{row:?}"
            );
            assert_eq!(row["reference_checksum"], row["basis_checksum"]);
        } else {
            assert_eq!(
                (
                    row["verified_reps"].as_str(),
                    row["element_check"].as_str(),
                    row["checksum_basis"].as_str()
                ),
                ("1", "untimed", "rust"),
                "{row:?}"
            );
            assert!(row["reference_checksum"].is_empty(), "no full reference is claimed: {row:?}");
        }
    }
    let report = json(dir.path());
    assert_eq!(report["verify_reps"], 1);
    let daxpy = report["results"].as_array().unwrap().iter().find(|r| r["kernel"] == "DAXPY").unwrap();
    assert!(daxpy["reference_checksum"].is_null() && daxpy["element_check"] == "untimed", "{daxpy}");

    // Zero repetitions to verify is refused; --help documents the option.
    let out = rajaperf(&[
        "--kernels",
        "DAXPY",
        "--size",
        "1000",
        "--reps",
        "2",
        "--variants",
        "cpu",
        "--verify-reps",
        "0",
    ]);
    assert!(!out.status.success(), "{}", text(&out));
    let help = rajaperf(&["--help"]);
    assert!(String::from_utf8_lossy(&help.stdout).contains("--verify-reps <N>"), "{}", text(&help));
}

#[test]
fn padding_the_arrays_apart_changes_no_result() {
    let dir = tempfile::tempdir().unwrap();
    let out = rajaperf(&[
        "--kernels",
        "ADD,DOT,VOL3D,FIRST_MIN",
        "--size",
        "5000",
        "--reps",
        "2",
        "--variants",
        "rust",
        "--pad-mib",
        "3",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let first = rows(dir.path());
    assert_eq!(first.len(), 4);
    assert!(first.iter().all(|r| &r[18] == "true"), "every row verified: {first:?}");

    // A padding per pass: three passes over two placements still verify every pass, and the
    // runner says that the passes do not divide evenly among the placements.
    let out = rajaperf(&[
        "--kernels",
        "ADD,VOL3D",
        "--size",
        "5000",
        "--reps",
        "2",
        "--npasses",
        "3",
        "--variants",
        "rust",
        "--pad-mib",
        "0,5",
        "--out",
        dir.path().to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(text(&out).contains("3 passes over 2 paddings"), "{}", text(&out));
    let rows = rows(dir.path());
    assert_eq!(rows.len(), 2);
    assert!(
        rows.iter().all(|r| &r[18] == "true" && &r[6] == "3"),
        "every row verified, three passes: {rows:?}"
    );
    let bad = rajaperf(&["--kernels", "ADD", "--variants", "rust", "--pad-mib", "1,x"]);
    assert!(!bad.status.success() && text(&bad).contains("--pad-mib"), "{}", text(&bad));
}

#[test]
fn every_cuda_tuning_runs_and_the_fastest_is_the_cuda_time() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stub) = host_stub(&dir.path().join("stub")) else { return };
    let out_dir = dir.path().join("out");
    let out = rajaperf(&[
        "--kernels",
        "HISTOGRAM,MULTI_REDUCE,REDUCE_SUM,DOT,FIRST_MIN,COPY",
        "--size",
        "3000",
        "--reps",
        "2",
        "--npasses",
        "3",
        "--variants",
        "rust,cuda",
        "--cuda",
        stub.to_str().unwrap(),
        "--copy-bandwidth-size",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let report = json(&out_dir);
    let rows = named_rows(&out_dir);
    let mut tuned = 0;
    for r in report["results"].as_array().unwrap() {
        let kernel = r["kernel"].as_str().unwrap();
        let row = rows.iter().find(|row| row["kernel"] == kernel && row["variant"] == r["variant"]).unwrap();
        if r["variant"] != "cuda" {
            assert!(r["tuning"].is_null() && r["tunings"].as_array().unwrap().is_empty(), "{r}");
            // The rust row names the tuning its ratio compares with.
            let cuda = rows.iter().find(|row| row["kernel"] == kernel && row["variant"] == "cuda").unwrap();
            assert_eq!(row["cuda_tuning"], cuda["cuda_tuning"]);
            continue;
        }
        let want = rajaperf::KernelId::from_name(kernel).unwrap().cuda_tunings();
        let tunings = r["tunings"].as_array().unwrap();
        let names: Vec<&str> = tunings.iter().map(|t| t["tuning"].as_str().unwrap()).collect();
        assert_eq!(names, want, "{kernel}: every tuning ran, in order");
        // The result's time is the fastest tuning's average, and names it.
        let avg = |t: &serde_json::Value| t["time_per_rep_avg_s"].as_f64().unwrap();
        let best = tunings.iter().fold(&tunings[0], |b, t| if avg(t) < avg(b) { t } else { b });
        assert_eq!(r["tuning"], best["tuning"], "{kernel}");
        assert_eq!(r["time_per_rep_avg_s"], best["time_per_rep_avg_s"], "{kernel}");
        assert_eq!(r["time_per_rep_passes_s"], best["time_per_rep_passes_s"], "{kernel}");
        assert_eq!(row["cuda_tuning"], best["tuning"].as_str().unwrap(), "{kernel}");
        for t in tunings {
            assert_eq!(t["time_per_rep_passes_s"].as_array().unwrap().len(), 3, "{kernel}: every pass");
            assert!(t["checksum_agrees"].as_bool().unwrap() && t["verification"]["mismatches"] == 0, "{t}");
        }
        if want.len() > 1 {
            tuned += 1;
        } else {
            assert_eq!(r["tuning"], "default");
        }
    }
    assert_eq!(tuned, 5);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("CUDA tunings") && stdout.contains("atomic_shared(16)_global(2)_256"),
        "{stdout}"
    );
}

#[test]
fn an_unknown_tuning_is_an_error_that_names_the_tunings() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stub) = host_stub(&dir.path().join("stub")) else { return };
    let mut cuda = rajaperf::cuda::CudaBaseline::start(&stub).unwrap();
    let mut p = rajaperf::setup::setup(rajaperf::KernelId::ReduceSum, 1000);
    let err = cuda.run(&mut p, "blkatm_direct_128", 1, 0).unwrap_err();
    let message = format!("{err:#}");
    assert!(message.contains("unknown tuning 'blkatm_direct_128' of REDUCE_SUM"), "{message}");
    assert!(message.contains("cub blkatm_direct_256 blkatm_occgs_256"), "{message}");
    // A kernel with several tunings has no default; one with one has only it.
    assert!(cuda.run(&mut p, "default", 1, 0).is_err());
    let mut copy = rajaperf::setup::setup(rajaperf::KernelId::Copy, 1000);
    assert!(
        format!("{:#}", cuda.run(&mut copy, "cub", 1, 0).unwrap_err()).contains("(its tunings: default)")
    );
    // The helper goes on serving after a refusal.
    cuda.run(&mut p, "cub", 1, 0).unwrap();
    cuda.run(&mut copy, "default", 1, 0).unwrap();
    assert_eq!(p.output("sum")[0], p.input("x").iter().sum::<f64>());
}

#[test]
fn with_verify_reps_every_cuda_tuning_is_checked_untimed_and_against_the_basis() {
    let dir = tempfile::tempdir().unwrap();
    let Some(stub) = host_stub(&dir.path().join("stub")) else { return };
    let out_dir = dir.path().join("out");
    // cuda first: its first tuning's first timed pass is the basis of every checksum.
    let out = rajaperf(&[
        "--kernels",
        "DOT,TRAP_INT",
        "--size",
        "3000",
        "--reps",
        "3",
        "--npasses",
        "2",
        "--verify-reps",
        "1",
        "--variants",
        "cuda,rust",
        "--cuda",
        stub.to_str().unwrap(),
        "--copy-bandwidth-size",
        "0",
        "--out",
        out_dir.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    for r in json(&out_dir)["results"].as_array().unwrap() {
        assert_eq!(
            (r["element_check"].as_str(), r["checksum_basis"].as_str()),
            (Some("untimed"), Some("cuda")),
            "{r}"
        );
        assert!(r["checksum_agrees"].as_bool().unwrap() && r["verification"]["mismatches"] == 0, "{r}");
        if r["variant"] == "cuda" {
            let tunings = r["tunings"].as_array().unwrap();
            assert_eq!(tunings.len(), 2, "{r}");
            for t in tunings {
                assert!(t["checksum_agrees"].as_bool().unwrap(), "{t}");
                // Each tuning had its own untimed element check of one repetition.
                assert!(t["verification"]["elements"].as_u64().unwrap() > 0, "{t}");
            }
        }
    }
}
