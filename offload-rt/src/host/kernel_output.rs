//! What kernels print on the CPU backend ([`crate::println!`]): each call's text is kept, in
//! call order, until its launch ends, then written to standard output in one piece — at most
//! [`LAUNCH_BYTES`](crate::print::LAUNCH_BYTES) per launch.

use crate::print::LAUNCH_BYTES;
use std::io::Write as _;
use std::sync::Mutex;

/// Text printed by the kernel threads of the launches running now, and the bytes dropped past
/// the bound.
static OUTPUT: Mutex<(Vec<u8>, usize)> = Mutex::new((Vec::new(), 0));

/// A kernel thread's `print!`/`println!`: kept for the end of its launch. Called outside a
/// launch (a kernel function called as a plain function), it prints at once.
pub(crate) fn print(args: std::fmt::Arguments<'_>, newline: bool) {
    let mut text = std::fmt::format(args);
    if newline {
        text.push('\n');
    }
    if !super::backend::emulate::in_kernel() {
        let mut stdout = std::io::stdout().lock();
        let _ = stdout.write_all(text.as_bytes());
        let _ = stdout.flush();
        return;
    }
    let mut out = OUTPUT.lock().unwrap_or_else(|e| e.into_inner());
    if out.0.len() + text.len() <= LAUNCH_BYTES {
        out.0.extend_from_slice(text.as_bytes());
    } else {
        out.1 += text.len();
    }
}

/// Writes what the launch's threads printed (called when a CPU-backend launch ends).
pub(crate) fn flush() {
    let (text, dropped) = {
        let mut out = OUTPUT.lock().unwrap_or_else(|e| e.into_inner());
        if out.0.is_empty() && out.1 == 0 {
            return;
        }
        (std::mem::take(&mut out.0), std::mem::replace(&mut out.1, 0))
    };
    let mut stdout = std::io::stdout().lock();
    // (Standard output closed or full: nothing better to do with the text.)
    let _ = stdout.write_all(&text);
    if dropped > 0 {
        let _ = writeln!(
            stdout,
            "offload: {dropped} more bytes of kernel output dropped (a launch keeps at most {LAUNCH_BYTES})"
        );
    }
    let _ = stdout.flush();
}
