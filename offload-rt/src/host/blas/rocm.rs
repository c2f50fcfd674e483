//! rocBLAS and the HIP runtime, loaded at run time, with a HIP stream of its own per device.
//!
//! **Not yet run on AMD hardware** (none was available): the argument marshalling is
//! unit-tested against rocBLAS's documented enums and signatures, and the loading is the
//! same code as cuBLAS's. Device memory comes from liboffload's AMDGPU plugin (HSA); HIP
//! runs on the same HSA runtime in the process, which is what lets rocBLAS use it.

use super::BlasError;
use super::gpu::{Blas, Bound, Fns, Platform, Status, Stream, open, symbol};
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// `rocblas_operation`: `rocblas_operation_none`, `rocblas_operation_transpose`.
pub(super) const OPS: [c_int; 2] = [111, 112];
/// `hipStreamNonBlocking`.
const HIP_STREAM_NON_BLOCKING: c_uint = 1;

const LIBRARY: &str = "librocblas.so";
const HIP: &str = "libamdhip64.so";
const HINT: &str = "install rocBLAS and the HIP runtime (ROCm: `apt-get install rocblas hip-runtime-amd` from AMD's repository; Debian/Ubuntu: `apt-get install librocblas0 libamdhip64-5`), or set OFFLOAD_ROCBLAS to the path of librocblas.so";

type HipError = c_int;

/// The HIP runtime calls the binding needs (hip_runtime_api.h).
struct Hip {
    set_device: unsafe extern "C" fn(c_int) -> HipError,
    stream_create: unsafe extern "C" fn(*mut Stream, c_uint) -> HipError,
    stream_sync: unsafe extern "C" fn(Stream) -> HipError,
    error_name: unsafe extern "C" fn(HipError) -> *const c_char,
    _lib: libloading::Library,
}

/// rocBLAS with HIP and the handles made so far.
struct Rocm {
    hip: Hip,
    blas: Blas,
    bound: Mutex<HashMap<usize, Bound>>,
    lib: libloading::Library,
}

/// rocBLAS, loaded on first use.
pub(super) fn platform() -> Result<&'static dyn Platform, BlasError> {
    static ROCM: OnceLock<Result<Rocm, BlasError>> = OnceLock::new();
    match ROCM.get_or_init(load) {
        Ok(r) => Ok(r),
        Err(e) => Err(e.clone()),
    }
}

/// The sonames tried, newest first (ROCm 7/6/5, then Debian's packaging).
pub(super) const ROCBLAS_NAMES: [&str; 5] =
    ["librocblas.so.5", "librocblas.so.4", "librocblas.so.3", "librocblas.so.0", "librocblas.so"];
/// The HIP runtime's sonames, newest first.
pub(super) const HIP_NAMES: [&str; 4] =
    ["libamdhip64.so.7", "libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so"];

fn search_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(root) = &crate::host::config::config().rocm_path {
        dirs.push(PathBuf::from(root).join("lib"));
    }
    dirs.extend(["/opt/rocm/lib", "/opt/rocm/lib64", "/usr/lib/x86_64-linux-gnu"].map(PathBuf::from));
    dirs
}

fn load() -> Result<Rocm, BlasError> {
    let missing = |library, reason: String| BlasError::LibraryMissing { library, reason, hint: HINT };
    let dirs = search_dirs();
    let (lib, _) = open(("OFFLOAD_HIP", crate::host::config::config().hip.clone()), &HIP_NAMES, &dirs)
        .map_err(|e| missing(HIP, e))?;
    let hip = Hip {
        set_device: get(&lib, HIP, "hipSetDevice")?,
        stream_create: get(&lib, HIP, "hipStreamCreateWithFlags")?,
        stream_sync: get(&lib, HIP, "hipStreamSynchronize")?,
        error_name: get(&lib, HIP, "hipGetErrorName")?,
        _lib: lib,
    };
    let (blas, lib) = load_blas(crate::host::config::config().rocblas.clone(), &dirs)?;
    Ok(Rocm { hip, blas, bound: Mutex::new(HashMap::new()), lib })
}

/// Loads rocBLAS from `path` (`OFFLOAD_ROCBLAS`), else from the loader's path or `dirs`.
fn load_blas(
    path: Option<std::ffi::OsString>,
    dirs: &[PathBuf],
) -> Result<(Blas, libloading::Library), BlasError> {
    let missing = |reason: String| BlasError::LibraryMissing { library: LIBRARY, reason, hint: HINT };
    let (lib, path) = open(("OFFLOAD_ROCBLAS", path), &ROCBLAS_NAMES, dirs).map_err(missing)?;
    let bad = |e: String| missing(format!("{path}: {e}"));
    // SAFETY: rocblas_{s,d}{gemm,gemv,axpy,dot,nrm2,scal} have the signatures `gpu` declares
    // (rocblas-functions.h; `rocblas_int` is a 32-bit int, `rocblas_operation` a C enum).
    let f32 = unsafe { Fns::<f32>::load(&lib, |r| format!("rocblas_s{r}")) }.map_err(bad)?;
    // SAFETY: as above.
    let f64 = unsafe { Fns::<f64>::load(&lib, |r| format!("rocblas_d{r}")) }.map_err(bad)?;
    let status_name =
        get::<unsafe extern "C" fn(Status) -> *const c_char>(&lib, LIBRARY, "rocblas_status_to_string").ok();
    Ok((Blas { name: "rocBLAS", path, f32, f64, ops: OPS, status_name }, lib))
}

impl Rocm {
    fn check(&self, call: &'static str, r: HipError) -> Result<(), BlasError> {
        if r == 0 {
            return Ok(());
        }
        // SAFETY: hipGetErrorName returns a static NUL-terminated string.
        let name = unsafe { (self.hip.error_name)(r) };
        let status = if name.is_null() {
            format!("HIP error {r}")
        } else {
            // SAFETY: as above.
            format!("HIP error {r} ({})", unsafe { CStr::from_ptr(name) }.to_string_lossy())
        };
        Err(BlasError::Failed { routine: "blas", call, status })
    }
}

impl Platform for Rocm {
    fn blas(&self) -> &Blas {
        &self.blas
    }

    fn bound(&self) -> &Mutex<HashMap<usize, Bound>> {
        &self.bound
    }

    fn enter(&self, ordinal: usize) -> Result<(), BlasError> {
        // SAFETY: plain call; HIP's current device is per thread.
        self.check("hipSetDevice", unsafe { (self.hip.set_device)(ordinal as c_int) })
    }

    fn leave(&self) {}

    fn create(&self) -> Result<Bound, BlasError> {
        type Create = unsafe extern "C" fn(*mut *mut c_void) -> Status;
        type SetStream = unsafe extern "C" fn(*mut c_void, Stream) -> Status;
        let create: Create = get(&self.lib, LIBRARY, "rocblas_create_handle")?;
        let set_stream: SetStream = get(&self.lib, LIBRARY, "rocblas_set_stream")?;
        let mut stream = std::ptr::null_mut();
        // SAFETY: valid out-pointer, on the current device (`enter`).
        self.check("hipStreamCreateWithFlags", unsafe {
            (self.hip.stream_create)(&mut stream, HIP_STREAM_NON_BLOCKING)
        })?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the handle belongs to the current device.
        self.blas.check("blas", "rocblas_create_handle", unsafe { create(&mut handle) })?;
        // SAFETY: a fresh handle and a stream of its device.
        self.blas.check("blas", "rocblas_set_stream", unsafe { set_stream(handle, stream) })?;
        Ok(Bound { handle, stream })
    }

    fn wait(&self, stream: Stream) -> Result<(), BlasError> {
        // SAFETY: a stream `create` made.
        self.check("hipStreamSynchronize", unsafe { (self.hip.stream_sync)(stream) })
    }
}

fn get<F: Copy>(lib: &libloading::Library, library: &'static str, name: &str) -> Result<F, BlasError> {
    // SAFETY: the callers name HIP and rocBLAS functions with the declared signatures.
    unsafe { symbol(lib, name) }.map_err(|reason| BlasError::LibraryMissing { library, reason, hint: HINT })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_rocblas_says_what_to_install() {
        let Err(e) = load_blas(Some("/nonexistent/librocblas.so.5".into()), &[]) else { panic!("loaded") };
        let shown = e.to_string();
        assert!(
            shown.starts_with(
                "librocblas.so could not be loaded: OFFLOAD_ROCBLAS=/nonexistent/librocblas.so.5:"
            ),
            "{shown}"
        );
        assert!(shown.contains("apt-get install rocblas"), "{shown}");
        let Err(e) = load_blas(None, &[PathBuf::from("/nonexistent")]) else { panic!("loaded") };
        assert!(e.to_string().contains("not found by the dynamic loader nor in /nonexistent"), "{e}");
    }
}
