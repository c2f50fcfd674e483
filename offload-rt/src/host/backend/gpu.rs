//! The liboffload backend: one GPU, its one queue, and the kernels queued on it since the last
//! wait (so that a trap reported later names them). Copies of pageable host memory go through
//! the bounce buffers of [`super::staging`] when that pays off.

use super::staging::{Bounce, SmallArena};
use crate::host::buffer::Byte;
use crate::host::device::DeviceKind;
use crate::host::error::{Error, Result};
use crate::host::liboffload::memory::{DeviceAlloc, HostAlloc};
use crate::host::liboffload::queue::Queue;
use crate::host::liboffload::runtime::{Gpu, Runtime, Vendor};
use crate::host::report::{Way, record_copy};
use crate::host::timeline::HostKind;
use std::ffi::c_void;
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, MutexGuard};

/// A GPU as a device backend.
pub(crate) struct GpuBackend {
    pub rt: &'static Runtime,
    pub gpu: &'static Gpu,
    /// liboffload's index of the GPU.
    pub index: usize,
    queue: Mutex<Queue>,
    /// Kernels queued without waiting since the queue was last synchronised: a failure the
    /// next synchronisation reports is one of theirs.
    pending: Mutex<Vec<&'static str>>,
    /// The kernel `pending` got last (its path's address; null once `pending` is emptied): a
    /// kernel queued again and again is then noted without a lock. Written only while
    /// `pending` is locked.
    last_pending: AtomicPtr<u8>,
    /// Pinned bounce buffers for staged copies of pageable memory, allocated on first use.
    pub(super) bounce: Mutex<Option<Bounce>>,
    /// The arenas for the small arguments of launches on host data.
    small: Mutex<Option<SmallArena>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl GpuBackend {
    /// GPU `index` of the runtime, with a queue of its own and its small arenas (allocated
    /// now, not inside the first launch, which a benchmark would time).
    pub fn open(rt: &'static Runtime, gpu: &'static Gpu, index: usize) -> Result<GpuBackend> {
        let queue = Queue::new(rt, gpu)?;
        let backend = GpuBackend {
            rt,
            gpu,
            index,
            queue: Mutex::new(queue),
            pending: Mutex::new(Vec::new()),
            last_pending: AtomicPtr::new(std::ptr::null_mut()),
            bounce: Mutex::new(None),
            small: Mutex::new(None),
        };
        drop(backend.small_arena()?);
        Ok(backend)
    }

    pub fn kind(&self) -> DeviceKind {
        match self.gpu.vendor {
            Vendor::Nvidia => DeviceKind::Nvidia,
            Vendor::Amd => DeviceKind::Amd,
        }
    }

    /// Lanes of a warp: 32 on NVIDIA, 64 on AMD — CDNA's wavefronts; an RDNA GPU's 32 divide
    /// it, so a block of whole 64-lane warps is whole warps there too.
    pub fn warp_size(&self) -> u32 {
        match self.gpu.vendor {
            Vendor::Nvidia => 32,
            Vendor::Amd => 64,
        }
    }

    /// The queue, for submitting work (one thread at a time).
    pub fn queue(&self) -> MutexGuard<'_, Queue> {
        lock(&self.queue)
    }

    /// Fails fast once a failure has poisoned the device.
    pub fn check_poison(&self) -> Result<()> {
        self.gpu.check_poison()
    }

    /// Records a kernel queued without waiting for it.
    #[inline]
    pub fn queued(&self, kernel: &'static str) {
        // Each kernel's path is one static string: its address names it. The last kernel
        // noted is in `pending` until it is emptied, which resets `last_pending` under the
        // same lock; a launch that reads a stale address raced with the emptying, whose wait
        // or failure then covers this launch too.
        if self.last_pending.load(Ordering::Acquire).cast_const() != kernel.as_ptr() {
            self.note_pending(kernel);
        }
    }

    #[inline(never)]
    fn note_pending(&self, kernel: &'static str) {
        let mut pending = lock(&self.pending);
        if !pending.iter().rev().any(|k| std::ptr::eq(*k, kernel)) {
            pending.push(kernel);
        }
        self.last_pending.store(kernel.as_ptr().cast_mut(), Ordering::Release);
    }

    /// Empties `pending` (all of it waited for, or failed), keeping its capacity, and passes
    /// what it held to `f`.
    fn drain_pending<R>(&self, f: impl FnOnce(&[&'static str]) -> R) -> R {
        let mut pending = lock(&self.pending);
        self.last_pending.store(std::ptr::null_mut(), Ordering::Release);
        let r = f(&pending);
        pending.clear();
        r
    }

    /// Turns a failure of queued work into the failure of the kernels queued since the last
    /// synchronisation (a trap surfaces at the next call), and poisons the device with it.
    pub fn queued_failure(&self, e: Error) -> Error {
        let pending = self.drain_pending(<[_]>::to_vec);
        let e = if pending.is_empty() || matches!(e, Error::Poisoned { .. }) {
            e
        } else {
            let panic = self.gpu.device_panic();
            // The panic's function names the kernel among those pending, when it is one's
            // entry point (`__offload_<module>_<hash>_<name>`).
            let named = panic.as_ref().and_then(|p| {
                pending.iter().find(|k| {
                    let name = k.rsplit("::").next().unwrap_or(k);
                    p.function.strip_suffix(name).is_some_and(|rest| rest.ends_with('_'))
                })
            });
            Error::KernelFailed {
                kernel: named.map_or_else(|| pending.join("` or `"), |k| (*k).to_owned()),
                device: self.gpu.name.clone(),
                details: e.to_string(),
                panic: panic.map(Box::new),
            }
        };
        self.gpu.poison(e)
    }

    /// Waits for everything queued.
    pub fn sync_queue(&self) -> Result<()> {
        self.check_poison()?;
        match self.queue().sync() {
            Ok(()) => {
                self.drain_pending(|_| ());
                Ok(())
            }
            Err(e) => Err(self.queued_failure(e)),
        }
    }

    /// `bytes` of device memory, its zeroing queued if `zeroed`.
    pub fn alloc(&self, bytes: usize, zeroed: bool) -> Result<DeviceAlloc> {
        self.check_poison()?;
        let alloc = DeviceAlloc::new(self.rt, self.gpu, bytes)?;
        if zeroed {
            self.zero(alloc.ptr, alloc.bytes)?;
        }
        Ok(alloc)
    }

    /// Queues filling `bytes` bytes of device memory at `ptr` with zeros.
    pub fn zero(&self, ptr: *mut c_void, bytes: usize) -> Result<()> {
        self.check_poison()?;
        // SAFETY: callers pass memory of this device, allocated until its queue has been
        // waited for (allocations wait for the queue before they are freed).
        unsafe { self.queue().zero(ptr, bytes) }
    }

    /// `bytes` of pinned host memory for copies with this GPU.
    pub fn pinned(&self, bytes: usize, what: &str) -> Result<HostAlloc> {
        HostAlloc::new(self.rt, self.gpu, bytes, true, what)
    }

    /// Copies host memory to the device at `dst` and waits: staged when large and pageable.
    pub fn upload(&self, dst: *mut c_void, src: &[Byte]) -> Result<()> {
        let started = std::time::Instant::now();
        if !self.upload_if_staged(dst, src)? {
            self.check_poison()?;
            // SAFETY: `dst` holds `src.len()` bytes of this device's memory (the caller's
            // contract) and `src` stays borrowed until the wait below.
            unsafe { self.queue().copy_in(dst, src.as_ptr(), src.len(), HostKind::User) }
                .map_err(|e| self.queued_failure(e))?;
            self.sync_queue()?;
        }
        record_copy(Way::In, 1, src.len() as u64, started.elapsed(), None);
        Ok(())
    }

    /// Copies device memory at `src` to the host after the queued work, staged when large and
    /// pageable.
    pub fn download(&self, dst: &mut [Byte], src: *const c_void) -> Result<()> {
        let started = std::time::Instant::now();
        if !self.download_if_staged(dst, src)? {
            self.check_poison()?;
            // SAFETY: `src` holds `dst.len()` bytes of this device's memory (the caller's
            // contract) and `dst` stays borrowed until the wait below.
            unsafe { self.queue().copy_out(dst.as_mut_ptr(), src, dst.len(), HostKind::User) }
                .map_err(|e| self.queued_failure(e))?;
            self.sync_queue()?;
        }
        record_copy(Way::Out, 1, dst.len() as u64, started.elapsed(), None);
        Ok(())
    }

    /// The small arenas, allocated on first use and held by the caller's launch.
    pub fn small_arena(&self) -> Result<MutexGuard<'_, Option<SmallArena>>> {
        let mut guard = lock(&self.small);
        if guard.is_none() {
            *guard = Some(SmallArena::new(self.rt, self.gpu)?);
        }
        Ok(guard)
    }

    pub fn allocated_bytes(&self) -> usize {
        self.gpu.allocated.load(Ordering::Relaxed)
    }

    /// Free and total memory as the driver reports them (all processes): NVIDIA only.
    pub fn memory_info(&self) -> Option<(usize, usize)> {
        crate::host::liboffload::cuda::memory_info(self.gpu.cuda_ordinal?).ok()
    }
}
