//! Preloads: host data staged on the device for as long as a `Preload` borrows it. Many
//! launches use the device copy with no transfers; `finish` (or dropping) writes writable
//! data back. The borrow checker keeps safe code from touching the host copy meanwhile.

use super::buffer::DeviceBuffer;
use crate::host::args::KernelScalar;
use crate::host::device::Device;
use crate::host::error::Result;
use std::marker::PhantomData;

/// Read-only host data staged on a device: `&Preload<T>` is accepted wherever a kernel takes
/// `&[T]`, with no copy. The host data stays borrowed (readable, not writable) until the
/// `Preload` is dropped.
#[derive(Debug)]
pub struct Preload<'h, T: KernelScalar> {
    buffer: DeviceBuffer<T>,
    _host: PhantomData<&'h [T]>,
}

/// Writable host data staged on a device: accepted wherever a kernel takes `&[T]` (as
/// `&PreloadMut<T>`) or a `Region` (as `&mut PreloadMut<T>`), with no copy; [`finish`]
/// (or dropping it) copies the device's version back. The host data is borrowed mutably, so
/// nothing else can read or write it meanwhile.
///
/// [`finish`]: PreloadMut::finish
#[derive(Debug)]
pub struct PreloadMut<'h, T: KernelScalar> {
    buffer: DeviceBuffer<T>,
    host: Option<&'h mut [T]>,
}

impl Device {
    /// Stages `data` on this device for read-only use by many launches.
    pub fn preload<'h, T: KernelScalar>(&self, data: &'h [T]) -> Result<Preload<'h, T>> {
        Ok(Preload { buffer: DeviceBuffer::from_slice(self, data)?, _host: PhantomData })
    }

    /// Stages `data` on this device for launches that read and write it; the result comes
    /// back to `data` at [`PreloadMut::finish`] or on drop.
    pub fn preload_mut<'h, T: KernelScalar>(&self, data: &'h mut [T]) -> Result<PreloadMut<'h, T>> {
        Ok(PreloadMut { buffer: DeviceBuffer::from_slice(self, data)?, host: Some(data) })
    }

    /// Stages a write-only output: like [`preload_mut`](Device::preload_mut), but `data`'s
    /// current contents are not copied to the device, which starts from zeros.
    pub fn preload_out<'h, T: KernelScalar>(&self, data: &'h mut [T]) -> Result<PreloadMut<'h, T>> {
        Ok(PreloadMut { buffer: DeviceBuffer::zeroed(self, data.len())?, host: Some(data) })
    }
}

impl<T: KernelScalar> Preload<'_, T> {
    /// The device copy.
    pub fn buffer(&self) -> &DeviceBuffer<T> {
        &self.buffer
    }
}

impl<T: KernelScalar> PreloadMut<'_, T> {
    /// The device copy.
    pub fn buffer(&self) -> &DeviceBuffer<T> {
        &self.buffer
    }

    /// The device copy, for launches that write it.
    pub fn buffer_mut(&mut self) -> &mut DeviceBuffer<T> {
        &mut self.buffer
    }

    /// Waits for the device's queued work and copies the result back to the host data.
    pub fn finish(mut self) -> Result<()> {
        self.write_back()
    }

    fn write_back(&mut self) -> Result<()> {
        match self.host.take() {
            Some(host) => self.buffer.copy_to(host),
            None => Ok(()),
        }
    }
}

impl<T: KernelScalar> Drop for PreloadMut<'_, T> {
    fn drop(&mut self) {
        // `finish` reports failures; a drop can only say them.
        if let Err(e) = self.write_back() {
            eprintln!("offload: warning: writing a preload back to the host failed: {e}");
        }
    }
}
