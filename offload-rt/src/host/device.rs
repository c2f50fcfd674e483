//! `Device`: where kernels run — a GPU through liboffload, or the CPU emulation backend.

use super::emulate;
use super::error::{Error, Result};
use super::liboffload::ffi;
use super::liboffload::runtime::{Gpu, Runtime, Vendor, runtime};
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

/// What kind of device a [`Device`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    /// An NVIDIA GPU, through liboffload's CUDA plugin.
    Nvidia,
    /// An AMD GPU, through liboffload's AMDGPU plugin.
    Amd,
    /// The CPU emulation backend.
    Cpu,
}

/// A device to launch kernels on. Cheap to clone. Every handle to the same GPU — clones, and
/// the results of calling [`Device::gpu`] with the same index again — shares one queue, on
/// which work runs in the order it was queued; buffers and pinned memory of one handle work
/// with every other handle to that GPU.
#[derive(Clone)]
pub struct Device {
    pub(crate) inner: Arc<Inner>,
}

pub(crate) enum Inner {
    Cpu,
    Gpu(GpuDevice),
}

/// Live `Device`s (not handles: clones share one): the transfer report is printed when the
/// last goes.
static LIVE: AtomicUsize = AtomicUsize::new(0);

impl Inner {
    fn new(inner: Inner) -> Arc<Inner> {
        LIVE.fetch_add(1, Ordering::Relaxed);
        Arc::new(inner)
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        if LIVE.fetch_sub(1, Ordering::Relaxed) == 1 {
            super::report::print_at_exit();
        }
    }
}

pub(crate) struct GpuDevice {
    pub rt: &'static Runtime,
    pub gpu: &'static Gpu,
    pub index: usize,
    queue: Mutex<Queue>,
    /// Kernels queued without waiting since the queue was last synchronised: a failure the
    /// next synchronisation reports is one of theirs.
    pending: Mutex<Vec<&'static str>>,
    /// Pinned bounce buffers for staged copies of pageable memory, allocated on first use.
    pub(crate) bounce: Mutex<Option<super::staging::Bounce>>,
    /// Pinned memory for the small arguments of Interface A launches, allocated on first use.
    pub(crate) small: Mutex<Option<super::staging::SmallArena>>,
}

pub(crate) struct Queue(pub ffi::ol_queue_handle_t);

// SAFETY: a queue handle is an identifier usable from any thread; `GpuDevice` only touches it
// with the mutex held, so work is submitted from one thread at a time.
unsafe impl Send for Queue {}

impl GpuDevice {
    pub fn queue(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Records a kernel queued without waiting for it.
    pub fn queued(&self, kernel: &'static str) {
        let mut pending = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        // Each kernel's path is one static string: comparing addresses finds it without
        // comparing its text (the last one queued first, the common case).
        if !pending.iter().rev().any(|k| std::ptr::eq(*k, kernel)) {
            pending.push(kernel);
        }
    }

    /// Turns a failure of queued work into the failure of the kernels queued since the last
    /// synchronisation (a trap surfaces at the next call), and poisons the device with it.
    pub fn queued_failure(&self, e: Error) -> Error {
        let pending = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()));
        let e = if pending.is_empty() || matches!(e, Error::Poisoned { .. }) {
            e
        } else {
            Error::KernelFailed {
                kernel: pending.join("` or `"),
                device: self.gpu.name.clone(),
                details: e.to_string(),
            }
        };
        self.gpu.poison(e)
    }

    /// Waits for everything queued.
    pub fn sync_queue(&self) -> Result<()> {
        self.gpu.check_poison()?;
        let queue = self.queue();
        // SAFETY: valid queue handle.
        match self.rt.check("olSyncQueue", unsafe { (self.rt.api.olSyncQueue)(queue.0) }) {
            Ok(()) => {
                self.pending.lock().unwrap_or_else(|e| e.into_inner()).clear();
                Ok(())
            }
            Err(e) => Err(self.queued_failure(e)),
        }
    }
}

impl Drop for GpuDevice {
    fn drop(&mut self) {
        // Launches on device buffers only queue; what they use stays alive (buffers hold this
        // device), but wait for them before the queue goes.
        // SAFETY: valid queue handle.
        let _ = unsafe { (self.rt.api.olSyncQueue)(self.queue.get_mut().unwrap_or_else(|e| e.into_inner()).0) };
        let queue = self.queue.get_mut().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the queue came from olCreateQueue and has nothing in flight (waited above).
        let destroyed = self.rt.check("olDestroyQueue", unsafe { (self.rt.api.olDestroyQueue)(queue.0) });
        if let Err(e) = destroyed
            && self.gpu.check_poison().is_ok()
        {
            eprintln!("offload: warning: {e}");
        }
    }
}

impl Device {
    /// The device kernels should run on: the first GPU when liboffload finds one and this
    /// executable carries an image for it, otherwise the CPU emulation backend — said on
    /// stderr, with the reason. `OFFLOAD_DEVICE=cpu` forces the CPU; `OFFLOAD_DEVICE=gpu`
    /// forces a GPU and makes its absence an error.
    #[expect(clippy::should_implement_trait, reason = "choosing a device can fail, so this returns a Result")]
    pub fn default() -> Result<Device> {
        let choice = std::env::var("OFFLOAD_DEVICE").unwrap_or_default();
        let dev = match choice.trim().to_ascii_lowercase().as_str() {
            "cpu" => {
                let dev = Device::cpu();
                say(&format!("running kernels on {dev} (OFFLOAD_DEVICE=cpu)"));
                return Ok(dev);
            }
            "gpu" => Device::gpu(0)?,
            "" => match Device::gpu(0) {
                Ok(dev) => dev,
                Err(reason) => {
                    let dev = Device::cpu();
                    say(&format!("no usable GPU, running kernels on {dev}\n  reason: {reason}"));
                    return Ok(dev);
                }
            },
            _ => return Err(Error::BadDeviceChoice(choice)),
        };
        say(&format!("running kernels on {dev}"));
        Ok(dev)
    }

    /// The CPU emulation backend.
    pub fn cpu() -> Device {
        Device { inner: Inner::new(Inner::Cpu) }
    }

    /// GPU number `index` (in liboffload's order). Handles to the same GPU share its one queue
    /// (see [`Device`]). Fails when liboffload is missing, finds no such GPU, or this
    /// executable carries no image the GPU can run.
    pub fn gpu(index: usize) -> Result<Device> {
        // One queue per GPU: a second handle to a GPU that is open shares the first's, so that
        // work queued through either is ordered, and waiting on either waits for both.
        static OPEN: Mutex<Vec<std::sync::Weak<Inner>>> = Mutex::new(Vec::new());
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(inner) = open.get(index).and_then(std::sync::Weak::upgrade) {
            return Ok(Device { inner });
        }
        let device = Device::open_gpu(index)?;
        if open.len() <= index {
            open.resize_with(index + 1, std::sync::Weak::new);
        }
        open[index] = Arc::downgrade(&device.inner);
        Ok(device)
    }

    fn open_gpu(index: usize) -> Result<Device> {
        let rt = runtime()?;
        let gpu = rt.gpus.get(index).ok_or_else(|| Error::NoGpu {
            reason: if rt.gpus.is_empty() {
                format!("liboffload ({}) found no GPU", rt.library)
            } else {
                format!("GPU {index} requested, liboffload found {}", rt.gpus.len())
            },
        })?;
        // Fail when the device is chosen, not at the first launch, if no image fits it.
        gpu.image()?;
        let mut queue = std::ptr::null_mut();
        // SAFETY: valid device handle and out-pointer.
        rt.check("olCreateQueue", unsafe { (rt.api.olCreateQueue)(gpu.handle, &mut queue) })?;
        let device = GpuDevice {
            rt,
            gpu,
            index,
            queue: Mutex::new(Queue(queue)),
            pending: Mutex::new(Vec::new()),
            bounce: Mutex::new(None),
            small: Mutex::new(None),
        };
        // The small arenas now, not inside the first launch with host data (which a benchmark
        // would time): two allocations of 256 KiB.
        drop(device.small_arena()?);
        Ok(Device { inner: Inner::new(Inner::Gpu(device)) })
    }

    /// Number of GPUs liboffload finds (0 when it finds none or is not installed). Each is
    /// opened with [`Device::gpu`]`(index)`; work on different devices is independent, and a
    /// buffer belongs to the device that made it (using it on another is an error).
    pub fn gpu_count() -> usize {
        runtime().map_or(0, |rt| rt.gpus.len())
    }

    /// What kind of device this is.
    pub fn kind(&self) -> DeviceKind {
        match &*self.inner {
            Inner::Cpu => DeviceKind::Cpu,
            Inner::Gpu(g) => match g.gpu.vendor {
                Vendor::Nvidia => DeviceKind::Nvidia,
                Vendor::Amd => DeviceKind::Amd,
            },
        }
    }

    /// Whether work queued through `self` and `other` goes to the same queue (the same GPU, or
    /// both the CPU backend's in-order execution).
    pub(crate) fn same_queue(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// Whether kernels run on a GPU.
    pub fn is_gpu(&self) -> bool {
        self.kind() != DeviceKind::Cpu
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        match &*self.inner {
            Inner::Cpu => "CPU emulation",
            Inner::Gpu(g) => &g.gpu.name,
        }
    }

    /// Device memory this process holds on the device through offload (buffers, launch
    /// copies, preloads), in bytes; 0 on the CPU backend.
    pub fn allocated_bytes(&self) -> usize {
        match &*self.inner {
            Inner::Cpu => 0,
            Inner::Gpu(g) => g.gpu.allocated.load(Ordering::Relaxed),
        }
    }

    /// Free and total device memory in bytes, as the driver reports them (all processes):
    /// NVIDIA only; `None` on AMD (liboffload 22 has no such query) and the CPU backend.
    pub fn memory_info(&self) -> Option<(usize, usize)> {
        match &*self.inner {
            Inner::Gpu(g) => super::liboffload::cuda::memory_info(g.gpu.cuda_ordinal?).ok(),
            Inner::Cpu => None,
        }
    }

    /// The device's architecture (`sm_90`, `gfx90a`), or `"host"` for the CPU backend.
    pub fn arch(&self) -> &str {
        match &*self.inner {
            Inner::Cpu => "host",
            Inner::Gpu(g) => &g.gpu.arch,
        }
    }

    /// Waits for all work queued on this device, returning the first failure (a kernel that
    /// trapped is named).
    pub fn sync(&self) -> Result<()> {
        match &*self.inner {
            Inner::Cpu => Ok(()),
            Inner::Gpu(g) => g.sync_queue(),
        }
    }
}

fn say(line: &str) {
    if std::env::var_os("OFFLOAD_QUIET").is_none() {
        eprintln!("offload: {line}");
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &*self.inner {
            Inner::Cpu => write!(f, "the CPU emulation backend ({} threads)", emulate::worker_count()),
            Inner::Gpu(g) => {
                let api = match g.gpu.vendor {
                    Vendor::Nvidia => "CUDA",
                    Vendor::Amd => "HSA",
                };
                write!(f, "GPU {}: {} ({}, {api} via liboffload)", g.index, g.gpu.name, g.gpu.arch)
            }
        }
    }
}

impl fmt::Debug for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Device").field("kind", &self.kind()).field("name", &self.name()).finish()
    }
}
