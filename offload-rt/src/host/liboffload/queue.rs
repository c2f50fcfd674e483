//! Queues and events: copies, fills and kernel launches run on a queue in the order they were
//! queued; waiting on the queue (or on an event recorded on it) waits for them.

use super::ffi;
use super::runtime::{Gpu, Runtime};
use crate::host::buffer::Byte;
use crate::host::error::Result;
use crate::host::report::human;
use crate::host::timeline::{self, HostKind};
use serde_json::json;
use std::ffi::c_void;
use std::time::Instant;

/// A liboffload queue of one GPU, destroyed (after its work) on drop.
pub(crate) struct Queue {
    handle: ffi::ol_queue_handle_t,
    rt: &'static Runtime,
    gpu: &'static Gpu,
    /// The GPU's index in liboffload's order, naming its timeline track.
    index: usize,
}

// SAFETY: a queue handle is an identifier usable from any thread; callers serialise
// submissions (the device keeps its queue behind a mutex).
unsafe impl Send for Queue {}

/// The grid of a launch: blocks and threads per block in each dimension, and the dynamic
/// shared memory each block gets.
#[derive(Clone, Copy, Debug)]
pub(crate) struct LaunchSize {
    pub dims: u8,
    pub blocks: [u32; 3],
    pub threads: [u32; 3],
    pub shared_bytes: usize,
}

impl std::fmt::Debug for Queue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queue").field("gpu", &self.gpu.name).finish_non_exhaustive()
    }
}

impl std::fmt::Debug for Event {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Event").finish_non_exhaustive()
    }
}

impl Queue {
    pub fn new(rt: &'static Runtime, gpu: &'static Gpu) -> Result<Queue> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid device handle and out-pointer.
        rt.check("olCreateQueue", unsafe { (rt.api.olCreateQueue)(gpu.handle, &mut handle) })?;
        let index = rt.gpus.iter().position(|g| std::ptr::eq(g, gpu)).unwrap_or(0);
        Ok(Queue { handle, rt, gpu, index })
    }

    /// The queue's timeline track.
    fn track(&self) -> u32 {
        timeline::gpu_queue_track(self.index)
    }

    fn track_name(&self) -> impl FnOnce() -> String {
        move || format!("GPU {}: {} queue", self.index, self.gpu.name)
    }

    /// Notes work queued at `started` on the timeline (it is drawn when a wait observes it).
    fn queued(&self, started: Instant, name: String, args: serde_json::Value) {
        timeline::queued(self.track(), self.track_name(), started, name, args);
    }

    /// Records a wait for the whole queue that began at `started`: all its work is complete.
    fn waited(&self, started: Instant, ok: bool) {
        let done = timeline::observed(self.track(), None, Instant::now(), "olSyncQueue");
        let args = json!({ "call": "olSyncQueue", "queue": format!("GPU {}: {}", self.index, self.gpu.name),
            "completed_operations": done, "ok": ok });
        timeline::host(started, "wait", "wait".to_owned(), args);
    }

    /// Waits for everything queued.
    pub fn sync(&self) -> Result<()> {
        let started = timeline::start();
        // SAFETY: valid queue handle.
        let synced = self.rt.check("olSyncQueue", unsafe { (self.rt.api.olSyncQueue)(self.handle) });
        if let Some(started) = started {
            self.waited(started, synced.is_ok());
        }
        synced
    }

    /// Queues a copy of `bytes` bytes from host memory at `src` to device memory at `dst`.
    ///
    /// # Safety
    ///
    /// `dst` holds `bytes` bytes of this GPU's memory and `src` `bytes` readable host bytes,
    /// both valid, and `src` unchanged, until the queue has been waited for. `host` says what
    /// `src` is, for the timeline.
    pub unsafe fn copy_in(
        &self,
        dst: *mut c_void,
        src: *const Byte,
        bytes: usize,
        host: HostKind,
    ) -> Result<()> {
        let started = timeline::start();
        // SAFETY: the caller's contract.
        unsafe { self.copy(dst, self.gpu.handle, src.cast(), self.rt.host, bytes) }?;
        if let Some(started) = started {
            self.queued_copy(started, "H→D", bytes, src.cast(), host);
        }
        Ok(())
    }

    /// Queues a copy of `bytes` bytes from device memory at `src` to host memory at `dst`.
    ///
    /// # Safety
    ///
    /// As for [`copy_in`](Self::copy_in), the other way, and nothing may read `dst` meanwhile.
    pub unsafe fn copy_out(
        &self,
        dst: *mut Byte,
        src: *const c_void,
        bytes: usize,
        host: HostKind,
    ) -> Result<()> {
        let started = timeline::start();
        // SAFETY: the caller's contract.
        unsafe { self.copy(dst.cast(), self.rt.host, src, self.gpu.handle, bytes) }?;
        if let Some(started) = started {
            self.queued_copy(started, "D→H", bytes, dst.cast_const().cast(), host);
        }
        Ok(())
    }

    fn queued_copy(&self, started: Instant, way: &str, bytes: usize, host: *const u8, kind: HostKind) {
        if bytes > 0 {
            let args = json!({ "bytes": bytes, "direction": way, "host": kind.describe(host, bytes) });
            self.queued(started, timeline::copy_name(way, bytes), args);
        }
    }

    /// # Safety
    ///
    /// Both ranges valid for `bytes` bytes on the named devices until the queue has been
    /// waited for; nothing writes the source or touches the destination meanwhile.
    unsafe fn copy(
        &self,
        dst: *mut c_void,
        dst_dev: ffi::ol_device_handle_t,
        src: *const c_void,
        src_dev: ffi::ol_device_handle_t,
        bytes: usize,
    ) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: the caller's contract.
        self.rt.check("olMemcpy", unsafe {
            (self.rt.api.olMemcpy)(self.handle, dst, dst_dev, src, src_dev, bytes)
        })
    }

    /// Queues filling `bytes` bytes of device memory at `ptr` with zeros.
    ///
    /// # Safety
    ///
    /// `ptr` holds `bytes` bytes of this GPU's memory, valid until the queue has been waited
    /// for.
    pub unsafe fn zero(&self, ptr: *mut c_void, bytes: usize) -> Result<()> {
        if bytes == 0 {
            return Ok(());
        }
        let started = timeline::start();
        let pattern = 0u32;
        let width = if bytes.is_multiple_of(4) { 4 } else { 1 };
        // SAFETY: the caller's contract; the pattern is read during the call.
        let filled =
            unsafe { (self.rt.api.olMemFill)(self.handle, ptr, width, (&raw const pattern).cast(), bytes) };
        self.rt.check("olMemFill", filled)?;
        if let Some(started) = started {
            self.queued(started, format!("fill {} (zeros)", human(bytes as u64)), json!({ "bytes": bytes }));
        }
        Ok(())
    }

    /// Queues a launch of `kernel` (entry point of kernel `path`) with the packed arguments
    /// `args`.
    ///
    /// # Safety
    ///
    /// `args` holds the kernel's parameters in order, each at its C alignment, as its entry
    /// point declares them; every device address in them stays valid until the queue has
    /// been waited for, and the memory a kernel writes is reached by nothing else meanwhile.
    pub unsafe fn launch(
        &self,
        kernel: ffi::ol_symbol_handle_t,
        path: &'static str,
        args: &[Byte],
        size: LaunchSize,
    ) -> Result<()> {
        let started = timeline::start();
        let ([gx, gy, gz], [bx, by, bz]) = (size.blocks, size.threads);
        let sizes = ffi::ol_kernel_launch_size_args_t {
            dimensions: usize::from(size.dims),
            num_groups: ffi::ol_dimensions_t { x: gx, y: gy, z: gz },
            group_size: ffi::ol_dimensions_t { x: bx, y: by, z: bz },
            dyn_shared_memory: size.shared_bytes,
        };
        // SAFETY: the caller's contract; `sizes` and `args` are read during the call.
        self.rt.check("olLaunchKernel", unsafe {
            (self.rt.api.olLaunchKernel)(
                self.handle,
                self.gpu.handle,
                kernel,
                args.as_ptr().cast(),
                args.len(),
                &sizes,
            )
        })?;
        if let Some(started) = started {
            self.queued_launch(started, path, &size, args.len());
        }
        Ok(())
    }

    /// Notes a launch queued at `started` on the timeline (out of line: it records only while
    /// a timeline does, and would otherwise weigh on every launch's path).
    #[cold]
    #[inline(never)]
    fn queued_launch(&self, started: Instant, path: &'static str, size: &LaunchSize, argument_bytes: usize) {
        let dims = usize::from(size.dims);
        let args = json!({ "kernel": path, "blocks": &size.blocks[..dims], "threads": &size.threads[..dims],
            "shared_bytes": size.shared_bytes, "argument_bytes": argument_bytes });
        self.queued(started, format!("launch {path}"), args);
    }

    /// An event after everything queued so far.
    pub fn event(&self) -> Result<Event> {
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid queue handle and out-pointer.
        self.rt.check("olCreateEvent", unsafe { (self.rt.api.olCreateEvent)(self.handle, &mut handle) })?;
        let mark = if timeline::on() { timeline::mark(self.track()) } else { 0 };
        Ok(Event { handle, rt: self.rt, queue: self.into(), mark })
    }
}

impl Drop for Queue {
    fn drop(&mut self) {
        // Work queued without waiting (launches on device buffers) must end before the queue
        // goes; a failure of it was, or will be, reported by the call that waits.
        let _ = self.sync();
        // SAFETY: the handle came from olCreateQueue and nothing is in flight on it any more.
        let destroyed = self.rt.check("olDestroyQueue", unsafe { (self.rt.api.olDestroyQueue)(self.handle) });
        if let Err(e) = destroyed
            && self.gpu.check_poison().is_ok()
        {
            eprintln!("offload: warning: {e}");
        }
    }
}

/// A point in a queue's work, destroyed on drop.
pub(crate) struct Event {
    handle: ffi::ol_event_handle_t,
    rt: &'static Runtime,
    /// The queue's timeline identity (its track and name), for the waits on the event.
    queue: TimelineQueue,
    /// The number of operations queued before the event (while the timeline records).
    mark: u64,
}

/// What an event needs of its queue for the timeline (the queue itself sits behind a lock).
#[derive(Clone, Copy)]
struct TimelineQueue {
    index: usize,
    gpu: &'static Gpu,
}

impl From<&Queue> for TimelineQueue {
    fn from(q: &Queue) -> TimelineQueue {
        TimelineQueue { index: q.index, gpu: q.gpu }
    }
}

impl Event {
    /// Waits until the queue's work up to the event is done.
    pub fn wait(&self) -> Result<()> {
        let started = timeline::start();
        // SAFETY: a valid event handle, destroyed only by `Drop`.
        let waited = self.rt.check("olSyncEvent", unsafe { (self.rt.api.olSyncEvent)(self.handle) });
        if let Some(started) = started {
            let TimelineQueue { index, gpu } = self.queue;
            let track = timeline::gpu_queue_track(index);
            let done = timeline::observed(track, Some(self.mark), Instant::now(), "olSyncEvent");
            let args = json!({ "call": "olSyncEvent", "queue": format!("GPU {index}: {}", gpu.name),
                "completed_operations": done, "ok": waited.is_ok() });
            timeline::host(started, "wait", "wait (event)".to_owned(), args);
        }
        waited
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: a valid event handle, destroyed once.
        let _ = self.rt.check("olDestroyEvent", unsafe { (self.rt.api.olDestroyEvent)(self.handle) });
    }
}
