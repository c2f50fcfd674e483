//! Asynchronous copies between pinned host memory and device buffers: queued, with the host
//! memory borrowed until the copy has been waited for.

use super::buffer::DeviceBuffer;
use super::pinned::{InFlight, PinnedBuffer};
use crate::host::args::KernelScalar;
use crate::host::device::Device;
use crate::host::error::Result;
use crate::host::report::{Way, record_copy};

/// A queued copy that still uses host memory, which stays borrowed until [`wait`] (dropping a
/// `Pending` waits too). Launches and copies queued after it on the same device run after it.
///
/// Even if a `Pending` is leaked, the pinned buffer waits for the device that holds the copy
/// before it can be read, written or freed again, so no access races with the copy.
///
/// [`wait`]: Pending::wait
#[must_use = "the copy is only known to be complete after `wait`"]
#[derive(Debug)]
pub struct Pending<'a> {
    device: Device,
    in_flight: &'a InFlight,
    waited: bool,
}

impl Pending<'_> {
    /// Waits for the copy (and everything queued before it on its device).
    pub fn wait(mut self) -> Result<()> {
        self.waited = true;
        self.finish()
    }

    fn finish(&self) -> Result<()> {
        self.in_flight.settle_one(&self.device)
    }
}

impl Drop for Pending<'_> {
    fn drop(&mut self) {
        if !self.waited {
            // A failure poisons the device; the next call on it reports it.
            let _ = self.finish();
        }
    }
}

impl<T: KernelScalar> DeviceBuffer<T> {
    /// Queues a copy of `src` into this buffer and returns at once; `src` stays borrowed
    /// (readable, not writable) until the returned [`Pending`] is waited for.
    pub fn copy_from_async<'a>(&mut self, src: &'a PinnedBuffer<T>) -> Result<Pending<'a>> {
        self.check_len(src.len())?;
        let (ptr, _) = src.raw_parts();
        let device = self.device().clone();
        let bytes = self.mem().bytes();
        let started = std::time::Instant::now();
        src.in_flight.add(&device);
        // SAFETY: `ptr` is valid for the buffer's `bytes` bytes (the lengths match);
        // `in_flight` (noted above) keeps every access to it waiting for this device's queue
        // until the copy is done, and the pinned memory cannot be freed before that either
        // (its drop settles first); the buffer is borrowed mutably here and waits for its
        // queue before it is read or freed.
        unsafe { device.backend().copy_in_async(self.mem(), ptr.cast(), bytes)? };
        record_copy(Way::In, 1, bytes as u64, started.elapsed(), None);
        Ok(Pending { device, in_flight: &src.in_flight, waited: false })
    }

    /// Queues a copy of this buffer into `dst` and returns at once; `dst` stays borrowed (not
    /// readable) until the returned [`Pending`] is waited for.
    pub fn copy_to_async<'a>(&self, dst: &'a mut PinnedBuffer<T>) -> Result<Pending<'a>> {
        self.check_len(dst.len())?;
        let (ptr, _) = dst.raw_parts();
        let device = self.device().clone();
        let bytes = self.mem().bytes();
        let started = std::time::Instant::now();
        dst.in_flight.add(&device);
        // SAFETY: as in `copy_from_async`; the device memory stays allocated while the queue
        // uses it (a buffer's drop waits for the queue).
        unsafe { device.backend().copy_out_async(ptr.cast(), self.mem(), bytes)? };
        record_copy(Way::Out, 1, bytes as u64, started.elapsed(), None);
        Ok(Pending { device, in_flight: &dst.in_flight, waited: false })
    }
}
