//! `cargo offload doctor`: what this machine has for building and running offload programs —
//! the toolchain and its components, `ptxas`, the AMD linker, liboffload and the libraries it
//! needs, the GPUs it finds — and, for whatever is missing, what that means and how to
//! install it. Exits with failure only when nothing could be built (no usable toolchain).

use crate::cli::DoctorArgs;
use crate::toolchain::{self, Toolchain};
use anyhow::Result;
use console::style;
use std::process::{Command, ExitCode};

/// One line of the report.
enum Check {
    Ok(String),
    /// Something is missing that some uses need: the program still works without it.
    Warn(String),
    /// Nothing can be built.
    Fail(String),
}

fn print(what: &str, check: &Check) {
    let (mark, text) = match check {
        Check::Ok(t) => (style("ok").green().bold(), t),
        Check::Warn(t) => (style("warn").yellow().bold(), t),
        Check::Fail(t) => (style("FAIL").red().bold(), t),
    };
    let mut lines = text.lines();
    println!("{what:>12} {mark:<4} {}", lines.next().unwrap_or_default());
    for l in lines {
        println!("{:>17} {l}", "");
    }
}

pub fn run(_args: &DoctorArgs) -> Result<ExitCode> {
    let cwd = std::env::current_dir()?;
    let mut failed = false;

    let toolchain = match Toolchain::detect(&cwd) {
        Ok(t) => {
            let version = t.version.lines().next().unwrap_or_default().to_owned();
            print("toolchain", &Check::Ok(format!("{version}, with rust-src and llvm-tools")));
            Some(t)
        }
        Err(e) => {
            failed = true;
            print("toolchain", &Check::Fail(format!("{e:#}")));
            None
        }
    };

    let ptxas = match toolchain::find_ptxas() {
        Some(p) => {
            let version = Command::new(&p)
                .arg("--version")
                .output()
                .ok()
                .and_then(|o| String::from_utf8_lossy(&o.stdout).lines().last().map(str::to_owned))
                .unwrap_or_default();
            Check::Ok(format!("{} ({version}): NVIDIA images carry a cubin", p.display()))
        }
        None => Check::Warn(toolchain::PTXAS_MISSING.to_owned()),
    };
    print("ptxas", &ptxas);
    let nvdisasm = match toolchain::find_nvdisasm() {
        Some(p) => Check::Ok(format!("{}: `inspect --emit sass` can disassemble cubins", p.display())),
        None => Check::Warn(
            "nvdisasm not found: `cargo offload inspect --emit sass` is unavailable (everything else works)
  help: `pip install nvidia-cuda-nvdisasm` or the CUDA toolkit, or set OFFLOAD_NVDISASM"
                .to_owned(),
        ),
    };
    print("nvdisasm", &nvdisasm);

    if let Some(t) = &toolchain {
        let lld = t.llvm_bin.join("rust-lld");
        let check = if lld.is_file() || t.llvm_bin.join("gcc-ld/ld.lld").is_file() {
            Check::Ok(format!("{}: AMD code objects can be linked", lld.display()))
        } else {
            Check::Warn(format!(
                "no rust-lld in {}: builds for AMD GPUs (gfx…) fail\n  help: reinstall the toolchain from rust-toolchain.toml",
                t.llvm_bin.display()
            ))
        };
        print("rust-lld", &check);
    }

    match crate::probe::Probe::run() {
        Err(e) => print(
            "liboffload",
            &Check::Warn(format!(
                "{e}\nwithout it every kernel runs on the CPU emulation backend (and OFFLOAD_DEVICE=gpu is an error)\n\
                 help: install LLVM 22's liboffload (Debian/Ubuntu: `apt-get install liboffload-22`), or set \
                 OFFLOAD_LIBRARY to the path of libLLVMOffload.so.22.1; a library it needs that is missing is named above"
            )),
        ),
        Ok(p) => {
            print("liboffload", &Check::Ok(format!("{} loads", p.library)));
            if let Some(e) = &p.init_error {
                print(
                    "GPUs",
                    &Check::Warn(format!("olInit failed: {e}\nkernels run on the CPU emulation backend")),
                );
            } else if p.gpus.is_empty() {
                print(
                    "GPUs",
                    &Check::Warn(
                        "none found (liboffload sees no NVIDIA or AMD device, or no driver for one)\n\
                         kernels run on the CPU emulation backend"
                            .to_owned(),
                    ),
                );
            } else {
                let list: Vec<String> = p
                    .gpus
                    .iter()
                    .enumerate()
                    .map(|(i, g)| format!("GPU {i}: {} ({})", g.name, g.vendor))
                    .collect();
                print("GPUs", &Check::Ok(list.join("\n")));
                let archs: Vec<&str> =
                    p.gpus.iter().map(|g| g.arch.as_str()).filter(|a| !a.is_empty()).collect();
                if !archs.is_empty() {
                    print("build for", &Check::Ok(format!("--target-gpu {}", archs.join(","))));
                }
            }
        }
    }
    Ok(if failed { ExitCode::FAILURE } else { ExitCode::SUCCESS })
}
