//! The `llbc` linker role for `nvptx64-nvidia-cuda`: rustup ships no `llvm-bitcode-linker`,
//! so cargo-offload links the crate's bitcode into PTX itself, with rustup's `llvm-tools`:
//!
//! 1. `llvm-link` the crate's own objects into one module;
//! 2. merge every bitcode member of the rlibs into ONE module (`--only-needed` does not iterate
//!    to a fixed point across files), then pull only what the crate needs from it;
//! 3. internalize everything but the exported kernels and drop the rest, and mark the
//!    kernels' pointer parameters `noalias` (see [`restrict_kernel_pointers`]);
//! 4. optimise, and 5. `llc` to PTX for the requested `sm_XX`.

use anyhow::{Context, Result, bail};
use object::read::archive::ArchiveFile;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

#[derive(Debug, Default, PartialEq)]
struct Args {
    exports: Vec<String>,
    objects: Vec<PathBuf>,
    archives: Vec<PathBuf>,
    target: String,
    cpu: String,
    features: String,
    output: PathBuf,
    opt: String,
}

fn parse(args: Vec<OsString>) -> Result<Args> {
    let mut out = Args { opt: "-O3".into(), ..Args::default() };
    let mut it = args.into_iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().with_context(|| format!("{name} needs a value"));
        match a.as_str() {
            "--export-symbol" => out.exports.push(value("--export-symbol")?),
            "-L" => {
                value("-L")?;
            }
            "--target" => out.target = value("--target")?,
            "--target-cpu" => out.cpu = value("--target-cpu")?,
            "--target-feature" => out.features = value("--target-feature")?,
            "-o" => out.output = value("-o")?.into(),
            "--debug" => {}
            "-O0" | "-O1" | "-O2" | "-O3" | "-Os" | "-Oz" => out.opt = a,
            _ if a.starts_with("--target-feature=") => {
                out.features = a["--target-feature=".len()..].to_owned()
            }
            _ if a.ends_with(".rlib") || a.ends_with(".a") => out.archives.push(a.into()),
            _ if a.starts_with('-') => bail!("unexpected linker argument {a:?}"),
            _ => out.objects.push(a.into()),
        }
    }
    if out.output.as_os_str().is_empty() {
        bail!("no output file (-o)");
    }
    if out.target != "nvptx64-nvidia-cuda" {
        bail!("the bitcode linker role handles nvptx64-nvidia-cuda, not {:?}", out.target);
    }
    Ok(out)
}

fn tool(llvm_bin: &Path, name: &str, args: &[OsString]) -> Result<()> {
    let mut cmd = Command::new(llvm_bin.join(name));
    cmd.args(args);
    let out = cmd.output().with_context(|| format!("failed to run {}", llvm_bin.join(name).display()))?;
    if !out.status.success() {
        bail!("{name} failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr).trim_end());
    }
    Ok(())
}

/// Writes every LLVM bitcode member of an archive into `dir`.
fn extract_bitcode(archive: &Path, dir: &Path, prefix: usize) -> Result<Vec<PathBuf>> {
    let data = std::fs::read(archive).with_context(|| format!("failed to read {}", archive.display()))?;
    let ar = ArchiveFile::parse(&*data)
        .with_context(|| format!("failed to parse archive {}", archive.display()))?;
    let mut out = Vec::new();
    for (i, member) in ar.members().enumerate() {
        let member = member?;
        let bytes = member.data(&*data)?;
        if bytes.starts_with(b"BC\xC0\xDE") {
            let path = dir.join(format!("lib{prefix}-{i}.bc"));
            std::fs::write(&path, bytes)?;
            out.push(path);
        }
    }
    Ok(out)
}

/// Marks every pointer parameter of the exported kernels `noalias`, as CUDA's `__restrict__`
/// does. Sound for cargo-offload's kernels: each pointer is a distinct argument array, the
/// host's borrows forbid passing an array writable twice or writable and read-only at once,
/// and memory other threads update concurrently is only accessed atomically. It lets LLVM keep
/// values in registers across stores and, once `opt` infers `readonly`, load read-only inputs
/// through the non-coherent cache (`ld.global.nc`).
fn restrict_kernel_pointers(ir: &str, exports: &[String]) -> String {
    let mut out = String::with_capacity(ir.len() + 1024);
    for line in ir.split_inclusive('\n') {
        let is_kernel = line.starts_with("define ")
            && exports
                .iter()
                .any(|e| line.contains(&format!("@{e}(")) || line.contains(&format!("@\"{e}\"(")));
        match (is_kernel, line.find('('), line.rfind(')')) {
            (true, Some(open), Some(close)) if open < close => {
                let params = line[open..close]
                    .replace("ptr noundef ", "ptr noalias noundef ")
                    .replace("ptr %", "ptr noalias %");
                out.push_str(&line[..open]);
                out.push_str(&params);
                out.push_str(&line[close..]);
            }
            _ => out.push_str(line),
        }
    }
    out
}

pub fn link(raw: Vec<OsString>) -> Result<ExitCode> {
    let args = parse(raw)?;
    let llvm_bin = PathBuf::from(
        std::env::var_os(super::LLVM_BIN_ENV).context("cargo-offload did not say where llvm-tools are")?,
    );
    let tmp = tempfile::tempdir()?;
    let p = |name: &str| tmp.path().join(name).into_os_string();
    let os = |s: &str| OsString::from(s);

    let mut main_args: Vec<OsString> = args.objects.iter().map(|o| o.clone().into_os_string()).collect();
    main_args.extend([os("-o"), p("main.bc")]);
    tool(&llvm_bin, "llvm-link", &main_args)?;

    let mut members = Vec::new();
    for (i, a) in args.archives.iter().enumerate() {
        members.extend(extract_bitcode(a, tmp.path(), i)?);
    }
    if members.is_empty() {
        std::fs::copy(tmp.path().join("main.bc"), tmp.path().join("linked.bc"))?;
    } else {
        let mut lib_args: Vec<OsString> = members.into_iter().map(PathBuf::into_os_string).collect();
        lib_args.extend([os("-o"), p("libs.bc")]);
        tool(&llvm_bin, "llvm-link", &lib_args)?;
        tool(
            &llvm_bin,
            "llvm-link",
            &[p("main.bc"), os("--only-needed"), p("libs.bc"), os("-o"), p("linked.bc")],
        )?;
    }
    let api = format!("-internalize-public-api-list={}", args.exports.join(","));
    tool(
        &llvm_bin,
        "opt",
        &[os("-passes=internalize,globaldce"), os(&api), p("linked.bc"), os("-o"), p("int.bc")],
    )?;
    tool(&llvm_bin, "llvm-dis", &[p("int.bc"), os("-o"), p("int.ll")])?;
    let ir = std::fs::read_to_string(tmp.path().join("int.ll"))?;
    std::fs::write(tmp.path().join("restrict.ll"), restrict_kernel_pointers(&ir, &args.exports))?;
    tool(&llvm_bin, "llvm-as", &[p("restrict.ll"), os("-o"), p("restrict.bc")])?;
    tool(&llvm_bin, "opt", &[os(&args.opt), p("restrict.bc"), os("-o"), p("opt.bc")])?;
    if std::env::var_os("OFFLOAD_KEEP_BC").is_some() {
        std::fs::copy(tmp.path().join("opt.bc"), args.output.with_extension("bc"))?;
    }
    let mut llc = vec![os(&args.opt), os("-mtriple=nvptx64-nvidia-cuda")];
    if !args.cpu.is_empty() {
        llc.push(os(&format!("-mcpu={}", args.cpu)));
    }
    if !args.features.is_empty() {
        llc.push(os(&format!("-mattr={}", args.features)));
    }
    llc.extend([p("opt.bc"), os("-o"), args.output.into_os_string()]);
    tool(&llvm_bin, "llc", &llc)?;
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_rustc_passes() {
        let raw = "--export-symbol k1 --export-symbol k2 /t/a.rcgu.o /t/libcompiler_builtins-1.rlib -L /t/raw \
                   --target nvptx64-nvidia-cuda --target-cpu sm_90 --target-feature=+ptx78 -o /t/out.ptx -O3 --debug";
        let args = parse(raw.split(' ').map(OsString::from).collect()).unwrap();
        assert_eq!(args.exports, ["k1", "k2"]);
        assert_eq!(args.objects, [PathBuf::from("/t/a.rcgu.o")]);
        assert_eq!(args.archives, [PathBuf::from("/t/libcompiler_builtins-1.rlib")]);
        assert_eq!((args.cpu.as_str(), args.features.as_str()), ("sm_90", "+ptx78"));
        assert_eq!(args.output, PathBuf::from("/t/out.ptx"));
    }

    #[test]
    fn kernel_pointers_become_noalias_and_nothing_else_changes() {
        let ir = "define internal void @helper(ptr %0) {\n\
                  define ptx_kernel void @k1(double %a, ptr noundef %x, i64 %n, ptr %1) unnamed_addr #0 {\n\
                  define ptx_kernel void @other(ptr %p) {\n";
        let out = restrict_kernel_pointers(ir, &["k1".to_owned()]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "define internal void @helper(ptr %0) {");
        assert_eq!(
            lines[1],
            "define ptx_kernel void @k1(double %a, ptr noalias noundef %x, i64 %n, ptr noalias %1) unnamed_addr #0 {"
        );
        assert_eq!(lines[2], "define ptx_kernel void @other(ptr %p) {");
    }

    #[test]
    fn refuses_other_targets_and_missing_output() {
        let raw = |s: &str| s.split(' ').map(OsString::from).collect::<Vec<_>>();
        assert!(parse(raw("--target amdgcn-amd-amdhsa -o x")).is_err());
        assert!(parse(raw("--target nvptx64-nvidia-cuda a.o")).is_err());
    }
}
