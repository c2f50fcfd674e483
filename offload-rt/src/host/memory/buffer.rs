//! `DeviceBuffer<T>`: data that lives on a device, so that launches use it without copies.

use crate::host::alloc::{bytes_of, try_vec};
use crate::host::args::KernelScalar;
use crate::host::backend::Mem;
use crate::host::device::Device;
use crate::host::error::{Error, Result};

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
    mem: Mem,
    _elem: std::marker::PhantomData<T>,
}

impl<T: KernelScalar> std::fmt::Debug for DeviceBuffer<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DeviceBuffer").field("device", &self.device).field("len", &self.len).finish()
    }
}

impl<T: KernelScalar> DeviceBuffer<T> {
    /// A buffer holding a copy of `data`.
    pub fn from_slice(device: &Device, data: &[T]) -> Result<DeviceBuffer<T>> {
        let mem = device.backend().alloc_copy(as_bytes(data), "a device buffer")?;
        Ok(DeviceBuffer { device: device.clone(), len: data.len(), mem, _elem: std::marker::PhantomData })
    }

    /// A buffer of `len` zeros, filled on the device (nothing is copied).
    pub fn zeroed(device: &Device, len: usize) -> Result<DeviceBuffer<T>> {
        let bytes = bytes_of::<T>(len, "a device buffer")?;
        let mem = device.backend().alloc_zeroed(bytes, "a device buffer")?;
        Ok(DeviceBuffer { device: device.clone(), len, mem, _elem: std::marker::PhantomData })
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
        // SAFETY: the device's bytes are a copy of this buffer's `T`s, as many as `out` holds
        // (the lengths match).
        self.device.backend().download(unsafe { as_bytes_mut(out) }, &self.mem, 0)
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
        self.device.backend().upload(&self.mem, 0, as_bytes(data))
    }

    /// Overwrites elements `start..start + data.len()`, which must lie inside the buffer, after
    /// the device's queued work. (Through `&self`: callers hold the range exclusively, as a
    /// `BufferPartMut` does.)
    pub(crate) fn upload_part(&self, start: usize, data: &[T]) -> Result<()> {
        if start.checked_add(data.len()).is_none_or(|end| end > self.len) {
            return Err(Error::LengthMismatch { buffer: self.len.saturating_sub(start), host: data.len() });
        }
        // (Inside the buffer: no overflow.)
        self.device.backend().upload(&self.mem, start * std::mem::size_of::<T>(), as_bytes(data))
    }

    pub(crate) fn check_len(&self, other: usize) -> Result<()> {
        if other == self.len { Ok(()) } else { Err(Error::LengthMismatch { buffer: self.len, host: other }) }
    }

    /// The buffer's memory.
    pub(crate) fn mem(&self) -> &Mem {
        &self.mem
    }

    /// The elements, when the buffer lives in host memory (the CPU backend's).
    pub(crate) fn host_slice(&self) -> Option<&[T]> {
        // SAFETY: host memory holding this buffer's `len` initialised `T`s, alive and not
        // written while `self` is borrowed (writes need `&mut self` or a part that borrows it).
        self.mem.host().map(|p| unsafe { std::slice::from_raw_parts(p.cast::<T>(), self.len) })
    }

    /// The address of the elements, when the buffer lives in host memory, for writing them
    /// (the caller holds the buffer mutably, or a part of it).
    pub(crate) fn host_ptr(&self) -> Option<*mut T> {
        self.mem.host().map(|p| p.cast())
    }

    /// The buffer's address for a launch on `device` (device memory on a GPU, host memory on
    /// the CPU backend). A buffer of another device is an error.
    pub(crate) fn launch_view(&self, device: &Device, kernel: &str) -> Result<*mut T> {
        if !self.device.same_device(device) {
            return Err(Error::WrongDevice {
                kernel: kernel.to_owned(),
                buffer: self.device.to_string(),
                launch: device.to_string(),
            });
        }
        Ok(self.mem.ptr().cast())
    }
}

impl<T: crate::AtomicElem + KernelScalar> DeviceBuffer<T> {
    /// A buffer of `len` elements over `device`'s scratch memory `mem` (see
    /// [`Device::take_scratch`]), holding whatever its last user left: `T` is an integer or a
    /// float, valid for every bit pattern.
    pub(crate) fn over_scratch(device: &Device, mem: Mem, len: usize) -> DeviceBuffer<T> {
        assert!(
            len.checked_mul(size_of::<T>()).is_some_and(|b| b <= mem.bytes()),
            "scratch memory of {} bytes for {len} elements of {} bytes",
            mem.bytes(),
            size_of::<T>()
        );
        DeviceBuffer { device: device.clone(), len, mem, _elem: std::marker::PhantomData }
    }

    /// Gives the buffer's memory back to its device's scratch pool, without the wait that
    /// dropping a buffer does: the pool's next user queues its work after whatever uses the
    /// memory now.
    pub(crate) fn give_back_scratch(self) {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so each field is moved out once.
        let (device, mem) = unsafe { (std::ptr::read(&this.device), std::ptr::read(&this.mem)) };
        device.give_back_scratch(mem);
    }
}

impl<T: KernelScalar> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        // A queued kernel may still use the memory: wait before it is freed. A failure here
        // was, or will be, reported by the call that queued the work.
        let _ = self.device.sync();
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
