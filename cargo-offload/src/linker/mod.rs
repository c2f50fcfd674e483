//! cargo-offload as the linker rustc calls (`-C linker=cargo-offload`). Which role it plays
//! is set by [`ROLE_ENV`], which only cargo-offload's own builds set.

mod amdgcn;
mod bitcode;
mod host;
mod nvptx;
mod traps;

pub use amdgcn::validate_code_object;
pub use bitcode::sites_path;
pub use host::{find_record, prune_records};
pub use traps::{PanicSites, Site, module_file};

use std::process::ExitCode;

/// Environment variable naming the linker role: [`ROLE_HOST`], [`ROLE_NVPTX`] or [`ROLE_AMDGCN`].
pub const ROLE_ENV: &str = "__CARGO_OFFLOAD_LINKER";
/// Link host executables normally and record the command for the relink pass.
pub const ROLE_HOST: &str = "host";
/// Link nvptx bitcode into PTX (the `llvm-bitcode-linker` role rustup does not ship).
pub const ROLE_NVPTX: &str = "nvptx";
/// Link amdgcn bitcode (`-Clinker-plugin-lto`) into an HSA code object, with the same
/// `noalias` kernel pointers as [`ROLE_NVPTX`].
pub const ROLE_AMDGCN: &str = "amdgcn";
/// Where host link records go.
pub const LINKS_DIR_ENV: &str = "__CARGO_OFFLOAD_LINKS_DIR";
/// The linker the host role delegates to.
pub const REAL_LINKER_ENV: &str = "__CARGO_OFFLOAD_REAL_LINKER";
/// rustup's llvm-tools directory (and rust-lld), for the device roles.
pub const LLVM_BIN_ENV: &str = "__CARGO_OFFLOAD_LLVM_BIN";

/// Runs the linker role if this process was started as a linker.
pub fn run_if_invoked_as_linker() -> Option<ExitCode> {
    let role = std::env::var(ROLE_ENV).ok()?;
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    let result = match role.as_str() {
        ROLE_HOST => host::link(args),
        ROLE_NVPTX => nvptx::link(args),
        ROLE_AMDGCN => amdgcn::link(args),
        other => Err(anyhow::anyhow!("unknown linker role {other:?}")),
    };
    Some(match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cargo-offload (as linker): {e:#}");
            ExitCode::FAILURE
        }
    })
}
