//! What every build pass needs to know: the user's selection, the GPU targets, where
//! cargo-offload keeps its files, and the toolchain.

use crate::cli::BuildOptions;
use crate::gpu_target::GpuTarget;
use crate::toolchain::Toolchain;
use anyhow::{Context as _, Result};
use std::path::PathBuf;

#[derive(Debug)]
pub struct Context {
    pub opts: BuildOptions,
    pub targets: Vec<GpuTarget>,
    pub workspace_root: PathBuf,
    /// `<target dir>/offload`: host build, device builds, cache, link records.
    pub offload_dir: PathBuf,
    /// This executable, used as rustc's linker.
    pub self_exe: PathBuf,
    pub toolchain: Toolchain,
}

/// Where cargo-offload keeps what projects share: `$CARGO_OFFLOAD_CACHE`, else
/// `$XDG_CACHE_HOME/cargo-offload`, else `~/.cache/cargo-offload`; `None` with
/// `CARGO_OFFLOAD_CACHE=off` (everything then stays in the project's target directory).
pub fn cache_root() -> Option<PathBuf> {
    match std::env::var_os("CARGO_OFFLOAD_CACHE") {
        Some(v) if v == "off" => None,
        Some(v) => Some(PathBuf::from(v)),
        None => std::env::var_os("XDG_CACHE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
            .map(|c| c.join("cargo-offload")),
    }
}

/// Whether cargo's configuration, as seen from `dir`, sets `build.build-dir` (asked of cargo
/// itself, which knows every configuration file; the toolchain is a nightly one, where `cargo
/// config` is available).
fn build_dir_configured(dir: &std::path::Path) -> bool {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    std::process::Command::new(cargo)
        .args(["-Zunstable-options", "config", "get", "build.build-dir"])
        .current_dir(dir)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// `<target dir>/offload`, the target directory being `--target-dir`'s (relative to the current
/// directory, as cargo takes it) or the workspace's.
fn offload_dir(target_dir: Option<&std::path::Path>, metadata: &cargo_metadata::Metadata) -> Result<PathBuf> {
    Ok(match target_dir {
        Some(d) => std::path::absolute(d)
            .with_context(|| format!("bad target directory {}", d.display()))?
            .join("offload"),
        None => metadata.target_directory.join("offload").into_std_path_buf(),
    })
}

impl Context {
    pub fn new(opts: BuildOptions) -> Result<Context> {
        let mut meta = cargo_metadata::MetadataCommand::new();
        meta.no_deps();
        if let Some(m) = &opts.manifest_path {
            meta.manifest_path(m);
        }
        let metadata = meta.exec().context("failed to read the workspace with `cargo metadata`")?;
        let targets = GpuTarget::parse_list(&if opts.target_gpu.is_empty() {
            default_targets(&metadata, &opts)
        } else {
            opts.target_gpu.clone()
        })?;
        let workspace_root = metadata.workspace_root.clone().into_std_path_buf();
        let offload_dir = offload_dir(opts.target_dir.as_deref(), &metadata)?;
        let self_exe = std::env::current_exe().context("failed to find cargo-offload's own path")?;
        let toolchain = Toolchain::detect(&workspace_root)?;
        Ok(Context { opts, targets, workspace_root, offload_dir, self_exe, toolchain })
    }

    /// cargo-offload's directory without the rest of a context (for `cargo offload clean`).
    pub fn offload_dir_of(
        manifest_path: Option<&std::path::Path>,
        target_dir: Option<&std::path::Path>,
    ) -> Result<PathBuf> {
        let mut meta = cargo_metadata::MetadataCommand::new();
        meta.no_deps();
        if let Some(m) = manifest_path {
            meta.manifest_path(m);
        }
        let metadata = meta.exec().context("failed to read the workspace with `cargo metadata`")?;
        offload_dir(target_dir, &metadata)
    }

    pub fn host_target_dir(&self) -> PathBuf {
        self.offload_dir.join("host")
    }

    /// The directory under [`cache_root`] for this toolchain's files of kind `what`
    /// (`device`, `host`), or `None` when the cache is off. One per toolchain *and*
    /// cargo-offload executable: every compilation names the executable as its linker
    /// (`-Clinker=…`), so two installations sharing one directory would make cargo rebuild
    /// every dependency at each switch, into the same file names — and a build of one would
    /// replace the rlibs that a concurrent relink of the other is reading.
    pub fn toolchain_cache(&self, what: &str) -> Option<PathBuf> {
        use sha2::{Digest, Sha256};
        let mut key = Sha256::new();
        key.update(self.toolchain.version.as_bytes());
        key.update([0]);
        key.update(self.self_exe.as_os_str().as_encoded_bytes());
        let key = format!("{:x}", key.finalize());
        cache_root().map(|dir| dir.join(what).join(&key[..16]))
    }

    /// Cargo's build directory (intermediate artifacts: dependencies' rlibs, build scripts,
    /// fingerprints) for the host passes: one per toolchain shared by every project, so that a
    /// new project reuses the runtime, the kernels macro and their dependencies another project
    /// compiled (the executables still go to the project's own target directory). `None` —
    /// cargo's default, inside the target directory — when the cache is off or the user chose
    /// a build directory (`CARGO_BUILD_BUILD_DIR`, or `build.build-dir` in cargo's
    /// configuration).
    pub fn host_build_dir(&self) -> Option<PathBuf> {
        if std::env::var_os("CARGO_BUILD_BUILD_DIR").is_some() || build_dir_configured(&self.workspace_root) {
            return None;
        }
        self.toolchain_cache("host")
    }

    pub fn links_dir(&self) -> PathBuf {
        self.offload_dir.join("links")
    }
}

/// `target-gpu` from `[package.metadata.offload]` of the selected (or only) package, else
/// `[workspace.metadata.offload]`, else `sm_90`.
fn default_targets(metadata: &cargo_metadata::Metadata, opts: &BuildOptions) -> Vec<String> {
    let from = |v: &serde_json::Value| -> Option<Vec<String>> {
        let list = v.get("offload")?.get("target-gpu")?;
        match list {
            serde_json::Value::String(s) => Some(vec![s.clone()]),
            serde_json::Value::Array(a) => {
                Some(a.iter().filter_map(|x| x.as_str().map(str::to_owned)).collect())
            }
            _ => None,
        }
    };
    let selected = metadata.packages.iter().filter(|p| {
        opts.package.iter().any(|s| *s == p.name.as_str())
            || (opts.package.is_empty() && metadata.packages.len() == 1)
    });
    selected
        .filter_map(|p| from(&p.metadata))
        .next()
        .or_else(|| from(&metadata.workspace_metadata))
        .unwrap_or_else(|| {
            crate::ui::status(
                "Note",
                "no --target-gpu and no `target-gpu` in [package.metadata.offload]: building for sm_90 \
                 only (name the GPUs to run on, e.g. --target-gpu sm_80,gfx90a)",
            );
            vec!["sm_90".to_owned()]
        })
}
