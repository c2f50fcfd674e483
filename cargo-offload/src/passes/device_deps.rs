//! Device dependencies: the crates besides `core` and `offload` that a package's kernels
//! modules use, declared in its manifest,
//!
//! ```toml
//! [package.metadata.offload]
//! device-dependencies = ["num-traits", "my-math"]
//! ```
//!
//! each one of the package's own `[dependencies]`. The generated device crate depends on each
//! as the package declares it — the same version requirement, source, default features and
//! features — and the lockfile it starts from is the user's, so the versions are the host
//! build's, resolved offline. (The host build may enable more features of a crate, through
//! other crates that use it; the device build gets what the declaration asks for, which is what
//! a `no_std` target can build.)

use crate::context::Context;
use anyhow::{Context as _, Result, bail};
use cargo_metadata::{DependencyKind, Metadata, Package};
use offload_wire::record::ModuleRecord;
use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The device dependencies of a set of kernels modules.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct DeviceDeps {
    /// By dependency key (the name the kernels use, dashes as declared).
    pub deps: BTreeMap<String, Spec>,
    /// The directories of the path crates the device build compiles: the path dependencies
    /// and, transitively, their own path dependencies (their sources decide the images).
    pub path_crates: Vec<PathBuf>,
}

/// How the device crate depends on one crate.
#[derive(Debug, Clone, PartialEq)]
pub struct Spec {
    /// The package's name, when the key renames it.
    pub package: Option<String>,
    pub source: Source,
    pub default_features: bool,
    pub features: Vec<String>,
    /// Who declared it (`package (manifest)`), for errors.
    pub declared_by: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Source {
    /// crates.io, with a version requirement.
    Registry(String),
    /// A directory (absolute).
    Path(PathBuf),
    /// A git repository, with `branch`/`tag`/`rev` as declared.
    Git { url: String, reference: Option<(String, String)> },
}

/// The `device-dependencies` list of the manifest in `manifest_dir` (empty without one).
fn declared(manifest_dir: &Path) -> Result<Vec<String>> {
    let path = manifest_dir.join("Cargo.toml");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("failed to read {}", path.display()))?;
    let doc: toml::Table = text.parse().with_context(|| format!("failed to parse {}", path.display()))?;
    let Some(list) = doc
        .get("package")
        .and_then(|p| p.get("metadata"))
        .and_then(|m| m.get("offload"))
        .and_then(|o| o.get("device-dependencies"))
    else {
        return Ok(Vec::new());
    };
    let bad = || {
        format!(
            "{}: `[package.metadata.offload] device-dependencies` must be a list of dependency names, e.g. [\"num-traits\"]",
            path.display()
        )
    };
    let items = list.as_array().with_context(bad)?;
    items.iter().map(|i| i.as_str().map(str::to_owned).with_context(bad)).collect()
}

/// Resolves the device dependencies of the packages that hold `records`, running `cargo
/// metadata` into `metadata` the first time one is declared (the build's executable groups
/// share it).
pub fn resolve(ctx: &Context, records: &[ModuleRecord], metadata: &OnceCell<Metadata>) -> Result<DeviceDeps> {
    let mut wanted: BTreeMap<PathBuf, Vec<String>> = BTreeMap::new();
    for r in records {
        let dir = PathBuf::from(&r.manifest_dir);
        if let std::collections::btree_map::Entry::Vacant(e) = wanted.entry(dir) {
            let names = declared(e.key())?;
            e.insert(names);
        }
    }
    if wanted.values().all(Vec::is_empty) {
        return Ok(DeviceDeps::default());
    }
    let metadata = match metadata.get() {
        Some(m) => m,
        None => {
            let m = run_metadata(ctx)?;
            metadata.get_or_init(|| m)
        }
    };
    let mut out = DeviceDeps::default();
    for (dir, names) in wanted.iter().filter(|(_, n)| !n.is_empty()) {
        let manifest = dir.join("Cargo.toml");
        let package =
            metadata.packages.iter().find(|p| p.manifest_path.as_std_path() == manifest).with_context(
                || format!("cargo metadata does not list the package of {}", manifest.display()),
            )?;
        for name in names {
            let spec = spec_of(package, name)?;
            reaches_no_runtime(metadata, package, name)?;
            merge(&mut out, name, spec)?;
        }
    }
    let mut stack: Vec<PathBuf> = out.path_sources().map(|(_, p)| p.to_owned()).collect();
    while let Some(dir) = stack.pop() {
        if out.path_crates.contains(&dir) {
            continue;
        }
        let manifest = dir.join("Cargo.toml");
        if let Some(p) = metadata.packages.iter().find(|p| p.manifest_path.as_std_path() == manifest) {
            stack.extend(
                p.dependencies
                    .iter()
                    .filter(|d| d.kind == DependencyKind::Normal)
                    .filter_map(|d| d.path.as_ref().map(|p| p.clone().into_std_path_buf())),
            );
        }
        out.path_crates.push(dir);
    }
    out.path_crates.sort();
    Ok(out)
}

/// The runtime's package: what kernels modules, and only they, may call for thread indices,
/// barriers and warp operations.
const RUNTIME: &str = "offload-rt";

/// Checks that the device dependency `name` of `package` does not depend on the runtime,
/// directly or through others: its functions could then read thread indices or reach barriers
/// and warp operations where the kernels macro's uniformity analysis, which sees only kernels
/// modules, cannot check them (a barrier under a branch on the thread, from a safe helper of
/// another crate, is undefined behaviour on a GPU). Such code belongs in a kernels module.
fn reaches_no_runtime(metadata: &Metadata, package: &Package, name: &str) -> Result<()> {
    let Some(resolve) = &metadata.resolve else { return Ok(()) };
    let norm = |s: &str| s.replace('-', "_");
    let node = |id: &cargo_metadata::PackageId| resolve.nodes.iter().find(|n| &n.id == id);
    let Some(dep) = node(&package.id).and_then(|n| n.deps.iter().find(|d| norm(&d.name) == norm(name)))
    else {
        return Ok(());
    };
    let package_name = |id: &cargo_metadata::PackageId| {
        metadata.packages.iter().find(|p| &p.id == id).map_or_else(|| id.repr.clone(), |p| p.name.to_string())
    };
    // Breadth first over normal dependencies, keeping the way there for the message.
    let mut queue = std::collections::VecDeque::from([(dep.pkg.clone(), vec![package_name(&dep.pkg)])]);
    let mut seen = std::collections::HashSet::new();
    while let Some((id, path)) = queue.pop_front() {
        if !seen.insert(id.clone()) {
            continue;
        }
        if package_name(&id) == RUNTIME {
            bail!(
                "the device dependency `{name}` of {} ({}) depends on `{RUNTIME}` ({}): code outside kernels modules may not read thread indices or call barriers and warp operations, which the kernels macro checks only in kernels modules\n  \
                 help: move the functions that use `offload` into a kernels module (`#[offload::kernels]`) of the package, or drop `{name}`'s dependency on `{RUNTIME}`",
                package.name,
                package.manifest_path,
                path.join(" → "),
            );
        }
        for d in node(&id).into_iter().flat_map(|n| &n.deps) {
            if d.dep_kinds.iter().any(|k| k.kind == DependencyKind::Normal) {
                let mut p = path.clone();
                p.push(package_name(&d.pkg));
                queue.push_back((d.pkg.clone(), p));
            }
        }
    }
    Ok(())
}

/// `cargo metadata` of the workspace, offline when the build is.
fn run_metadata(ctx: &Context) -> Result<Metadata> {
    let mut cmd = cargo_metadata::MetadataCommand::new();
    cmd.manifest_path(ctx.workspace_root.join("Cargo.toml"));
    let mut other = Vec::new();
    if ctx.opts.offline {
        other.push("--offline".to_owned());
    }
    if ctx.opts.frozen {
        other.push("--frozen".to_owned());
    }
    if ctx.opts.locked {
        other.push("--locked".to_owned());
    }
    cmd.other_options(other);
    cmd.exec().context("`cargo metadata` failed (needed to resolve the device dependencies)")
}

/// The declaration of dependency `name` (a key of the package's `[dependencies]`).
fn spec_of(package: &Package, name: &str) -> Result<Spec> {
    let norm = |s: &str| s.replace('-', "_");
    let declared_by = format!("{} ({})", package.name, package.manifest_path);
    let dep = package
        .dependencies
        .iter()
        .filter(|d| d.kind == DependencyKind::Normal)
        .find(|d| norm(d.rename.as_deref().unwrap_or(&d.name)) == norm(name))
        .with_context(|| {
            format!(
                "`{name}` is listed in the device-dependencies of {declared_by} but is not one of its [dependencies]; add it there too (e.g. `{name} = {{ version = \"…\", default-features = false }}`)"
            )
        })?;
    let source = if let Some(path) = &dep.path {
        Source::Path(path.clone().into_std_path_buf())
    } else if let Some(git) = dep.source.as_ref().and_then(|s| s.repr.strip_prefix("git+")) {
        let (url, query) = git.split_once('?').unwrap_or((git, ""));
        let url = url.split('#').next().unwrap_or(url).to_owned();
        let reference = query
            .split('&')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| matches!(*k, "branch" | "tag" | "rev"))
            .map(|(k, v)| (k.to_owned(), v.to_owned()));
        Source::Git { url, reference }
    } else if let Some(registry) = &dep.registry {
        bail!(
            "the device dependency `{name}` of {declared_by} comes from the registry {registry}; device dependencies come from crates.io, a path or git for now"
        );
    } else {
        Source::Registry(dep.req.to_string())
    };
    Ok(Spec {
        package: dep.rename.as_ref().map(|_| dep.name.clone()),
        source,
        default_features: dep.uses_default_features,
        features: dep.features.clone(),
        declared_by,
    })
}

/// Adds `spec` under `key`: two packages may declare the same crate if they agree on where it
/// comes from; their features add up.
fn merge(out: &mut DeviceDeps, key: &str, spec: Spec) -> Result<()> {
    let Some(have) = out.deps.get_mut(key) else {
        out.deps.insert(key.to_owned(), spec);
        return Ok(());
    };
    if have.package != spec.package || have.source != spec.source {
        bail!(
            "the device dependency `{key}` is declared differently by {} ({:?}) and {} ({:?}): kernels modules of one build share one device crate, so they must agree",
            have.declared_by,
            have.source,
            spec.declared_by,
            spec.source
        );
    }
    have.default_features &= spec.default_features;
    for f in spec.features {
        if !have.features.contains(&f) {
            have.features.push(f);
        }
    }
    Ok(())
}

impl DeviceDeps {
    /// The lines of the device crate's `[dependencies]` table.
    pub fn manifest_lines(&self) -> Result<String> {
        let mut table = toml::Table::new();
        for (key, spec) in &self.deps {
            let mut t = toml::Table::new();
            if let Some(p) = &spec.package {
                t.insert("package".into(), p.clone().into());
            }
            match &spec.source {
                Source::Registry(req) => {
                    t.insert("version".into(), req.clone().into());
                }
                Source::Path(path) => {
                    t.insert("path".into(), path.display().to_string().into());
                }
                Source::Git { url, reference } => {
                    t.insert("git".into(), url.clone().into());
                    if let Some((k, v)) = reference {
                        t.insert(k.clone(), v.clone().into());
                    }
                }
            }
            if !spec.default_features {
                t.insert("default-features".into(), false.into());
            }
            if !spec.features.is_empty() {
                let features: Vec<toml::Value> = spec.features.iter().map(|f| f.clone().into()).collect();
                t.insert("features".into(), features.into());
            }
            table.insert(key.clone(), toml::Value::Table(t));
        }
        let mut lines = String::new();
        for (key, value) in table {
            lines.push_str(&format!("{} = {}\n", toml_key(&key), toml::Value::to_string(&value)));
        }
        Ok(lines)
    }

    /// Directories whose sources decide the device code: the path dependencies.
    pub fn path_sources(&self) -> impl Iterator<Item = (&str, &Path)> {
        self.deps.iter().filter_map(|(k, s)| match &s.source {
            Source::Path(p) => Some((k.as_str(), p.as_path())),
            _ => None,
        })
    }
}

/// A bare key when it can be one.
fn toml_key(key: &str) -> String {
    if key.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_') {
        key.to_owned()
    } else {
        format!("{key:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(source: Source, features: &[&str], by: &str) -> Spec {
        Spec {
            package: None,
            source,
            default_features: false,
            features: features.iter().map(|f| (*f).to_owned()).collect(),
            declared_by: by.into(),
        }
    }

    #[test]
    fn the_manifest_lines_declare_each_crate_as_its_package_did() {
        let mut d = DeviceDeps::default();
        merge(&mut d, "num-traits", spec(Source::Registry("^0.2".into()), &["libm"], "a")).unwrap();
        merge(&mut d, "my-math", spec(Source::Path("/w/my-math".into()), &[], "a")).unwrap();
        let mut renamed = spec(
            Source::Git {
                url: "https://example.org/g.git".into(),
                reference: Some(("rev".into(), "abc".into())),
            },
            &[],
            "a",
        );
        renamed.package = Some("glam".into());
        renamed.default_features = true;
        merge(&mut d, "g", renamed).unwrap();
        let lines = d.manifest_lines().unwrap();
        let parsed: toml::Table = lines.parse().expect("valid TOML");
        assert_eq!(parsed["num-traits"]["version"].as_str(), Some("^0.2"));
        assert_eq!(parsed["num-traits"]["default-features"].as_bool(), Some(false));
        assert_eq!(parsed["num-traits"]["features"].as_array().unwrap().len(), 1);
        assert_eq!(parsed["my-math"]["path"].as_str(), Some("/w/my-math"));
        assert_eq!(parsed["g"]["package"].as_str(), Some("glam"));
        assert_eq!(parsed["g"]["git"].as_str(), Some("https://example.org/g.git"));
        assert_eq!(parsed["g"]["rev"].as_str(), Some("abc"));
        assert!(parsed["g"].get("default-features").is_none());
        assert_eq!(d.path_sources().collect::<Vec<_>>(), [("my-math", Path::new("/w/my-math"))]);
    }

    #[test]
    fn two_packages_agree_on_a_crate_or_fail_naming_both() {
        let mut d = DeviceDeps::default();
        merge(&mut d, "num-traits", spec(Source::Registry("^0.2".into()), &["libm"], "a")).unwrap();
        merge(&mut d, "num-traits", spec(Source::Registry("^0.2".into()), &["i128"], "b")).unwrap();
        assert_eq!(d.deps["num-traits"].features, ["libm", "i128"]);
        let e = merge(&mut d, "num-traits", spec(Source::Registry("^0.1".into()), &[], "c")).unwrap_err();
        let e = e.to_string();
        assert!(e.contains("declared differently by a") && e.contains("and c"), "{e}");
    }

    #[test]
    fn a_list_that_is_not_a_list_of_names_is_an_error_naming_the_manifest() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(
            dir.path().join("Cargo.toml"),
            "[package.metadata.offload]\ndevice-dependencies = \"x\"\n",
        )
        .unwrap();
        let e = declared(dir.path()).unwrap_err().to_string();
        assert!(e.contains("must be a list") && e.contains("Cargo.toml"), "{e}");
        std::fs::write(dir.path().join("Cargo.toml"), "[package]\nname = \"p\"\n").unwrap();
        assert!(declared(dir.path()).unwrap().is_empty());
    }
}
