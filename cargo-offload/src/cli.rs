//! Command-line interface (clap derive only; the commands live in `commands/`).

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// Invoked by cargo as `cargo-offload offload …`.
#[derive(Debug, Parser)]
#[command(name = "cargo", bin_name = "cargo", styles = clap::builder::styling::Styles::styled())]
pub enum CargoCli {
    /// Build and run single-source Rust GPU programs (NVIDIA and AMD, through LLVM liboffload).
    #[command(version, name = "offload")]
    Offload(OffloadCli),
}

#[derive(Debug, Args)]
pub struct OffloadCli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Build the selected targets with device images for every requested GPU embedded.
    Build(BuildArgs),
    /// Build, then run one executable (arguments after `--` go to it).
    Run(RunArgs),
    /// Build the tests with device images embedded, then run them with `cargo test`.
    Test(TestArgs),
    /// List the device images and kernels modules inside an executable.
    Inspect(InspectArgs),
    /// Check what this machine has for building and running offload programs (toolchain,
    /// ptxas, liboffload, GPUs), and say how to install what is missing.
    Doctor(DoctorArgs),
    /// Remove cargo-offload's build outputs (`<target dir>/offload`: host and device builds,
    /// the device-image cache); cargo's own outputs stay.
    Clean(CleanArgs),
}

/// `cargo offload clean`'s options.
#[derive(Debug, Args)]
pub struct CleanArgs {
    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// The target directory whose `offload/` to remove (default: the workspace's).
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
    /// Remove the cache every project shares instead (`~/.cache/cargo-offload`, or
    /// `$CARGO_OFFLOAD_CACHE`): the device builds and the host build directory of every
    /// toolchain. The next build of any project compiles them again.
    #[arg(long, conflicts_with_all = ["manifest_path", "target_dir"])]
    pub shared: bool,
}

/// `cargo offload doctor` takes no options.
#[derive(Debug, Args)]
pub struct DoctorArgs {}

/// Options shared by every command that builds.
#[derive(Debug, Args, Clone, Default)]
pub struct BuildOptions {
    /// Package to build (see `cargo help pkgid`).
    #[arg(short, long, value_name = "SPEC")]
    pub package: Vec<String>,
    /// Build every workspace member.
    #[arg(long)]
    pub workspace: bool,
    /// Build only the named binary.
    #[arg(long, value_name = "NAME")]
    pub bin: Vec<String>,
    /// Build only the named example.
    #[arg(long, value_name = "NAME")]
    pub example: Vec<String>,
    /// Build all examples.
    #[arg(long)]
    pub examples: bool,
    /// Build all binaries.
    #[arg(long)]
    pub bins: bool,
    /// Build only the named integration test.
    #[arg(long, value_name = "NAME")]
    pub test: Vec<String>,
    /// Build all integration tests.
    #[arg(long)]
    pub tests: bool,
    /// Build only the package's library (and its unit tests, for `test`).
    #[arg(long)]
    pub lib: bool,
    /// Build in release mode (host code; device code is always optimised).
    #[arg(short, long)]
    pub release: bool,
    /// Build with the given cargo profile.
    #[arg(long, value_name = "NAME")]
    pub profile: Option<String>,
    /// Space or comma separated list of features to activate.
    #[arg(short = 'F', long)]
    pub features: Vec<String>,
    /// Activate all available features.
    #[arg(long)]
    pub all_features: bool,
    /// Do not activate the `default` feature.
    #[arg(long)]
    pub no_default_features: bool,
    /// Path to Cargo.toml.
    #[arg(long, value_name = "PATH")]
    pub manifest_path: Option<PathBuf>,
    /// GPU architectures to build for, e.g. `sm_90,gfx90a`, or `native` for this machine's GPUs
    /// (default: the package's `[package.metadata.offload] target-gpu`, else `sm_90`).
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub target_gpu: Vec<String>,
    /// Print every command cargo-offload runs.
    #[arg(short, long)]
    pub verbose: bool,
    /// Directory for all generated artifacts (cargo-offload's go to `DIR/offload`).
    #[arg(long, value_name = "DIR")]
    pub target_dir: Option<PathBuf>,
    /// Require Cargo.lock to be up to date (passed to the host builds).
    #[arg(long)]
    pub locked: bool,
    /// Require Cargo.lock to be up to date and do not access the network (the host builds).
    #[arg(long)]
    pub frozen: bool,
    /// Run without accessing the network (host and device builds).
    #[arg(long)]
    pub offline: bool,
    /// Number of parallel jobs (host and device builds).
    #[arg(short, long, value_name = "N")]
    pub jobs: Option<u32>,
    /// Build as many crates of the host build as possible, rather than stop at the first error.
    #[arg(long)]
    pub keep_going: bool,
    /// `json`: cargo's JSON messages of the host build on stdout, one per line, followed by
    /// cargo-offload's own (`offload-images`, `offload-executable`, `offload-build-finished`);
    /// status lines stay on stderr, as with cargo.
    #[arg(long, value_name = "FMT", value_enum, default_value_t = MessageFormat::Human)]
    pub message_format: MessageFormat,
}

/// `--message-format`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum MessageFormat {
    /// Status lines for people.
    #[default]
    Human,
    /// Also JSON messages on stdout, for tools.
    Json,
}

#[derive(Debug, Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub build: BuildOptions,
}

#[derive(Debug, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub build: BuildOptions,
    /// Arguments for the program.
    #[arg(last = true)]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct TestArgs {
    #[command(flatten)]
    pub build: BuildOptions,
    /// Build the tests but do not run them.
    #[arg(long)]
    pub no_run: bool,
    /// Test name filter and arguments for the test harness (after `--`).
    #[arg(last = true)]
    pub args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The executable to inspect.
    pub executable: PathBuf,
    /// Print as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write each image to DIR as `<arch>.<ptx|cubin|hsaco>`.
    #[arg(long, value_name = "DIR")]
    pub extract: Option<PathBuf>,
    /// Write the device code beside the executable (or in `--emit-dir`) as
    /// `<executable>.<arch>.<ptx|sass|s>`: `ptx` (the PTX), `sass` (the cubin disassembled by
    /// `nvdisasm`), `asm` (the AMD code object disassembled by `llvm-objdump`).
    #[arg(long, value_name = "KINDS", value_delimiter = ',')]
    pub emit: Vec<Emit>,
    /// Where `--emit` writes (default: the executable's directory).
    #[arg(long, value_name = "DIR", requires = "emit")]
    pub emit_dir: Option<PathBuf>,
}

/// What `cargo offload inspect --emit` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Emit {
    Ptx,
    Sass,
    Asm,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cargo_style_invocation() {
        let cli = CargoCli::try_parse_from([
            "cargo",
            "offload",
            "run",
            "--example",
            "saxpy",
            "--target-gpu",
            "sm_90,gfx90a",
            "--release",
            "--",
            "10",
        ])
        .unwrap();
        let CargoCli::Offload(OffloadCli { command: Command::Run(run) }) = cli else {
            panic!("parsed {cli:?}")
        };
        assert_eq!(run.build.example, ["saxpy"]);
        assert_eq!(run.build.target_gpu, ["sm_90", "gfx90a"]);
        assert!(run.build.release);
        assert_eq!(run.args, ["10"]);
    }
}
