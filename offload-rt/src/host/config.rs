//! Every environment variable the runtime reads, read once, in this one place.
//!
//! | Variable | Effect |
//! |---|---|
//! | `OFFLOAD_DEVICE=cpu` / `gpu` | `Device::default()` takes the CPU backend, or a GPU (whose absence is then an error, not a fallback) |
//! | `OFFLOAD_LIBRARY=path` | load liboffload from this path (LLVM 22's `libLLVMOffload.so.22.1`) |
//! | `OFFLOAD_QUIET=1` | do not say which device was chosen |
//! | `OFFLOAD_DEBUG=1` | print device discovery and image selection |
//! | `OFFLOAD_REPORT=1` | print the transfer report when the last device goes ([`crate::transfer_report`]) |
//! | `OFFLOAD_TIMELINE=path` | record every copy, launch, wait, allocation and BLAS call, and write them to `path` as a Chrome trace / Perfetto JSON file when the last device goes ([`crate::timeline`]) |
//! | `OFFLOAD_CPU_THREADS=n` | host threads of the CPU backend (default: all cores) |
//! | `OFFLOAD_CPU_WARP_SIZE=32` / `64` | lanes of the CPU backend's warps (default 32; 64 as on AMD CDNA) |
//! | `OFFLOAD_CPU_LOCKSTEP=0` | the CPU backend runs every kernel whose threads meet as futures polled in turns, none in lockstep (for measuring what lockstep gains, and for testing the futures) |
//! | `OFFLOAD_CUBLAS=path`, `OFFLOAD_ROCBLAS=path`, `OFFLOAD_HIP=path` | the vendor libraries `offload::blas` loads |
//! | `CUDA_HOME`, `CUDA_PATH`, `ROCM_PATH` | where `offload::blas` also looks for them (each root's `lib64` or `lib`) |
//! | `OFFLOAD_STAGING=0` | copies of pageable memory go straight to the driver, not through pinned bounce buffers (for measuring what staging gains; also [`crate::set_staging`]) |
//! | `OFFLOAD_GATHER=0` | each small host argument of a launch gets its own allocation and copies instead of sharing one copy each way (for measuring, and for testing that path) |
//!
//! The last two, and `OFFLOAD_CPU_LOCKSTEP`, are measurement switches: they are read once, with the rest, and the launch
//! path only reads a flag.

use std::ffi::OsString;
use std::sync::OnceLock;

/// The runtime's settings from the environment.
#[derive(Debug)]
pub(crate) struct Config {
    /// `OFFLOAD_DEVICE`, trimmed and lower-cased; empty when unset.
    pub device: String,
    pub library: Option<OsString>,
    pub quiet: bool,
    pub debug: bool,
    pub report: bool,
    /// `OFFLOAD_TIMELINE`: where to write the timeline (unset or empty: no timeline).
    pub timeline: Option<std::path::PathBuf>,
    pub cpu_threads: Option<usize>,
    /// `OFFLOAD_CPU_WARP_SIZE`, if it is 32 or 64; what else it held, to warn about.
    pub cpu_warp_size: Result<Option<u32>, String>,
    pub cpu_lockstep: bool,
    pub cublas: Option<OsString>,
    pub rocblas: Option<OsString>,
    pub hip: Option<OsString>,
    /// `CUDA_HOME` and `CUDA_PATH`, those set.
    pub cuda_roots: Vec<OsString>,
    pub rocm_path: Option<OsString>,
    pub staging: bool,
    pub gather: bool,
}

/// Whether a variable is set to something other than `0` (or empty).
fn on(name: &str) -> bool {
    std::env::var_os(name).is_some_and(|v| !v.is_empty() && v != "0")
}

/// Whether a variable is unset or set to something other than `0`.
fn not_off(name: &str) -> bool {
    std::env::var_os(name).is_none_or(|v| v != "0")
}

/// The settings, read on first use.
pub(crate) fn config() -> &'static Config {
    static CONFIG: OnceLock<Config> = OnceLock::new();
    CONFIG.get_or_init(|| Config {
        device: std::env::var("OFFLOAD_DEVICE").unwrap_or_default().trim().to_ascii_lowercase(),
        library: std::env::var_os("OFFLOAD_LIBRARY"),
        quiet: std::env::var_os("OFFLOAD_QUIET").is_some(),
        debug: std::env::var_os("OFFLOAD_DEBUG").is_some(),
        report: on("OFFLOAD_REPORT"),
        timeline: std::env::var_os("OFFLOAD_TIMELINE").filter(|v| !v.is_empty()).map(Into::into),
        cpu_threads: std::env::var("OFFLOAD_CPU_THREADS")
            .ok()
            .and_then(|v| v.parse().ok())
            .filter(|&n| n > 0),
        cpu_warp_size: match std::env::var("OFFLOAD_CPU_WARP_SIZE").ok().as_deref() {
            None => Ok(None),
            Some("32") => Ok(Some(32)),
            Some("64") => Ok(Some(64)),
            Some(other) => Err(other.to_owned()),
        },
        cpu_lockstep: not_off("OFFLOAD_CPU_LOCKSTEP"),
        cublas: std::env::var_os("OFFLOAD_CUBLAS"),
        rocblas: std::env::var_os("OFFLOAD_ROCBLAS"),
        hip: std::env::var_os("OFFLOAD_HIP"),
        cuda_roots: ["CUDA_HOME", "CUDA_PATH"].into_iter().filter_map(std::env::var_os).collect(),
        rocm_path: std::env::var_os("ROCM_PATH"),
        staging: not_off("OFFLOAD_STAGING"),
        gather: not_off("OFFLOAD_GATHER"),
    })
}
