//! The linker role for `nvptx64-nvidia-cuda`: rustup ships no `llvm-bitcode-linker`, so
//! cargo-offload links the crate's bitcode into PTX itself with the steps of
//! [`super::bitcode`] (llvm-link, internalize, `noalias` kernel pointers, opt, llc).

use super::bitcode::{self, Inputs};
use anyhow::{Context, Result, bail};
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

const TRIPLE: &str = "nvptx64-nvidia-cuda";

#[derive(Debug, Default, PartialEq)]
struct Args {
    inputs: Inputs,
    target: String,
    output: PathBuf,
}

fn parse(args: Vec<OsString>) -> Result<Args> {
    let mut out = Args { inputs: Inputs::new(), ..Args::default() };
    let inputs = &mut out.inputs;
    let mut it = args.into_iter().map(|a| a.to_string_lossy().into_owned());
    while let Some(a) = it.next() {
        let mut value = |name: &str| it.next().with_context(|| format!("{name} needs a value"));
        match a.as_str() {
            "--export-symbol" => inputs.exports.push(value("--export-symbol")?),
            "-L" => {
                value("-L")?;
            }
            "--target" => out.target = value("--target")?,
            "--target-cpu" => inputs.cpu = value("--target-cpu")?,
            "--target-feature" => inputs.features = value("--target-feature")?,
            "-o" => out.output = value("-o")?.into(),
            "--debug" => {}
            "-O0" | "-O1" | "-O2" | "-O3" | "-Os" | "-Oz" => inputs.opt = a,
            _ if a.starts_with("--target-feature=") => {
                inputs.features = a["--target-feature=".len()..].to_owned()
            }
            _ if a.ends_with(".rlib") || a.ends_with(".a") => inputs.archives.push(a.into()),
            _ if a.starts_with('-') => bail!("unexpected linker argument {a:?}"),
            _ => inputs.objects.push(a.into()),
        }
    }
    if out.output.as_os_str().is_empty() {
        bail!("no output file (-o)");
    }
    if out.target != TRIPLE {
        bail!("the bitcode linker role handles {TRIPLE}, not {:?}", out.target);
    }
    Ok(out)
}

pub fn link(raw: Vec<OsString>) -> Result<ExitCode> {
    let args = parse(raw)?;
    let llvm_bin = bitcode::llvm_bin()?;
    let tmp = tempfile::tempdir()?;
    let opt = bitcode::optimise(&llvm_bin, tmp.path(), &args.inputs, &args.output)?;
    bitcode::llc(&llvm_bin, &args.inputs, TRIPLE, &[], &opt, &args.output)?;
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
        let inputs = &args.inputs;
        assert_eq!(inputs.exports, ["k1", "k2"]);
        assert_eq!(inputs.objects, [PathBuf::from("/t/a.rcgu.o")]);
        assert_eq!(inputs.archives, [PathBuf::from("/t/libcompiler_builtins-1.rlib")]);
        assert_eq!((inputs.cpu.as_str(), inputs.features.as_str()), ("sm_90", "+ptx78"));
        assert_eq!(args.output, PathBuf::from("/t/out.ptx"));
    }

    #[test]
    fn refuses_other_targets_and_missing_output() {
        let raw = |s: &str| s.split(' ').map(OsString::from).collect::<Vec<_>>();
        assert!(parse(raw("--target amdgcn-amd-amdhsa -o x")).is_err());
        assert!(parse(raw("--target nvptx64-nvidia-cuda a.o")).is_err());
    }
}
