//! `PinnedBuffer<T>`: host memory the GPU can copy to and from at full speed.

use crate::host::args::KernelScalar;
use crate::host::backend::PinnedMem;
use crate::host::buffer::Byte;
use crate::host::device::Device;
use crate::host::error::Result;
use std::ops::{Deref, DerefMut};
use std::sync::Mutex;

/// An array in page-locked ("pinned") host memory, allocated through liboffload: copies
/// between it and a device run at the bus's full speed (on the H200 about 55 GB/s against
/// under 10 GB/s from ordinary, pageable memory). It dereferences to `[T]`, so it is passed
/// to launches and `DeviceBuffer` copies like any slice. On the CPU backend it is ordinary
/// memory.
pub struct PinnedBuffer<T: KernelScalar> {
    ptr: *mut T,
    len: usize,
    /// The memory (and, on a GPU, the device that made it: its runtime frees it).
    mem: PinnedMem,
    /// The devices whose queues hold asynchronous copies that may still read or write the
    /// memory: every access first waits for each of them.
    pub(crate) in_flight: InFlight,
}

/// The devices with queued work that uses some host memory.
#[derive(Debug, Default)]
pub(crate) struct InFlight(Mutex<Vec<Device>>);

impl InFlight {
    /// Notes work queued on `device` that uses the memory.
    pub(crate) fn add(&self, device: &Device) {
        let mut devices = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if !devices.iter().any(|d| d.same_device(device)) {
            devices.push(device.clone());
        }
    }

    /// Waits for the work on every device noted. A failure poisons that device, and the
    /// next call on it reports it.
    pub(crate) fn settle(&self) {
        let devices = std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()));
        for d in devices {
            let _ = d.sync();
        }
    }

    /// Waits for the work on `device` (a `Pending`'s), then forgets it.
    pub(crate) fn settle_one(&self, device: &Device) -> Result<()> {
        let synced = device.sync();
        self.0.lock().unwrap_or_else(|e| e.into_inner()).retain(|d| !d.same_device(device));
        synced
    }
}

// SAFETY: the buffer owns its memory exclusively (like a `Vec<T>`); liboffload's host
// allocations may be used and freed from any thread.
unsafe impl<T: KernelScalar> Send for PinnedBuffer<T> {}
// SAFETY: shared access only reads, as for `Vec<T>`.
unsafe impl<T: KernelScalar> Sync for PinnedBuffer<T> {}

/// Address ranges of the live pinned buffers, so that copies from them skip staging.
static PINNED: std::sync::Mutex<Vec<(usize, usize)>> = std::sync::Mutex::new(Vec::new());

fn pinned_ranges() -> std::sync::MutexGuard<'static, Vec<(usize, usize)>> {
    PINNED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether `bytes` lies inside a live pinned buffer.
pub(crate) fn is_pinned(bytes: &[Byte]) -> bool {
    is_pinned_range(bytes.as_ptr() as usize, bytes.len())
}

/// [`is_pinned`] for the `len` bytes at address `start`.
pub(crate) fn is_pinned_range(start: usize, len: usize) -> bool {
    let end = start.saturating_add(len);
    pinned_ranges().iter().any(|&(s, e)| s <= start && end <= e)
}

impl<T: KernelScalar> std::fmt::Debug for PinnedBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PinnedBuffer").field("len", &self.len).finish()
    }
}

impl<T: KernelScalar> PinnedBuffer<T> {
    /// `len` zeros in pinned memory for copies with `device`.
    pub fn zeroed(device: &Device, len: usize) -> Result<PinnedBuffer<T>> {
        let bytes = crate::host::alloc::bytes_of::<T>(len, "a pinned buffer")?;
        let mem = device.backend().pinned(bytes, "a pinned buffer")?;
        let ptr = mem.ptr().cast::<T>();
        if matches!(mem, PinnedMem::Pinned(_)) && bytes > 0 {
            pinned_ranges().push((ptr as usize, ptr as usize + bytes));
        }
        Ok(PinnedBuffer { ptr, len, mem, in_flight: InFlight::default() })
    }

    /// A copy of `data` in pinned memory.
    pub fn from_slice(device: &Device, data: &[T]) -> Result<PinnedBuffer<T>> {
        let mut b = Self::zeroed(device, data.len())?;
        b.copy_from_slice(data);
        Ok(b)
    }

    /// The memory, for an asynchronous copy that marks it in flight.
    pub(crate) fn raw_parts(&self) -> (*mut T, usize) {
        self.settle();
        (self.ptr, self.len)
    }

    /// Waits for the asynchronous copies that may still use the memory, on whichever devices
    /// queued them.
    fn settle(&self) {
        self.in_flight.settle();
    }
}

impl<T: KernelScalar> Deref for PinnedBuffer<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        self.settle();
        // SAFETY: `ptr` is valid for `len` initialised elements for the buffer's life, and
        // `&self` rules out writers.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
}

impl<T: KernelScalar> DerefMut for PinnedBuffer<T> {
    fn deref_mut(&mut self) -> &mut [T] {
        self.settle();
        // SAFETY: as in `deref`, and `&mut self` makes the slice unique.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T: KernelScalar> Drop for PinnedBuffer<T> {
    fn drop(&mut self) {
        // Copies that use the memory end first; then `mem` frees it.
        self.settle();
        if matches!(self.mem, PinnedMem::Pinned(_)) {
            pinned_ranges().retain(|&(s, _)| s != self.ptr as usize);
        }
    }
}
