//! Loads liboffload 22 and lists its GPUs, for `doctor` and `--target-gpu native`: a few calls of the LLVM 22 API
//! (`olInit`, `olIterateDevices`, `olGetDeviceInfo[Size]`, `olGetPlatformInfo`), declared
//! here so that cargo-offload does not depend on the runtime. The runtime's own declarations
//! (`offload-rt/src/host/liboffload/ffi.rs`) are the reference; the values below match them.

use std::ffi::{CStr, c_char, c_void};

/// Soname of LLVM 22's liboffload, and where Debian's packages put it.
const LIBRARY: &str = "libLLVMOffload.so.22.1";
const FALLBACK_PATHS: [&str; 2] =
    ["/usr/lib/llvm-22/lib/libLLVMOffload.so.22.1", "/usr/lib/x86_64-linux-gnu/libLLVMOffload.so.22.1"];

const OL_DEVICE_INFO_PLATFORM: u32 = 1;
const OL_DEVICE_INFO_NAME: u32 = 2;
const OL_DEVICE_INFO_PRODUCT_NAME: u32 = 3;
const OL_PLATFORM_INFO_BACKEND: u32 = 3;
const OL_PLATFORM_BACKEND_CUDA: u32 = 1;
const OL_PLATFORM_BACKEND_AMDGPU: u32 = 2;

#[repr(C)]
struct ErrorStruct {
    code: u32,
    details: *const c_char,
}
type OlResult = *const ErrorStruct;
type Handle = *mut c_void;
type IterateCb = unsafe extern "C" fn(Handle, *mut c_void) -> bool;

/// A GPU liboffload found.
pub struct Gpu {
    pub name: String,
    pub vendor: &'static str,
    /// `sm_90`, `gfx90a`, … when the device's strings say; else empty.
    pub arch: String,
}

/// What loading liboffload found.
pub struct Probe {
    pub library: String,
    /// Why `olInit` failed, if it did.
    pub init_error: Option<String>,
    pub gpus: Vec<Gpu>,
}

fn error_text(r: OlResult) -> Option<String> {
    if r.is_null() {
        return None;
    }
    // SAFETY: a non-null result points to the library's error, alive for the whole process,
    // whose `details` is null or a NUL-terminated string.
    let e = unsafe { &*r };
    let details = if e.details.is_null() {
        String::new()
    } else {
        // SAFETY: as above.
        unsafe { CStr::from_ptr(e.details) }.to_string_lossy().into_owned()
    };
    Some(format!("error {}: {details}", e.code))
}

/// The loader's own words for `path` (libloading's message is only "dlopen failed"; the
/// reason, such as a missing dependency, is its source, which names the file).
fn loader_error(path: &str, e: &libloading::Error) -> String {
    match std::error::Error::source(e) {
        Some(cause) => cause.to_string(),
        None => format!("{path}: {e}"),
    }
}

unsafe extern "C" fn collect(dev: Handle, user: *mut c_void) -> bool {
    // SAFETY: `user` is the `Vec` `run` passes to olIterateDevices, alive for the call.
    unsafe { &mut *user.cast::<Vec<Handle>>() }.push(dev);
    true
}

impl Probe {
    /// Loads the library (`OFFLOAD_LIBRARY`, else its soname, else Debian's paths) and lists
    /// its NVIDIA and AMD devices. The error says why loading failed (the loader names a
    /// missing dependency).
    pub fn run() -> Result<Probe, String> {
        let mut tried = Vec::new();
        let candidates: Vec<String> = match std::env::var_os("OFFLOAD_LIBRARY") {
            Some(p) => vec![p.to_string_lossy().into_owned()],
            None => std::iter::once(LIBRARY).chain(FALLBACK_PATHS).map(str::to_owned).collect(),
        };
        for path in candidates {
            // SAFETY: loading liboffload runs its initialisers, which have no preconditions.
            match unsafe { libloading::Library::new(&path) } {
                Ok(lib) => return Ok(Probe::list(lib, path)),
                Err(e) => tried.push(loader_error(&path, &e)),
            }
        }
        Err(format!("liboffload 22 not loaded ({})", tried.join("; ")))
    }

    fn list(lib: libloading::Library, library: String) -> Probe {
        let mut probe = Probe { library, init_error: None, gpus: Vec::new() };
        // SAFETY: the signatures are those of LLVM 22's OffloadAPI.h (see the module docs).
        let fns = unsafe {
            (
                lib.get::<unsafe extern "C" fn() -> OlResult>(b"olInit\0"),
                lib.get::<unsafe extern "C" fn(IterateCb, *mut c_void) -> OlResult>(b"olIterateDevices\0"),
                lib.get::<unsafe extern "C" fn(Handle, u32, usize, *mut c_void) -> OlResult>(
                    b"olGetDeviceInfo\0",
                ),
                lib.get::<unsafe extern "C" fn(Handle, u32, *mut usize) -> OlResult>(
                    b"olGetDeviceInfoSize\0",
                ),
                lib.get::<unsafe extern "C" fn(Handle, u32, usize, *mut c_void) -> OlResult>(
                    b"olGetPlatformInfo\0",
                ),
            )
        };
        let (Ok(init), Ok(iterate), Ok(info), Ok(info_size), Ok(platform_info)) = fns else {
            probe.init_error =
                Some("the library lacks LLVM 22's liboffload API (another LLVM major?)".into());
            return probe;
        };
        // SAFETY: no preconditions.
        if let Some(e) = error_text(unsafe { init() }) {
            probe.init_error = Some(e);
            return probe;
        }
        let mut devices: Vec<Handle> = Vec::new();
        // SAFETY: the callback only pushes into `devices`, which outlives the call.
        if let Some(e) = error_text(unsafe { iterate(collect, (&raw mut devices).cast()) }) {
            probe.init_error = Some(format!("olIterateDevices: {e}"));
            return probe;
        }
        let string = |dev: Handle, prop: u32| -> String {
            let mut size = 0usize;
            // SAFETY: a device handle from olIterateDevices and a valid out-pointer.
            if error_text(unsafe { info_size(dev, prop, &mut size) }).is_some() {
                return String::new();
            }
            let mut buf = vec![0u8; size.max(1)];
            // SAFETY: `buf` holds `size` writable bytes, as the library asked for.
            if error_text(unsafe { info(dev, prop, buf.len(), buf.as_mut_ptr().cast()) }).is_some() {
                return String::new();
            }
            CStr::from_bytes_until_nul(&buf)
                .map(|s| s.to_string_lossy().trim().to_owned())
                .unwrap_or_default()
        };
        for dev in devices {
            let mut platform: Handle = std::ptr::null_mut();
            let mut backend = 0u32;
            // SAFETY: the properties are a platform handle (pointer-sized) and a `uint32_t`,
            // written to the out-pointers of those sizes.
            let known = unsafe {
                error_text(info(
                    dev,
                    OL_DEVICE_INFO_PLATFORM,
                    size_of::<Handle>(),
                    (&raw mut platform).cast(),
                ))
                .is_none()
                    && error_text(platform_info(
                        platform,
                        OL_PLATFORM_INFO_BACKEND,
                        size_of::<u32>(),
                        (&raw mut backend).cast(),
                    ))
                    .is_none()
            };
            let vendor = match backend {
                OL_PLATFORM_BACKEND_CUDA if known => "CUDA",
                OL_PLATFORM_BACKEND_AMDGPU if known => "AMD HSA",
                _ => continue, // the host device, or one no plugin drives
            };
            let (name, product) =
                (string(dev, OL_DEVICE_INFO_NAME), string(dev, OL_DEVICE_INFO_PRODUCT_NAME));
            let arch = offload_wire::images::arch_in(&[&name, &product]);
            let shown = if product.is_empty() || product == arch { name } else { product };
            probe.gpus.push(Gpu { name: shown, vendor, arch });
        }
        // The library stays loaded for the rest of the process (its devices live on).
        std::mem::forget(lib);
        probe
    }
}
