//! The `cuda` variant: RAJAPerf's Base_CUDA kernels (`cuda/*.cu`), run by the `rajaperf-cuda`
//! helper process that `cuda/build.sh` builds next to `librajaperf_cuda.so`.
//!
//! The baselines live in their own process because calling into a C library from Rust takes
//! `unsafe`, which this crate does not use; the process boundary costs nothing in the
//! measurement, since the helper times its repetitions itself, with the same synchronised
//! clock as the Rust variant.

use crate::problem::{Problem, Timing};
use crate::protocol::{self, Response};
use anyhow::{Context, bail, ensure};
use std::io::{BufReader, BufWriter};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

/// Environment variable naming the helper executable.
pub const ENV: &str = "RAJAPERF_CUDA";

/// Where `cuda/build.sh` puts the helper, relative to this crate.
const BUILD_PATH: &str = "cuda/build/rajaperf-cuda";

/// The helper to use: `explicit` (from `--cuda`), else `$RAJAPERF_CUDA`, else the build
/// output of `cuda/build.sh` in this source tree or below the current directory. `None` when
/// none of these exists, which means the `cuda` variant is unavailable.
pub fn locate(explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(path) = explicit {
        return Some(path.to_owned());
    }
    if let Some(path) = std::env::var_os(ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(path));
    }
    [Path::new(env!("CARGO_MANIFEST_DIR")).join(BUILD_PATH), Path::new("rajaperf-rs").join(BUILD_PATH)]
        .into_iter()
        .find(|p| p.is_file())
}

/// A running helper process; requests are served one at a time, in order.
#[derive(Debug)]
pub struct CudaBaseline {
    path: PathBuf,
    child: Child,
    input: Option<BufWriter<ChildStdin>>,
    output: BufReader<ChildStdout>,
    device: Option<String>,
}

impl CudaBaseline {
    /// Starts the helper at `path`.
    pub fn start(path: &Path) -> anyhow::Result<CudaBaseline> {
        ensure!(
            path.is_file(),
            "no CUDA baseline at {} (build it with rajaperf-rs/cuda/build.sh)",
            path.display()
        );
        let mut child = Command::new(path)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .with_context(|| format!("failed to start the CUDA baseline {}", path.display()))?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            bail!("the CUDA baseline {} has no pipes", path.display());
        };
        Ok(CudaBaseline {
            path: path.to_owned(),
            child,
            input: Some(BufWriter::new(stdin)),
            output: BufReader::new(stdout),
            device: None,
        })
    }

    /// The GPU the helper reported in its last answer, if it answered yet.
    pub fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// Runs `reps` repetitions of `p` in its CUDA tuning `tuning` (one of
    /// [`KernelId::cuda_tunings`](crate::KernelId::cuda_tunings)) in the helper, with `pad_mib`
    /// MiB of unused device memory before each of its arrays (`--pad-mib`; 0: none), and
    /// replaces `p`'s outputs with what it computed. A tuning the helper does not have is an
    /// error.
    pub fn run(
        &mut self,
        p: &mut Problem,
        tuning: &str,
        reps: usize,
        pad_mib: u32,
    ) -> anyhow::Result<Timing> {
        let context =
            || format!("{} (tuning {tuning}) on the CUDA baseline {}", p.kernel, self.path.display());
        let request = protocol::encode_request(p, tuning, reps, pad_mib);
        let input = self.input.as_mut().context("the CUDA baseline was closed")?;
        protocol::send(input, &request).with_context(context)?;
        let Response { device, timing, outputs } =
            protocol::read_response(&mut self.output).with_context(context)?;
        ensure!(
            outputs.len() == p.outputs.len()
                && outputs.iter().zip(&p.outputs).all(|(o, a)| o.len() == a.data.len()),
            "{}: the CUDA baseline returned outputs of the wrong number or length",
            p.kernel
        );
        for (array, data) in p.outputs.iter_mut().zip(outputs) {
            array.data = data;
        }
        self.device = Some(device);
        Ok(timing)
    }

    /// The fastest of `trials` device-to-device copies between two arrays of `elements`
    /// doubles on the helper's GPU, in seconds (the `MEMCPY_D2D` request of the protocol).
    pub fn copy_bandwidth(&mut self, elements: u64, trials: u32) -> anyhow::Result<f64> {
        ensure!(elements > 0 && trials > 0, "the copy bandwidth needs elements and trials");
        let context = || format!("the copy bandwidth on the CUDA baseline {}", self.path.display());
        let request = protocol::encode_copy_bandwidth_request(elements, trials);
        let input = self.input.as_mut().context("the CUDA baseline was closed")?;
        protocol::send(input, &request).with_context(context)?;
        let Response { device, timing, outputs } =
            protocol::read_response(&mut self.output).with_context(context)?;
        ensure!(outputs.is_empty(), "the copy bandwidth request returned outputs");
        let seconds = timing.kernel_seconds;
        ensure!(seconds.is_finite() && seconds > 0.0, "the CUDA baseline timed a copy at {seconds} s");
        self.device = Some(device);
        Ok(seconds)
    }
}

impl Drop for CudaBaseline {
    fn drop(&mut self) {
        // Closing its input tells the helper to exit; wait so that no zombie is left.
        self.input = None;
        let _ = self.child.wait();
    }
}
