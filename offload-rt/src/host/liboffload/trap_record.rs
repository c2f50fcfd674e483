//! The host side of device panic sites: the page-locked record a panicking GPU thread writes
//! before it traps (the device side is `arch/trap_record.rs`), installed when an image is
//! loaded and read when a launch fails.

use super::ffi;
use super::memory::HostAlloc;
use super::runtime::{Gpu, Runtime};
use crate::host::error::DevicePanic;
use offload_wire::images::TrapSite;
use offload_wire::images::trap::{RECORD_BYTES, RECORD_PTR};
use std::ffi::{CString, c_void};

/// A loaded image's trap record: [`RECORD_BYTES`] of page-locked host memory, which the host
/// can read even after a trap has made the device unusable.
#[derive(Debug)]
pub(crate) struct TrapRecord {
    mem: HostAlloc,
}

impl TrapRecord {
    /// Allocates the record and stores its address in the program's [`RECORD_PTR`] global.
    /// `None` when the image has no such global (built by a cargo-offload without panic sites),
    /// or liboffload cannot say where it is: launches then fail without a place, as before.
    pub fn install(rt: &Runtime, gpu: &'static Gpu, program: ffi::ol_program_handle_t) -> Option<TrapRecord> {
        let debug = crate::host::config::config().debug;
        let say = |why: &str| {
            if debug {
                eprintln!("offload: no panic locations on {}: {why}", gpu.name);
            }
        };
        let name = CString::new(RECORD_PTR).expect("no NUL in the name");
        let mut symbol = std::ptr::null_mut();
        // SAFETY: valid program handle, NUL-terminated name, valid out-pointer.
        let found = rt.check("olGetSymbol", unsafe {
            (rt.api.olGetSymbol)(program, name.as_ptr(), ffi::OL_SYMBOL_KIND_GLOBAL_VARIABLE, &mut symbol)
        });
        if found.is_err() {
            say("the image has no trap record (rebuild with this cargo-offload)");
            return None;
        }
        let (mut address, mut size): (*mut c_void, usize) = (std::ptr::null_mut(), 0);
        // SAFETY: valid symbol handle; each out-value has the size passed.
        let info = unsafe {
            rt.check(
                "olGetSymbolInfo",
                (rt.api.olGetSymbolInfo)(
                    symbol,
                    ffi::OL_SYMBOL_INFO_GLOBAL_VARIABLE_ADDRESS,
                    size_of::<*mut c_void>(),
                    (&raw mut address).cast(),
                ),
            )
            .and_then(|()| {
                rt.check(
                    "olGetSymbolInfo",
                    (rt.api.olGetSymbolInfo)(
                        symbol,
                        ffi::OL_SYMBOL_INFO_GLOBAL_VARIABLE_SIZE,
                        size_of::<usize>(),
                        (&raw mut size).cast(),
                    ),
                )
            })
        };
        if let Err(e) = info {
            say(&e.to_string());
            return None;
        }
        if address.is_null() || size != size_of::<*mut u32>() {
            say(&format!("the trap record pointer is {size} bytes at {address:?}"));
            return None;
        }
        let mem = HostAlloc::new(rt, gpu, RECORD_BYTES, true, "a trap record").ok()?;
        let value = mem.ptr;
        // SAFETY: `address` is the device global of `size` (pointer-sized) bytes liboffload
        // named; the source is a local of that size; a null queue makes the copy synchronous.
        let copied = rt.check("olMemcpy", unsafe {
            (rt.api.olMemcpy)(
                std::ptr::null_mut(),
                address,
                gpu.handle,
                (&raw const value).cast(),
                rt.host,
                size,
            )
        });
        if let Err(e) = copied {
            say(&e.to_string());
            return None;
        }
        Some(TrapRecord { mem })
    }

    /// What the first panicking thread recorded, its site looked up in `sites` (the image's);
    /// `None` if no thread wrote the record.
    pub fn read(&self, sites: &[TrapSite<'_>]) -> Option<DevicePanic> {
        let word = |i: usize| {
            // SAFETY: the record holds `RECORD_BYTES` (8 words) of host memory, alive while
            // `self` is; a device thread may have written it, which volatile reads observe.
            unsafe { std::ptr::read_volatile(self.mem.ptr.cast::<u32>().add(i)) }
        };
        if word(0) != 1 {
            return None;
        }
        let site = word(1);
        let at = (site as usize).checked_sub(1).and_then(|i| sites.get(i));
        Some(DevicePanic {
            kind: at.map_or("panic (its place is unknown)", |s| s.kind).to_owned(),
            file: at.map_or("", |s| s.file).to_owned(),
            line: at.map_or(0, |s| s.line),
            column: at.map_or(0, |s| s.column),
            function: at.map_or("", |s| s.function).to_owned(),
            block: [word(2), word(3), word(4)],
            thread: [word(5), word(6), word(7)],
        })
    }
}
