//! Memory through liboffload: device allocations and page-locked ("pinned") host allocations,
//! each freed on drop.

use super::ffi;
use super::runtime::{Gpu, Runtime, runtime};
use crate::host::error::{Error, Result};
use crate::host::timeline;
use std::ffi::c_void;
use std::sync::atomic::Ordering;

/// `bytes` of `kind` memory on `gpu`, or why not: more than the device has, or a refusal of
/// the driver, is [`Error::OutOfMemory`] naming `what`.
fn allocate(rt: &Runtime, gpu: &Gpu, kind: u32, bytes: usize, what: &str) -> Result<*mut c_void> {
    let refused =
        |why: String| Error::OutOfMemory { what: what.to_owned(), request: format!("{bytes} bytes: {why}") };
    if kind == ffi::OL_ALLOC_TYPE_DEVICE
        && let Some(total) = gpu.total_memory.filter(|&t| bytes > t)
    {
        return Err(refused(format!("{} has {total}", gpu.name)));
    }
    let mut ptr = std::ptr::null_mut();
    // SAFETY: valid device handle and out-pointer.
    rt.check("olMemAlloc", unsafe { (rt.api.olMemAlloc)(gpu.handle, kind, bytes, &mut ptr) })
        .map_err(|e| refused(e.to_string()))?;
    if ptr.is_null() {
        return Err(refused("the driver returned no memory".into()));
    }
    Ok(ptr)
}

/// Frees what [`allocate`] returned. A failure after the device failed was reported then.
fn free(gpu: &Gpu, ptr: *mut c_void, what: &str) {
    if let Ok(rt) = runtime() {
        // SAFETY: `ptr` came from olMemAlloc and is freed once, with no queued work using it
        // (the owners' contract).
        let freed = rt.check("olMemFree", unsafe { (rt.api.olMemFree)(ptr) });
        if let Err(e) = freed
            && gpu.check_poison().is_ok()
        {
            eprintln!("offload: warning: freeing {what}: {e}");
        }
    }
}

/// Records an allocation or free of device memory on the timeline.
fn record(started: std::time::Instant, what: &'static str, bytes: usize, gpu: &Gpu) {
    let name = format!("{what} {}", crate::host::report::human(bytes as u64));
    timeline::host(started, "memory", name, serde_json::json!({ "bytes": bytes, "device": gpu.name }));
}

/// Device memory, freed on drop.
#[derive(Debug)]
pub(crate) struct DeviceAlloc {
    pub ptr: *mut c_void,
    pub bytes: usize,
    gpu: &'static Gpu,
}

impl DeviceAlloc {
    /// Allocates `bytes` on `gpu`; zero bytes allocate nothing (a null pointer).
    pub fn new(rt: &Runtime, gpu: &'static Gpu, bytes: usize) -> Result<DeviceAlloc> {
        let started = timeline::start();
        let ptr = if bytes == 0 {
            std::ptr::null_mut()
        } else {
            let ptr = allocate(
                rt,
                gpu,
                ffi::OL_ALLOC_TYPE_DEVICE,
                bytes,
                &format!("device memory on {}", gpu.name),
            )?;
            gpu.allocated.fetch_add(bytes, Ordering::Relaxed);
            ptr
        };
        if let Some(started) = started {
            record(started, "alloc", bytes, gpu);
        }
        Ok(DeviceAlloc { ptr, bytes, gpu })
    }
}

impl Drop for DeviceAlloc {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            let started = timeline::start();
            // (Owners wait for the queued work that uses the memory before dropping it.)
            free(self.gpu, self.ptr, "device memory");
            self.gpu.allocated.fetch_sub(self.bytes, Ordering::Relaxed);
            if let Some(started) = started {
                record(started, "free", self.bytes, self.gpu);
            }
        }
    }
}

/// Page-locked host memory that `gpu`'s copies run from and to at the bus's full speed,
/// freed on drop.
#[derive(Debug)]
pub(crate) struct HostAlloc {
    pub ptr: *mut u8,
    gpu: &'static Gpu,
}

// SAFETY: plain host memory owned by this value; liboffload's host allocations may be used
// and freed from any thread.
unsafe impl Send for HostAlloc {}

impl HostAlloc {
    /// `bytes` (at least one) of pinned host memory, zeroed if `zeroed`; `what` names it in
    /// errors.
    pub fn new(rt: &Runtime, gpu: &'static Gpu, bytes: usize, zeroed: bool, what: &str) -> Result<HostAlloc> {
        let ptr = allocate(rt, gpu, ffi::OL_ALLOC_TYPE_HOST, bytes.max(1), what)?.cast::<u8>();
        if zeroed {
            // SAFETY: the allocation holds `bytes` writable host bytes.
            unsafe { std::ptr::write_bytes(ptr, 0, bytes) };
        }
        Ok(HostAlloc { ptr, gpu })
    }
}

impl Drop for HostAlloc {
    fn drop(&mut self) {
        // (Owners wait for the copies that use the memory before dropping it.)
        free(self.gpu, self.ptr.cast(), "pinned host memory");
    }
}
