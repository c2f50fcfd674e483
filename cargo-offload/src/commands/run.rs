//! `cargo offload run`: build, then run the one selected executable.

use crate::cli::RunArgs;
use anyhow::{Context as _, Result, bail};
use std::process::ExitCode;

pub fn run(args: RunArgs) -> Result<ExitCode> {
    let (_, executables) = super::build::build(args.build, &["build"])?;
    let runnable: Vec<_> = executables.iter().filter(|e| e.kind == "bin" || e.kind == "example").collect();
    let exe = match runnable.as_slice() {
        [one] => one,
        [] => bail!("nothing to run: the selection built no binary or example"),
        many => bail!(
            "`cargo offload run` could not determine which executable to run; use --bin or --example to pick one of: {}",
            many.iter().map(|e| e.label.as_str()).collect::<Vec<_>>().join(", ")
        ),
    };
    crate::ui::status(
        "Running",
        format!("`{}{}`", exe.path.display(), args.args.iter().map(|a| format!(" {a}")).collect::<String>()),
    );
    let status = std::process::Command::new(&exe.path)
        .args(&args.args)
        .status()
        .with_context(|| format!("failed to run {}", exe.path.display()))?;
    Ok(ExitCode::from(status.code().unwrap_or(1).clamp(0, 255) as u8))
}
