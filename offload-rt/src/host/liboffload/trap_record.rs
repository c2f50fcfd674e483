//! The host side of device panic sites: the page-locked record a panicking GPU thread writes
//! before it traps (the device side is `arch/trap_record.rs`), installed when an image is
//! loaded and read when a launch fails.

use super::ffi;
use super::memory::HostAlloc;
use super::runtime::{Gpu, Runtime};
use crate::host::error::{DevicePanic, PanicPlace};
use offload_wire::images::TrapSite;
use offload_wire::images::trap::{ANY_SITE_OF_FUNCTION, RECORD_BYTES, RECORD_PTR};
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
        let words: [u32; RECORD_BYTES / 4] = std::array::from_fn(|i| {
            // SAFETY: the record holds `RECORD_BYTES` bytes of host memory, alive while `self`
            // is; a device thread may have written it, which volatile reads observe.
            unsafe { std::ptr::read_volatile(self.mem.ptr.cast::<u32>().add(i)) }
        });
        decode(words, sites)
    }
}

/// The panic a record's words describe: `[written, site, block x y z, thread x y z]`, the site
/// looked up in the image's `sites` (from 1; with [`ANY_SITE_OF_FUNCTION`], any site of that
/// site's function). `None` when nothing was written.
fn decode(words: [u32; RECORD_BYTES / 4], sites: &[TrapSite<'_>]) -> Option<DevicePanic> {
    let [written, recorded, bx, by, bz, tx, ty, tz] = words;
    if written != 1 {
        return None;
    }
    let place = |s: &TrapSite<'_>| PanicPlace {
        kind: s.kind.to_owned(),
        file: s.file.to_owned(),
        line: s.line,
        column: s.column,
    };
    let number = recorded & !ANY_SITE_OF_FUNCTION;
    let at = (number as usize).checked_sub(1).and_then(|i| sites.get(i));
    let others = match at {
        Some(first) if recorded & ANY_SITE_OF_FUNCTION != 0 => {
            sites.iter().filter(|s| s.function == first.function && *s != first).map(place).collect()
        }
        _ => Vec::new(),
    };
    let unknown =
        PanicPlace { kind: "panic (its place is unknown)".into(), file: String::new(), line: 0, column: 0 };
    Some(DevicePanic {
        place: at.map_or(unknown, place),
        others,
        function: at.map_or("", |s| s.function).to_owned(),
        block: [bx, by, bz],
        thread: [tx, ty, tz],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site<'a>(function: &'a str, line: u32, kind: &'a str) -> TrapSite<'a> {
        TrapSite { function, file: "src/main.rs", line, column: 9, kind }
    }

    #[test]
    fn a_record_names_its_site_or_its_functions_sites() {
        let sites =
            [site("k", 10, "index out of bounds"), site("k", 12, "explicit panic"), site("j", 3, "x")];
        assert_eq!(decode([0, 1, 0, 0, 0, 0, 0, 0], &sites), None, "nothing written");
        let exact = decode([1, 2, 4, 0, 0, 17, 0, 0], &sites).unwrap();
        assert_eq!((exact.place.line, exact.place.kind.as_str()), (12, "explicit panic"));
        assert!(exact.others.is_empty());
        assert_eq!((exact.block, exact.thread, exact.function.as_str()), ([4, 0, 0], [17, 0, 0], "k"));
        assert_eq!(
            exact.to_string(),
            "src/main.rs:12:9: explicit panic (block (4, 0, 0), thread (17, 0, 0))"
        );
        let any = decode([1, 1 | ANY_SITE_OF_FUNCTION, 0, 0, 0, 1, 0, 0], &sites).unwrap();
        assert_eq!(any.place.line, 10);
        assert_eq!(any.others.iter().map(|p| p.line).collect::<Vec<_>>(), [12], "only k's other site");
        assert!(
            any.to_string()
                .contains("or one of the kernel's 1 other panic sites (src/main.rs:12:9: explicit panic)")
        );
        let unknown = decode([1, 99, 0, 0, 0, 0, 0, 0], &sites).unwrap();
        assert!(unknown.place.file.is_empty() && unknown.place.kind.contains("unknown"));
    }
}
