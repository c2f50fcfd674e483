//! The `amdgcn` linker role for `amdgcn-amd-amdhsa`. The device crate is compiled with
//! `-Clinker-plugin-lto`, so rustc hands its (fat-LTO) module over as bitcode with an ld.lld
//! command line; cargo-offload runs the steps of [`super::bitcode`] on it (internalize,
//! `noalias` kernel pointers, opt), `llc` makes the object, and rustup's `rust-lld` links the
//! code object with rustc's own arguments, the bitcode replaced by that object.

use super::bitcode::{self, Inputs};
use anyhow::{Context, Result, bail};
use object::{Object as _, ObjectSymbol as _};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

const TRIPLE: &str = "amdgcn-amd-amdhsa";

#[derive(Debug, Default, PartialEq)]
struct Args {
    inputs: Inputs,
    output: PathBuf,
    /// rustc's arguments for ld.lld without `-flavor`, the `-plugin-opt`s and the bitcode
    /// objects; the compiled object goes at `object_at`.
    lld: Vec<OsString>,
    object_at: usize,
}

/// The symbols a version script (as rustc writes it) makes global, less the `.kd` kernel
/// descriptors, which only exist once `llc` has compiled the kernels.
fn exported_symbols(script: &str) -> Vec<String> {
    let globals = script.split_once("global:").map_or("", |(_, rest)| rest);
    let globals = globals.split_once("local:").map_or(globals, |(g, _)| g);
    globals
        .split(';')
        .map(str::trim)
        .filter(|s| !s.is_empty() && !s.ends_with(".kd"))
        .map(str::to_owned)
        .collect()
}

fn parse(args: Vec<OsString>) -> Result<Args> {
    let mut out = Args { inputs: Inputs::new(), ..Args::default() };
    let inputs = &mut out.inputs;
    let mut it = args.into_iter().peekable();
    while let Some(arg) = it.next() {
        let a = arg.to_string_lossy().into_owned();
        if a == "-flavor" {
            it.next();
        } else if a == "-o" {
            let value = it.next().context("-o needs a value")?;
            out.output = value.clone().into();
            out.lld.extend([arg, value]);
        } else if let Some(opt) = a.strip_prefix("-plugin-opt=") {
            if let Some(cpu) = opt.strip_prefix("mcpu=") {
                inputs.cpu = cpu.to_owned();
            } else if let Some(features) = opt.strip_prefix("-mattr=") {
                inputs.features = features.to_owned();
            } else if matches!(opt, "O0" | "O1" | "O2" | "O3") {
                inputs.opt = format!("-{opt}");
            }
        } else if let Some(script) = a.strip_prefix("--version-script=") {
            let text = std::fs::read_to_string(script)
                .with_context(|| format!("failed to read the version script {script}"))?;
            inputs.exports.extend(exported_symbols(&text));
            out.lld.push(arg);
        } else if !a.starts_with('-') && bitcode::is_bitcode(Path::new(&a)) {
            if inputs.objects.is_empty() {
                out.object_at = out.lld.len();
            }
            inputs.objects.push(a.into());
        } else {
            if !a.starts_with('-') && (a.ends_with(".rlib") || a.ends_with(".a")) {
                inputs.archives.push(a.into());
            }
            out.lld.push(arg);
        }
    }
    if out.output.as_os_str().is_empty() {
        bail!("no output file (-o)");
    }
    if inputs.objects.is_empty() {
        bail!("no bitcode objects: the {TRIPLE} linker role needs the crate built with -Clinker-plugin-lto");
    }
    if inputs.cpu.is_empty() {
        bail!("no GPU (-plugin-opt=mcpu=gfx...): build with -Ctarget-cpu");
    }
    Ok(out)
}

pub fn link(raw: Vec<OsString>) -> Result<ExitCode> {
    let mut args = parse(raw)?;
    let llvm_bin = bitcode::llvm_bin()?;
    let tmp = tempfile::tempdir()?;
    let opt = bitcode::optimise(&llvm_bin, tmp.path(), &args.inputs, &args.output)?;
    let object = tmp.path().join("kernels.o");
    bitcode::llc(&llvm_bin, &args.inputs, TRIPLE, &["-filetype=obj"], &opt, &object)?;
    args.lld.insert(args.object_at, object.into_os_string());
    let lld = llvm_bin.join("rust-lld");
    let out = Command::new(&lld)
        .args(["-flavor", "gnu"])
        .args(&args.lld)
        .output()
        .with_context(|| format!("failed to run {}", lld.display()))?;
    if !out.status.success() {
        bail!("rust-lld failed ({}):\n{}", out.status, String::from_utf8_lossy(&out.stderr).trim_end());
    }
    Ok(ExitCode::SUCCESS)
}

/// ELF machine number of AMD GPUs.
const EM_AMDGPU: u16 = 224;

/// Checks an AMD code object: ELF for `EM_AMDGPU`, a kernel descriptor (`K.kd`) for every
/// kernel, and no undefined symbols.
pub fn validate_code_object(data: &[u8], kernels: &[String]) -> Result<()> {
    let file = object::File::parse(data).context("not an ELF file")?;
    let machine = u16::from_le_bytes(data.get(18..20).context("truncated ELF header")?.try_into()?);
    if machine != EM_AMDGPU {
        bail!("ELF machine is {machine}, not EM_AMDGPU ({EM_AMDGPU})");
    }
    let names: Vec<&str> = file.symbols().filter_map(|s| s.name().ok()).collect();
    let missing: Vec<&String> =
        kernels.iter().filter(|k| !names.contains(&format!("{k}.kd").as_str())).collect();
    if !missing.is_empty() {
        bail!("no kernel descriptor for {missing:?}");
    }
    let undefined: Vec<&str> = file
        .symbols()
        .filter(|s| s.is_undefined() && !s.name().unwrap_or("").is_empty())
        .filter_map(|s| s.name().ok())
        .collect();
    if !undefined.is_empty() {
        bail!("undefined symbols {undefined:?}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_rustc_passes() {
        let dir = tempfile::tempdir().unwrap();
        let d = |name: &str| dir.path().join(name).to_string_lossy().into_owned();
        std::fs::write(
            d("list"),
            "{\n  global:\n    k1;\n    k1.kd;\n    k2;\n    k2.kd;\n\n  local:\n    *;\n};\n",
        )
        .unwrap();
        std::fs::write(d("a.rcgu.o"), b"BC\xC0\xDE\x35\x14").unwrap();
        let raw = format!(
            "-flavor gnu --version-script={} --no-undefined-version {} --as-needed -L {} -Bdynamic --eh-frame-hdr \
             -z noexecstack -plugin-opt=O3 -plugin-opt=mcpu=gfx90a -o {} --gc-sections -shared -O1 --strip-debug",
            d("list"),
            d("a.rcgu.o"),
            d("raw-dylibs"),
            d("out.elf")
        );
        let args = parse(raw.split(' ').map(OsString::from).collect()).unwrap();
        let inputs = &args.inputs;
        assert_eq!(inputs.exports, ["k1", "k2"]);
        assert_eq!(inputs.objects, [PathBuf::from(d("a.rcgu.o"))]);
        assert_eq!((inputs.cpu.as_str(), inputs.opt.as_str()), ("gfx90a", "-O3"));
        assert_eq!(args.output, PathBuf::from(d("out.elf")));
        let lld: Vec<String> = args.lld.iter().map(|a| a.to_string_lossy().into_owned()).collect();
        assert_eq!(lld[..2], [format!("--version-script={}", d("list")), "--no-undefined-version".into()]);
        assert_eq!(args.object_at, 2);
        assert!(
            !lld.iter().any(|a| a.contains("plugin-opt") || a.contains("rcgu") || a == "-flavor"),
            "{lld:?}"
        );
        assert!(lld.ends_with(&["--gc-sections", "-shared", "-O1", "--strip-debug"].map(String::from)));
    }

    #[test]
    fn refuses_native_objects_and_a_missing_cpu() {
        let dir = tempfile::tempdir().unwrap();
        let bc = dir.path().join("a.o");
        std::fs::write(&bc, b"BC\xC0\xDE").unwrap();
        let raw = |s: String| s.split(' ').map(OsString::from).collect::<Vec<_>>();
        let e = parse(raw("-o x.elf native.o".into())).unwrap_err().to_string();
        assert!(e.contains("-Clinker-plugin-lto"), "{e}");
        assert!(parse(raw(format!("-o x.elf {}", bc.display()))).is_err());
        assert!(parse(raw(format!("-o x.elf -plugin-opt=mcpu=gfx90a {}", bc.display()))).is_ok());
    }
}
