//! `rajaperf`: runs RAJAPerf's kernels (tiers 1 to 3) in safe Rust (and optionally the CUDA
//! baselines and a host reference), checks every result, and reports times and checksums.

use anyhow::{Context, bail};
use clap::Parser;
use rajaperf::cuda::{self, CudaBaseline};
use rajaperf::problem::{Group, KernelId};
use rajaperf::report::{self, JsonReport};
use rajaperf::runner::{self, ElementCheck, Options, Runner, Variant};
use std::path::PathBuf;
use std::process::ExitCode;

/// Runs RAJAPerf's kernels (tiers 1 to 3) written in safe Rust against CUDA C++ baselines.
#[derive(Debug, Parser)]
#[command(name = "rajaperf", version)]
struct Cli {
    /// Kernels to run, comma-separated (e.g. TRIAD,LTIMES); all when neither this nor
    /// --groups is given.
    #[arg(long, value_delimiter = ',')]
    kernels: Vec<String>,
    /// Groups to run, comma-separated: Stream, Basic, Lcals, Apps, Polybench, Algorithm.
    #[arg(long, value_delimiter = ',')]
    groups: Vec<String>,
    /// Target problem size, as RAJAPerf's --size (default: each kernel's default).
    #[arg(long)]
    size: Option<usize>,
    /// Repetitions per pass (default: each kernel's RAJAPerf default).
    #[arg(long)]
    reps: Option<usize>,
    /// Passes over each kernel; times are reported as average and minimum over passes.
    #[arg(long, default_value_t = 1)]
    npasses: usize,
    /// Variants to run, comma-separated (default: rust, and cuda when a baseline is found).
    #[arg(long, value_delimiter = ',', value_enum)]
    variants: Vec<Variant>,
    /// The CUDA baseline executable built by cuda/build.sh.
    #[arg(long, env = cuda::ENV)]
    cuda: Option<PathBuf>,
    /// Directory for results.csv and results.json.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Also write ratios.svg, a bar chart of Rust/CUDA times, into --out.
    #[arg(long, requires = "out")]
    plot: bool,
    /// Check kernels whose result depends on the repetition count (DAXPY, LTIMES, the
    /// stencils, ...) element by element on a separate, untimed run of min(reps, N)
    /// repetitions against a host reference for that many, instead of the timed passes
    /// against a reference for all repetitions; their timed passes are then compared by
    /// checksum with the first variant's first timed pass, and a disagreement fails the run.
    /// Other kernels keep the full check (their reference does not depend on the count).
    /// For large sizes, where the full reference would take minutes.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    verify_reps: Option<u64>,
    /// Repetitions of each variant's untimed warm-up run before its timed passes (0: none).
    /// The first launch of a kernel loads its code onto the device and may find the GPU
    /// idle; without a warm-up that cost falls on whichever variant runs first. Skipped for a
    /// variant that already ran untimed for --verify-reps.
    #[arg(long, value_name = "N", default_value_t = 1)]
    warmup_reps: usize,
    /// Elements of each of the two arrays of the device copy-bandwidth measurement
    /// (cudaMemcpy device to device, through the cuda variant's baseline; 0: none).
    #[arg(long, value_name = "N", default_value_t = 1 << 25)]
    copy_bandwidth_size: u64,
    /// Where the arrays lie: both GPU variants allocate N MiB of device memory that nothing uses
    /// before each array, so the arrays lie at other addresses. With a list (`0,2,6,14`) pass
    /// k uses entry k mod len: with as many passes as entries, each kernel's average is over
    /// that many placements, on both sides alike. Where a repetition takes a few µs, one
    /// placement can move CUDA's own time by a third (results/README.md).
    #[arg(long, value_name = "N[,N...]", value_delimiter = ',', default_value = "0")]
    pad_mib: Vec<u32>,
    /// List the kernels with their default sizes and repetitions, and exit.
    #[arg(long)]
    list: bool,
}

/// Copies timed for the device copy bandwidth; the fastest counts.
const COPY_BANDWIDTH_TRIALS: u32 = 5;

fn main() -> ExitCode {
    match main_impl(Cli::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn main_impl(cli: Cli) -> anyhow::Result<ExitCode> {
    if cli.list {
        println!("{:<22} {:<9} {:>12} {:>6}", "Kernel", "Group", "default size", "reps");
        for k in KernelId::ALL {
            println!(
                "{:<22} {:<9} {:>12} {:>6}",
                k.name(),
                k.group().name(),
                k.default_size(),
                k.default_reps()
            );
        }
        return Ok(ExitCode::SUCCESS);
    }
    let kernels = select_kernels(&cli.kernels, &cli.groups)?;
    let cuda_path = cuda::locate(cli.cuda.as_deref());
    let variants = if cli.variants.is_empty() {
        let mut v = vec![Variant::Rust];
        v.extend(cuda_path.is_some().then_some(Variant::Cuda));
        v
    } else {
        cli.variants.clone()
    };

    if cli.pad_mib.len() > 1 && !cli.npasses.is_multiple_of(cli.pad_mib.len()) {
        eprintln!(
            "rajaperf: warning: {} passes over {} paddings: the averages weigh some placements more (use a multiple)",
            cli.npasses,
            cli.pad_mib.len()
        );
    }
    let mut runner = Runner { pads_mib: cli.pad_mib.clone(), ..Runner::default() };
    if variants.contains(&Variant::Rust) {
        let dev = offload::Device::default()?;
        let how = if dev.is_gpu() { "" } else { ": times measure the emulation, not a GPU" };
        eprintln!("rajaperf: rust variant runs on {dev}{how}");
        runner.device = Some(dev);
    }
    if variants.contains(&Variant::Cuda) {
        let path = cuda_path.context("the cuda variant needs the baseline: build it with rajaperf-rs/cuda/build.sh on a CUDA machine and pass --cuda PATH (or set RAJAPERF_CUDA)")?;
        eprintln!("rajaperf: cuda variant runs {}", path.display());
        runner.cuda = Some(CudaBaseline::start(&path)?);
    }

    if runner.cuda.is_some() && cli.copy_bandwidth_size > 0 {
        match runner.measure_copy_bandwidth(cli.copy_bandwidth_size, COPY_BANDWIDTH_TRIALS) {
            Ok(c) => eprintln!(
                "rajaperf: device copy bandwidth {:.1} GB/s on {} (cudaMemcpy device to device, 2 arrays \
                 of {} doubles, {} bytes read + written in {:.1} us, best of {})",
                c.gb_per_s,
                runner.cuda.as_ref().and_then(CudaBaseline::device).unwrap_or("?"),
                c.elements,
                c.bytes,
                c.best_seconds * 1e6,
                c.trials
            ),
            Err(e) => eprintln!("rajaperf: no device copy bandwidth: {e:#}"),
        }
    }

    let verify_reps = cli.verify_reps.map(|n| usize::try_from(n).unwrap_or(usize::MAX));
    let opts = Options {
        size: cli.size,
        reps: cli.reps,
        npasses: cli.npasses,
        variants: variants.clone(),
        verify_reps,
        warmup_reps: cli.warmup_reps,
    };
    let copy = runner.copy_bandwidth;
    let write_files = |results: &[runner::VariantResult]| -> anyhow::Result<()> {
        let Some(dir) = &cli.out else { return Ok(()) };
        std::fs::create_dir_all(dir).with_context(|| format!("failed to create {}", dir.display()))?;
        report::write_csv(&dir.join("results.csv"), results, copy.as_ref())?;
        let json = JsonReport {
            definitions: report::DEFINITIONS,
            size: cli.size,
            reps: cli.reps,
            npasses: cli.npasses,
            variants: &variants,
            element_rtol: runner::ELEMENT_RTOL,
            checksum_rtol: runner::CHECKSUM_RTOL,
            verify_reps,
            warmup_reps: cli.warmup_reps,
            copy_bandwidth: copy,
            results,
        };
        report::write_json(&dir.join("results.json"), &json)
    };
    let mut results = Vec::new();
    for k in kernels {
        eprintln!("rajaperf: {k} ...");
        results.extend(runner.run_kernel(k, &opts)?);
        // After every kernel, so that a run stopped by a time limit keeps what it finished.
        write_files(&results)?;
    }
    print!("{}", report::table(&results, &variants, copy.as_ref()));

    if let Some(dir) = &cli.out {
        if cli.plot {
            let title = format!("RAJAPerf tiers 1-3: safe Rust vs CUDA C++ ({})", report::DEFINITIONS);
            match report::write_ratio_svg(&dir.join("ratios.svg"), &results, &title) {
                Ok(()) => {}
                Err(e) => eprintln!("rajaperf: no plot: {e:#}"),
            }
        }
        eprintln!("rajaperf: results written to {}", dir.display());
    }

    let mut wrong: Vec<String> = results
        .iter()
        .filter(|r| !r.verification.passed())
        .map(|r| {
            format!(
                "{} ({}): {} of {} elements",
                r.kernel,
                r.variant.name(),
                r.verification.mismatches,
                r.verification.elements
            )
        })
        .collect();
    // Where no reference covered all repetitions, the checksums are the only check of them.
    wrong.extend(
        results.iter().filter(|r| r.element_check == ElementCheck::Untimed && !r.checksum_agrees).map(|r| {
            format!(
                "{} ({}): checksum {:e} differs from {}'s {:e} by {:.2e}",
                r.kernel,
                r.variant.name(),
                r.checksum,
                r.checksum_basis,
                r.basis_checksum,
                r.checksum_rel_diff
            )
        }),
    );
    if wrong.is_empty() {
        Ok(ExitCode::SUCCESS)
    } else {
        eprintln!("rajaperf: WRONG RESULTS: {}", wrong.join("; "));
        Ok(ExitCode::FAILURE)
    }
}

/// The kernels named by `--kernels` and `--groups`, in suite order; all when both are empty.
fn select_kernels(names: &[String], groups: &[String]) -> anyhow::Result<Vec<KernelId>> {
    if names.is_empty() && groups.is_empty() {
        return Ok(KernelId::ALL.to_vec());
    }
    let mut wanted = Vec::new();
    for name in names {
        let Some(k) = KernelId::from_name(name) else {
            let all: Vec<&str> = KernelId::ALL.iter().map(|k| k.name()).collect();
            bail!("unknown kernel {name:?}; the kernels are {}", all.join(", "));
        };
        wanted.push(k);
    }
    for name in groups {
        let Some(g) = Group::ALL.into_iter().find(|g| g.name().eq_ignore_ascii_case(name.trim())) else {
            bail!("unknown group {name:?}; the groups are Stream, Basic, Lcals, Apps, Polybench, Algorithm");
        };
        wanted.extend(KernelId::ALL.into_iter().filter(|k| k.group() == g));
    }
    Ok(KernelId::ALL.into_iter().filter(|k| wanted.contains(k)).collect())
}
