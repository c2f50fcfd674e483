//! `DeviceBuffer<T>`: data that lives on a device, so that launches use it without copies.

use super::args::KernelScalar;
use super::device::{Device, GpuDevice, Inner};
use super::error::{Error, Result};
use super::alloc::{bytes_of, try_copy, try_vec};
use super::liboffload::runtime::DeviceAlloc;
use super::report::{Way, record_copy};
use std::sync::Arc;

/// An array of `T` in a device's memory (in host memory for the CPU backend). Kernel
/// parameters accept `&DeviceBuffer<T>` where they take `&[T]` and `&mut DeviceBuffer<T>`
/// where they take a `Region`, with no copies; a launch whose arguments are all buffers or
/// scalars returns as soon as it is queued.
///
/// Reading a buffer back ([`to_vec`](DeviceBuffer::to_vec), [`copy_to`](DeviceBuffer::copy_to))
/// first waits for the device's queued work, and dropping one waits for it too, so a buffer is
/// never read or freed while a kernel still uses it.
pub struct DeviceBuffer<T: KernelScalar> {
    device: Device,
    len: usize,
    pub(crate) storage: Storage<T>,
}

pub(crate) enum Storage<T> {
    Host(Vec<T>),
    Gpu(DeviceAlloc),
}

impl<T: KernelScalar> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer").field("device", &self.device).field("len", &self.len).finish()
    }
}

impl<T: KernelScalar> DeviceBuffer<T> {
    /// A buffer holding a copy of `data`.
    pub fn from_slice(device: &Device, data: &[T]) -> Result<DeviceBuffer<T>> {
        let storage = match &*device.inner {
            Inner::Cpu => Storage::Host(try_copy(data, "a device buffer")?),
            Inner::Gpu(g) => {
                let alloc = DeviceAlloc::new(g.rt, g.gpu, size_of_val(data))?;
                g.upload(alloc.ptr, as_bytes(data))?;
                Storage::Gpu(alloc)
            }
        };
        Ok(DeviceBuffer { device: device.clone(), len: data.len(), storage })
    }

    /// A buffer of `len` zeros, filled on the device (nothing is copied).
    pub fn zeroed(device: &Device, len: usize) -> Result<DeviceBuffer<T>> {
        let storage = match &*device.inner {
            Inner::Cpu => Storage::Host(try_vec(len, zero(), "a device buffer")?),
            Inner::Gpu(g) => {
                let alloc = DeviceAlloc::new(g.rt, g.gpu, bytes_of::<T>(len, "a device buffer")?)?;
                g.zero(alloc.ptr, alloc.bytes)?;
                Storage::Gpu(alloc)
            }
        };
        Ok(DeviceBuffer { device: device.clone(), len, storage })
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the buffer has no element.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// Copies the buffer into `out`, after the device's queued work.
    pub fn copy_to(&self, out: &mut [T]) -> Result<()> {
        self.check_len(out.len())?;
        match (&self.storage, &*self.device.inner) {
            (Storage::Host(v), _) => out.copy_from_slice(v),
            (Storage::Gpu(a), Inner::Gpu(g)) => {
                // SAFETY: the device bytes are a copy of this buffer's `T`s, as many as `out`
                // holds (the lengths match).
                g.download(unsafe { as_bytes_mut(out) }, a.ptr)?;
            }
            (Storage::Gpu(_), Inner::Cpu) => unreachable!("GPU storage belongs to a GPU device"),
        }
        Ok(())
    }

    /// The buffer's contents, after the device's queued work.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = try_vec(self.len, zero::<T>(), "a host copy of a device buffer")?;
        self.copy_to(&mut out)?;
        Ok(out)
    }

    /// Overwrites the buffer with `data`, after the device's queued work.
    pub fn copy_from(&mut self, data: &[T]) -> Result<()> {
        self.check_len(data.len())?;
        match (&mut self.storage, &*self.device.inner) {
            (Storage::Host(v), _) => v.copy_from_slice(data),
            (Storage::Gpu(a), Inner::Gpu(g)) => {
                g.upload(a.ptr, as_bytes(data))?;
            }
            (Storage::Gpu(_), Inner::Cpu) => unreachable!("GPU storage belongs to a GPU device"),
        }
        Ok(())
    }

    pub(crate) fn check_len(&self, other: usize) -> Result<()> {
        if other == self.len { Ok(()) } else { Err(Error::LengthMismatch { buffer: self.len, host: other }) }
    }

    /// The data for a launch on `device`: host memory on the CPU backend, a device pointer
    /// on a GPU. A buffer of another device (or another queue) is an error.
    pub(crate) fn launch_view(&self, device: &Device, kernel: &str) -> Result<BufferView> {
        if !Arc::ptr_eq(&self.device.inner, &device.inner) {
            return Err(Error::WrongDevice {
                kernel: kernel.to_owned(),
                buffer: self.device.to_string(),
                launch: device.to_string(),
            });
        }
        Ok(match &self.storage {
            Storage::Host(_) => BufferView::Host,
            Storage::Gpu(a) => BufferView::Gpu(a.ptr),
        })
    }
}

/// Where a buffer's elements are, for a launch.
pub(crate) enum BufferView {
    Host,
    Gpu(*mut std::ffi::c_void),
}

impl<T: KernelScalar> DeviceBuffer<T> {
    /// The elements, for the CPU backend.
    pub(crate) fn host_slice(&self) -> Option<&[T]> {
        match &self.storage {
            Storage::Host(v) => Some(v),
            Storage::Gpu(_) => None,
        }
    }

    /// Host pointer for the CPU backend, which may write through it: callers hold
    /// `&mut DeviceBuffer` for writable arguments.
    pub(crate) fn host_ptr(&mut self) -> Option<*mut T> {
        match &mut self.storage {
            Storage::Host(v) => Some(v.as_mut_ptr()),
            Storage::Gpu(_) => None,
        }
    }
}

impl<T: KernelScalar> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // A queued kernel may still use the memory: wait before it is freed. A failure here
        // was, or will be, reported by the call that queued the work.
        if let (Storage::Gpu(_), Inner::Gpu(g)) = (&self.storage, &*self.device.inner) {
            let _ = g.sync_queue();
        }
    }
}

/// A byte of plain data as it is moved between host and device: possibly a padding byte of
/// a `#[repr(C)]` struct, so never read as a `u8`.
pub(crate) type Byte = std::mem::MaybeUninit<u8>;

/// The bytes of plain data, for copies.
pub(crate) fn as_bytes<T: KernelScalar>(data: &[T]) -> &[Byte] {
    // SAFETY: any initialised memory may be viewed as `MaybeUninit<u8>` (padding included),
    // for the slice's own size; the borrow keeps it alive and unchanged.
    unsafe { std::slice::from_raw_parts(data.as_ptr().cast(), size_of_val(data)) }
}

/// The bytes of plain data, for overwriting with the bytes of other values of `T`.
///
/// # Safety
///
/// Whoever writes through the result writes only bytes that came from values of `T` (a
/// device copy of the same array), in whole values at their offsets, so that every `T` is
/// valid again.
pub(crate) unsafe fn as_bytes_mut<T: KernelScalar>(data: &mut [T]) -> &mut [Byte] {
    // SAFETY: as in `as_bytes`; the caller keeps the values valid.
    unsafe { std::slice::from_raw_parts_mut(data.as_mut_ptr().cast(), size_of_val(data)) }
}

/// The all-zero value of `T`.
pub(crate) fn zero<T: KernelScalar>() -> T {
    // SAFETY: every `KernelScalar` is valid as all-zero bytes (the trait's contract).
    unsafe { std::mem::zeroed() }
}

impl GpuDevice {
    /// Queues filling `bytes` bytes of device memory at `ptr` with zeros.
    pub(crate) fn zero(&self, ptr: *mut std::ffi::c_void, bytes: usize) -> Result<()> {
        self.gpu.check_poison()?;
        if bytes == 0 {
            return Ok(());
        }
        let pattern = 0u32;
        let width = if bytes.is_multiple_of(4) { 4 } else { 1 };
        let queue = self.queue();
        // SAFETY: `ptr` holds `bytes` bytes of this device's memory, which the caller keeps
        // allocated until the queue is synchronised; the pattern is read during the call.
        let filled =
            unsafe { (self.rt.api.olMemFill)(queue.0, ptr, width, (&raw const pattern).cast(), bytes) };
        self.rt.check("olMemFill", filled)
    }

    /// Queues a copy on this device's queue, without waiting.
    ///
    /// # Safety
    ///
    /// Both ranges must be valid on the named devices for `bytes` bytes until the queue has
    /// been synchronised, and nothing may write the source or access the destination
    /// meanwhile.
    pub(crate) unsafe fn queue_copy(
        &self,
        dst: *mut std::ffi::c_void,
        dst_dev: super::liboffload::ffi::ol_device_handle_t,
        src: *const std::ffi::c_void,
        src_dev: super::liboffload::ffi::ol_device_handle_t,
        bytes: usize,
    ) -> Result<()> {
        self.gpu.check_poison()?;
        if bytes == 0 {
            return Ok(());
        }
        let queue = self.queue();
        // SAFETY: the caller's contract.
        let copied = unsafe { (self.rt.api.olMemcpy)(queue.0, dst, dst_dev, src, src_dev, bytes) };
        self.rt.check("olMemcpy", copied)
    }

    /// A copy on this device's queue, waited for.
    pub(crate) fn copy(
        &self,
        dst: *mut std::ffi::c_void,
        dst_dev: super::liboffload::ffi::ol_device_handle_t,
        src: *const std::ffi::c_void,
        src_dev: super::liboffload::ffi::ol_device_handle_t,
        bytes: usize,
    ) -> Result<()> {
        if bytes == 0 {
            return self.gpu.check_poison();
        }
        let started = std::time::Instant::now();
        let way = if src_dev == self.rt.host { Way::In } else { Way::Out };
        // SAFETY: callers pass ranges of `bytes` bytes valid on the named devices, which stay
        // valid until the queue is synchronised right after.
        unsafe { self.queue_copy(dst, dst_dev, src, src_dev, bytes) }.map_err(|e| self.queued_failure(e))?;
        self.sync_queue()?;
        record_copy(way, 1, bytes as u64, started.elapsed(), None);
        Ok(())
    }
}
