//! Temporary device buffers of the runtime's own algorithms, from the device's scratch pool
//! ([`Device::take_scratch`]): an algorithm called in a loop allocates (and frees, which waits
//! for the device) nothing after its first call.

use super::buffer::DeviceBuffer;
use crate::AtomicElem;
use crate::host::args::KernelScalar;
use crate::host::device::Device;
use crate::host::error::Result;
use std::ops::{Deref, DerefMut};

/// A buffer of scratch memory, holding whatever its last user left (`T` is an integer or a
/// float: every bit pattern is a value). Given back to the device's pool when dropped, which
/// must be after the work that uses it is queued (on the device's one queue, the pool's next
/// user's work runs after it).
pub(crate) struct Scratch<T: AtomicElem + KernelScalar> {
    buf: Option<DeviceBuffer<T>>,
}

impl<T: AtomicElem + KernelScalar> Scratch<T> {
    /// `len` elements of `dev`'s scratch memory; `what` names it in an allocation failure.
    pub(crate) fn new(dev: &Device, len: usize, what: &str) -> Result<Scratch<T>> {
        let bytes = crate::host::alloc::bytes_of::<T>(len, what)?;
        let mem = dev.take_scratch(bytes, what)?;
        Ok(Scratch { buf: Some(DeviceBuffer::over_scratch(dev, mem, len)) })
    }
}

impl<T: AtomicElem + KernelScalar> Deref for Scratch<T> {
    type Target = DeviceBuffer<T>;
    fn deref(&self) -> &DeviceBuffer<T> {
        self.buf.as_ref().expect("a scratch buffer is only emptied when dropped")
    }
}

impl<T: AtomicElem + KernelScalar> DerefMut for Scratch<T> {
    fn deref_mut(&mut self) -> &mut DeviceBuffer<T> {
        self.buf.as_mut().expect("a scratch buffer is only emptied when dropped")
    }
}

impl<T: AtomicElem + KernelScalar> Drop for Scratch<T> {
    fn drop(&mut self) {
        if let Some(buf) = self.buf.take() {
            buf.give_back_scratch();
        }
    }
}
