//! All of cargo-offload's own output: cargo-style status lines on stderr, progress bars for
//! the device pass, and the verbose command log.

use console::{Term, style};
use indicatif::{ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

static VERBOSE: AtomicBool = AtomicBool::new(false);
static JSON: AtomicBool = AtomicBool::new(false);

/// `--message-format json`: JSON messages on stdout (see [`message`] and [`forward`]).
pub fn set_json(on: bool) {
    JSON.store(on, Ordering::Relaxed);
}

/// One of cargo-offload's own JSON messages (`reason` first), with `--message-format json`.
pub fn message(reason: &str, fields: serde_json::Value) {
    if JSON.load(Ordering::Relaxed) {
        let mut object = serde_json::Map::new();
        object.insert("reason".into(), reason.into());
        if let serde_json::Value::Object(rest) = fields {
            object.extend(rest);
        }
        println!("{}", serde_json::Value::Object(object));
    }
}

/// One of cargo's JSON messages, passed on as it came, with `--message-format json`.
pub fn forward(m: &cargo_metadata::Message) {
    if JSON.load(Ordering::Relaxed)
        && !matches!(m, cargo_metadata::Message::TextLine(_))
        && let Ok(line) = serde_json::to_string(m)
    {
        println!("{line}");
    }
}

pub fn set_verbose(on: bool) {
    VERBOSE.store(on, Ordering::Relaxed);
}

pub fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

/// `1 kernel`, `2 kernels`.
pub fn count(n: usize, noun: &str) -> String {
    if n == 1 { format!("1 {noun}") } else { format!("{n} {noun}s") }
}

/// A cargo-style line: a right-aligned green verb, then the message.
pub fn status(verb: &str, message: impl std::fmt::Display) {
    eprintln!("{:>12} {message}", style(verb).green().bold());
}

/// A warning, in cargo's format.
pub fn warn(message: impl std::fmt::Display) {
    eprintln!("{}: {message}", style("warning").yellow().bold());
}

/// An error that does not end the command yet, in cargo's format.
pub fn error(message: impl std::fmt::Display) {
    eprintln!("{}: {message}", style("error").red().bold());
}

/// A command about to run, shown with `--verbose`.
pub fn command(cmd: &std::process::Command) {
    if verbose() {
        let envs: Vec<String> = cmd
            .get_envs()
            .filter_map(|(k, v)| Some(format!("{}={}", k.to_string_lossy(), v?.to_string_lossy())))
            .collect();
        let args: Vec<String> = std::iter::once(cmd.get_program())
            .chain(cmd.get_args())
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let prefix = if envs.is_empty() { String::new() } else { format!("{} ", envs.join(" ")) };
        eprintln!("{:>12} `{prefix}{}`", style("Running").cyan().bold(), args.join(" "));
    }
}

/// Progress over the device compile's steps: a bar on a terminal, status lines elsewhere.
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    pub fn new(steps: u64) -> Progress {
        let bar = Term::stderr().is_term().then(|| {
            let bar = ProgressBar::new(steps);
            bar.set_style(
                ProgressStyle::with_template(
                    "{prefix:>12.cyan.bold} [{bar:25}] {pos}/{len} {wide_msg} {elapsed}",
                )
                .expect("valid template")
                .progress_chars("=> "),
            );
            bar.set_prefix("Offloading");
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Progress { bar }
    }

    /// Starts a step: shown in the bar, or as a status line without a terminal.
    pub fn step(&self, message: String) {
        match &self.bar {
            Some(bar) => bar.set_message(message),
            None => status("Offloading", message),
        }
    }

    pub fn done_step(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// Prints a line above the bar (or plainly).
    pub fn println(&self, line: &str) {
        match &self.bar {
            Some(bar) => bar.suspend(|| eprintln!("{line}")),
            None => eprintln!("{line}"),
        }
    }

    pub fn finish(self) {
        if let Some(bar) = self.bar {
            bar.finish_and_clear();
        }
    }
}
