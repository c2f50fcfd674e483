//! `Device`: where kernels run — a GPU through liboffload, or the CPU emulation backend —
//! a handle to its [`Backend`].

use super::backend::emulate;
use super::backend::gpu::GpuBackend;
use super::backend::{Backend, Mem, cpu::CpuBackend};
use super::config::config;
use super::error::{Error, Result};
use super::images;
use super::liboffload::runtime::runtime;
use std::fmt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};

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
    inner: Arc<Shared>,
}

/// What the handles of one device share.
struct Shared {
    /// Device memory the runtime keeps for its own temporaries ([`Device::take_scratch`]),
    /// freed before the backend closes.
    scratch: Mutex<Vec<Mem>>,
    backend: Backend,
}

/// Scratch allocations a device keeps at most; giving back one more frees the smallest.
const SCRATCH_KEPT: usize = 8;

/// Live devices (not handles: clones share one): the transfer report is printed when the last
/// goes.
static LIVE: AtomicUsize = AtomicUsize::new(0);

impl Drop for Shared {
    fn drop(&mut self) {
        // Queued work may still use the scratch memory, which is freed right after this.
        let scratch = self.scratch.get_mut().unwrap_or_else(|e| e.into_inner());
        if !scratch.is_empty() {
            let _ = self.backend.sync();
        }
        if LIVE.fetch_sub(1, Ordering::Relaxed) == 1 {
            super::report::print_at_exit();
        }
    }
}

impl Device {
    fn new(backend: Backend) -> Device {
        super::timeline::init();
        LIVE.fetch_add(1, Ordering::Relaxed);
        Device { inner: Arc::new(Shared { scratch: Mutex::new(Vec::new()), backend }) }
    }

    /// The device's backend: everything a device does goes through it.
    pub(crate) fn backend(&self) -> &Backend {
        &self.inner.backend
    }

    /// The device kernels should run on: the first GPU when liboffload finds one and this
    /// executable carries an image for it, otherwise the CPU emulation backend — said on
    /// stderr, with the reason. `OFFLOAD_DEVICE=cpu` forces the CPU; `OFFLOAD_DEVICE=gpu`
    /// forces a GPU and makes its absence an error.
    #[expect(clippy::should_implement_trait, reason = "choosing a device can fail, so this returns a Result")]
    pub fn default() -> Result<Device> {
        let dev = match config().device.as_str() {
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
            other => return Err(Error::BadDeviceChoice(other.to_owned())),
        };
        say(&format!("running kernels on {dev}"));
        Ok(dev)
    }

    /// The CPU emulation backend.
    pub fn cpu() -> Device {
        Device::new(Backend::Cpu(CpuBackend))
    }

    /// GPU number `index` (in liboffload's order). Handles to the same GPU share its one queue
    /// (see [`Device`]). Fails when liboffload is missing, finds no such GPU, or this
    /// executable links kernels but carries no image the GPU can run (a program without
    /// kernels, using buffers, copies or BLAS only, needs none).
    pub fn gpu(index: usize) -> Result<Device> {
        // One queue per GPU: a second handle to a GPU that is open shares the first's, so that
        // work queued through either is ordered, and waiting on either waits for both.
        static OPEN: Mutex<Vec<Weak<Shared>>> = Mutex::new(Vec::new());
        let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(inner) = open.get(index).and_then(Weak::upgrade) {
            return Ok(Device { inner });
        }
        let rt = runtime()?;
        let gpu = rt.gpus.get(index).ok_or_else(|| Error::NoGpu {
            reason: if rt.gpus.is_empty() {
                format!("liboffload ({}) found no GPU", rt.library)
            } else {
                format!("GPU {index} requested, liboffload found {}", rt.gpus.len())
            },
        })?;
        // Fail when the device is chosen, not at the first launch, if no image fits it; an
        // executable without kernels (buffers, copies, BLAS only) needs no image.
        if let Err(e) = gpu.image()
            && (images::embedded().is_some() || images::executable_has_kernels())
        {
            return Err(e);
        }
        let device = Device::new(Backend::Gpu(GpuBackend::open(rt, gpu, index)?));
        if open.len() <= index {
            open.resize_with(index + 1, Weak::new);
        }
        open[index] = Arc::downgrade(&device.inner);
        Ok(device)
    }

    /// Number of GPUs liboffload finds (0 when it finds none or is not installed). Each is
    /// opened with [`Device::gpu`]`(index)`; work on different devices is independent, and a
    /// buffer belongs to the device that made it (using it on another is an error).
    pub fn gpu_count() -> usize {
        runtime().map_or(0, |rt| rt.gpus.len())
    }

    /// Whether `self` and `other` are handles to the same device (and so share its queue and
    /// its buffers).
    pub fn same_device(&self, other: &Device) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// What kind of device this is.
    pub fn kind(&self) -> DeviceKind {
        self.backend().kind()
    }

    /// Whether kernels run on a GPU.
    pub fn is_gpu(&self) -> bool {
        self.kind() != DeviceKind::Cpu
    }

    /// The device's name, e.g. "NVIDIA H200".
    pub fn name(&self) -> &str {
        self.backend().name()
    }

    /// Device memory this process holds on the device through offload (buffers, launch
    /// copies, preloads), in bytes; 0 on the CPU backend.
    pub fn allocated_bytes(&self) -> usize {
        self.backend().allocated_bytes()
    }

    /// Free and total device memory in bytes, as the driver reports them (all processes):
    /// NVIDIA only; `None` on AMD (liboffload 22 has no such query) and the CPU backend.
    pub fn memory_info(&self) -> Option<(usize, usize)> {
        self.backend().memory_info()
    }

    /// The device's architecture (`sm_90`, `gfx90a`), or `"host"` for the CPU backend.
    pub fn arch(&self) -> &str {
        self.backend().arch()
    }

    /// Waits for all work queued on this device, returning the first failure (a kernel that
    /// trapped is named).
    pub fn sync(&self) -> Result<()> {
        self.backend().sync()
    }

    /// Memory of at least `bytes` bytes for the runtime's own temporaries (the scans' tile
    /// status, for example): the smallest that fits of those given back with
    /// [`give_back_scratch`](Self::give_back_scratch), holding whatever its last user left,
    /// or new, zeroed memory. Memory is given back as soon as its user has *queued* its
    /// work: the next user's work is queued after it on the device's one queue, so it needs
    /// no wait (and an algorithm called in a loop no allocation, which waits on a GPU).
    pub(crate) fn take_scratch(&self, bytes: usize, what: &str) -> Result<Mem> {
        if bytes == 0 {
            // Nothing to take from the pool (its smallest piece would sit idle).
            return self.backend().alloc_zeroed(0, what);
        }
        let mut pool = self.inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
        let best = pool.iter().enumerate().filter(|(_, m)| m.bytes() >= bytes).min_by_key(|(_, m)| m.bytes());
        match best.map(|(i, _)| i) {
            Some(i) => Ok(pool.swap_remove(i)),
            None => {
                drop(pool);
                self.backend().alloc_zeroed(bytes, what)
            }
        }
    }

    /// Gives back memory from [`take_scratch`](Self::take_scratch) (of this device) once the
    /// work that uses it is queued. Past [`SCRATCH_KEPT`] allocations the smallest is freed,
    /// after the queued work (which may still use it) is done.
    pub(crate) fn give_back_scratch(&self, mem: Mem) {
        if mem.bytes() == 0 {
            return;
        }
        let mut pool = self.inner.scratch.lock().unwrap_or_else(|e| e.into_inner());
        pool.push(mem);
        if pool.len() > SCRATCH_KEPT {
            let smallest = pool.iter().enumerate().min_by_key(|(_, m)| m.bytes()).map(|(i, _)| i);
            if let Some(i) = smallest {
                let mem = pool.swap_remove(i);
                drop(pool);
                // A failure here was, or will be, reported by the call that queued the work.
                let _ = self.sync();
                drop(mem);
            }
        }
    }
}

fn say(line: &str) {
    if !config().quiet {
        eprintln!("offload: {line}");
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.backend().gpu() {
            None => write!(f, "the CPU emulation backend ({} threads)", emulate::worker_count()),
            Some(g) => {
                let api = if self.kind() == DeviceKind::Amd { "HSA" } else { "CUDA" };
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
