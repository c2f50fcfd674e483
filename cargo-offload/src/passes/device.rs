//! Pass 2: compile the collected kernels modules for every requested GPU with stock nightly
//! (`-Zbuild-std=core`): PTX (+ cubin when `ptxas` is found) for NVIDIA, a code object for
//! AMD. Results are cached by a hash of everything that decides them.

use super::device_deps;
use super::host_meta::Sources;
use crate::cargo_cli::CargoCommand;
use crate::context::Context;
use crate::gpu_target::GpuTarget;
use crate::{linker, toolchain, ui};
use anyhow::{Context as _, Result, bail};
use cargo_metadata::Message;
use cargo_metadata::diagnostic::DiagnosticLevel;
use offload_wire::images::ImageKind;
use offload_wire::record::ModuleRecord;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// A device image built (or taken from the cache) for one target.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BuiltImage {
    pub kind: ImageKind,
    pub target: String,
    pub arch: String,
    pub hash: String,
    pub kernels: Vec<String>,
    /// Its panic sites, numbered from 1 in this order.
    pub sites: Vec<PanicSite>,
    /// The stack per thread its kernels may need beyond what the driver sizes by itself
    /// ([`offload_wire::images::Image::stack_bytes`]).
    #[serde(default)]
    pub stack_bytes: u32,
    #[serde(skip)]
    pub data: Vec<u8>,
}

/// A panic site of an image, its file as the user names it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PanicSite {
    pub function: String,
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub kind: String,
}

impl PanicSite {
    pub fn as_wire(&self) -> offload_wire::images::TrapSite<'_> {
        offload_wire::images::TrapSite {
            function: &self.function,
            file: &self.file,
            line: self.line,
            column: self.column,
            kind: &self.kind,
        }
    }
}

/// The panic sites the device linker left beside `output`, their files named as the user
/// knows them: a kernels module's file is the user's source file (the device crate keeps its
/// lines and columns), a library's is its full path.
fn read_sites(output: &Path, records: &[ModuleRecord]) -> Result<Vec<PanicSite>> {
    // (The linker wrote them beside its own output, in `deps/`; cargo reports the copy of the
    // output it makes one directory up.)
    let beside = linker::sites_path(output);
    let in_deps = output
        .parent()
        .zip(output.file_name())
        .map(|(dir, name)| linker::sites_path(&dir.join("deps").join(name)));
    let path = match in_deps {
        Some(deps) if !beside.exists() => deps,
        _ => beside,
    };
    let text = match std::fs::read(&path) {
        Ok(t) => t,
        // (A device linker from before panic sites: none.)
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e).with_context(|| format!("failed to read {}", path.display())),
    };
    let sites: Vec<linker::Site> =
        serde_json::from_slice(&text).with_context(|| format!("failed to parse {}", path.display()))?;
    Ok(sites
        .into_iter()
        .map(|s| {
            let module = linker::module_file(&s.file)
                .then(|| s.file["src/m".len()..s.file.len() - ".rs".len()].parse::<usize>().ok())
                .flatten()
                .and_then(|i| records.get(i));
            let file = match module {
                Some(r) => r.file.clone(),
                None if Path::new(&s.file).is_absolute() || s.directory.is_empty() => s.file,
                None => format!("{}/{}", s.directory, s.file),
            };
            PanicSite { function: s.function, file, line: s.line, column: s.column, kind: s.kind }
        })
        .collect())
}

/// Name of the generated device crate (and of its output file), one per workspace: device
/// builds of several projects share a target directory (see [`device_target_dir`]), and their
/// outputs must not overwrite one another.
fn crate_name(workspace_root: &Path) -> String {
    let hash = Sha256::digest(workspace_root.to_string_lossy().as_bytes());
    format!("offload_device_{:x}", hash)[..31].to_owned()
}

/// Where the device builds of `target` run: a target directory shared by every project built
/// with this toolchain (`$CARGO_OFFLOAD_CACHE`, else `$XDG_CACHE_HOME/cargo-offload`, else
/// `~/.cache/cargo-offload`), so that `core` is compiled once per toolchain and target rather
/// than once per project; `CARGO_OFFLOAD_CACHE=off` keeps it in the project
/// (`target/offload/device`).
fn device_target_dir(ctx: &Context, target: &GpuTarget) -> PathBuf {
    let leaf = format!("{}-{}", target.triple(), target.arch());
    match ctx.toolchain_cache("device") {
        Some(dir) => dir.join(leaf),
        None => ctx.offload_dir.join("device").join(leaf),
    }
}

/// What every device compile of one `cargo offload build` shares, found once: the runtime's
/// sources and their hash, `ptxas`, the user's `[patch]` tables.
pub struct Inputs<'s> {
    runtime: &'s Path,
    sources: &'s Sources,
    sources_hash: String,
    ptxas: Option<PathBuf>,
    patches: String,
    /// `cargo metadata`, run once for the build when a package declares device dependencies.
    metadata: std::cell::OnceCell<cargo_metadata::Metadata>,
}

/// Says, once per module and build, that a module's kernels print where the text is dropped:
/// on AMD GPUs (liboffload 22's AMD plugin has no `printf` path).
fn warn_of_dropped_prints(ctx: &Context, records: &[ModuleRecord]) {
    let amd: Vec<String> =
        ctx.targets.iter().filter(|t| matches!(t, GpuTarget::Amd(_))).map(|t| t.to_string()).collect();
    if amd.is_empty() {
        return;
    }
    static WARNED: std::sync::Mutex<std::collections::BTreeSet<String>> =
        std::sync::Mutex::new(std::collections::BTreeSet::new());
    let mut warned = WARNED.lock().unwrap_or_else(|e| e.into_inner());
    for r in records.iter().filter(|r| r.prints) {
        if warned.insert(r.prefix.clone()) {
            ui::warn(format!(
                "kernels of module `{}` ({}) print (`offload::println!`); on AMD GPUs ({}) their text is dropped: liboffload 22's AMD plugin has no printf path",
                r.module,
                r.file,
                amd.join(", ")
            ));
        }
    }
}

/// The device compiles' shared [`Inputs`] (warns once when `ptxas` is missing).
pub fn inputs<'s>(ctx: &Context, sources: &'s Sources) -> Result<Inputs<'s>> {
    let runtime = sources.runtime.as_deref().context(
        "the host build did not use the `offload` runtime crate (package offload-rt); add it as a dependency",
    )?;
    // The device code also depends on how cargo-offload itself links it (the device roles).
    let mut sources_hash = hash_sources(sources)?;
    let me =
        std::fs::read(&ctx.self_exe).with_context(|| format!("failed to read {}", ctx.self_exe.display()))?;
    sources_hash.push_str(&format!("{:x}", Sha256::digest(&me)));
    let nvidia = ctx.targets.iter().any(|t| matches!(t, GpuTarget::Nvidia(_)));
    let ptxas = nvidia.then(toolchain::find_ptxas).flatten();
    if ptxas.is_none() && nvidia {
        ui::warn(toolchain::PTXAS_MISSING);
    }
    let patches = user_patches(&ctx.workspace_root)?;
    Ok(Inputs { runtime, sources, sources_hash, ptxas, patches, metadata: std::cell::OnceCell::new() })
}

/// Builds (or finds in the cache) the images of `records` for every target.
pub fn run(ctx: &Context, inputs: &Inputs<'_>, records: &[ModuleRecord]) -> Result<Vec<BuiltImage>> {
    warn_of_dropped_prints(ctx, records);
    let ptxas = &inputs.ptxas;
    let deps = device_deps::resolve(ctx, records, &inputs.metadata)?;
    // What the device dependencies decide: how they are declared, the versions the lockfile
    // pins, and the sources of the path crates among them.
    let sources_hash = &if deps.deps.is_empty() {
        inputs.sources_hash.clone()
    } else {
        let mut h = Sha256::new();
        h.update(&inputs.sources_hash);
        h.update(deps.manifest_lines()?);
        h.update(std::fs::read(ctx.workspace_root.join("Cargo.lock")).unwrap_or_default());
        for dir in &deps.path_crates {
            h.update(hash_package(dir)?);
        }
        format!("{:x}", h.finalize())
    };
    let kernel_count: usize = records.iter().map(|r| r.kernels.len()).sum();
    let mut images = Vec::new();
    let mut to_build = Vec::new();
    for target in &ctx.targets {
        let key = cache_key(ctx, records, sources_hash, target, ptxas.is_some())?;
        match load_cached(&ctx.offload_dir.join("cache").join(&key)) {
            Some(cached) => {
                report(target, &cached, true);
                images.extend(cached);
            }
            None => to_build.push((target, key)),
        }
    }
    let names: Vec<String> = ctx.targets.iter().map(|t| t.to_string()).collect();
    if to_build.is_empty() {
        ui::status(
            "Fresh",
            format!(
                "device images for {} ({} in {})",
                names.join(", "),
                ui::count(kernel_count, "kernel"),
                ui::count(records.len(), "module")
            ),
        );
        return Ok(images);
    }
    let crate_dir = ctx.offload_dir.join("device").join("crate");
    write_device_crate(&crate_dir, records, inputs, &deps, &ctx.workspace_root)?;
    let started = Instant::now();
    let progress = ui::Progress::new(to_build.len() as u64);
    for (target, key) in to_build {
        progress.step(format!("{} for {target} ({})", ui::count(kernel_count, "kernel"), target.triple()));
        let built = build_target(ctx, &crate_dir, records, &deps, target, &key, ptxas.as_deref(), &progress)?;
        store_cached(&ctx.offload_dir.join("cache").join(&key), &built)?;
        report(target, &built, false);
        images.extend(built);
        progress.done_step();
    }
    progress.finish();
    ui::status(
        "Offloaded",
        format!(
            "{} in {} for {} in {:.1}s",
            ui::count(kernel_count, "kernel"),
            ui::count(records.len(), "module"),
            names.join(", "),
            started.elapsed().as_secs_f64()
        ),
    );
    Ok(images)
}

/// The `offload-images` JSON message of one target's images.
fn report(target: &GpuTarget, images: &[BuiltImage], fresh: bool) {
    let list: Vec<serde_json::Value> = images
        .iter()
        .map(|i| serde_json::json!({ "kind": i.kind.to_string(), "arch": i.arch, "bytes": i.data.len(), "hash": i.hash }))
        .collect();
    let kernels = images.first().map(|i| i.kernels.clone()).unwrap_or_default();
    ui::message(
        "offload-images",
        serde_json::json!({ "target": target.triple(), "arch": target.arch(), "fresh": fresh, "kernels": kernels, "images": list }),
    );
}

fn hash_sources(sources: &Sources) -> Result<String> {
    let mut h = Sha256::new();
    for (name, dir) in &sources.hashed {
        h.update(name.as_bytes());
        h.update(hash_package(dir)?);
    }
    Ok(format!("{:x}", h.finalize()))
}

/// A hash of a package's sources: `src/`, its manifest and build script.
fn hash_package(dir: &Path) -> Result<String> {
    let mut h = Sha256::new();
    let mut files = Vec::new();
    collect_files(&dir.join("src"), &mut files)?;
    files.push(dir.join("Cargo.toml"));
    files.push(dir.join("build.rs"));
    files.sort();
    for f in files.iter().filter(|f| f.is_file()) {
        h.update(f.to_string_lossy().as_bytes());
        h.update(std::fs::read(f).with_context(|| format!("failed to read {}", f.display()))?);
    }
    Ok(format!("{:x}", h.finalize()))
}

fn collect_files(dir: &Path, out: &mut Vec<PathBuf>) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(dir) else { return Ok(()) };
    for e in entries {
        let path = e?.path();
        if path.is_dir() {
            collect_files(&path, out)?;
        } else {
            out.push(path);
        }
    }
    Ok(())
}

fn cache_key(
    ctx: &Context,
    records: &[ModuleRecord],
    sources: &str,
    target: &GpuTarget,
    ptxas: bool,
) -> Result<String> {
    let mut h = Sha256::new();
    h.update(env!("CARGO_PKG_VERSION"));
    // What a cached image records (images.json): bumped when that changes, so that an older
    // entry is rebuilt rather than read with a field missing.
    h.update(b"cache format 2");
    h.update(&ctx.toolchain.version);
    h.update(sources);
    h.update(target.triple());
    h.update(target.arch());
    h.update([u8::from(ptxas)]);
    h.update(linker::PanicSites::from_env()?.name());
    for r in records {
        h.update(r.to_bytes());
    }
    Ok(format!("{}-{:x}", target.arch(), h.finalize())[..32].to_owned())
}

fn load_cached(dir: &Path) -> Option<Vec<BuiltImage>> {
    let meta: Vec<BuiltImage> = serde_json::from_slice(&std::fs::read(dir.join("images.json")).ok()?).ok()?;
    meta.into_iter()
        .map(|mut i| {
            i.data = std::fs::read(dir.join(format!("{}.{}", i.arch, i.kind.extension()))).ok()?;
            Some(i)
        })
        .collect()
}

fn store_cached(dir: &Path, images: &[BuiltImage]) -> Result<()> {
    std::fs::create_dir_all(dir)?;
    for i in images {
        std::fs::write(dir.join(format!("{}.{}", i.arch, i.kind.extension())), &i.data)?;
    }
    std::fs::write(dir.join("images.json"), serde_json::to_vec_pretty(images)?)?;
    Ok(())
}

/// The device crate: each kernels module in a file of its own, its body at the same line and
/// column as in the user's source, so that rustc's diagnostics point at the user's lines.
fn write_device_crate(
    dir: &Path,
    records: &[ModuleRecord],
    inputs: &Inputs<'_>,
    deps: &device_deps::DeviceDeps,
    workspace_root: &Path,
) -> Result<()> {
    let (runtime, sources, stamp) = (inputs.runtime, inputs.sources, &inputs.sources_hash);
    let src = dir.join("src");
    std::fs::create_dir_all(&src).with_context(|| format!("failed to create {}", src.display()))?;
    let editions: Vec<&str> =
        records.iter().filter_map(|r| sources.editions.get(&r.krate).map(String::as_str)).collect();
    let edition =
        if !editions.is_empty() && editions.iter().all(|e| *e == editions[0]) { editions[0] } else { "2024" };
    // `panic = "immediate-abort"` (unstable, hence the cargo feature): a panic in a kernel is a
    // trap where it happens, not a call into `core::panicking`; the call cost registers and code
    // on the paths that never panic (in one A/B on the H200, the sums' kernels 13–17 % faster at
    // 1M; the rest within noise, geometric mean 0.989).
    let manifest = format!(
        r#"# Generated by cargo-offload from the kernels modules of the host build. Do not edit.
cargo-features = ["panic-immediate-abort"]

[package]
name = "{krate}"
version = "0.0.0"
edition = "{edition}"
publish = false

[lib]
crate-type = ["cdylib"]
path = "src/lib.rs"

[dependencies]
offload = {{ package = "offload-rt", path = {runtime:?} }}
{device_deps}
[profile.release]
opt-level = 3
panic = "immediate-abort"
lto = "fat"
codegen-units = 1
debug = {debug}
incremental = false

[workspace]
"#,
        runtime = runtime.display().to_string(),
        device_deps = if deps.deps.is_empty() {
            String::new()
        } else {
            format!(
                "# The kernels modules' device dependencies, as their packages declare them.\n{}",
                deps.manifest_lines()?
            )
        },
        krate = crate_name(workspace_root),
        // Line tables place the panics, when they are recorded (see `linker::traps`).
        debug = if linker::PanicSites::from_env()? == linker::PanicSites::Off {
            "false"
        } else {
            "\"line-tables-only\""
        },
    );
    let manifest = manifest + &inputs.patches;
    write_if_changed(&dir.join("Cargo.toml"), manifest.as_bytes())?;
    // Start the lockfile from the user's so that the device build resolves the same versions
    // without the network — again whenever the user's changes (a dependency added, updated).
    let (lock, seed) = (dir.join("Cargo.lock"), dir.join("Cargo.lock.user"));
    if let Ok(user_lock) = std::fs::read(workspace_root.join("Cargo.lock"))
        && (!lock.exists() || std::fs::read(&seed).ok().as_deref() != Some(&user_lock[..]))
    {
        std::fs::write(&lock, &user_lock)?;
        std::fs::write(&seed, &user_lock)?;
    }
    // The stamp names the runtime sources and the cargo-offload build: when either changes,
    // cargo rebuilds and relinks the crate (the linker is part of the build but not of
    // cargo's fingerprint).
    let mut lib = format!(
        "// Generated by cargo-offload. Do not edit.\n// stamp {stamp}\n#![no_std]\n#![feature(abi_gpu_kernel)]\n#![allow(warnings)]\n",
    );
    for (i, r) in records.iter().enumerate() {
        lib.push_str(&format!("#[path = \"m{i}.rs\"]\nmod m{i};\n"));
        write_if_changed(&src.join(format!("m{i}.rs")), module_file(r).as_bytes())?;
    }
    write_if_changed(&src.join("lib.rs"), lib.as_bytes())
}

/// The `[patch]` tables of the user's workspace manifest, with relative paths made absolute:
/// the device crate resolves `offload-rt`'s dependencies as the host build did (a project
/// that patches crates, or builds against unpublished ones, gets the same crates on the device).
fn user_patches(workspace_root: &Path) -> Result<String> {
    let path = workspace_root.join("Cargo.toml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("failed to read {}", path.display()))?;
    let doc: toml::Table = text.parse().with_context(|| format!("failed to parse {}", path.display()))?;
    let Some(toml::Value::Table(patch)) = doc.get("patch") else { return Ok(String::new()) };
    let mut patch = patch.clone();
    for (_, crates) in patch.iter_mut() {
        let Some(crates) = crates.as_table_mut() else { continue };
        for (_, spec) in crates.iter_mut() {
            if let Some(toml::Value::String(p)) = spec.as_table_mut().and_then(|t| t.get_mut("path")) {
                *p = workspace_root.join(&*p).display().to_string();
            }
        }
    }
    let mut out = toml::Table::new();
    out.insert("patch".into(), toml::Value::Table(patch));
    Ok(format!("\n# The user's workspace's patches.\n{}", toml::to_string(&out)?))
}

/// A kernels module placed so that its body starts at its original line and column.
pub fn module_file(r: &ModuleRecord) -> String {
    let unsafe_opt_in = if r.allow_unsafe { "allow_unsafe, " } else { "" };
    let header = format!(
        "#[::offload::kernels({unsafe_opt_in}__device(prefix = {:?}))] pub mod {}",
        r.prefix, r.module
    );
    if r.line >= 2 {
        format!("{}{header}\n{}{}\n", "\n".repeat(r.line - 2), " ".repeat(r.column), r.body)
    } else {
        format!("{header} {}\n", r.body)
    }
}

fn write_if_changed(path: &Path, content: &[u8]) -> Result<()> {
    if std::fs::read(path).ok().as_deref() != Some(content) {
        std::fs::write(path, content).with_context(|| format!("failed to write {}", path.display()))?;
    }
    Ok(())
}

#[allow(clippy::too_many_arguments, reason = "one call site, each argument its own thing")]
fn build_target(
    ctx: &Context,
    crate_dir: &Path,
    records: &[ModuleRecord],
    deps: &device_deps::DeviceDeps,
    target: &GpuTarget,
    key: &str,
    ptxas: Option<&Path>,
    progress: &ui::Progress,
) -> Result<Vec<BuiltImage>> {
    let target_dir = device_target_dir(ctx, target);
    // Identical kernels (two modules may hold the same code) must stay separate functions:
    // LLVM would otherwise merge them into aliases, which get no AMD kernel descriptor.
    // cargo-offload links the device code itself (see `linker`), and on both targets marks the
    // kernels' pointer parameters `noalias`. On amdgcn rustc would link with rust-lld;
    // `-Clinker-plugin-lto` makes it hand cargo-offload bitcode instead of an object.
    let (role, lto) = match target {
        GpuTarget::Nvidia(_) => (linker::ROLE_NVPTX, ""),
        GpuTarget::Amd(_) => (linker::ROLE_AMDGCN, " -Clinker-plugin-lto"),
    };
    // (The panic-site mode changes the link; a cfg in the flags makes cargo redo it.)
    let sites = match linker::PanicSites::from_env()? {
        linker::PanicSites::Off => String::new(),
        on => format!(" --cfg offload_panic_sites_{}", on.name()),
    };
    let rustflags = format!(
        "-Ctarget-cpu={} -Zmerge-functions=disabled -Clinker={}{lto}{sites}",
        target.arch(),
        ctx.self_exe.display()
    );
    let cmd = CargoCommand::new(&["build", "--release", "-Zbuild-std=core"])
        .device_flags(&ctx.opts)
        .arg("--target")
        .arg(target.triple())
        .arg("--manifest-path")
        .arg(crate_dir.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target_dir)
        .arg(if console::Term::stderr().is_term() {
            "--message-format=json-diagnostic-rendered-ansi"
        } else {
            "--message-format=json"
        })
        .current_dir(crate_dir)
        .env("RUSTFLAGS", &rustflags)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("CARGO_BUILD_RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .env("CARGO_INCREMENTAL", "0")
        .env(linker::ROLE_ENV, role)
        .env(linker::LLVM_BIN_ENV, &ctx.toolchain.llvm_bin);
    let mut output = None;
    let mut errors = 0;
    // Packages other than the device crate and the runtime that failed: device dependencies
    // (or their dependencies) that do not build for this target.
    let mut failed_deps: Vec<String> = Vec::new();
    let mut unlinked = false;
    let device_crate = crate_name(&ctx.workspace_root);
    let (status, stderr) = cmd.run_json(true, |message| {
        match message {
            Message::CompilerMessage(m) => {
                let error = matches!(m.message.level, DiagnosticLevel::Error | DiagnosticLevel::Ice);
                if let Some(rendered) = m.message.rendered.as_deref().filter(|_| error) {
                    errors += 1;
                    progress.println(&remap_paths(rendered, records));
                    let package = package_name(&m.package_id.repr);
                    if m.target.name == device_crate {
                        unlinked |=
                            rendered.contains("unresolved import") || rendered.contains("unlinked crate");
                    } else if package != "offload-rt" && !failed_deps.contains(&package) {
                        failed_deps.push(package);
                    }
                }
            }
            Message::CompilerArtifact(a) if a.target.name == crate_name(&ctx.workspace_root) => {
                output =
                    a.filenames.iter().find(|f| matches!(f.extension(), Some("ptx" | "elf" | "so"))).cloned();
            }
            _ => {}
        }
        Ok(())
    })?;
    if !status.success() {
        if !failed_deps.is_empty() {
            let declared: Vec<&str> = deps.deps.keys().map(String::as_str).collect();
            bail!(
                "the device dependenc{} {} do{} not build for {target} ({}): {errors} error(s) above\n  \
                 note: device dependencies ({}) are compiled for the GPU with `core` only: each must be `no_std` there (often `default-features = false` in [dependencies])",
                if failed_deps.len() == 1 { "y" } else { "ies" },
                failed_deps.iter().map(|d| format!("`{d}`")).collect::<Vec<_>>().join(", "),
                if failed_deps.len() == 1 { "es" } else { "" },
                target.triple(),
                if declared.is_empty() { "none declared".to_owned() } else { declared.join(", ") },
            );
        }
        let detail = if errors > 0 {
            format!("{errors} error(s) above")
        } else {
            format!("cargo said:\n{}", stderr.trim_end())
        };
        let hint = if unlinked {
            "\n  help: a kernels module can use `core`, `offload` and the crates its package lists in `[package.metadata.offload] device-dependencies` (each also one of its [dependencies])"
        } else {
            ""
        };
        bail!("failed to compile the kernels for {target} ({}): {detail}{hint}", target.triple());
    }
    let output = output.context("the device build reported no output file")?;
    let data = std::fs::read(&output).with_context(|| format!("failed to read {output}"))?;
    let kernels: Vec<String> =
        records.iter().flat_map(|r| r.kernels.iter().flat_map(|k| k.symbols.iter().cloned())).collect();
    let sites = read_sites(output.as_std_path(), records)?;
    let image = |kind: ImageKind, data: Vec<u8>, stack_bytes: u32| BuiltImage {
        kind,
        target: target.triple().into(),
        arch: target.arch().into(),
        hash: key.into(),
        kernels: kernels.clone(),
        sites: sites.clone(),
        stack_bytes,
        data,
    };
    match target {
        GpuTarget::Nvidia(arch) => {
            let text = String::from_utf8_lossy(&data);
            let missing: Vec<&String> =
                kernels.iter().filter(|k| !text.contains(&format!(".entry {k}("))).collect();
            if !missing.is_empty() {
                bail!("the PTX for {target} lacks the entry points of {missing:?}");
            }
            let mut images = Vec::new();
            if let Some(ptxas) = ptxas {
                progress.step(format!("ptxas -arch={arch}"));
                let (cubin, stack) = assemble(ptxas, &output.into_std_path_buf(), arch)?;
                images.push(image(ImageKind::Cubin, cubin, stack));
            }
            let mut ptx = data;
            ptx.push(0);
            images.insert(0, image(ImageKind::Ptx, ptx, 0));
            Ok(images)
        }
        GpuTarget::Amd(_) => {
            crate::linker::validate_code_object(&data, &kernels)
                .with_context(|| format!("the AMD code object for {target} is not usable"))?;
            Ok(vec![image(ImageKind::Hsaco, data, 0)])
        }
    }
}

/// The cubin `ptxas` makes of `ptx` for `arch`, and the stack per thread its kernels may need
/// beyond what the driver sizes by itself ([`dynamic_stack_bound`], from `ptxas -v`).
fn assemble(ptxas: &Path, ptx: &Path, arch: &str) -> Result<(Vec<u8>, u32)> {
    let cubin = ptx.with_extension(format!("{arch}.cubin"));
    let mut cmd = std::process::Command::new(ptxas);
    cmd.arg(format!("-arch={arch}")).arg("-O3").arg("-v").arg(ptx).arg("-o").arg(&cubin);
    ui::command(&cmd);
    let out = cmd.output().with_context(|| format!("failed to run {}", ptxas.display()))?;
    if !out.status.success() {
        bail!("ptxas rejected the PTX for {arch}:\n{}", String::from_utf8_lossy(&out.stderr).trim_end());
    }
    let report = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    let data = std::fs::read(&cubin).with_context(|| format!("failed to read {}", cubin.display()))?;
    Ok((data, dynamic_stack_bound(&report)))
}

/// From `ptxas -v`'s report: when a kernel calls functions (calls that `ptxas` could not
/// inline, through function pointers in `core::fmt` among them, so that the kernel's stack
/// depth is unknown to the driver, which then gives each thread its default 1 KiB), an upper
/// bound of the stack a thread of it may need: its cumulative stack plus the frame of every
/// function `ptxas` compiled for it (each on the stack at most once, as long as no call is
/// recursive); the largest over the kernels. 0 when no kernel calls a function (the driver
/// sizes those stacks itself) or the report says nothing. (`ptxas` lists each kernel's
/// functions after the kernel, copies of one function once per kernel that calls it.)
fn dynamic_stack_bound(report: &str) -> u32 {
    let number_before = |line: &str, what: &str| -> Option<u64> {
        let at = line.find(what)?;
        line[..at].trim_end().rsplit(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    // Per kernel: (its name, cumulative stack, frames of the functions compiled for it).
    let mut kernels: Vec<(&str, u64, u64)> = Vec::new();
    let mut lines = report.lines().peekable();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            kernels.push((rest.split('\'').next().unwrap_or(""), 0, 0));
        } else if let Some(name) = line.split("Function properties for ").nth(1) {
            let frame = lines.peek().and_then(|l| number_before(l, "bytes stack frame")).unwrap_or(0);
            if let Some(k) = kernels.last_mut().filter(|k| k.0 != name.trim()) {
                k.2 = k.2.saturating_add(frame);
            }
        } else if let Some(bytes) = number_before(line, "bytes cumulative stack size")
            && let Some(k) = kernels.last_mut()
        {
            k.1 = bytes;
        }
    }
    let bound = kernels.iter().filter(|k| k.2 > 0).map(|k| k.1.saturating_add(k.2)).max().unwrap_or(0);
    u32::try_from(bound).unwrap_or(u32::MAX)
}

/// The package name in a package id: `registry+…#num-traits@0.2.19` → `num-traits`,
/// `path+file:///w/my-math#0.1.0` → `my-math` (the directory, when the id has no name).
fn package_name(id: &str) -> String {
    let (url, fragment) = id.rsplit_once('#').unwrap_or((id, ""));
    match fragment.split_once('@') {
        Some((name, _)) => name.to_owned(),
        None => url.trim_end_matches('/').rsplit('/').next().unwrap_or(url).to_owned(),
    }
}

/// Points diagnostics at the user's files instead of the generated ones.
fn remap_paths(rendered: &str, records: &[ModuleRecord]) -> String {
    let mut text = rendered.to_owned();
    // Highest index first, so that `src/m1.rs` does not rewrite part of `src/m10.rs`.
    for (i, r) in records.iter().enumerate().rev() {
        text = text.replace(&format!("src/m{i}.rs"), &r.file);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `ptxas -v` of a printing kernel (abridged): calls through `core::fmt`'s function
    /// pointers, so the kernel's 392 cumulative bytes leave out its callees' frames.
    const PTXAS_REPORT: &str = "ptxas info    : 1889 bytes gmem
ptxas info    : Compiling entry function '__offload_m_report' for 'sm_90'
ptxas info    : Function properties for __offload_m_report
    392 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 255 registers, used 0 barriers, 392 bytes cumulative stack size
ptxas info    : Compile time = 1896.328 ms
ptxas info    : Function properties for _RINvNtNtCs_4core3fmt5float29float_to_decimal_common_exactfEB6_
    2400 bytes stack frame, 440 bytes spill stores, 440 bytes spill loads
ptxas info    : Function properties for _RNvXs3_NtNtCs_4core3fmt5floatfNtB7_7Display3fmt
    16 bytes stack frame, 16 bytes spill stores, 16 bytes spill loads
ptxas info    : Function properties for _RNvNtCs_7offload5print5print
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
";

    #[test]
    fn a_module_with_called_functions_gets_a_stack_bound_and_one_without_none() {
        assert_eq!(dynamic_stack_bound(PTXAS_REPORT), 392 + 2400 + 16);
        // Two kernels, each with its copies of the functions it calls: the larger one's.
        let two = format!(
            "{PTXAS_REPORT}{}",
            PTXAS_REPORT
                .replace("__offload_m_report", "__offload_m_other")
                .replace("392 bytes cumulative", "500 bytes cumulative")
        );
        assert_eq!(dynamic_stack_bound(&two), 500 + 2400 + 16);
        let plain = "ptxas info    : Compiling entry function 'k' for 'sm_90'
ptxas info    : Function properties for k
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 12 registers, used 0 barriers, 0 bytes cumulative stack size
";
        assert_eq!(dynamic_stack_bound(plain), 0);
        assert_eq!(dynamic_stack_bound(""), 0);
    }
    use offload_wire::record::VERSION;

    fn record(line: usize, column: usize) -> ModuleRecord {
        ModuleRecord {
            version: VERSION,
            krate: "demo".into(),
            manifest_dir: "/p".into(),
            file: "examples/demo.rs".into(),
            module: "gpu".into(),
            prefix: "__offload_demo_gpu_1".into(),
            line,
            column,
            body: "{\n    pub fn k() {}\n}".into(),
            allow_unsafe: false,
            prints: false,
            kernels: vec![],
        }
    }

    #[test]
    fn module_body_keeps_its_line_and_column() {
        let text = module_file(&record(12, 8));
        let lines: Vec<&str> = text.lines().collect();
        assert!(
            lines[10].starts_with(
                "#[::offload::kernels(__device(prefix = \"__offload_demo_gpu_1\"))] pub mod gpu"
            )
        );
        assert_eq!(lines[11], "        {");
        assert_eq!(lines[12], "    pub fn k() {}");
        assert!(module_file(&record(1, 0)).starts_with("#[::offload::kernels"));
    }

    #[test]
    fn package_ids_name_their_package() {
        assert_eq!(
            package_name("registry+https://github.com/rust-lang/crates.io-index#num-traits@0.2.19"),
            "num-traits"
        );
        assert_eq!(package_name("path+file:///w/my-math#0.1.0"), "my-math");
        assert_eq!(package_name("path+file:///w/math#my-math@0.1.0"), "my-math");
    }

    #[test]
    fn diagnostics_name_the_users_file() {
        let msg = "error[E0308]: mismatched types\n  --> src/m0.rs:13:9\n";
        assert_eq!(
            remap_paths(msg, &[record(12, 8)]),
            "error[E0308]: mismatched types\n  --> examples/demo.rs:13:9\n"
        );
    }
}
