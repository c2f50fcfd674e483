//! Who records: `OFFLOAD_TIMELINE` for the whole run, and [`Recording`]s for parts of it.

use super::json;
use super::record::{activate, deactivate, store};
use crate::host::config::config;
use crate::host::error::{Error, Result};
use std::path::Path;
use std::sync::OnceLock;

/// A recording of the runtime's timeline from [`start`](Recording::start) on, to be written
/// with [`save`](Recording::save). Recordings may overlap (each saves what happened during
/// its own life) and coexist with `OFFLOAD_TIMELINE`. Dropping one stops it.
///
/// ```
/// # #[offload::kernels] mod gpu { use offload::prelude::*;
/// #     #[kernel] pub fn double(mut y: Region<f32>) { if let Some(v) = y.mine() { *v *= 2.0; } } }
/// # fn main() -> offload::Result<()> {
/// let dev = offload::Device::default()?;
/// let dir = std::env::temp_dir();
/// for variant in ["small", "large"] {
///     let mut y = vec![1.0f32; if variant == "small" { 1000 } else { 100_000 }];
///     let recording = offload::timeline::Recording::start();
///     gpu::double::launch(&dev, y.len(), &mut y)?;
///     let path = dir.join(format!("double-{variant}-{}.json", std::process::id()));
///     recording.save(&path)?; // a trace of this variant only
/// #   std::fs::remove_file(&path).ok();
/// }
/// # Ok(()) }
/// ```
#[derive(Debug)]
#[must_use = "a recording records only while it lives: save it"]
pub struct Recording {
    /// The number of the first event it holds.
    pub(super) first: usize,
    /// Events dropped before it started.
    dropped: u64,
}

impl Recording {
    /// Starts recording every copy, launch, wait, device allocation and BLAS call, on every
    /// thread and device, until the recording is dropped.
    pub fn start() -> Recording {
        activate();
        let s = store();
        Recording { first: s.base + s.events.len(), dropped: s.dropped }
    }

    /// The number of events recorded so far (queued GPU work becomes an event once a wait
    /// observed it complete).
    pub fn len(&self) -> usize {
        let s = store();
        (s.base + s.events.len()).saturating_sub(self.first)
    }

    /// Whether nothing has been recorded yet.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Writes what was recorded since [`start`](Recording::start) to `path` as a Chrome
    /// trace / Perfetto JSON file; the recording goes on. Fails naming the path when the file
    /// cannot be written.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let bytes = {
            let s = store();
            let from = self.first.saturating_sub(s.base).min(s.events.len());
            json::render(&s, from, s.dropped - self.dropped.min(s.dropped))
        };
        write(path.as_ref(), &bytes)
    }
}

impl Drop for Recording {
    fn drop(&mut self) {
        deactivate();
    }
}

fn write(path: &Path, bytes: &[u8]) -> Result<()> {
    std::fs::write(path, bytes)
        .map_err(|e| Error::TimelineWrite { path: path.to_owned(), reason: e.to_string() })
}

/// Starts the `OFFLOAD_TIMELINE` recording if the variable asks for one (once per process;
/// every device calls this when it is made).
pub(crate) fn init() {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        if config().timeline.is_some() {
            activate();
        }
    });
}

/// Writes everything recorded in this run to `OFFLOAD_TIMELINE`'s file now (it is written
/// again, with everything up to then, when the last device goes). Returns the path written;
/// `None` when the variable is unset.
pub fn save_now() -> Result<Option<&'static Path>> {
    let Some(path) = config().timeline.as_deref() else { return Ok(None) };
    init();
    let bytes = {
        let s = store();
        json::render(&s, 0, s.dropped)
    };
    write(path, &bytes).map(|()| Some(path))
}

/// Writes `OFFLOAD_TIMELINE`'s file when the last device goes; a failure is said on stderr
/// (there is nobody to return it to).
pub(crate) fn write_at_exit() {
    match save_now() {
        Ok(Some(path)) if !config().quiet => eprintln!("offload: timeline written to {}", path.display()),
        Ok(_) => {}
        Err(e) => eprintln!("offload: error: {e}"),
    }
}
