//! Typed builder for the `cargo` command lines cargo-offload runs, and the parsing of their
//! `--message-format=json` output.

use crate::cli::BuildOptions;
use crate::ui;
use anyhow::{Context, Result};
use cargo_metadata::Message;
use std::ffi::{OsStr, OsString};
use std::io::BufRead;
use std::path::Path;
use std::process::{Command, Stdio};

/// A cargo invocation under construction.
#[derive(Debug)]
pub struct CargoCommand {
    cmd: Command,
}

/// The cargo binary: the one that started us (`$CARGO`), else `cargo` from `PATH`.
pub fn cargo_program() -> OsString {
    std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into())
}

impl CargoCommand {
    pub fn new(subcommand: &[&str]) -> CargoCommand {
        let mut cmd = Command::new(cargo_program());
        cmd.args(subcommand);
        CargoCommand { cmd }
    }

    /// Adds the user's package, target, profile and feature selection.
    pub fn selectors(mut self, o: &BuildOptions) -> CargoCommand {
        let c = &mut self.cmd;
        for p in &o.package {
            c.args(["--package", p]);
        }
        if o.workspace {
            c.arg("--workspace");
        }
        for b in &o.bin {
            c.args(["--bin", b]);
        }
        for e in &o.example {
            c.args(["--example", e]);
        }
        if o.examples {
            c.arg("--examples");
        }
        if o.bins {
            c.arg("--bins");
        }
        for t in &o.test {
            c.args(["--test", t]);
        }
        if o.tests {
            c.arg("--tests");
        }
        if o.lib {
            c.arg("--lib");
        }
        if o.release {
            c.arg("--release");
        }
        if let Some(p) = &o.profile {
            c.args(["--profile", p]);
        }
        for f in &o.features {
            c.args(["--features", f]);
        }
        if o.all_features {
            c.arg("--all-features");
        }
        if o.no_default_features {
            c.arg("--no-default-features");
        }
        if let Some(m) = &o.manifest_path {
            c.arg("--manifest-path").arg(m);
        }
        if o.locked {
            c.arg("--locked");
        }
        if o.frozen {
            c.arg("--frozen");
        }
        if o.keep_going {
            c.arg("--keep-going");
        }
        self.device_flags(o)
    }

    /// The options that also apply to the device builds: `--offline`, `--jobs`.
    pub fn device_flags(mut self, o: &BuildOptions) -> CargoCommand {
        if o.offline {
            self.cmd.arg("--offline");
        }
        if let Some(j) = o.jobs {
            self.cmd.arg("--jobs").arg(j.to_string());
        }
        self
    }

    pub fn arg(mut self, a: impl AsRef<OsStr>) -> CargoCommand {
        self.cmd.arg(a);
        self
    }

    pub fn args<I: IntoIterator<Item = S>, S: AsRef<OsStr>>(mut self, a: I) -> CargoCommand {
        self.cmd.args(a);
        self
    }

    pub fn env(mut self, k: impl AsRef<OsStr>, v: impl AsRef<OsStr>) -> CargoCommand {
        self.cmd.env(k, v);
        self
    }

    pub fn env_remove(mut self, k: impl AsRef<OsStr>) -> CargoCommand {
        self.cmd.env_remove(k);
        self
    }

    pub fn current_dir(mut self, dir: &Path) -> CargoCommand {
        self.cmd.current_dir(dir);
        self
    }

    /// The finished command, logged when verbose.
    pub fn into_command(self) -> Command {
        ui::command(&self.cmd);
        self.cmd
    }

    /// Runs cargo with JSON messages on stdout, handing each message to `on_message`; stderr
    /// is shown as it comes (`quiet_stderr == false`) or collected and returned.
    pub fn run_json(
        self,
        quiet_stderr: bool,
        mut on_message: impl FnMut(Message) -> Result<()>,
    ) -> Result<(std::process::ExitStatus, String)> {
        let mut cmd = self.into_command();
        cmd.stdout(Stdio::piped());
        cmd.stderr(if quiet_stderr { Stdio::piped() } else { Stdio::inherit() });
        let mut child = cmd
            .spawn()
            .with_context(|| format!("failed to start `{}`", cmd.get_program().to_string_lossy()))?;
        let stderr = child.stderr.take().map(|mut s| {
            std::thread::spawn(move || {
                let mut text = String::new();
                let _ = std::io::Read::read_to_string(&mut s, &mut text);
                text
            })
        });
        let stdout = std::io::BufReader::new(child.stdout.take().expect("piped"));
        let mut first_error = None;
        for message in parse_messages(stdout) {
            if let Err(e) = on_message(message?) {
                first_error.get_or_insert(e);
            }
        }
        let status = child.wait()?;
        let stderr = stderr.map(|t| t.join().unwrap_or_default()).unwrap_or_default();
        match first_error {
            Some(e) => Err(e),
            None => Ok((status, stderr)),
        }
    }
}

/// Parses cargo's JSON message stream; lines that are not JSON become `TextLine`s.
pub fn parse_messages(input: impl BufRead) -> impl Iterator<Item = Result<Message>> {
    Message::parse_stream(input).map(|m| m.context("failed to read cargo's output"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const CAPTURED: &str = r#"{"reason":"compiler-artifact","package_id":"path+file:///w/offload-rt#0.1.0","manifest_path":"/w/offload-rt/Cargo.toml","target":{"kind":["lib"],"crate_types":["lib"],"name":"offload","src_path":"/w/offload-rt/src/lib.rs","edition":"2024","doc":true,"doctest":true,"test":true},"profile":{"opt_level":"0","debuginfo":2,"debug_assertions":true,"overflow_checks":true,"test":false},"features":[],"filenames":["/w/target/debug/deps/liboffload-1.rlib"],"executable":null,"fresh":true}
not json at all
{"reason":"compiler-artifact","package_id":"path+file:///w/examples#0.1.0","manifest_path":"/w/examples/Cargo.toml","target":{"kind":["example"],"crate_types":["bin"],"name":"saxpy","src_path":"/w/examples/saxpy.rs","edition":"2024","doc":false,"doctest":false,"test":false},"profile":{"opt_level":"0","debuginfo":2,"debug_assertions":true,"overflow_checks":true,"test":false},"features":[],"filenames":["/w/target/debug/examples/saxpy"],"executable":"/w/target/debug/examples/saxpy","fresh":false}
{"reason":"build-finished","success":true}"#;

    #[test]
    fn ci_flags_reach_the_host_builds_and_the_device_builds_get_theirs() {
        use crate::cli::{CargoCli, Command, OffloadCli};
        use clap::Parser;
        let cli = CargoCli::try_parse_from([
            "cargo",
            "offload",
            "build",
            "--locked",
            "--offline",
            "-j",
            "3",
            "--keep-going",
            "--frozen",
            "--target-dir",
            "/tmp/t",
            "--release",
        ])
        .unwrap();
        let CargoCli::Offload(OffloadCli { command: Command::Build(b) }) = cli else {
            panic!("parsed {cli:?}")
        };
        assert_eq!(b.build.target_dir.as_deref(), Some(std::path::Path::new("/tmp/t")));
        let args = |c: CargoCommand| -> Vec<String> {
            c.cmd.get_args().map(|a| a.to_string_lossy().into_owned()).collect()
        };
        let host = args(CargoCommand::new(&["build"]).selectors(&b.build));
        for flag in ["--locked", "--frozen", "--offline", "--keep-going", "--release"] {
            assert!(host.contains(&flag.to_owned()), "{flag} missing from {host:?}");
        }
        assert!(host.windows(2).any(|w| w == ["--jobs", "3"]), "{host:?}");
        let device = args(CargoCommand::new(&["build"]).device_flags(&b.build));
        assert_eq!(device, ["build", "--offline", "--jobs", "3"]);
    }

    #[test]
    fn artifacts_and_text_are_told_apart() {
        let messages: Vec<Message> = parse_messages(CAPTURED.as_bytes()).collect::<Result<_>>().unwrap();
        assert_eq!(messages.len(), 4);
        let Message::CompilerArtifact(rt) = &messages[0] else { panic!("{:?}", messages[0]) };
        assert_eq!(rt.target.name, "offload");
        assert!(rt.fresh && rt.executable.is_none());
        assert!(matches!(&messages[1], Message::TextLine(l) if l == "not json at all"));
        let Message::CompilerArtifact(ex) = &messages[2] else { panic!() };
        assert_eq!(ex.executable.as_deref().map(|p| p.as_str()), Some("/w/target/debug/examples/saxpy"));
        assert!(matches!(messages[3], Message::BuildFinished(ref f) if f.success));
    }
}
