//! One module per command.
pub mod build;
pub mod clean;
pub mod doctor;
pub mod emit;
pub mod inspect;
pub mod run;
pub mod test;

use crate::cli::{CargoCli, Command};
use clap::Parser;
use std::process::ExitCode;

pub fn main_impl() -> ExitCode {
    let CargoCli::Offload(cli) = CargoCli::parse();
    let result = match cli.command {
        Command::Build(a) => build::run(a.build).map(|_| ExitCode::SUCCESS),
        Command::Run(a) => run::run(a),
        Command::Test(a) => test::run(a),
        Command::Inspect(a) => inspect::run(&a).map(|()| ExitCode::SUCCESS),
        Command::Doctor(a) => doctor::run(&a),
        Command::Clean(a) => clean::run(&a).map(|()| ExitCode::SUCCESS),
    };
    result.unwrap_or_else(|e| {
        eprintln!("{}: {e:#}", console::style("error").red().bold());
        ExitCode::FAILURE
    })
}
