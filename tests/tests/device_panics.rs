//! A kernel that panics reports where (`file:line:column`), what failed and which thread: on a
//! GPU (built with `OFFLOAD_PANIC_SITES=kernel` or `line`) from the record its first panicking
//! thread leaves before the trap, on the CPU backend from the panic itself. Each panic runs in a child process of this test binary (the
//! `child_*` tests, ignored unless a parent starts them): on a GPU a trap leaves the device
//! unusable for the rest of the process.

use offload::Device;
use std::process::Command;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Reads `x[i + shift]`: out of bounds for the last `shift` threads.
    #[kernel]
    pub fn index_past(shift: usize, x: &[u32], mut y: Region<u32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = x[i + shift]; // SITE index_past
        }
    }

    /// `unwrap`s the position of the first value below `limit` in a window of 8: `None` where
    /// the window holds none.
    #[kernel]
    pub fn unwrap_none(limit: u32, x: &[u32], mut y: Region<u32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            let window = &x[i.min(x.len() - 8)..][..8];
            *yi = window.iter().position(|&v| v < limit).unwrap() as u32; // SITE unwrap_none
        }
    }

    /// Panics where it finds `bad`.
    #[kernel]
    pub fn explicit(bad: u32, x: &[u32], mut y: Region<u32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            if x[i] == bad {
                panic!("found the bad value"); // SITE explicit
            }
            *yi = x[i];
        }
    }
}

const CHILD_ENV: &str = "OFFLOAD_TEST_DEVICE_PANIC_CHILD";
/// The panic-site mode this test was built with: on a GPU the places are only recorded with
/// `kernel` or `line` (`scripts/gpu bundle` builds the tests with `kernel`).
const SITES: Option<&str> = option_env!("OFFLOAD_PANIC_SITES");
const N: usize = 4096;

/// The line of this file that `marker` ends ("SITE <name>").
fn line_of(name: &str) -> usize {
    let marker = format!("// SITE {name}");
    include_str!("device_panics.rs")
        .lines()
        .position(|l| l.trim_end().ends_with(&marker))
        .map(|i| i + 1)
        .unwrap_or_else(|| panic!("no line marked {marker}"))
}

/// Runs child test `child_<case>` in a process of its own and returns the error it printed.
fn run_child(case: &str) -> String {
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", &format!("child_{case}"), "--ignored", "--nocapture", "--test-threads=1"])
        .env(CHILD_ENV, "1")
        .output()
        .expect("the test binary runs itself");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "child {case} failed:\n{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let start = stdout.find("ERROR<<").unwrap_or_else(|| panic!("child {case} printed no error:\n{stdout}"));
    let rest = &stdout[start + "ERROR<<".len()..];
    rest[..rest.find(">>ERROR").expect("the error's end")].to_owned()
}

/// Checks a child's error: the kernel, the place (this file, the marked line, a column), the
/// kind and a thread.
fn check(case: &str, kernel: &str, kind: &str) {
    let err = run_child(case);
    if Device::default().unwrap().is_gpu() && SITES.is_none_or(|s| s == "off") {
        // Built without panic sites: the kernel, and how to get its place.
        assert!(err.contains(&format!("kernel `gpu::{kernel}` failed")), "{err}");
        assert!(err.contains("OFFLOAD_PANIC_SITES"), "no hint at panic sites: {err}");
        return;
    }
    let place = format!("device_panics.rs:{}:", line_of(case));
    assert!(err.contains(&format!("kernel `gpu::{kernel}` panicked")), "{err}");
    assert!(err.contains(&place), "the error does not say {place}…: {err}");
    let column = err[err.find(&place).unwrap() + place.len()..].split(|c: char| !c.is_ascii_digit()).next();
    assert!(column.is_some_and(|c| c.parse::<u32>().is_ok_and(|c| c > 0)), "no column after {place}: {err}");
    assert!(err.contains(kind), "the error does not say {kind:?}: {err}");
    assert!(err.contains("thread "), "the error names no thread: {err}");
}

#[test]
fn an_index_out_of_bounds_reports_its_place_kind_and_thread() {
    check("index_past", "index_past", "index out of bounds");
}

#[test]
fn an_unwrap_on_none_reports_its_place_kind_and_thread() {
    check("unwrap_none", "unwrap_none", "called `Option::unwrap()` on a `None` value");
}

#[test]
fn an_explicit_panic_reports_its_place_and_thread() {
    // (On a GPU the message is not kept: the kind says "explicit panic"; the CPU backend has
    // the message.)
    let kind = if Device::default().unwrap().is_gpu() { "explicit panic" } else { "found the bad value" };
    check("explicit", "explicit", kind);
}

/// In a child: the launch's error, between markers for the parent.
fn child(launch: impl FnOnce(&Device, &[u32], &mut [u32]) -> offload::Result<()>) {
    if std::env::var_os(CHILD_ENV).is_none() {
        return;
    }
    let dev = Device::default().unwrap();
    let x: Vec<u32> = (0..N as u32).collect();
    let mut y = vec![0u32; N];
    let err = launch(&dev, &x, &mut y).expect_err("the kernel panics");
    println!("ERROR<<{err}>>ERROR");
}

#[test]
#[ignore = "a child process of an_index_out_of_bounds_reports_its_place_kind_and_thread"]
fn child_index_past() {
    child(|dev, x, y| gpu::index_past::launch(dev, N, 10usize, x, y));
}

#[test]
#[ignore = "a child process of an_unwrap_on_none_reports_its_place_kind_and_thread"]
fn child_unwrap_none() {
    // Values below 3000 exist only in windows that start before 3000.
    child(|dev, x, y| gpu::unwrap_none::launch(dev, N, 3000u32, x, y));
}

#[test]
#[ignore = "a child process of an_explicit_panic_reports_its_place_and_thread"]
fn child_explicit() {
    child(|dev, x, y| gpu::explicit::launch(dev, N, 1234u32, x, y));
}
