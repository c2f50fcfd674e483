//! `cargo offload`: builds single-source Rust GPU programs. See `cli.rs` for the commands.
//!
//! The same executable also serves as the linker during builds (rustc invokes it through
//! `-C linker`): for the host it records each final link so that pass 3 can redo it with
//! device images, and for `nvptx64-nvidia-cuda` it links bitcode into PTX.

mod cargo_cli;
mod cli;
mod commands;
mod context;
mod embed;
mod gpu_target;
mod linker;
mod passes;
mod probe;
mod toolchain;
mod ui;

fn main() -> std::process::ExitCode {
    if let Some(code) = linker::run_if_invoked_as_linker() {
        return code;
    }
    commands::main_impl()
}
