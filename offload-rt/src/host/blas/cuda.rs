//! cuBLAS, loaded at run time (`libcublas.so.13`, else `.12`), on the CUDA primary context
//! liboffload's CUDA plugin uses, with a stream of its own per device.

use super::BlasError;
use super::gpu::{Blas, Bound, Fns, Platform, Status, Stream, open, python_dirs, symbol};
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_uint, c_void};
use std::path::PathBuf;
use std::sync::{Mutex, OnceLock};

/// `cublasOperation_t`: `CUBLAS_OP_N`, `CUBLAS_OP_T`.
pub(super) const OPS: [c_int; 2] = [0, 1];
/// `CU_STREAM_NON_BLOCKING`: no implicit ordering with the legacy default stream.
const CU_STREAM_NON_BLOCKING: c_uint = 1;

const LIBRARY: &str = "libcublas.so.13";
const HINT: &str = "install the CUDA toolkit's cuBLAS, e.g. `apt-get install libcublas-13-0` (from NVIDIA's CUDA repository) or `pip install nvidia-cublas`, or set OFFLOAD_CUBLAS to the path of libcublas.so.13 (or .12)";

type CuResult = c_int;
type Context = *mut c_void;

/// The CUDA driver calls the binding needs (cuda.h, stable since CUDA 7).
struct Driver {
    device_get: unsafe extern "C" fn(*mut c_int, c_int) -> CuResult,
    primary_retain: unsafe extern "C" fn(*mut Context, c_int) -> CuResult,
    push: unsafe extern "C" fn(Context) -> CuResult,
    pop: unsafe extern "C" fn(*mut Context) -> CuResult,
    stream_create: unsafe extern "C" fn(*mut Stream, c_uint) -> CuResult,
    stream_sync: unsafe extern "C" fn(Stream) -> CuResult,
    error_name: unsafe extern "C" fn(CuResult, *mut *const c_char) -> CuResult,
    _lib: libloading::Library,
}

/// cuBLAS with the driver and the handles made so far.
struct Cuda {
    driver: Driver,
    blas: Blas,
    /// Each device's primary context, by CUDA ordinal, retained on first use.
    contexts: Mutex<HashMap<usize, usize>>,
    bound: Mutex<HashMap<usize, Bound>>,
    lib: libloading::Library,
}

/// cuBLAS, loaded on first use.
pub(super) fn platform() -> Result<&'static dyn Platform, BlasError> {
    static CUDA: OnceLock<Result<Cuda, BlasError>> = OnceLock::new();
    match CUDA.get_or_init(load) {
        Ok(c) => Ok(c),
        Err(e) => Err(e.clone()),
    }
}

/// Where cuBLAS may be besides the loader's search path: the CUDA toolkit's usual places and
/// pip's `nvidia-cublas` wheels.
pub(super) fn search_dirs() -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    for root in &crate::host::config::config().cuda_roots {
        dirs.push(PathBuf::from(root).join("lib64"));
    }
    for root in ["/usr/local/cuda", "/usr/local/cuda-13.0", "/usr/local/cuda-13", "/usr/local/cuda-12"] {
        dirs.push(PathBuf::from(root).join("lib64"));
        dirs.push(PathBuf::from(root).join("targets/x86_64-linux/lib"));
    }
    dirs.push("/usr/lib/x86_64-linux-gnu".into());
    for root in ["/usr/local/lib", "/usr/lib"] {
        dirs.extend(python_dirs(root, &["nvidia/cu13/lib", "nvidia/cublas/lib"]));
    }
    dirs
}

/// Loads cuBLAS from `path` (`OFFLOAD_CUBLAS`), else from where [`search_dirs`] looks.
fn load_blas(path: Option<std::ffi::OsString>) -> Result<(Blas, libloading::Library), BlasError> {
    let missing = |reason: String| BlasError::LibraryMissing { library: LIBRARY, reason, hint: HINT };
    let (lib, path) =
        open(("OFFLOAD_CUBLAS", path), &[LIBRARY, "libcublas.so.12"], &search_dirs()).map_err(missing)?;
    let bad = |e: String| missing(format!("{path}: {e}"));
    // SAFETY: the names are cuBLAS's `_v2` routines, whose signatures `gpu` declares for each
    // element type (cublas_api.h).
    let f32 = unsafe { Fns::<f32>::load(&lib, |r| format!("cublasS{r}_v2")) }.map_err(bad)?;
    // SAFETY: as above.
    let f64 = unsafe { Fns::<f64>::load(&lib, |r| format!("cublasD{r}_v2")) }.map_err(bad)?;
    // SAFETY: `const char* cublasGetStatusName(cublasStatus_t)`, since CUDA 11.4.
    let status_name =
        unsafe { symbol::<unsafe extern "C" fn(Status) -> *const c_char>(&lib, "cublasGetStatusName") }.ok();
    Ok((Blas { name: "cuBLAS", path, f32, f64, ops: OPS, status_name }, lib))
}

fn load() -> Result<Cuda, BlasError> {
    let (blas, lib) = load_blas(crate::host::config::config().cublas.clone())?;
    // The driver: liboffload's CUDA plugin has it loaded already.
    // SAFETY: loading the CUDA driver runs its initialisers, which have no preconditions.
    let cuda =
        unsafe { libloading::Library::new("libcuda.so.1") }.map_err(|e| BlasError::LibraryMissing {
            library: "libcuda.so.1",
            reason: e.to_string(),
            hint: "install the NVIDIA driver",
        })?;
    fn get<F: Copy>(lib: &libloading::Library, name: &str) -> Result<F, BlasError> {
        // SAFETY: `Driver` declares the CUDA driver API's signatures (cuda.h).
        unsafe { symbol(lib, name) }.map_err(|reason| BlasError::LibraryMissing {
            library: "libcuda.so.1",
            reason,
            hint: "update the NVIDIA driver",
        })
    }
    let driver = Driver {
        device_get: get(&cuda, "cuDeviceGet")?,
        primary_retain: get(&cuda, "cuDevicePrimaryCtxRetain")?,
        push: get(&cuda, "cuCtxPushCurrent_v2")?,
        pop: get(&cuda, "cuCtxPopCurrent_v2")?,
        stream_create: get(&cuda, "cuStreamCreate")?,
        stream_sync: get(&cuda, "cuStreamSynchronize")?,
        error_name: get(&cuda, "cuGetErrorName")?,
        _lib: cuda,
    };
    Ok(Cuda { driver, blas, contexts: Mutex::new(HashMap::new()), bound: Mutex::new(HashMap::new()), lib })
}

impl Cuda {
    fn check(&self, call: &'static str, r: CuResult) -> Result<(), BlasError> {
        if r == 0 {
            return Ok(());
        }
        let mut name: *const c_char = std::ptr::null();
        // SAFETY: valid out-pointer; the driver returns a static string.
        let named = unsafe { (self.driver.error_name)(r, &mut name) } == 0 && !name.is_null();
        let status = if named {
            // SAFETY: a static NUL-terminated string from the driver.
            format!("CUDA error {r} ({})", unsafe { CStr::from_ptr(name) }.to_string_lossy())
        } else {
            format!("CUDA error {r}")
        };
        Err(BlasError::Failed { routine: "blas", call, status })
    }

    /// The primary context of CUDA device `ordinal` (the one liboffload's plugin uses).
    fn context(&self, ordinal: usize) -> Result<Context, BlasError> {
        let mut contexts = self.contexts.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&c) = contexts.get(&ordinal) {
            return Ok(c as Context);
        }
        let mut dev = 0;
        // SAFETY: valid out-pointer.
        self.check("cuDeviceGet", unsafe { (self.driver.device_get)(&mut dev, ordinal as c_int) })?;
        let mut ctx = std::ptr::null_mut();
        // SAFETY: valid out-pointer and device. The context stays retained for the process,
        // like liboffload's own retain.
        self.check("cuDevicePrimaryCtxRetain", unsafe { (self.driver.primary_retain)(&mut ctx, dev) })?;
        contexts.insert(ordinal, ctx as usize);
        Ok(ctx)
    }
}

impl Platform for Cuda {
    fn blas(&self) -> &Blas {
        &self.blas
    }

    fn bound(&self) -> &Mutex<HashMap<usize, Bound>> {
        &self.bound
    }

    fn enter(&self, ordinal: usize) -> Result<(), BlasError> {
        let ctx = self.context(ordinal)?;
        // SAFETY: a retained primary context; `leave` pops it.
        self.check("cuCtxPushCurrent", unsafe { (self.driver.push)(ctx) })
    }

    fn leave(&self) {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: pops the context `enter` pushed on this thread.
        unsafe { (self.driver.pop)(&mut ctx) };
    }

    fn create(&self) -> Result<Bound, BlasError> {
        type Create = unsafe extern "C" fn(*mut *mut c_void) -> Status;
        type SetStream = unsafe extern "C" fn(*mut c_void, Stream) -> Status;
        let lib = &self.lib;
        let bad = |e: String| BlasError::LibraryMissing { library: LIBRARY, reason: e, hint: HINT };
        // SAFETY: cublas_api.h's signatures.
        let (create, set_stream) = unsafe {
            (
                symbol::<Create>(lib, "cublasCreate_v2").map_err(bad)?,
                symbol::<SetStream>(lib, "cublasSetStream_v2").map_err(bad)?,
            )
        };
        let mut stream = std::ptr::null_mut();
        // SAFETY: valid out-pointer; the current context is the device's (`enter`).
        self.check("cuStreamCreate", unsafe {
            (self.driver.stream_create)(&mut stream, CU_STREAM_NON_BLOCKING)
        })?;
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid out-pointer; cuBLAS binds the handle to the current context.
        let status = unsafe { create(&mut handle) };
        self.blas.check("blas", "cublasCreate_v2", status)?;
        // SAFETY: a fresh handle and a stream of its context.
        let status = unsafe { set_stream(handle, stream) };
        self.blas.check("blas", "cublasSetStream_v2", status)?;
        Ok(Bound { handle, stream })
    }

    fn wait(&self, stream: Stream) -> Result<(), BlasError> {
        // SAFETY: a stream `create` made; its context is current (`enter`).
        self.check("cuStreamSynchronize", unsafe { (self.driver.stream_sync)(stream) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_cublas_says_what_to_install() {
        let Err(e) = load_blas(Some("/nonexistent/libcublas.so.13".into())) else { panic!("loaded") };
        let shown = e.to_string();
        assert!(
            shown.starts_with(
                "libcublas.so.13 could not be loaded: OFFLOAD_CUBLAS=/nonexistent/libcublas.so.13:"
            ),
            "{shown}"
        );
        assert!(shown.contains("apt-get install libcublas-13-0"), "{shown}");
        assert!(shown.contains("pip install nvidia-cublas"), "{shown}");
    }

    /// With `OFFLOAD_TEST_CUBLAS=path/to/libcublas.so.13` (no GPU needed): every routine the
    /// binding uses resolves, and the library names its status codes.
    #[test]
    #[ignore = "needs OFFLOAD_TEST_CUBLAS=path/to/libcublas.so.13"]
    fn cublas_symbols_resolve() {
        let path =
            std::env::var_os("OFFLOAD_TEST_CUBLAS").expect("OFFLOAD_TEST_CUBLAS names a libcublas.so.13");
        let (blas, _lib) = load_blas(Some(path)).unwrap();
        let e = blas.check("blas::gemm", "cublasSgemm_v2", 7).unwrap_err();
        assert!(e.to_string().contains("status 7 (CUBLAS_STATUS_INVALID_VALUE) from cuBLAS"), "{e}");
    }
}
