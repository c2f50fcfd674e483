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
        "--variants",
        "rust,cuda",
        "--cuda",
        stub.to_str().unwrap(),
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
    let svg = std::fs::read_to_string(out_dir.join("ratios.svg")).expect("ratios.svg");
    assert!(svg.starts_with("<svg") && svg.contains("LTIMES"), "{}", &svg[..200.min(svg.len())]);
}
