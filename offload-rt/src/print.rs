//! Printing from kernels: [`println!`](crate::println) and [`print!`](crate::print), with
//! Rust's formatting (`{}`, `{:?}`, widths, precisions) of integers, floats, `bool`, `char`
//! and `&str`.
//!
//! Each call formats its text on the calling thread into a buffer of [`LINE_BYTES`] bytes
//! (longer text is cut, ending in `…`), so a call's text is never interleaved with another
//! thread's; the order of different threads' calls is whatever order they ran in.
//!
//! - **CPU backend**: the texts of a launch are kept in order of the calls and written to
//!   standard output when the launch ends, at most [`LAUNCH_BYTES`] per launch (past it, a
//!   line says how many bytes were dropped).
//! - **NVIDIA**: the text goes to the CUDA driver's `printf` (`vprintf` with `"%s"`), which keeps
//!   it in a device buffer (1 MiB by default) and writes it to standard output at the next
//!   wait for the device (a queue synchronisation, a copy back). Formatting runs `core::fmt`
//!   on the device, whose calls through function pointers hide the stack depth from the
//!   driver (floats need about 5 KiB per thread, past the driver's default 1 KiB): the build
//!   records a bound from `ptxas`, and the runtime raises the device's stack limit to it when
//!   it loads the image (`cargo offload inspect` shows it). The driver reserves that stack for
//!   every thread the GPU can hold, about 1.5 GB on an H200.
//! - **AMD**: liboffload 22's AMD plugin offers no `printf` path, so the text is dropped there;
//!   the kernel runs as it would without it.

/// Bytes of one call's text on a GPU: longer text is cut (ending in `…`).
pub const LINE_BYTES: usize = 256;

/// Bytes of printed text one CPU-backend launch keeps at most (the CUDA driver's default
/// `printf` buffer is the same size).
#[cfg_attr(offload_gpu, allow(dead_code))]
pub const LAUNCH_BYTES: usize = 1 << 20;

/// A fixed buffer that `core::fmt` writes into, cutting what does not fit.
#[cfg_attr(not(offload_gpu), allow(dead_code))]
struct Line {
    bytes: [u8; LINE_BYTES],
    len: usize,
    cut: bool,
}

#[cfg_attr(not(offload_gpu), allow(dead_code))]
impl Line {
    /// Room kept for the cut mark (`…`, 3 bytes) and the terminating NUL.
    const RESERVED: usize = 4;

    fn new() -> Line {
        Line { bytes: [0; LINE_BYTES], len: 0, cut: false }
    }

    /// The text, NUL-terminated, cut marked.
    fn finish(&mut self) -> &[u8] {
        if self.cut {
            self.bytes[self.len..self.len + 3].copy_from_slice("…".as_bytes());
            self.len += 3;
        }
        self.bytes[self.len] = 0;
        &self.bytes[..=self.len]
    }
}

impl core::fmt::Write for Line {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let room = LINE_BYTES - Self::RESERVED - self.len;
        let mut take = s.len().min(room);
        // Cut at a character boundary.
        while !s.is_char_boundary(take) {
            take -= 1;
        }
        self.bytes[self.len..self.len + take].copy_from_slice(&s.as_bytes()[..take]);
        self.len += take;
        if take < s.len() {
            self.cut = true;
        }
        Ok(())
    }
}

/// The expansion of `print!`/`println!` (`newline` for the latter).
#[doc(hidden)]
#[inline(never)]
#[cold]
pub fn print(args: core::fmt::Arguments<'_>, newline: bool) {
    #[cfg(not(offload_gpu))]
    {
        crate::host::kernel_output::print(args, newline);
    }
    #[cfg(target_arch = "nvptx64")]
    {
        let mut line = Line::new();
        let _ = core::fmt::write(&mut line, args);
        if newline {
            let _ = core::fmt::Write::write_str(&mut line, "\n");
        }
        let text = line.finish();
        let valist: [*const u8; 1] = [text.as_ptr()];
        // SAFETY: `vprintf` (the CUDA driver's) reads a NUL-terminated format and, for its one
        // `%s`, one pointer from `valist`, which points at the NUL-terminated text; both live
        // until it returns.
        unsafe { vprintf(c"%s".as_ptr().cast(), valist.as_ptr().cast()) };
    }
    #[cfg(target_arch = "amdgpu")]
    {
        let _ = (args, newline);
    }
}

#[cfg(target_arch = "nvptx64")]
unsafe extern "C" {
    /// The CUDA driver's device-side `printf`: `format` and a buffer of the arguments, each
    /// aligned to its size.
    fn vprintf(format: *const u8, valist: *const u8) -> i32;
}

#[cfg(all(test, not(offload_gpu)))]
mod tests {
    use super::*;
    use core::fmt::Write;

    #[test]
    fn a_line_is_cut_at_a_character_boundary_and_marked() {
        let mut line = Line::new();
        write!(line, "{}", "é".repeat(200)).unwrap();
        let text = line.finish();
        assert_eq!(text.last(), Some(&0));
        let s = core::str::from_utf8(&text[..text.len() - 1]).unwrap();
        assert!(s.ends_with('…') && s.len() < LINE_BYTES, "{} bytes", s.len());
        let mut short = Line::new();
        write!(short, "x = {}", 5).unwrap();
        assert_eq!(short.finish(), b"x = 5\0");
    }
}
