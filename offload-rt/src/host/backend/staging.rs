//! Copies between pageable host memory (`Vec`, slices) and a GPU, staged through pinned
//! memory: the host copies a chunk into one of two pinned bounce buffers (several threads at
//! once) while the DMA engine moves the previous chunk, so pageable data moves at close to
//! the pinned rate instead of the driver's pageable path. Used for large copies by
//! `DeviceBuffer` and by launches on host data; `OFFLOAD_STAGING=0` (or
//! [`set_staging(false)`](crate::set_staging)) turns it off. Also the small arenas that
//! launches gather their small host arguments in.

use super::gpu::GpuBackend;
use crate::host::buffer::Byte;
use crate::host::error::Result;
use crate::host::liboffload::memory::{DeviceAlloc, HostAlloc};
use crate::host::liboffload::queue::Event;
use crate::host::liboffload::runtime::{Gpu, Runtime};
use crate::host::timeline::HostKind;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

/// Bytes per chunk and bounce buffer.
const CHUNK: usize = 8 << 20;
/// Copies smaller than this go directly (staging only pays off when chunks overlap).
pub(crate) const MIN_STAGED: usize = 2 * CHUNK;

/// Whether staging was turned off by [`set_staging`] (`OFFLOAD_STAGING=0` is read once).
static STAGING_OFF: AtomicBool = AtomicBool::new(false);

/// Whether large pageable copies are staged through pinned memory.
pub fn staging() -> bool {
    crate::host::config::config().staging && !STAGING_OFF.load(Ordering::Relaxed)
}

/// Turns staging of large pageable copies through pinned memory on or off (default on, or
/// `OFFLOAD_STAGING=0`): for measuring what it gains.
pub fn set_staging(on: bool) {
    STAGING_OFF.store(!on, Ordering::Relaxed);
}

/// Copies up to this size in launches on host data go through the small arenas.
pub(crate) const SMALL_COPY: usize = 64 << 10;
/// Bytes of each small arena: what one launch's small arguments may use together.
pub(crate) const SMALL_ARENA: usize = 256 << 10;

/// A device's small arenas for the small arguments of launches on host data (reduction
/// results, short arrays): `base` in pinned host memory, `device` in device memory, both
/// `SMALL_ARENA` bytes. A launch gathers its small arguments in the pinned arena and moves
/// them with one copy each way, to and from the same offsets of the device arena, instead of
/// an allocation, a copy in, a copy back and a free per argument. One launch holds the arenas
/// at a time, until its queue is synchronised.
#[derive(Debug)]
pub(crate) struct SmallArena {
    pub base: *mut u8,
    pub device: *mut c_void,
    _pinned: HostAlloc,
    _device: DeviceAlloc,
}

// SAFETY: memory owned by this value, used under the device's mutex.
unsafe impl Send for SmallArena {}

impl SmallArena {
    pub fn new(rt: &'static Runtime, gpu: &'static Gpu) -> Result<SmallArena> {
        let pinned = HostAlloc::new(rt, gpu, SMALL_ARENA, false, "the small-argument arena")?;
        let device = DeviceAlloc::new(rt, gpu, SMALL_ARENA)?;
        Ok(SmallArena { base: pinned.ptr, device: device.ptr, _pinned: pinned, _device: device })
    }
}

/// The two pinned bounce buffers of a device, allocated on first use.
#[derive(Debug)]
pub(crate) struct Bounce {
    slots: [HostAlloc; 2],
}

/// Copies `src` into `dst` with up to `threads` threads.
fn parallel_copy(src: &[Byte], dst: &mut [Byte]) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, 8);
    let part = src.len().div_ceil(threads).max(1 << 20);
    if src.len() <= part {
        dst.copy_from_slice(src);
        return;
    }
    std::thread::scope(|s| {
        for (d, c) in dst.chunks_mut(part).zip(src.chunks(part)) {
            s.spawn(move || d.copy_from_slice(c));
        }
    });
}

impl GpuBackend {
    fn bounce(&self) -> Result<std::sync::MutexGuard<'_, Option<Bounce>>> {
        let mut guard = self.bounce.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            let slot = || HostAlloc::new(self.rt, self.gpu, CHUNK, false, "a staging buffer");
            *guard = Some(Bounce { slots: [slot()?, slot()?] });
        }
        Ok(guard)
    }

    /// The event after the queue's work so far.
    fn event(&self) -> Result<Event> {
        self.queue().event().map_err(|e| self.queued_failure(e))
    }

    fn wait(&self, e: &Event) -> Result<()> {
        e.wait().map_err(|e| self.queued_failure(e))
    }

    /// Copies pageable `src` to device memory at `dst` through the bounce buffers; returns
    /// once the data is on the device.
    fn staged_to_device(&self, dst: *mut c_void, src: &[Byte]) -> Result<()> {
        self.check_poison()?;
        let guard = self.bounce()?;
        let bounce = guard.as_ref().expect("allocated by `bounce`");
        let mut in_flight: [Option<Event>; 2] = [None, None];
        for (k, part) in src.chunks(CHUNK).enumerate() {
            let slot = k % 2;
            if let Some(e) = in_flight[slot].take() {
                self.wait(&e)?; // the copy out of this slot, two chunks ago, is done
            }
            // SAFETY: the slot holds `CHUNK >= part.len()` bytes, and no copy reads it now.
            let staging =
                unsafe { std::slice::from_raw_parts_mut(bounce.slots[slot].ptr.cast::<Byte>(), part.len()) };
            parallel_copy(part, staging);
            // SAFETY: `dst` holds `src.len()` bytes on the device (the caller's contract), so
            // the chunk's range is inside it; the slot is not touched until the event passed.
            unsafe {
                self.queue().copy_in(
                    dst.cast::<u8>().add(k * CHUNK).cast(),
                    staging.as_ptr(),
                    part.len(),
                    HostKind::Bounce,
                )
            }
            .map_err(|e| self.queued_failure(e))?;
            in_flight[slot] = Some(self.event()?);
        }
        for e in in_flight.into_iter().flatten() {
            self.wait(&e)?;
        }
        Ok(())
    }

    /// Copies device memory at `src` into pageable `dst` through the bounce buffers, after
    /// the work already queued.
    fn staged_from_device(&self, dst: &mut [Byte], src: *const c_void) -> Result<()> {
        self.check_poison()?;
        let guard = self.bounce()?;
        let bounce = guard.as_ref().expect("allocated by `bounce`");
        let total = dst.len();
        let chunks = total.div_ceil(CHUNK);
        let len = |k: usize| CHUNK.min(total - k * CHUNK);
        let fetch = |k: usize| -> Result<Event> {
            // SAFETY: `src` holds `total` bytes on the device (the caller's contract); the
            // slot holds `CHUNK` bytes and is only read after the event passed.
            unsafe {
                self.queue().copy_out(
                    bounce.slots[k % 2].ptr.cast(),
                    src.cast::<u8>().add(k * CHUNK).cast(),
                    len(k),
                    HostKind::Bounce,
                )
            }
            .map_err(|e| self.queued_failure(e))?;
            self.event()
        };
        let mut next = Some(fetch(0)?);
        for (k, out) in dst.chunks_mut(CHUNK).enumerate() {
            let arrived = next.take().expect("one copy in flight");
            if k + 1 < chunks {
                next = Some(fetch(k + 1)?);
            }
            self.wait(&arrived)?;
            // SAFETY: the copy into this slot completed (its event passed); the next copy
            // goes to the other slot.
            let staged =
                unsafe { std::slice::from_raw_parts(bounce.slots[k % 2].ptr.cast::<Byte>(), out.len()) };
            parallel_copy(staged, out);
        }
        Ok(())
    }

    /// Stages `src` to `dst` if that pays off; `false` when the caller should copy directly.
    pub(crate) fn upload_if_staged(&self, dst: *mut c_void, src: &[Byte]) -> Result<bool> {
        if should_stage(src) { self.staged_to_device(dst, src).map(|()| true) } else { Ok(false) }
    }

    /// Copies back through the bounce buffers if that pays off; `false` when the caller
    /// should copy directly.
    pub(crate) fn download_if_staged(&self, dst: &mut [Byte], src: *const c_void) -> Result<bool> {
        if should_stage(dst) { self.staged_from_device(dst, src).map(|()| true) } else { Ok(false) }
    }
}

/// Whether a copy of `host` goes through the bounce buffers.
fn should_stage(host: &[Byte]) -> bool {
    host.len() >= MIN_STAGED && staging() && !crate::host::pinned::is_pinned(host)
}
