//! The steps the two device linker roles share ([`super::nvptx`] for nvptx, [`super::amdgcn`]
//! for amdgcn), with rustup's `llvm-tools`:
//!
//! 1. `llvm-link` the crate's own bitcode objects into one module;
//! 2. merge every bitcode member of the rlibs into ONE module (`--only-needed` does not iterate
//!    to a fixed point across files), then pull only what the crate needs from it;
//! 3. internalize everything but the exported kernels and drop the rest, mark the kernels'
//!    pointer parameters `noalias` (see [`restrict_kernel_pointers`]), and give each function
//!    one trap path that records the panic's site (see [`super::traps`]);
//! 4. optimise, and 5. `llc` for the requested GPU ([`llc`]).

use anyhow::{Context, Result, bail};
use object::read::archive::ArchiveFile;
use offload_wire::record::LAUNCH_BOUNDS_SUFFIX;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Set to keep the optimised bitcode of a device link next to its output (`<output>.bc`).
pub const KEEP_BC_ENV: &str = "OFFLOAD_KEEP_BC";

const BITCODE_MAGIC: &[u8] = b"BC\xC0\xDE";

/// What the shared steps need from a linker command line.
#[derive(Debug, Default, PartialEq)]
pub struct Inputs {
    /// The kernels: everything else is internalized.
    pub exports: Vec<String>,
    /// The crate's own bitcode objects.
    pub objects: Vec<PathBuf>,
    /// rlibs and archives, whose bitcode members are linked as needed.
    pub archives: Vec<PathBuf>,
    /// `opt`/`llc` level, `-O3` unless the command line says otherwise.
    pub opt: String,
    /// The GPU (`-mcpu`) and rustc's target features (`-mattr`), for `llc`.
    pub cpu: String,
    pub features: String,
}

impl Inputs {
    pub fn new() -> Inputs {
        Inputs { opt: "-O3".into(), ..Inputs::default() }
    }
}

/// Whether `path` is an LLVM bitcode file.
pub fn is_bitcode(path: &Path) -> bool {
    let mut magic = [0u8; 4];
    std::fs::File::open(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut magic))
        .is_ok_and(|()| magic == BITCODE_MAGIC)
}

/// rustup's `llvm-tools` directory, which cargo-offload passes down to its linker roles.
pub fn llvm_bin() -> Result<PathBuf> {
    Ok(PathBuf::from(
        std::env::var_os(super::LLVM_BIN_ENV).context("cargo-offload did not say where llvm-tools are")?,
    ))
}

pub fn tool(llvm_bin: &Path, name: &str, args: &[OsString]) -> Result<()> {
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
        if bytes.starts_with(BITCODE_MAGIC) {
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
/// and memory other threads update concurrently is only accessed atomically. On both targets
/// it lets LLVM keep values in registers across stores to other arguments and, on NVIDIA, once
/// `opt` infers `readonly`, load read-only inputs through the non-coherent cache
/// (`ld.global.nc`).
pub fn restrict_kernel_pointers(ir: &str, exports: &[String]) -> String {
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

/// Gives each kernel whose `#[kernel(launch_bounds(MAX_THREADS, MIN_BLOCKS))]` left a static
/// beside it the matching entry-point attributes, and on NVIDIA makes those statics internal
/// (so `opt` drops them; the AMD link's version script names them, so there they stay, 8
/// bytes each). On NVIDIA `nvvm.maxntid` and `nvvm.minctasm`, which `llc` writes as PTX's
/// `.maxntid` and `.minnctapersm`: ptxas then keeps each thread's registers low enough for
/// MIN_BLOCKS blocks of MAX_THREADS per multiprocessor, as for CUDA's `__launch_bounds__`. On
/// AMD `amdgpu-flat-work-group-size` and `amdgpu-waves-per-eu` (MIN_BLOCKS blocks' wavefronts
/// over a compute unit's four SIMDs; built and validated, not run: no AMD GPU here).
pub fn apply_launch_bounds(ir: &str, amd: bool) -> String {
    let mut bounds = std::collections::HashMap::new();
    let mut out = String::with_capacity(ir.len() + 256);
    for line in ir.split_inclusive('\n') {
        if let Some((name, [max, min])) = launch_bounds_static(line) {
            bounds.insert(name.to_owned(), (max, min));
            if amd {
                // rustc's version script for the AMD link names the static: it stays.
                out.push_str(line);
                continue;
            }
            let at = line.find(" = ").expect("launch_bounds_static found it") + 3;
            out.push_str(&line[..at]);
            out.push_str("internal ");
            out.push_str(line[at..].trim_start_matches("dso_local ").trim_start_matches("external "));
        } else {
            out.push_str(line);
        }
    }
    if bounds.is_empty() {
        return out;
    }
    let mut result = String::with_capacity(out.len() + 256 * bounds.len());
    for line in out.split_inclusive('\n') {
        let kernel_bounds = line.strip_prefix("define ").and_then(|rest| {
            let name = rest[rest.find('@')? + 1..].split('(').next()?.trim_matches('"');
            bounds.get(name).copied()
        });
        match (kernel_bounds, line.find('(').and(line.rfind(')'))) {
            (Some((max, min)), Some(close)) => {
                let attrs = if amd {
                    let mut a = format!(" \"amdgpu-flat-work-group-size\"=\"1,{max}\"");
                    if min > 0 {
                        let waves = (min * max.div_ceil(64)).div_ceil(4);
                        a.push_str(&format!(" \"amdgpu-waves-per-eu\"=\"{waves}\""));
                    }
                    a
                } else {
                    let mut a = format!(" \"nvvm.maxntid\"=\"{max},1,1\"");
                    if min > 0 {
                        a.push_str(&format!(" \"nvvm.minctasm\"=\"{min}\""));
                    }
                    a
                };
                // Function attributes follow the parameters and `unnamed_addr`: after the
                // attribute group (`#0`) if there is one, else before the body's brace.
                let rest = &line[close + 1..];
                let insert = match rest.find(" #") {
                    Some(g) => {
                        close + 1 + g + 2 + rest[g + 2..].chars().take_while(char::is_ascii_digit).count()
                    }
                    None => close + 1 + rest.rfind(" {").unwrap_or(rest.len()),
                };
                result.push_str(&line[..insert]);
                result.push_str(&attrs);
                result.push_str(&line[insert..]);
            }
            _ => result.push_str(line),
        }
    }
    result
}

/// `(kernel symbol, [max threads, min blocks])` if `line` defines a launch-bounds static.
/// rustc writes a static as its bytes (`@<kernel>__launch_bounds = … [8 x i8]
/// c"\00\01\00\00\05\00\00\00", align 4`, two little-endian `u32`s); typed constants
/// (`[2 x i32] [i32 256, i32 5]`) are read too.
fn launch_bounds_static(line: &str) -> Option<(&str, [u32; 2])> {
    let (lhs, rhs) = line.strip_prefix('@')?.split_once(" = ")?;
    let name = lhs.trim_matches('"').strip_suffix(LAUNCH_BOUNDS_SUFFIX)?;
    if let Some((_, typed)) = rhs.split_once("[2 x i32] [") {
        let mut numbers =
            typed.split(']').next()?.split(',').map(|v| v.trim().strip_prefix("i32 ")?.parse::<u32>().ok());
        return Some((name, [numbers.next()??, numbers.next()??]));
    }
    let text = rhs.split_once("[8 x i8] c\"")?.1.split('"').next()?;
    let mut bytes = Vec::with_capacity(8);
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            let hex: String = chars.by_ref().take(2).collect();
            bytes.push(u8::from_str_radix(&hex, 16).ok()?);
        } else {
            bytes.push(u8::try_from(c).ok()?);
        }
    }
    let word = |i: usize| Some(u32::from_le_bytes(bytes.get(i..i + 4)?.try_into().ok()?));
    (bytes.len() == 8).then_some(())?;
    Some((name, [word(0)?, word(4)?]))
}

/// Steps 1 to 4: links, internalizes, restricts and optimises `inputs` into `tmp/opt.bc`,
/// which it returns. With [`KEEP_BC_ENV`] set, a copy goes to `output` with extension `bc`.
pub fn optimise(llvm_bin: &Path, tmp: &Path, inputs: &Inputs, output: &Path) -> Result<PathBuf> {
    let p = |name: &str| tmp.join(name).into_os_string();
    let os = |s: &str| OsString::from(s);

    if inputs.objects.is_empty() {
        bail!("no bitcode objects to link");
    }
    let mut main_args: Vec<OsString> = inputs.objects.iter().map(|o| o.clone().into_os_string()).collect();
    main_args.extend([os("-o"), p("main.bc")]);
    tool(llvm_bin, "llvm-link", &main_args)?;

    let mut members = Vec::new();
    for (i, a) in inputs.archives.iter().enumerate() {
        members.extend(extract_bitcode(a, tmp, i)?);
    }
    if members.is_empty() {
        std::fs::copy(tmp.join("main.bc"), tmp.join("linked.bc"))?;
    } else {
        let mut lib_args: Vec<OsString> = members.into_iter().map(PathBuf::into_os_string).collect();
        lib_args.extend([os("-o"), p("libs.bc")]);
        tool(llvm_bin, "llvm-link", &lib_args)?;
        tool(
            llvm_bin,
            "llvm-link",
            &[p("main.bc"), os("--only-needed"), p("libs.bc"), os("-o"), p("linked.bc")],
        )?;
    }
    let mode = super::traps::PanicSites::from_env()?;
    let amd = inputs.cpu.starts_with("gfx");
    let api = format!("-internalize-public-api-list={}", kept_exports(&inputs.exports, mode, amd).join(","));
    tool(
        llvm_bin,
        "opt",
        &[os("-passes=internalize,globaldce"), os(&api), p("linked.bc"), os("-o"), p("int.bc")],
    )?;
    tool(llvm_bin, "llvm-dis", &[p("int.bc"), os("-o"), p("int.ll")])?;
    let ir = std::fs::read_to_string(tmp.join("int.ll"))?;
    let restricted = apply_launch_bounds(&restrict_kernel_pointers(&ir, &inputs.exports), amd);
    let (ir, sites) = match mode {
        super::traps::PanicSites::Off => (super::traps::merge_traps(&restricted), Vec::new()),
        on => super::traps::number_traps(&restricted, amd, on == super::traps::PanicSites::Line),
    };
    std::fs::write(tmp.join("restrict.ll"), ir)?;
    let sites_file = sites_path(output);
    std::fs::write(&sites_file, serde_json::to_vec(&sites)?)
        .with_context(|| format!("failed to write {}", sites_file.display()))?;
    tool(llvm_bin, "llvm-as", &[p("restrict.ll"), os("-o"), p("restrict.bc")])?;
    let optimise_from = if mode == super::traps::PanicSites::Off {
        "restrict.bc"
    } else {
        // The line tables were only there to place the traps (`ptxas` refuses optimised code
        // with debug information): gone before optimising.
        tool(llvm_bin, "opt", &[os("--strip-debug"), p("restrict.bc"), os("-o"), p("stripped.bc")])?;
        "stripped.bc"
    };
    tool(llvm_bin, "opt", &[os(&inputs.opt), p(optimise_from), os("-o"), p("opt.bc")])?;
    if std::env::var_os(KEEP_BC_ENV).is_some() {
        std::fs::copy(tmp.join("opt.bc"), output.with_extension("bc"))?;
    }
    Ok(tmp.join("opt.bc"))
}

/// The symbols that stay external through `internalize`: everything rustc exports, but without
/// panic sites not the trap record's function and global (`offload_wire::images::trap`), which
/// the runtime exports for the sites' failure paths alone. Unused, they go with `globaldce`,
/// so a default image holds the kernels and what they call, as before panic sites existed. (On
/// AMD they stay: the link's version script, which `rust-lld` checks, names them.)
fn kept_exports(exports: &[String], mode: super::traps::PanicSites, amd: bool) -> Vec<&str> {
    use offload_wire::images::trap::{RECORD_FN, RECORD_PTR};
    let unused = mode == super::traps::PanicSites::Off && !amd;
    exports.iter().map(String::as_str).filter(|&e| !unused || (e != RECORD_FN && e != RECORD_PTR)).collect()
}

/// Where the linker leaves the panic sites of the image it writes to `output`
/// ([`super::traps::Site`]s as JSON), for the device pass to embed.
pub fn sites_path(output: &Path) -> PathBuf {
    let mut name = output.as_os_str().to_owned();
    name.push(".sites.json");
    PathBuf::from(name)
}

/// Step 5: `llc` for `triple`, with rustc's CPU and target features; `extra` adds options
/// (`-filetype=obj`).
pub fn llc(
    llvm_bin: &Path,
    inputs: &Inputs,
    triple: &str,
    extra: &[&str],
    input: &Path,
    output: &Path,
) -> Result<()> {
    let os = |s: &str| OsString::from(s);
    let mut args = vec![os(&inputs.opt), os(&format!("-mtriple={triple}"))];
    if !inputs.cpu.is_empty() {
        args.push(os(&format!("-mcpu={}", inputs.cpu)));
    }
    if !inputs.features.is_empty() {
        args.push(os(&format!("-mattr={}", inputs.features)));
    }
    args.extend(extra.iter().map(|e| os(e)));
    args.extend([input.as_os_str().to_owned(), os("-o"), output.as_os_str().to_owned()]);
    tool(llvm_bin, "llc", &args)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_pointers_become_noalias_and_nothing_else_changes() {
        let ir = "define internal void @helper(ptr %0) {\n\
                  define ptx_kernel void @k1(double %a, ptr noundef %x, i64 %n, ptr %1) unnamed_addr #0 {\n\
                  define ptx_kernel void @other(ptr %p) {\n\
                  define amdgpu_kernel void @k2(i32 noundef %0, ptr noundef readonly captures(none) %1) #1 {\n";
        let out = restrict_kernel_pointers(ir, &["k1".to_owned(), "k2".to_owned()]);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[0], "define internal void @helper(ptr %0) {");
        assert_eq!(
            lines[1],
            "define ptx_kernel void @k1(double %a, ptr noalias noundef %x, i64 %n, ptr noalias %1) unnamed_addr #0 {"
        );
        assert_eq!(lines[2], "define ptx_kernel void @other(ptr %p) {");
        assert_eq!(
            lines[3],
            "define amdgpu_kernel void @k2(i32 noundef %0, ptr noalias noundef readonly captures(none) %1) #1 {"
        );
    }

    #[test]
    fn launch_bounds_statics_become_entry_point_attributes() {
        let ir = "@k1__launch_bounds = dso_local local_unnamed_addr addrspace(1) constant [8 x i8] c\"\\00\\01\\00\\00\\05\\00\\00\\00\", align 4\n\
                  @k2__launch_bounds = local_unnamed_addr constant [2 x i32] [i32 64, i32 0], align 4\n\
                  define ptx_kernel void @k1(ptr %x) unnamed_addr #0 {\n\
                  define ptx_kernel void @k2(ptr %x) {\n\
                  define ptx_kernel void @k3(ptr %x) unnamed_addr #1 {\n";
        let nv: Vec<String> = apply_launch_bounds(ir, false).lines().map(str::to_owned).collect();
        assert_eq!(
            nv[0],
            "@k1__launch_bounds = internal local_unnamed_addr addrspace(1) constant [8 x i8] c\"\\00\\01\\00\\00\\05\\00\\00\\00\", align 4"
        );
        assert_eq!(
            nv[2],
            "define ptx_kernel void @k1(ptr %x) unnamed_addr #0 \"nvvm.maxntid\"=\"256,1,1\" \"nvvm.minctasm\"=\"5\" {"
        );
        // No minimum of blocks: only the block size; no attribute group: before the brace.
        assert_eq!(nv[3], "define ptx_kernel void @k2(ptr %x) \"nvvm.maxntid\"=\"64,1,1\" {");
        assert_eq!(nv[4], "define ptx_kernel void @k3(ptr %x) unnamed_addr #1 {");

        let amd: Vec<String> = apply_launch_bounds(ir, true).lines().map(str::to_owned).collect();
        assert!(amd[0].starts_with("@k1__launch_bounds = dso_local"), "{}", amd[0]);
        // 5 blocks of 4 wavefronts over 4 SIMDs: 5 waves per SIMD.
        assert_eq!(
            amd[2],
            "define ptx_kernel void @k1(ptr %x) unnamed_addr #0 \"amdgpu-flat-work-group-size\"=\"1,256\" \"amdgpu-waves-per-eu\"=\"5\" {"
        );
        // Without launch bounds, nothing changes.
        let plain = "define ptx_kernel void @k(ptr %x) #0 {\n";
        assert_eq!(apply_launch_bounds(plain, false), plain);
    }

    #[test]
    fn the_trap_record_is_exported_only_where_panic_sites_use_it() {
        use super::super::traps::PanicSites;
        let exports = ["k1", "__offload_trap_record", "__offload_trap_at", "k2"].map(String::from);
        assert_eq!(kept_exports(&exports, PanicSites::Off, false), ["k1", "k2"]);
        for mode in [PanicSites::Kernel, PanicSites::Line] {
            assert_eq!(kept_exports(&exports, mode, false), exports);
        }
        assert_eq!(kept_exports(&exports, PanicSites::Off, true), exports);
    }

    #[test]
    fn recognises_bitcode_files() {
        let dir = tempfile::tempdir().unwrap();
        let (bc, obj) = (dir.path().join("a.o"), dir.path().join("b.o"));
        std::fs::write(&bc, b"BC\xC0\xDE\x35\x14").unwrap();
        std::fs::write(&obj, b"\x7fELF\x02\x01").unwrap();
        assert!(is_bitcode(&bc) && !is_bitcode(&obj) && !is_bitcode(&dir.path().join("none")));
    }
}
