//! Host linker role: run the real linker, and when the output holds kernels-module records,
//! save the command (with copies of the inputs rustc deletes after linking) so that the
//! relink pass can redo exactly this link with device images added.

use anyhow::{Context, Result};
use object::Object;
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// A saved link command.
#[derive(Debug, Serialize, Deserialize)]
pub struct LinkRecord {
    /// The linker program.
    pub linker: PathBuf,
    /// Its arguments, response files expanded, transient inputs replaced by saved copies.
    pub args: Vec<PathBuf>,
    /// Working directory of the link.
    pub cwd: PathBuf,
    /// The output file (`-o`).
    pub output: PathBuf,
}

fn record_dir(links_dir: &Path, output: &Path) -> PathBuf {
    let h = output
        .as_os_str()
        .as_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    let name = output.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    links_dir.join(format!("{name}-{h:016x}"))
}

/// The record of the link that produced `output` (compared by file identity, since cargo
/// hard-links final artifacts out of `deps/`), with its directory.
pub fn find_record(links_dir: &Path, output: &Path) -> Result<Option<(LinkRecord, PathBuf)>> {
    use std::os::unix::fs::MetadataExt;
    let Ok(target) = std::fs::metadata(output) else { return Ok(None) };
    let Ok(entries) = std::fs::read_dir(links_dir) else { return Ok(None) };
    // Cargo hard-links an executable from where it was linked (its build directory) to where
    // it is used; where that cannot be (the shared build directory on another file system)
    // it copies it, and then the copy is the one with the same length and bytes.
    let mut copies = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path().join("record.json");
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let record: LinkRecord =
            serde_json::from_str(&text).with_context(|| format!("failed to read {}", path.display()))?;
        let linked = record.cwd.join(&record.output);
        if let Ok(m) = std::fs::metadata(&linked) {
            if m.dev() == target.dev() && m.ino() == target.ino() {
                return Ok(Some((record, entry.path())));
            }
            if m.len() == target.len() {
                copies.push((linked, record, entry.path()));
            }
        }
    }
    let Ok(bytes) = std::fs::read(output) else { return Ok(None) };
    Ok(copies
        .into_iter()
        .find(|(linked, _, _)| std::fs::read(linked).is_ok_and(|b| b == bytes))
        .map(|(_, record, dir)| (record, dir)))
}

/// Removes the records of links whose output no longer exists (cargo replaced it with one of
/// another hash, or `cargo clean` removed it), with their saved inputs.
pub fn prune_records(links_dir: &Path) -> Result<()> {
    let Ok(entries) = std::fs::read_dir(links_dir) else { return Ok(()) };
    for entry in entries.flatten() {
        let record = std::fs::read_to_string(entry.path().join("record.json"))
            .ok()
            .and_then(|t| serde_json::from_str::<LinkRecord>(&t).ok());
        let stale = record.is_none_or(|r| !r.cwd.join(&r.output).exists());
        if stale {
            std::fs::remove_dir_all(entry.path())
                .with_context(|| format!("failed to remove {}", entry.path().display()))?;
        }
    }
    Ok(())
}

/// Splits a GNU-style response file into arguments (rustc writes one per line, escaping
/// backslashes and quotes).
fn response_file_args(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| !l.is_empty())
        .map(|line| {
            let line = line.strip_prefix('"').and_then(|l| l.strip_suffix('"')).unwrap_or(line);
            let mut out = String::new();
            let mut chars = line.chars();
            while let Some(c) = chars.next() {
                if c == '\\' {
                    out.extend(chars.next());
                } else {
                    out.push(c);
                }
            }
            out
        })
        .collect()
}

pub fn link(raw_args: Vec<OsString>) -> Result<ExitCode> {
    let linker = std::env::var_os(super::REAL_LINKER_ENV).unwrap_or_else(|| "cc".into());
    let status = Command::new(&linker)
        .args(&raw_args)
        .status()
        .with_context(|| format!("failed to run the linker `{}`", linker.to_string_lossy()))?;
    if !status.success() {
        return Ok(ExitCode::from(status.code().unwrap_or(1).clamp(1, 255) as u8));
    }
    let Some(links_dir) = std::env::var_os(super::LINKS_DIR_ENV).map(PathBuf::from) else {
        return Ok(ExitCode::SUCCESS);
    };
    let mut args: Vec<PathBuf> = Vec::new();
    for a in raw_args {
        match a.as_bytes().strip_prefix(b"@") {
            Some(file) => {
                let path = PathBuf::from(std::ffi::OsStr::from_bytes(file));
                let text = std::fs::read_to_string(&path)
                    .with_context(|| format!("failed to read response file {}", path.display()))?;
                args.extend(response_file_args(&text).into_iter().map(PathBuf::from));
            }
            None => args.push(PathBuf::from(a)),
        }
    }
    let Some(output) = args.iter().position(|a| a.as_os_str() == "-o").and_then(|i| args.get(i + 1)).cloned()
    else {
        return Ok(ExitCode::SUCCESS);
    };
    if !has_kernels(&output)? {
        return Ok(ExitCode::SUCCESS);
    }
    let cwd = std::env::current_dir()?;
    let dir = record_dir(&links_dir, &cwd.join(&output));
    let inputs = dir.join("inputs");
    if dir.exists() {
        std::fs::remove_dir_all(&dir).with_context(|| format!("failed to clear {}", dir.display()))?;
    }
    std::fs::create_dir_all(&inputs)?;
    for (i, arg) in args.iter_mut().enumerate() {
        let path = cwd.join(&*arg);
        if *arg != output && is_transient(&path) {
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let saved = inputs.join(format!("{i}-{name}"));
            std::fs::copy(&path, &saved)
                .with_context(|| format!("failed to save link input {}", path.display()))?;
            *arg = saved;
        }
    }
    let record = LinkRecord { linker: PathBuf::from(linker), args, cwd, output };
    std::fs::write(dir.join("record.json"), serde_json::to_vec_pretty(&record)?)?;
    Ok(ExitCode::SUCCESS)
}

/// Whether rustc deletes this link input once the link is done: the crate's own object files
/// (unless `-C save-temps`) and everything in its temporary `rustc*` directories.
fn is_transient(path: &Path) -> bool {
    let in_rustc_tmp = path
        .ancestors()
        .skip(1)
        .any(|dir| dir.file_name().is_some_and(|n| n.to_string_lossy().starts_with("rustc")));
    path.is_file()
        && (path.extension().is_some_and(|e| e == "o")
            || in_rustc_tmp
            || path.starts_with(std::env::temp_dir()))
}

/// Whether a linked file carries kernels-module records.
pub fn has_kernels(path: &Path) -> Result<bool> {
    let data = std::fs::read(path).with_context(|| format!("failed to read {}", path.display()))?;
    let Ok(file) = object::File::parse(&*data) else { return Ok(false) };
    Ok(file.section_by_name(offload_wire::record::SECTION).is_some())
}

#[cfg(test)]
mod tests {
    use super::{LinkRecord, find_record, response_file_args};

    #[test]
    fn a_link_is_found_from_its_hard_link_or_from_a_copy_of_its_output() {
        let root = std::env::temp_dir().join(format!("offload-find-record-{}", std::process::id()));
        let (links, build, out) = (root.join("links"), root.join("build"), root.join("target"));
        for d in [&links, &build, &out] {
            std::fs::create_dir_all(d).unwrap();
        }
        let record = |name: &str, output: &str| {
            let dir = links.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            let r =
                LinkRecord { linker: "cc".into(), args: vec![], cwd: build.clone(), output: output.into() };
            std::fs::write(dir.join("record.json"), serde_json::to_string(&r).unwrap()).unwrap();
        };
        std::fs::write(build.join("demo-1"), b"executable one").unwrap();
        std::fs::write(build.join("demo-2"), b"executable two").unwrap();
        record("one", "demo-1");
        record("two", "demo-2");
        // Hard-linked, as cargo uplifts on one file system.
        std::fs::hard_link(build.join("demo-1"), out.join("linked")).unwrap();
        let (r, _) = find_record(&links, &out.join("linked")).unwrap().expect("the hard link's record");
        assert_eq!(r.output, std::path::Path::new("demo-1"));
        // Copied, as cargo uplifts across file systems: found by its bytes, not its length alone.
        std::fs::copy(build.join("demo-2"), out.join("copied")).unwrap();
        let (r, _) = find_record(&links, &out.join("copied")).unwrap().expect("the copy's record");
        assert_eq!(r.output, std::path::Path::new("demo-2"));
        std::fs::write(out.join("other"), b"executable six").unwrap();
        assert!(find_record(&links, &out.join("other")).unwrap().is_none());
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn response_files_unescape() {
        let args = response_file_args("-o\n/tmp/a\\ b\n\"-Wl,--as-needed\"\nC:\\\\x\n");
        assert_eq!(args, ["-o", "/tmp/a b", "-Wl,--as-needed", "C:\\x"]);
    }
}
