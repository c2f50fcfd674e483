//! Copies between pageable host memory (`Vec`, slices) and a GPU, staged through pinned
//! memory: the host copies a chunk into one of two pinned bounce buffers (several threads at
//! once) while the DMA engine moves the previous chunk, so pageable data moves at close to
//! the pinned rate instead of the driver's pageable path. Used for large copies by
//! `DeviceBuffer` and by Interface A launches; `OFFLOAD_STAGING=0` (or
//! [`set_staging(false)`](crate::set_staging)) turns it off.

use super::device::GpuDevice;
use super::error::Result;
use super::liboffload::ffi;
use super::report::{Way, record_copy};
use super::buffer::Byte;
use std::ffi::c_void;
use std::sync::atomic::{AtomicU8, Ordering};

/// Bytes per chunk and bounce buffer.
const CHUNK: usize = 8 << 20;
/// Copies smaller than this go directly (staging only pays off when chunks overlap).
pub(crate) const MIN_STAGED: usize = 2 * CHUNK;

/// 0: not yet read from the environment; 1: on; 2: off.
static STAGING: AtomicU8 = AtomicU8::new(0);

/// Whether large pageable copies are staged through pinned memory.
pub fn staging() -> bool {
    match STAGING.load(Ordering::Relaxed) {
        0 => {
            let on = std::env::var("OFFLOAD_STAGING").map_or(true, |v| v != "0");
            STAGING.store(if on { 1 } else { 2 }, Ordering::Relaxed);
            on
        }
        v => v == 1,
    }
}

/// Turns staging of large pageable copies through pinned memory on or off (default on, or
/// `OFFLOAD_STAGING=0`): for measuring what it gains.
pub fn set_staging(on: bool) {
    STAGING.store(if on { 1 } else { 2 }, Ordering::Relaxed);
}

/// Whether the small host-data arguments of a launch are gathered into one copy each way
/// (default on; `OFFLOAD_GATHER=0` gives every argument its own allocation and copies, each
/// still through a pinned slot): for measuring what gathering changes.
pub(crate) fn gather() -> bool {
    static GATHER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *GATHER.get_or_init(|| std::env::var("OFFLOAD_GATHER").map_or(true, |v| v != "0"))
}

/// Copies up to this size in Interface A launches go through the small pinned arena.
pub(crate) const SMALL_COPY: usize = 64 << 10;
/// Bytes of the small arena: what one launch's small arguments may use together.
pub(crate) const SMALL_ARENA: usize = 256 << 10;

/// A device's small arenas for the small arguments of Interface A launches (reduction
/// results, short arrays): `base` in pinned host memory, `device` in device memory, both
/// `SMALL_ARENA` bytes. A launch gathers its small arguments in the pinned arena and moves
/// them with one copy each way, to and from the same offsets of the device arena, instead of
/// an allocation, a copy in, a copy back and a free per argument. One launch holds the arenas
/// at a time, until its queue is synchronised.
pub(crate) struct SmallArena {
    pub base: *mut u8,
    pub device: *mut std::ffi::c_void,
}

// SAFETY: plain host memory owned by this value, used under the device's mutex.
unsafe impl Send for SmallArena {}

impl Drop for SmallArena {
    fn drop(&mut self) {
        if let Ok(rt) = super::liboffload::runtime::runtime() {
            // SAFETY: both allocated by olMemAlloc in `small_arena`, freed once; the launch
            // that used them last synchronised its queue before releasing them.
            let _ = rt.check("olMemFree (pinned arena)", unsafe { (rt.api.olMemFree)(self.base.cast()) });
            // SAFETY: as above.
            let _ = rt.check("olMemFree (device arena)", unsafe { (rt.api.olMemFree)(self.device) });
        }
    }
}

/// The two pinned bounce buffers of a device, allocated on first use.
pub(crate) struct Bounce {
    slots: [*mut u8; 2],
}

// SAFETY: the buffers are plain host memory owned by this value; `GpuDevice` keeps it behind
// a mutex, so one copy at a time uses them.
unsafe impl Send for Bounce {}

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

/// An event recorded on the device's queue.
struct Event<'g> {
    handle: ffi::ol_event_handle_t,
    gpu: &'g GpuDevice,
}

impl Event<'_> {
    fn wait(self) -> Result<()> {
        let rt = self.gpu.rt;
        // SAFETY: a valid event handle, destroyed once (by `Drop`, after this).
        rt.check("olSyncEvent", unsafe { (rt.api.olSyncEvent)(self.handle) })
            .map_err(|e| self.gpu.queued_failure(e))
    }
}

impl Drop for Event<'_> {
    fn drop(&mut self) {
        let rt = self.gpu.rt;
        // SAFETY: a valid event handle, destroyed once.
        let _ = rt.check("olDestroyEvent", unsafe { (rt.api.olDestroyEvent)(self.handle) });
    }
}

impl GpuDevice {
    /// The small arenas, allocated on first use and held by the caller's launch.
    pub(crate) fn small_arena(&self) -> Result<std::sync::MutexGuard<'_, Option<SmallArena>>> {
        let mut guard = self.small.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            let mut ptr = std::ptr::null_mut();
            // SAFETY: valid device handle and out-pointer.
            self.rt.check("olMemAlloc (pinned arena)", unsafe {
                (self.rt.api.olMemAlloc)(self.gpu.handle, ffi::OL_ALLOC_TYPE_HOST, SMALL_ARENA, &mut ptr)
            })?;
            let mut device = std::ptr::null_mut();
            // SAFETY: valid device handle and out-pointer.
            let allocated = self.rt.check("olMemAlloc (device arena)", unsafe {
                (self.rt.api.olMemAlloc)(self.gpu.handle, ffi::OL_ALLOC_TYPE_DEVICE, SMALL_ARENA, &mut device)
            });
            if let Err(e) = allocated {
                // SAFETY: allocated just above, not used yet.
                let _ = unsafe { (self.rt.api.olMemFree)(ptr) };
                return Err(e);
            }
            *guard = Some(SmallArena { base: ptr.cast(), device });
        }
        Ok(guard)
    }

    fn bounce(&self) -> Result<std::sync::MutexGuard<'_, Option<Bounce>>> {
        let mut guard = self.bounce.lock().unwrap_or_else(|e| e.into_inner());
        if guard.is_none() {
            let mut slots = [std::ptr::null_mut(); 2];
            for slot in &mut slots {
                let mut ptr = std::ptr::null_mut();
                // SAFETY: valid device handle and out-pointer.
                self.rt.check("olMemAlloc (pinned staging)", unsafe {
                    (self.rt.api.olMemAlloc)(self.gpu.handle, ffi::OL_ALLOC_TYPE_HOST, CHUNK, &mut ptr)
                })?;
                *slot = ptr.cast();
            }
            *guard = Some(Bounce { slots });
        }
        Ok(guard)
    }

    /// Queues a copy and records an event after it.
    ///
    /// # Safety
    ///
    /// As for [`GpuDevice::queue_copy`].
    unsafe fn copy_then_event(
        &self,
        dst: *mut c_void,
        dst_dev: ffi::ol_device_handle_t,
        src: *const c_void,
        src_dev: ffi::ol_device_handle_t,
        bytes: usize,
    ) -> Result<Event<'_>> {
        // SAFETY: forwarded from the caller.
        unsafe { self.queue_copy(dst, dst_dev, src, src_dev, bytes) }.map_err(|e| self.queued_failure(e))?;
        let mut handle = std::ptr::null_mut();
        let queue = self.queue();
        // SAFETY: valid queue handle and out-pointer.
        self.rt.check("olCreateEvent", unsafe { (self.rt.api.olCreateEvent)(queue.0, &mut handle) })?;
        Ok(Event { handle, gpu: self })
    }

    /// Copies pageable `src` to device memory at `dst` through the bounce buffers; returns
    /// once the data is on the device.
    pub(crate) fn staged_to_device(&self, dst: *mut c_void, src: &[Byte]) -> Result<()> {
        let guard = self.bounce()?;
        let bounce = guard.as_ref().expect("allocated by `bounce`");
        let mut in_flight: [Option<Event<'_>>; 2] = [None, None];
        for (k, part) in src.chunks(CHUNK).enumerate() {
            let slot = k % 2;
            if let Some(e) = in_flight[slot].take() {
                e.wait()?; // the copy out of this slot, two chunks ago, is done
            }
            // SAFETY: the slot holds `CHUNK >= part.len()` bytes, and no copy reads it now.
            let staging = unsafe { std::slice::from_raw_parts_mut(bounce.slots[slot].cast::<Byte>(), part.len()) };
            parallel_copy(part, staging);
            // SAFETY: `dst` holds `src.len()` bytes on the device (the caller's contract), so
            // the chunk's range is inside it; the slot is not touched until the event passed.
            let event = unsafe {
                self.copy_then_event(
                    dst.cast::<u8>().add(k * CHUNK).cast(),
                    self.gpu.handle,
                    staging.as_ptr().cast(),
                    self.rt.host,
                    part.len(),
                )
            }?;
            in_flight[slot] = Some(event);
        }
        for e in in_flight.into_iter().flatten() {
            e.wait()?;
        }
        Ok(())
    }

    /// Copies device memory at `src` into pageable `dst` through the bounce buffers, after
    /// the work already queued.
    pub(crate) fn staged_from_device(&self, dst: &mut [Byte], src: *const c_void) -> Result<()> {
        let guard = self.bounce()?;
        let bounce = guard.as_ref().expect("allocated by `bounce`");
        let total = dst.len();
        let chunks = total.div_ceil(CHUNK);
        let len = |k: usize| CHUNK.min(total - k * CHUNK);
        let fetch = |k: usize| {
            // SAFETY: `src` holds `total` bytes on the device (the caller's contract);
            // the slot holds `CHUNK` bytes and is only read after the event passed.
            unsafe {
                self.copy_then_event(
                    bounce.slots[k % 2].cast(),
                    self.rt.host,
                    src.cast::<u8>().add(k * CHUNK).cast(),
                    self.gpu.handle,
                    len(k),
                )
            }
        };
        let mut next = Some(fetch(0)?);
        for (k, out) in dst.chunks_mut(CHUNK).enumerate() {
            let arrived = next.take().expect("one copy in flight");
            if k + 1 < chunks {
                next = Some(fetch(k + 1)?);
            }
            arrived.wait()?;
            // SAFETY: the copy into this slot completed (its event passed); the next copy
            // goes to the other slot.
            let staged = unsafe { std::slice::from_raw_parts(bounce.slots[k % 2].cast::<Byte>(), out.len()) };
            parallel_copy(staged, out);
        }
        Ok(())
    }
}

/// Whether a copy of `host` goes through the bounce buffers.
fn should_stage(host: &[Byte]) -> bool {
    host.len() >= MIN_STAGED && staging() && !super::pinned::is_pinned(host)
}

impl GpuDevice {
    /// Copies host memory to the device at `dst` and waits: staged when large and pageable.
    pub(crate) fn upload(&self, dst: *mut c_void, src: &[Byte]) -> Result<()> {
        let started = std::time::Instant::now();
        if self.upload_if_staged(dst, src)? {
            record_copy(Way::In, 1, src.len() as u64, started.elapsed(), None);
            return Ok(());
        }
        self.copy(dst, self.gpu.handle, src.as_ptr().cast(), self.rt.host, src.len())
    }

    /// Copies device memory at `src` to the host after the queued work: staged when large and
    /// pageable.
    pub(crate) fn download(&self, dst: &mut [Byte], src: *const c_void) -> Result<()> {
        let started = std::time::Instant::now();
        if self.download_if_staged(dst, src)? {
            record_copy(Way::Out, 1, dst.len() as u64, started.elapsed(), None);
            return Ok(());
        }
        self.copy(dst.as_mut_ptr().cast(), self.rt.host, src, self.gpu.handle, dst.len())
    }

    /// For an Interface A launch: stages `src` to `dst` if that pays off; `false` when the
    /// caller should queue a direct copy instead.
    pub(crate) fn upload_if_staged(&self, dst: *mut c_void, src: &[Byte]) -> Result<bool> {
        if should_stage(src) { self.staged_to_device(dst, src).map(|()| true) } else { Ok(false) }
    }

    /// For an Interface A launch: copies back through the bounce buffers if that pays off;
    /// `false` when the caller should queue a direct copy instead.
    pub(crate) fn download_if_staged(&self, dst: &mut [Byte], src: *const c_void) -> Result<bool> {
        if should_stage(dst) { self.staged_from_device(dst, src).map(|()| true) } else { Ok(false) }
    }
}

impl Drop for Bounce {
    fn drop(&mut self) {
        if let Ok(rt) = super::liboffload::runtime::runtime() {
            for slot in self.slots {
                // SAFETY: allocated by olMemAlloc in `bounce`, freed once; no copy uses it
                // (every staged copy waits for its events before returning).
                let _ = rt.check("olMemFree (pinned staging)", unsafe { (rt.api.olMemFree)(slot.cast()) });
            }
        }
    }
}
