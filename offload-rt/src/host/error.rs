//! Errors of every public host call.

/// `Result` of every public host call.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What went wrong, with enough context to act on it. `Debug` prints the same message as
/// `Display`, so that `fn main() -> offload::Result<()>` reports errors readably.
#[derive(Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// liboffload could not be loaded.
    #[error(
        "cannot load liboffload: {reason}\n  hint: install LLVM 22's liboffload (Debian/Ubuntu: `apt-get install liboffload-22`), or set OFFLOAD_LIBRARY to the path of libLLVMOffload.so.22.1"
    )]
    LibraryMissing {
        /// Why loading failed.
        reason: String,
    },
    /// A timeline ([`crate::timeline`]) could not be written.
    #[error("cannot write the timeline to {}: {reason}", path.display())]
    TimelineWrite {
        /// The file that could not be written.
        path: std::path::PathBuf,
        /// The operating system's error.
        reason: String,
    },
    /// A GPU was requested but none can be used.
    #[error("no GPU available: {reason}")]
    NoGpu {
        /// Why no GPU can be used.
        reason: String,
    },
    /// `OFFLOAD_DEVICE` holds something other than `cpu` or `gpu`.
    #[error(
        "OFFLOAD_DEVICE={0:?} is not understood: use `cpu` or `gpu` (or unset it to pick a GPU when one is present)"
    )]
    BadDeviceChoice(String),
    /// A liboffload call failed.
    #[error("{call} failed: {code}: {details}")]
    Offload {
        /// The liboffload function.
        call: &'static str,
        /// Its error code's name.
        code: &'static str,
        /// The library's explanation.
        details: String,
    },
    /// A kernel stopped with an error on the GPU (a bounds check or explicit panic traps).
    #[error("{}", kernel_failed(kernel, device, details, panic.as_deref()))]
    KernelFailed {
        /// `module::kernel` path (several, joined by "` or `", when the failure surfaced at a
        /// wait after several launches and the place does not say which).
        kernel: String,
        /// The device's name.
        device: String,
        /// What the driver reported.
        details: String,
        /// Where and why the kernel panicked, as its first panicking thread recorded it.
        panic: Option<Box<DevicePanic>>,
    },
    /// A kernel panicked on the CPU backend.
    #[error(
        "kernel `{kernel}` panicked on the CPU backend{}{} in block {block}, thread {thread}: {message}",
        if location.is_empty() { "" } else { " at " },
        location
    )]
    KernelPanicked {
        /// `module::kernel` path.
        kernel: String,
        /// The panic message.
        message: String,
        /// Where: `file:line:column` (empty if a panic hook installed after the runtime's hid it).
        location: String,
        /// Block index of the first thread that panicked (`x` or `(x, y, z)`).
        block: String,
        /// Thread index (within the block) of that thread.
        thread: String,
    },
    /// The executable holds no image this device can run.
    #[error(
        "this executable has no device image for {device} ({arch}); it holds: {available}\n  hint: rebuild with `cargo offload build --target-gpu {arch}`"
    )]
    NoImage {
        /// The device's name.
        device: String,
        /// The device's architecture.
        arch: String,
        /// What the executable holds.
        available: String,
    },
    /// The image does not define the kernel: it was built from other sources.
    #[error(
        "kernel `{kernel}` is missing from the {arch} device image; the image is stale, rebuild with `cargo offload build`"
    )]
    KernelMissing {
        /// `module::kernel` path.
        kernel: String,
        /// The image's architecture.
        arch: String,
    },
    /// An earlier failure left the device unusable (a CUDA trap poisons the context).
    #[error("{device} is unusable after an earlier failure: {cause}")]
    Poisoned {
        /// The device's name.
        device: String,
        /// The first failure.
        cause: Box<Error>,
    },
    /// Launch parameters that cannot work.
    #[error("invalid launch of `{kernel}`: {reason}")]
    InvalidLaunch {
        /// `module::kernel` path.
        kernel: String,
        /// What is wrong.
        reason: String,
    },
    /// A grid that cannot be made for the device (`Grid::resident`).
    #[error("invalid grid: {reason}")]
    InvalidGrid {
        /// What is wrong.
        reason: String,
    },
    /// An index list given to `UniqueIndices::new` that repeats an index or leaves the bound.
    #[error("invalid index list at position {position}: {reason}")]
    InvalidIndices {
        /// Position of the offending entry.
        position: usize,
        /// What is wrong with it.
        reason: String,
    },
    /// A host slice and a device buffer of different lengths.
    #[error("length mismatch: the device buffer has {buffer} elements, the host slice {host}")]
    LengthMismatch {
        /// Elements in the buffer.
        buffer: usize,
        /// Elements in the host slice.
        host: usize,
    },
    /// A device buffer passed to a launch on another device (or another queue).
    #[error(
        "kernel `{kernel}` was launched on {launch} with a buffer that lives on {buffer}\n  hint: launch on the Device (or a clone of it) that created the buffer"
    )]
    WrongDevice {
        /// `module::kernel` path.
        kernel: String,
        /// The buffer's device.
        buffer: String,
        /// The launch's device.
        launch: String,
    },
    /// Memory that cannot be had: a size beyond the address space, more than the device has,
    /// or an allocation the driver or the host refused.
    #[error("cannot allocate {what}: {request}")]
    OutOfMemory {
        /// What was being allocated.
        what: String,
        /// How much, and why it failed.
        request: String,
    },
    /// The embedded image container is damaged.
    #[error("the device images embedded in this executable are unreadable: {0}")]
    BadImages(String),
    /// A BLAS call (`offload::blas`) failed.
    #[error(transparent)]
    Blas(super::blas::BlasError),
}

impl std::fmt::Debug for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(self, f)
    }
}

/// Where and why a kernel panicked on a GPU, as the first thread to panic recorded it on the
/// device before the trap (the panic's message is not kept on the device: its kind is).
///
/// By default a kernel has one failure path (its checks fold as they would without panic
/// sites), so the record names the kernel's panic sites rather than one of them: `place` is
/// exact when the kernel has one site, or when the executable was built with
/// `OFFLOAD_PANIC_SITES=line` (a failure path per source line); otherwise `place` is the
/// kernel's first site and `others` the rest, one of which failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DevicePanic {
    /// The panic's place (see above); `file` empty and `line` 0 when the image did not say.
    pub place: PanicPlace,
    /// The kernel's other panic sites when the place is not exact (empty when it is).
    pub others: Vec<PanicPlace>,
    /// The device function the panic is in (a kernel's entry point, unless not inlined).
    pub function: String,
    /// The block and the thread within it that recorded the panic.
    pub block: [u32; 3],
    pub thread: [u32; 3],
}

/// A place in device code that can panic, and how.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PanicPlace {
    /// What fails there: "index out of bounds", "called `Option::unwrap()` on a `None` value",
    /// "explicit panic", "attempt to add with overflow", …
    pub kind: String,
    /// The source file (as the build named it), 1-based line and column.
    pub file: String,
    pub line: u32,
    pub column: u32,
}

impl std::fmt::Display for PanicPlace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if !self.file.is_empty() {
            write!(f, "{}:{}:{}: ", self.file, self.line, self.column)?;
        }
        f.write_str(&self.kind)
    }
}

impl std::fmt::Display for DevicePanic {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let [bx, by, bz] = self.block;
        let [tx, ty, tz] = self.thread;
        write!(f, "{}", self.place)?;
        if !self.others.is_empty() {
            let others: Vec<String> = self.others.iter().map(|p| format!("{p}")).collect();
            write!(
                f,
                ", or one of the kernel's {} other panic sites ({}); build with OFFLOAD_PANIC_SITES=line for the exact one",
                others.len(),
                others.join("; ")
            )?;
        }
        write!(f, " (block ({bx}, {by}, {bz}), thread ({tx}, {ty}, {tz}))")
    }
}

fn kernel_failed(kernel: &str, device: &str, details: &str, panic: Option<&DevicePanic>) -> String {
    match panic {
        Some(p) => {
            format!("kernel `{kernel}` panicked on {device} at {p}\n  note: the device reported: {details}")
        }
        None => format!(
            "kernel `{kernel}` failed on {device}: {details}\n  note: a panic in a kernel (an out-of-bounds index, `unwrap` on `None`, an explicit `panic!`) traps the GPU; for its place and thread, build with OFFLOAD_PANIC_SITES=kernel (or =line), or run with OFFLOAD_DEVICE=cpu to see the panic message and location"
        ),
    }
}
