//! A timeline of everything the runtime does — every copy, launch, wait, device allocation and
//! BLAS call, per device queue and per host thread — written as a Chrome trace / Perfetto
//! JSON file (open it at `ui.perfetto.dev` or `chrome://tracing`).
//!
//! Two ways to record:
//!
//! - `OFFLOAD_TIMELINE=trace.json` records the whole run and writes the file when the
//!   process's last [`Device`](crate::Device) goes (normally at the end of `main`), or earlier
//!   with [`save_now`]. A file that cannot be written is reported on stderr, naming the path.
//! - [`Recording::start`] records from now until [`Recording::save`] (or its drop), for
//!   programs that want several traces in one run.
//!
//! ```
//! # #[offload::kernels] mod gpu { use offload::prelude::*;
//! #     #[kernel] pub fn axpy(a: f32, x: &[f32], mut y: Region<f32>) {
//! #         let i = y.index(); if let Some(v) = y.mine() { *v += a * x[i]; } } }
//! # fn main() -> offload::Result<()> {
//! let dev = offload::Device::cpu();
//! let (x, mut y) = (vec![1.0f32; 1000], vec![0.0f32; 1000]);
//! let recording = offload::timeline::Recording::start();
//! gpu::axpy::launch(&dev, 1000, 0.5, &x, &mut y)?;
//! let path = std::env::temp_dir().join(format!("axpy-{}.json", std::process::id()));
//! recording.save(&path)?; // one "launch gpu::axpy" on the host thread's track and the queue's
//! # std::fs::remove_file(&path).ok();
//! # Ok(()) }
//! ```
//!
//! # Tracks and events
//!
//! Each host thread that calls the runtime has a track ("host thread 1 (main)") with the
//! intervals of its calls: launches (from the first argument to the return), copies, waits,
//! allocations and frees of device memory, BLAS calls. Each device has a queue track ("GPU 0:
//! NVIDIA H200 queue", "CPU emulation backend") with the work the device did. Events carry
//! their kernel, grid and block, bytes and the kind of host memory in `args`.
//!
//! # What the device times are
//!
//! On the CPU backend the queue is synchronous: a launch runs on host threads before it
//! returns, so its interval on the queue track is measured. liboffload 22 has events but no
//! timer on them (no elapsed-time query between two events; it was requested for a later
//! version), so on a GPU the runtime cannot know when queued work ran. Each queued copy, fill
//! and launch is drawn from when it was queued to when a later wait (`olSyncQueue`,
//! `olSyncEvent`) observed it complete: an upper bound of when it ran, labelled so in its
//! `args` (`"device_time": "unknown (liboffload 22 has no event timer)"`). Work queued before
//! the same wait shares that end, so bounds nest; bounds that would cross (an event wait
//! observing only part of the queue) go to a second track of the queue. The transfer report
//! ([`crate::transfer_report`]) takes each kernel's device time from this recording where it
//! is measured and says "unknown" where it is not.
//!
//! # Cost
//!
//! While nothing records, each operation pays one relaxed atomic load. While recording, each
//! event takes a lock and an allocation; past [`MAX_EVENTS`] events later ones are counted,
//! not kept, and the count is in the file's `otherData` (and said once on stderr).

mod json;
mod record;
mod recording;
#[cfg(test)]
mod tests;

pub use record::MAX_EVENTS;
pub(crate) use record::{
    CPU_QUEUE, HostKind, device, gpu_queue_track, host, mark, observed, on, queued, start,
};
pub use recording::{Recording, save_now};
pub(crate) use recording::{init, write_at_exit};

/// The name of a copy of `bytes` bytes in direction `way` ("copy H→D 8.4 MB").
pub(crate) fn copy_name(way: &str, bytes: usize) -> String {
    format!("copy {way} {}", crate::host::report::human(bytes as u64))
}
