//! The backend seam: what a device does — allocate, copy in and out, fill, queue copies, wait,
//! and run launches — implemented once by the CPU emulation backend ([`cpu`]) and once by the
//! liboffload backend ([`gpu`]). A [`Device`](crate::Device) chooses its backend when it is
//! made; the public types (buffers, pinned memory, preloads, scopes, launches, BLAS) speak to
//! it through [`Backend`]. Three places ask for the GPU backend itself ([`Backend::gpu`]), for
//! what only a GPU has: a launch's packed arguments and arenas (`launch`), the vendor
//! libraries (`blas`), and the driver's device properties (`device`).
//!
//! Memory is a [`Mem`] on both: host memory on the CPU backend (which kernels there read and
//! write directly), device memory on a GPU. Its address is what a launch hands the kernel.

pub(crate) mod cpu;
pub(crate) mod emulate;
pub(crate) mod gpu;
mod host_block;
pub(crate) mod staging;

pub(crate) use host_block::HostBlock;

use super::buffer::Byte;
use super::device::DeviceKind;
use super::error::Result;
use super::liboffload::memory::{DeviceAlloc, HostAlloc};
use super::timeline::{self, HostKind};
use serde_json::json;
use std::ffi::c_void;
use std::time::Instant;

/// A device's backend, chosen once when the device is made.
#[allow(
    clippy::large_enum_variant,
    reason = "one per device, inside the device's `Arc`: a box would only add a pointer to every launch's path"
)]
pub(crate) enum Backend {
    Cpu(cpu::CpuBackend),
    Gpu(gpu::GpuBackend),
}

/// Memory of a device, freed on drop (after the device's queued work that may use it).
#[derive(Debug)]
pub(crate) struct Mem {
    ptr: *mut c_void,
    bytes: usize,
    _owner: Owner,
}

#[derive(Debug)]
enum Owner {
    Host(#[expect(dead_code, reason = "owns the memory, freed when dropped")] HostBlock),
    Device(#[expect(dead_code, reason = "owns the memory, freed when dropped")] DeviceAlloc),
}

// SAFETY: the memory is owned by this value alone (like a `Box<[u8]>`); liboffload's device
// allocations may be used and freed from any thread.
unsafe impl Send for Mem {}
// SAFETY: shared access only reads the address; accesses to the memory go through the
// buffer types, whose borrows keep them apart.
unsafe impl Sync for Mem {}

impl Mem {
    /// The address kernels use: host memory on the CPU backend, device memory on a GPU. Never
    /// null (empty memory has a dangling, aligned address, never accessed).
    pub fn ptr(&self) -> *mut c_void {
        self.ptr
    }

    pub fn bytes(&self) -> usize {
        self.bytes
    }

    /// The address, when the memory is host memory (the CPU backend's).
    pub fn host(&self) -> Option<*mut u8> {
        match self._owner {
            Owner::Host(_) => Some(self.ptr.cast()),
            Owner::Device(_) => None,
        }
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        // Device memory records its own free (`DeviceAlloc`); the CPU backend's is recorded here.
        if let Some(started) = timeline::start()
            && let Owner::Host(_) = self._owner
        {
            let name = format!("free {}", super::report::human(self.bytes as u64));
            timeline::host(
                started,
                "memory",
                name,
                json!({ "bytes": self.bytes, "device": "CPU emulation" }),
            );
        }
    }
}

/// Page-locked host memory for fast copies with a GPU (ordinary host memory on the CPU
/// backend), zeroed, freed on drop.
#[derive(Debug)]
pub(crate) enum PinnedMem {
    Host(HostBlock),
    Pinned(HostAlloc),
}

impl PinnedMem {
    pub fn ptr(&self) -> *mut u8 {
        match self {
            PinnedMem::Host(b) => b.ptr(),
            PinnedMem::Pinned(a) => a.ptr,
        }
    }
}

impl Backend {
    pub fn kind(&self) -> DeviceKind {
        match self {
            Backend::Cpu(_) => DeviceKind::Cpu,
            Backend::Gpu(g) => g.kind(),
        }
    }

    pub fn name(&self) -> &str {
        match self {
            Backend::Cpu(_) => "CPU emulation",
            Backend::Gpu(g) => &g.gpu.name,
        }
    }

    pub fn arch(&self) -> &str {
        match self {
            Backend::Cpu(_) => "host",
            Backend::Gpu(g) => &g.gpu.arch,
        }
    }

    /// The GPU backend, for what only a GPU has (launch arguments in device memory, vendor
    /// libraries); `None` on the CPU backend.
    pub fn gpu(&self) -> Option<&gpu::GpuBackend> {
        match self {
            Backend::Cpu(_) => None,
            Backend::Gpu(g) => Some(g),
        }
    }

    /// `bytes` of zeroed memory (on a GPU the zeroing is queued); `what` names it in errors.
    pub fn alloc_zeroed(&self, bytes: usize, what: &str) -> Result<Mem> {
        self.alloc(bytes, true, what)
    }

    /// Memory holding a copy of `src`.
    pub fn alloc_copy(&self, src: &[Byte], what: &str) -> Result<Mem> {
        let mem = self.alloc(src.len(), false, what)?;
        self.upload(&mem, 0, src)?;
        Ok(mem)
    }

    fn alloc(&self, bytes: usize, zeroed: bool, what: &str) -> Result<Mem> {
        let (ptr, owner) = match self {
            Backend::Cpu(_) => {
                let started = timeline::start();
                let block = HostBlock::zeroed(bytes, what)?;
                if let Some(started) = started {
                    let name = format!("alloc {}", super::report::human(bytes as u64));
                    timeline::host(
                        started,
                        "memory",
                        name,
                        json!({ "bytes": bytes, "device": "CPU emulation" }),
                    );
                }
                (block.ptr().cast(), Owner::Host(block))
            }
            Backend::Gpu(g) => {
                let alloc = g.alloc(bytes, zeroed)?;
                (alloc.ptr, Owner::Device(alloc))
            }
        };
        let ptr = if ptr.is_null() { std::ptr::NonNull::<u128>::dangling().as_ptr().cast() } else { ptr };
        Ok(Mem { ptr, bytes, _owner: owner })
    }

    /// Copies `src` into `dst` at byte `offset`, after the device's queued work, and waits.
    pub fn upload(&self, dst: &Mem, offset: usize, src: &[Byte]) -> Result<()> {
        assert!(offset.checked_add(src.len()).is_some_and(|e| e <= dst.bytes), "upload past the end");
        let started = timeline::start();
        // SAFETY: the range lies inside `dst` (asserted), which the caller holds.
        let at = unsafe { dst.ptr.cast::<u8>().add(offset) };
        let result = match self {
            Backend::Cpu(_) => {
                // SAFETY: `at` holds `src.len()` bytes of host memory that no kernel uses now
                // (CPU launches finish before returning), and `src` does not overlap it (the
                // caller borrows `dst` and `src` apart).
                unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), at.cast::<Byte>(), src.len()) };
                Ok(())
            }
            Backend::Gpu(g) => g.upload(at.cast(), src),
        };
        if let Some(started) = started {
            self.record_copy(started, "H→D", src.len(), src.as_ptr().cast(), HostKind::User, true);
        }
        result
    }

    /// Records a copy the host made from `started` until now: on the host thread's track, and
    /// on the CPU backend also on its (synchronous) queue's. `waits`: whether the call
    /// returned only once the copy was done.
    fn record_copy(
        &self,
        started: Instant,
        way: &str,
        bytes: usize,
        host: *const u8,
        kind: HostKind,
        waits: bool,
    ) {
        let kind = if matches!(self, Backend::Cpu(_)) { HostKind::Cpu } else { kind };
        let args = json!({ "bytes": bytes, "direction": way, "host": kind.describe(host, bytes),
            "device": self.name(), "waits": waits });
        let name = timeline::copy_name(way, bytes);
        let name = if waits { name } else { format!("{name} (queued)") };
        if matches!(self, Backend::Cpu(_)) {
            timeline::device(timeline::CPU_QUEUE, cpu::track_name, started, name.clone(), args.clone());
        }
        timeline::host(started, "copy", name, args);
    }

    /// Copies `dst.len()` bytes of `src` from byte `offset` into `dst`, after the device's
    /// queued work.
    pub fn download(&self, dst: &mut [Byte], src: &Mem, offset: usize) -> Result<()> {
        assert!(offset.checked_add(dst.len()).is_some_and(|e| e <= src.bytes), "download past the end");
        let started = timeline::start();
        // SAFETY: as in `upload`.
        let at = unsafe { src.ptr.cast::<u8>().add(offset) };
        let result = match self {
            Backend::Cpu(_) => {
                // SAFETY: as in `upload`, the other way.
                unsafe { std::ptr::copy_nonoverlapping(at.cast::<Byte>(), dst.as_mut_ptr(), dst.len()) };
                Ok(())
            }
            Backend::Gpu(g) => g.download(dst, at.cast()),
        };
        if let Some(started) = started {
            self.record_copy(started, "D→H", dst.len(), dst.as_ptr().cast(), HostKind::User, true);
        }
        result
    }

    /// Queues a copy of `bytes` bytes of host memory at `src` into `dst` (done at once on the
    /// CPU backend).
    ///
    /// # Safety
    ///
    /// `src` stays valid and unchanged, and `dst` untouched, until the device has been waited
    /// for; `bytes <= dst.bytes()`.
    pub unsafe fn copy_in_async(&self, dst: &Mem, src: *const Byte, bytes: usize) -> Result<()> {
        let started = timeline::start();
        match self {
            // SAFETY: the caller's contract.
            Backend::Cpu(_) => unsafe { std::ptr::copy_nonoverlapping(src, dst.ptr.cast::<Byte>(), bytes) },
            Backend::Gpu(g) => {
                g.check_poison()?;
                // SAFETY: the caller's contract.
                unsafe { g.queue().copy_in(dst.ptr, src, bytes, HostKind::Pinned) }?;
            }
        }
        if let Some(started) = started {
            self.record_copy(started, "H→D", bytes, src.cast(), HostKind::Pinned, self.gpu().is_none());
        }
        Ok(())
    }

    /// Queues a copy of `bytes` bytes of `src` into host memory at `dst` (done at once on the
    /// CPU backend, after nothing: CPU launches finish before they return).
    ///
    /// # Safety
    ///
    /// `dst` stays valid and untouched until the device has been waited for;
    /// `bytes <= src.bytes()`.
    pub unsafe fn copy_out_async(&self, dst: *mut Byte, src: &Mem, bytes: usize) -> Result<()> {
        let started = timeline::start();
        match self {
            // SAFETY: the caller's contract.
            Backend::Cpu(_) => unsafe { std::ptr::copy_nonoverlapping(src.ptr.cast::<Byte>(), dst, bytes) },
            Backend::Gpu(g) => {
                g.check_poison()?;
                // SAFETY: the caller's contract.
                unsafe { g.queue().copy_out(dst, src.ptr, bytes, HostKind::Pinned) }?;
            }
        }
        if let Some(started) = started {
            self.record_copy(
                started,
                "D→H",
                bytes,
                dst.cast_const().cast(),
                HostKind::Pinned,
                self.gpu().is_none(),
            );
        }
        Ok(())
    }

    /// `bytes` of zeroed page-locked host memory for copies with this device.
    pub fn pinned(&self, bytes: usize, what: &str) -> Result<PinnedMem> {
        Ok(match self {
            Backend::Cpu(_) => PinnedMem::Host(HostBlock::zeroed(bytes, what)?),
            Backend::Gpu(g) => PinnedMem::Pinned(g.pinned(bytes, what)?),
        })
    }

    /// Waits for all queued work; the first failure (naming the kernel that trapped).
    pub fn sync(&self) -> Result<()> {
        match self {
            Backend::Cpu(_) => {
                if let Some(started) = timeline::start() {
                    let args = json!({ "call": "none: CPU backend launches and copies finish before they return",
                        "completed_operations": 0, "ok": true });
                    timeline::host(started, "wait", "wait".to_owned(), args);
                }
                Ok(())
            }
            Backend::Gpu(g) => g.sync_queue(),
        }
    }

    /// Device memory this process holds through offload.
    pub fn allocated_bytes(&self) -> usize {
        match self {
            Backend::Cpu(_) => 0,
            Backend::Gpu(g) => g.allocated_bytes(),
        }
    }

    /// Free and total memory, as the driver reports them (NVIDIA only).
    pub fn memory_info(&self) -> Option<(usize, usize)> {
        self.gpu().and_then(gpu::GpuBackend::memory_info)
    }
}
