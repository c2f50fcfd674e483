//! The transfer report: how many bytes went which way, how long copies and kernels took, per
//! direction and per kernel. [`transfer_report`] returns it; with `OFFLOAD_REPORT=1` it is
//! printed to stderr when the last `Device` handle is dropped (normally at the end of `main`).
//!
//! While reporting is on (`OFFLOAD_REPORT` set, or [`set_reporting`]), launches that copy host
//! data wait for each direction separately so that copies and kernels are timed apart; that
//! costs one extra synchronisation per direction and launch.

use super::launch::KernelInfo;
use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// Copies in one direction.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Direction {
    /// Number of copies.
    pub count: u64,
    /// Bytes copied.
    pub bytes: u64,
    /// Time the host waited for them.
    pub time: Duration,
}

impl Direction {
    /// Bytes per second over the measured time (0 when nothing was timed).
    pub fn bandwidth(&self) -> f64 {
        if self.time.is_zero() { 0.0 } else { self.bytes as f64 / self.time.as_secs_f64() }
    }
}

/// One kernel's launches.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KernelStats {
    /// Launches, waited for or queued.
    pub launches: u64,
    /// Launches that only queued (device buffers and scalars): their time is not in `time`.
    pub queued: u64,
    /// Copies made for its host-data arguments.
    pub host_to_device: Direction,
    /// Copies back of its writable host-data arguments.
    pub device_to_host: Direction,
    /// Time of the launches the host waited for, copies excluded when reporting is on.
    pub time: Duration,
    /// Time on the device, from the timeline ([`crate::timeline`]) while one records.
    pub device_time: DeviceTime,
}

/// A kernel's time on the device, as the timeline ([`crate::timeline`]) knows it.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum DeviceTime {
    /// Nothing recorded its launches (neither `OFFLOAD_TIMELINE` nor a `Recording`).
    #[default]
    NotRecorded,
    /// Measured: the sum over its recorded launches (the CPU backend, whose launches run
    /// before they return).
    Measured(Duration),
    /// Some of its recorded launches ran on a GPU, where liboffload 22 gives no device time
    /// (its events have no timer).
    Unknown,
}

/// Everything transferred and launched so far in this process.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TransferReport {
    /// Host → device copies, all kinds.
    pub host_to_device: Direction,
    /// Device → host copies, all kinds.
    pub device_to_host: Direction,
    /// Per kernel (`module::kernel`).
    pub kernels: BTreeMap<&'static str, KernelStats>,
}

fn state() -> &'static Mutex<TransferReport> {
    static STATE: OnceLock<Mutex<TransferReport>> = OnceLock::new();
    STATE.get_or_init(|| Mutex::new(TransferReport::default()))
}

static REPORTING: OnceLock<AtomicBool> = OnceLock::new();

fn flag() -> &'static AtomicBool {
    REPORTING.get_or_init(|| AtomicBool::new(crate::host::config::config().report))
}

/// Whether copies and kernels are timed apart (`OFFLOAD_REPORT`, or [`set_reporting`]).
pub fn reporting() -> bool {
    flag().load(Ordering::Relaxed)
}

/// Turns separate timing of copies and kernels on or off.
pub fn set_reporting(on: bool) {
    flag().store(on, Ordering::Relaxed);
}

/// Kernels that have had queued launches, whose counts live in their `KernelCache`.
fn queued_kernels() -> &'static Mutex<Vec<&'static KernelInfo>> {
    static KERNELS: Mutex<Vec<&'static KernelInfo>> = Mutex::new(Vec::new());
    &KERNELS
}

/// Records a launch that was only queued: two relaxed atomic operations, no lock (the kernel
/// is registered for the report on its first queued launch).
pub(crate) fn record_queued(kernel: &'static KernelInfo) {
    if !kernel.cache.registered.load(Ordering::Relaxed)
        && !kernel.cache.registered.swap(true, Ordering::AcqRel)
    {
        queued_kernels().lock().unwrap_or_else(|e| e.into_inner()).push(kernel);
    }
    kernel.cache.queued.fetch_add(1, Ordering::Relaxed);
}

/// A snapshot of the report.
pub fn transfer_report() -> TransferReport {
    let mut r = state().lock().unwrap_or_else(|e| e.into_inner()).clone();
    for k in queued_kernels().lock().unwrap_or_else(|e| e.into_inner()).iter() {
        let queued = k.cache.queued.load(Ordering::Relaxed);
        if queued > 0 {
            let s = r.kernels.entry(k.path).or_default();
            s.launches += queued;
            s.queued += queued;
        }
    }
    r
}

/// Clears the report.
pub fn reset_transfer_report() {
    let mut r = state().lock().unwrap_or_else(|e| e.into_inner());
    for k in queued_kernels().lock().unwrap_or_else(|e| e.into_inner()).iter() {
        k.cache.queued.store(0, Ordering::Relaxed);
    }
    *r = TransferReport::default();
}

/// Which way a copy went.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Way {
    In,
    Out,
}

/// Records copies of `bytes` in total (`count` of them), made for `kernel` if any.
pub(crate) fn record_copy(way: Way, count: u64, bytes: u64, time: Duration, kernel: Option<&'static str>) {
    let mut r = state().lock().unwrap_or_else(|e| e.into_inner());
    let add = |d: &mut Direction| {
        d.count += count;
        d.bytes += bytes;
        d.time += time;
    };
    add(match way {
        Way::In => &mut r.host_to_device,
        Way::Out => &mut r.device_to_host,
    });
    if let Some(k) = kernel {
        let s = r.kernels.entry(k).or_default();
        add(match way {
            Way::In => &mut s.host_to_device,
            Way::Out => &mut s.device_to_host,
        });
    }
}

/// Records a launch of `kernel` that was waited for, `time` long (queued launches go through
/// [`record_queued`]).
pub(crate) fn record_launch(kernel: &'static str, time: Duration) {
    let mut r = state().lock().unwrap_or_else(|e| e.into_inner());
    let s = r.kernels.entry(kernel).or_default();
    s.launches += 1;
    s.time += time;
}

/// Adds a recorded launch of `kernel` to its device time: `Some` when measured, `None` on a
/// GPU (unknown). Called by the timeline's hooks only.
pub(crate) fn record_device_time(kernel: &'static str, time: Option<Duration>) {
    let mut r = state().lock().unwrap_or_else(|e| e.into_inner());
    let s = r.kernels.entry(kernel).or_default();
    s.device_time = match (s.device_time, time) {
        (DeviceTime::NotRecorded, Some(t)) => DeviceTime::Measured(t),
        (DeviceTime::Measured(total), Some(t)) => DeviceTime::Measured(total + t),
        _ => DeviceTime::Unknown,
    };
}

/// When the last device goes: prints the report if `OFFLOAD_REPORT` asks for it (once per
/// process) and writes the timeline if `OFFLOAD_TIMELINE` asks for one.
pub(crate) fn print_at_exit() {
    if crate::host::config::config().timeline.is_some() {
        crate::host::timeline::write_at_exit();
    }
    static PRINTED: AtomicBool = AtomicBool::new(false);
    if crate::host::config::config().report && !PRINTED.swap(true, Ordering::Relaxed) {
        eprint!("{}", transfer_report());
    }
}

pub(crate) fn human(bytes: u64) -> String {
    let b = bytes as f64;
    match bytes {
        0..1_000 => format!("{bytes} B"),
        1_000..1_000_000 => format!("{:.1} kB", b / 1e3),
        1_000_000..1_000_000_000 => format!("{:.1} MB", b / 1e6),
        _ => format!("{:.2} GB", b / 1e9),
    }
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

impl fmt::Display for TransferReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "offload transfer report")?;
        writeln!(f, "  {:<16} {:>8} {:>12} {:>14} {:>12}", "direction", "copies", "bytes", "time", "GB/s")?;
        for (name, d) in [("host → device", &self.host_to_device), ("device → host", &self.device_to_host)]
        {
            writeln!(
                f,
                "  {:<16} {:>8} {:>12} {:>14} {:>12.2}",
                name,
                d.count,
                human(d.bytes),
                ms(d.time),
                d.bandwidth() / 1e9
            )?;
        }
        if !self.kernels.is_empty() {
            // The device-time column only when a timeline recorded something.
            let recorded = self.kernels.values().any(|s| s.device_time != DeviceTime::NotRecorded);
            write!(
                f,
                "  {:<32} {:>8} {:>8} {:>12} {:>12} {:>14}",
                "kernel", "launches", "queued", "bytes in", "bytes out", "time (waited)"
            )?;
            writeln!(f, "{}", if recorded { format!(" {:>14}", "device time") } else { String::new() })?;
            for (k, s) in &self.kernels {
                write!(
                    f,
                    "  {:<32} {:>8} {:>8} {:>12} {:>12} {:>14}",
                    k,
                    s.launches,
                    s.queued,
                    human(s.host_to_device.bytes),
                    human(s.device_to_host.bytes),
                    ms(s.time)
                )?;
                let device = match s.device_time {
                    _ if !recorded => String::new(),
                    DeviceTime::NotRecorded => format!(" {:>14}", "not recorded"),
                    DeviceTime::Measured(t) => format!(" {:>14}", ms(t)),
                    DeviceTime::Unknown => format!(" {:>14}", "unknown"),
                };
                writeln!(f, "{device}")?;
            }
            if self.kernels.values().any(|s| s.device_time == DeviceTime::Unknown) {
                writeln!(
                    f,
                    "  device time unknown: liboffload 22 has no event timer (the timeline shows upper bounds)"
                )?;
            }
        }
        Ok(())
    }
}
