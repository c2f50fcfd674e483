//! `cargo offload test`: build the test executables with device images, then let
//! `cargo test` run them (it finds them fresh and does not relink).

use crate::cli::TestArgs;
use crate::passes::host_meta;
use anyhow::{Context as _, Result};
use std::process::ExitCode;

pub fn run(args: TestArgs) -> Result<ExitCode> {
    let (ctx, _) = super::build::build(args.build.clone(), &["test", "--no-run"])?;
    if args.no_run {
        return Ok(ExitCode::SUCCESS);
    }
    let mut cmd = host_meta::host_command(&ctx, &["test"]);
    if !args.args.is_empty() {
        cmd = cmd.arg("--").args(&args.args);
    }
    let status = cmd.into_command().status().context("failed to run `cargo test`")?;
    Ok(ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8))
}
