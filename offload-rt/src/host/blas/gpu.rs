//! The GPU side shared by cuBLAS and rocBLAS: the routines' C signatures (the same in both
//! libraries), loading them, staging arguments, and ordering each call with the device's
//! queue.

use super::shape::{GemmCall, GemvCall};
use super::{BlasError, InArg, Kind, Op, OutArg, Scalar, cuda, rocm};
use crate::host::args::{InData, OutData};
use crate::host::backend::gpu::GpuBackend;
use crate::host::device::Device;
use crate::host::error::{Error, Result};
use crate::host::liboffload::memory::DeviceAlloc;
use crate::host::liboffload::runtime::Vendor;
use std::collections::HashMap;
use std::ffi::{CStr, c_char, c_int, c_void};
use std::path::PathBuf;
use std::sync::Mutex;

/// A library handle (`cublasHandle_t`, `rocblas_handle`).
pub(super) type Handle = *mut c_void;
/// A stream (`cudaStream_t`/`CUstream`, `hipStream_t`).
pub(super) type Stream = *mut c_void;
/// The libraries' status codes (`cublasStatus_t`, `rocblas_status`: C enums).
pub(super) type Status = c_int;

// The level-1/2/3 signatures, identical in cuBLAS (`cublasSgemm_v2`, …) and rocBLAS
// (`rocblas_sgemm`, …): handle, then BLAS's arguments with scalars by pointer (host pointer
// mode, the default of both), operations as C enums and dimensions as `int`.
type GemmFn<T> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    *const T,
    c_int,
    *const T,
    *mut T,
    c_int,
) -> Status;
type GemvFn<T> = unsafe extern "C" fn(
    Handle,
    c_int,
    c_int,
    c_int,
    *const T,
    *const T,
    c_int,
    *const T,
    c_int,
    *const T,
    *mut T,
    c_int,
) -> Status;
type AxpyFn<T> = unsafe extern "C" fn(Handle, c_int, *const T, *const T, c_int, *mut T, c_int) -> Status;
type DotFn<T> = unsafe extern "C" fn(Handle, c_int, *const T, c_int, *const T, c_int, *mut T) -> Status;
type Nrm2Fn<T> = unsafe extern "C" fn(Handle, c_int, *const T, c_int, *mut T) -> Status;
type ScalFn<T> = unsafe extern "C" fn(Handle, c_int, *const T, *mut T, c_int) -> Status;

/// One element type's routines, and their names for messages.
pub(super) struct Fns<T> {
    gemm: (GemmFn<T>, &'static str),
    gemv: (GemvFn<T>, &'static str),
    axpy: (AxpyFn<T>, &'static str),
    dot: (DotFn<T>, &'static str),
    nrm2: (Nrm2Fn<T>, &'static str),
    scal: (ScalFn<T>, &'static str),
}

/// Resolves `name` in `lib`.
///
/// # Safety
///
/// The symbol must have type `F`.
pub(super) unsafe fn symbol<F: Copy>(lib: &libloading::Library, name: &str) -> Result<F, String> {
    let cname = format!("{name}\0");
    // SAFETY: the caller guarantees the type.
    let f = unsafe { lib.get::<F>(cname.as_bytes()) };
    f.map(|f| *f).map_err(|e| format!("missing symbol {name}: {e}"))
}

impl<T> Fns<T> {
    /// Resolves the routines named by `name(routine)` (`"gemm"` → `"cublasSgemm_v2"`).
    ///
    /// # Safety
    ///
    /// The named symbols must have the signatures above for element type `T`.
    pub unsafe fn load(lib: &libloading::Library, name: impl Fn(&str) -> String) -> Result<Fns<T>, String> {
        fn get<F: Copy>(lib: &libloading::Library, name: String) -> Result<(F, &'static str), String> {
            // SAFETY: `load`'s caller guarantees each signature.
            let f = unsafe { symbol::<F>(lib, &name)? };
            // Loaded once per process: the names live as long.
            Ok((f, Box::leak(name.into_boxed_str())))
        }
        Ok(Fns {
            gemm: get(lib, name("gemm"))?,
            gemv: get(lib, name("gemv"))?,
            axpy: get(lib, name("axpy"))?,
            dot: get(lib, name("dot"))?,
            nrm2: get(lib, name("nrm2"))?,
            scal: get(lib, name("scal"))?,
        })
    }
}

/// A loaded BLAS library: both element types' routines, its operation codes and status
/// names.
pub(super) struct Blas {
    pub name: &'static str,
    pub path: String,
    pub f32: Fns<f32>,
    pub f64: Fns<f64>,
    /// The library's codes for [`Op::N`] and [`Op::T`].
    pub ops: [c_int; 2],
    pub status_name: Option<unsafe extern "C" fn(Status) -> *const c_char>,
}

impl Blas {
    fn fns<T: Scalar>(&self) -> &Fns<T> {
        match T::KIND {
            // SAFETY: `T` is `f32` (its `KIND` says so): the same type, behind a cast.
            Kind::F32 => unsafe { &*(&raw const self.f32).cast::<Fns<T>>() },
            // SAFETY: as above, `T` is `f64`.
            Kind::F64 => unsafe { &*(&raw const self.f64).cast::<Fns<T>>() },
        }
    }

    /// `Ok` for status 0, else the failure of `call`, with the status's name.
    pub fn check(&self, routine: &'static str, call: &'static str, status: Status) -> Result<(), BlasError> {
        if status == 0 {
            return Ok(());
        }
        let name = self.status_name.and_then(|f| {
            // SAFETY: both libraries return a static NUL-terminated string (or null).
            let p = unsafe { f(status) };
            // SAFETY: as above, non-null strings are static and NUL-terminated.
            (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
        });
        let status = match name {
            Some(n) => format!("status {status} ({n}) from {} ({})", self.name, self.path),
            None => format!("status {status} from {} ({})", self.name, self.path),
        };
        Err(BlasError::Failed { routine, call, status })
    }
}

/// The parameters of one library call of a routine, as passed: the pure function that
/// marshals a planned call into the library's arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct GemmArgs {
    pub transa: c_int,
    pub transb: c_int,
    pub m: c_int,
    pub n: c_int,
    pub k: c_int,
    pub lda: c_int,
    pub ldb: c_int,
    pub ldc: c_int,
}

/// `gemm`'s arguments for a library whose codes for N and T are `ops`.
pub(super) fn gemm_args(ops: [c_int; 2], c: &GemmCall) -> GemmArgs {
    let op = |o: Op| if o == Op::N { ops[0] } else { ops[1] };
    GemmArgs {
        transa: op(c.transa),
        transb: op(c.transb),
        m: c.m,
        n: c.n,
        k: c.k,
        lda: c.lda,
        ldb: c.ldb,
        ldc: c.ldc,
    }
}

/// `gemv`'s (trans, m, n, lda) for a library whose codes for N and T are `ops`.
pub(super) fn gemv_args(ops: [c_int; 2], c: &GemvCall) -> [c_int; 4] {
    [if c.trans == Op::N { ops[0] } else { ops[1] }, c.m, c.n, c.lda]
}

/// The vendor runtime under a BLAS library: selecting the device and waiting for a stream.
pub(super) trait Platform: Sync + Send + 'static {
    /// The BLAS library.
    fn blas(&self) -> &Blas;
    /// Handles made so far, by liboffload device index.
    fn bound(&self) -> &Mutex<HashMap<usize, Bound>>;
    /// Makes the device with this vendor ordinal current for the calling thread.
    fn enter(&self, ordinal: usize) -> Result<(), BlasError>;
    /// Undoes `enter`.
    fn leave(&self);
    /// A library handle on a stream of its own, on the current device.
    fn create(&self) -> Result<Bound, BlasError>;
    /// Waits for the stream.
    fn wait(&self, stream: Stream) -> Result<(), BlasError>;
}

/// A library handle bound to its stream, made once per device and kept for the process.
#[derive(Clone, Copy)]
pub(super) struct Bound {
    pub handle: Handle,
    pub stream: Stream,
}

// SAFETY: handles and streams are identifiers; each is used under the `bound` mutex, one
// thread at a time, as both libraries require of a handle.
unsafe impl Send for Bound {}

/// Opens a library: the path in the environment variable `env` (given with its value) when
/// set, else the first of `names` that the dynamic loader finds (`LD_LIBRARY_PATH`, the ld
/// cache), else the first found in one of `dirs`.
pub(super) fn open(
    (env, value): (&str, Option<std::ffi::OsString>),
    names: &[&str],
    dirs: &[PathBuf],
) -> Result<(libloading::Library, String), String> {
    let mut tried = Vec::new();
    if let Some(path) = value {
        let shown = PathBuf::from(&path).display().to_string();
        // SAFETY: loading a shared library runs its initialisers, which have no preconditions.
        return unsafe { libloading::Library::new(&path) }
            .map(|l| (l, shown.clone()))
            .map_err(|e| format!("{env}={shown}: {e}"));
    }
    for name in names {
        // SAFETY: as above.
        match unsafe { libloading::Library::new(*name) } {
            Ok(l) => return Ok((l, (*name).to_owned())),
            Err(e) => tried.push(e.to_string()),
        }
    }
    for dir in dirs {
        for name in names {
            let path = dir.join(name);
            if path.exists() {
                // SAFETY: as above.
                match unsafe { libloading::Library::new(&path) } {
                    Ok(l) => return Ok((l, path.display().to_string())),
                    Err(e) => tried.push(e.to_string()),
                }
            }
        }
    }
    let dirs: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    Err(format!(
        "not found by the dynamic loader nor in {}{}",
        dirs.join(", "),
        if tried.is_empty() { String::new() } else { format!(" ({})", tried.join("; ")) }
    ))
}

/// Python packages' library folders under `root` (`python3.*/{site,dist}-packages/<sub>`).
pub(super) fn python_dirs(root: &str, sub: &[&str]) -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    let Ok(entries) = std::fs::read_dir(root) else { return dirs };
    for e in entries.flatten() {
        if e.file_name().to_string_lossy().starts_with("python3") {
            for packages in ["site-packages", "dist-packages"] {
                for s in sub {
                    dirs.push(e.path().join(packages).join(s));
                }
            }
        }
    }
    dirs.sort();
    dirs
}

/// One routine call on a GPU: arguments staged on it, the vendor library bound to it.
pub(super) struct Gpu<'d> {
    device: &'d Device,
    g: &'d GpuBackend,
    routine: &'static str,
    platform: &'static dyn Platform,
    ordinal: usize,
    /// Device copies of host-data arguments, freed when the call returns.
    allocs: Vec<DeviceAlloc>,
}

/// A written host argument: where its device copy is, copied back after the call.
struct WriteBack<'h, T> {
    host: &'h mut [T],
    device: *mut c_void,
}

impl<'d> Gpu<'d> {
    /// Binds the device's vendor library, loading it (and making the device's handle) on
    /// first use.
    pub fn new(device: &'d Device, g: &'d GpuBackend, routine: &'static str) -> Result<Gpu<'d>> {
        g.gpu.check_poison()?;
        let platform: &'static dyn Platform = match g.gpu.vendor {
            Vendor::Nvidia => cuda::platform()?,
            Vendor::Amd => rocm::platform()?,
        };
        // The vendor's own numbering: its GPUs in liboffload's order, which follows the
        // driver's (CUDA ordinals; HSA agents, as HIP numbers them).
        let ordinal = g.rt.gpus[..g.index].iter().filter(|o| o.vendor == g.gpu.vendor).count();
        let mut bound = platform.bound().lock().unwrap_or_else(|e| e.into_inner());
        if let std::collections::hash_map::Entry::Vacant(slot) = bound.entry(g.index) {
            platform.enter(ordinal)?;
            let made = platform.create();
            platform.leave();
            slot.insert(made?);
        }
        drop(bound);
        Ok(Gpu { device, g, routine, platform, ordinal, allocs: Vec::new() })
    }

    /// The library's name and where it was loaded from.
    pub fn library(&self) -> String {
        let blas = self.platform.blas();
        format!("{} ({})", blas.name, blas.path)
    }

    /// A read-only argument on the device: a buffer in place, host data copied.
    fn stage_in<T: Scalar>(&mut self, (data, _): InArg<'_, T>) -> Result<*const T> {
        match data {
            InData::Buffer(b) => Ok(self.buffer_ptr(b)?.cast_const()),
            InData::Part { buffer, start, .. } => {
                Ok(self.buffer_ptr(buffer)?.wrapping_add(start).cast_const())
            }
            InData::Host(h) => Ok(self.copy_in(h)?.cast_const()),
        }
    }

    /// The written argument on the device, and its host data to copy back if any. Host data
    /// is copied in only when the routine reads it.
    fn stage_out<'h, T: Scalar>(
        &mut self,
        (data, _, reads): OutArg<'h, T>,
    ) -> Result<(*mut T, Option<WriteBack<'h, T>>)> {
        match data {
            OutData::Buffer(b) => Ok((self.buffer_ptr(b)?, None)),
            OutData::Part { buffer, start, .. } => Ok((self.buffer_ptr(buffer)?.wrapping_add(start), None)),
            OutData::HostWriteOnly(host) => {
                // Not copied in: the device starts from zeros, as for kernels.
                let alloc = self.g.alloc(size_of_val(host), true)?;
                let ptr = alloc.ptr;
                self.allocs.push(alloc);
                Ok((ptr.cast(), Some(WriteBack { host, device: ptr.cast() })))
            }
            OutData::Host(host) => {
                let ptr = if reads {
                    self.copy_in(host)?
                } else {
                    let alloc = self.g.alloc(size_of_val(host), false)?;
                    let ptr = alloc.ptr;
                    self.allocs.push(alloc);
                    ptr.cast()
                };
                Ok((ptr, Some(WriteBack { host, device: ptr.cast() })))
            }
        }
    }

    fn buffer_ptr<T: Scalar>(&self, b: &crate::host::buffer::DeviceBuffer<T>) -> Result<*mut T> {
        b.launch_view(self.device, self.routine)
    }

    fn copy_in<T: Scalar>(&mut self, host: &[T]) -> Result<*mut T> {
        let alloc = self.g.alloc(size_of_val(host), false)?;
        self.g.upload(alloc.ptr, crate::host::buffer::as_bytes(host))?;
        let ptr = alloc.ptr;
        self.allocs.push(alloc);
        Ok(ptr.cast())
    }

    /// Runs `body` with the library's handle, ordered after everything queued on the device
    /// and before anything queued after: waits for the queue, calls, waits for the library's
    /// stream.
    fn call<R>(&self, body: impl FnOnce(&Blas, Handle) -> Result<R, BlasError>) -> Result<R> {
        self.g.sync_queue()?;
        let bound = self.platform.bound().lock().unwrap_or_else(|e| e.into_inner());
        let b = *bound.get(&self.g.index).expect("bound in `new`");
        self.platform.enter(self.ordinal)?;
        let result = body(self.platform.blas(), b.handle);
        // Wait even after a failed call: an earlier part may be running.
        let waited = self.platform.wait(b.stream);
        self.platform.leave();
        drop(bound);
        let result = result?;
        // A failure while waiting is the stream's: on a GPU that usually leaves the context
        // unusable, so it poisons the device like a trapped kernel.
        waited.map_err(|e| self.g.gpu.poison(Error::Blas(e)))?;
        Ok(result)
    }

    /// Copies a written host argument back.
    fn write_back<T: Scalar>(&self, back: Option<WriteBack<'_, T>>) -> Result<()> {
        if let Some(w) = back {
            // SAFETY: the device range holds the routine's result, values of `T` as many as
            // `w.host` holds.
            self.g.download(unsafe { crate::host::buffer::as_bytes_mut(w.host) }, w.device)?;
        }
        Ok(())
    }

    pub fn gemm<T: Scalar>(
        &mut self,
        call: &GemmCall,
        alpha: T,
        a: InArg<'_, T>,
        b: InArg<'_, T>,
        beta: T,
        c: OutArg<'_, T>,
    ) -> Result<()> {
        let (pa, pb) = (self.stage_in(a)?, self.stage_in(b)?);
        let (pc, back) = self.stage_out(c)?;
        let (p, q) = call.operands(pa, pb);
        let routine = self.routine;
        self.call(|blas, h| {
            let (f, name) = blas.fns::<T>().gemm;
            let g = gemm_args(blas.ops, call);
            // SAFETY: `p`, `q` and `pc` are device memory of this GPU holding the elements
            // the planned shapes and leading dimensions reach (checked by `plan_gemm`, and
            // the staged copies are as long as the host data); `pc` overlaps neither input
            // (distinct allocations or borrow-checked buffers); the scalars are host values,
            // as the default pointer mode expects.
            let status = unsafe {
                f(h, g.transa, g.transb, g.m, g.n, g.k, &alpha, p, g.lda, q, g.ldb, &beta, pc, g.ldc)
            };
            blas.check(routine, name, status)
        })?;
        self.write_back(back)
    }

    pub fn gemv<T: Scalar>(
        &mut self,
        call: &GemvCall,
        alpha: T,
        a: InArg<'_, T>,
        x: InArg<'_, T>,
        beta: T,
        y: OutArg<'_, T>,
    ) -> Result<()> {
        let (pa, px) = (self.stage_in(a)?, self.stage_in(x)?);
        let (py, back) = self.stage_out(y)?;
        let routine = self.routine;
        self.call(|blas, h| {
            let (f, name) = blas.fns::<T>().gemv;
            let [trans, m, n, lda] = gemv_args(blas.ops, call);
            // SAFETY: as in `gemm`: shapes checked by `plan_gemv`, device pointers of this
            // GPU, `py` distinct from the inputs, host scalars.
            let status = unsafe { f(h, trans, m, n, &alpha, pa, lda, px, 1, &beta, py, 1) };
            blas.check(routine, name, status)
        })?;
        self.write_back(back)
    }

    pub fn axpy<T: Scalar>(&mut self, n: usize, alpha: T, x: InArg<'_, T>, y: OutArg<'_, T>) -> Result<()> {
        let px = self.stage_in(x)?;
        let (py, back) = self.stage_out(y)?;
        let routine = self.routine;
        self.call(|blas, h| {
            let (f, name) = blas.fns::<T>().axpy;
            // SAFETY: `x` and `y` hold `n` elements (checked, and `n` fits an int) on this GPU.
            let status = unsafe { f(h, n as c_int, &alpha, px, 1, py, 1) };
            blas.check(routine, name, status)
        })?;
        self.write_back(back)
    }

    pub fn dot<T: Scalar>(&mut self, n: usize, x: InArg<'_, T>, y: InArg<'_, T>) -> Result<T> {
        let (px, py) = (self.stage_in(x)?, self.stage_in(y)?);
        let routine = self.routine;
        self.call(|blas, h| {
            let (f, name) = blas.fns::<T>().dot;
            let mut r = T::from_f64(0.0);
            // SAFETY: `x` and `y` hold `n` elements on this GPU; the result goes to a host
            // value (host pointer mode: the call returns once it is written).
            let status = unsafe { f(h, n as c_int, px, 1, py, 1, &mut r) };
            blas.check(routine, name, status).map(|()| r)
        })
    }

    pub fn nrm2<T: Scalar>(&mut self, n: usize, x: InArg<'_, T>) -> Result<T> {
        let px = self.stage_in(x)?;
        let routine = self.routine;
        self.call(|blas, h| {
            let (f, name) = blas.fns::<T>().nrm2;
            let mut r = T::from_f64(0.0);
            // SAFETY: as in `dot`.
            let status = unsafe { f(h, n as c_int, px, 1, &mut r) };
            blas.check(routine, name, status).map(|()| r)
        })
    }

    pub fn scal<T: Scalar>(&mut self, n: usize, alpha: T, x: OutArg<'_, T>) -> Result<()> {
        let (px, back) = self.stage_out(x)?;
        let routine = self.routine;
        self.call(|blas, h| {
            let (f, name) = blas.fns::<T>().scal;
            // SAFETY: `x` holds `n` elements on this GPU.
            let status = unsafe { f(h, n as c_int, &alpha, px, 1) };
            blas.check(routine, name, status)
        })?;
        self.write_back(back)
    }
}

impl Drop for Gpu<'_> {
    fn drop(&mut self) {
        // The staged copies are freed after this; every call waited for its stream and every
        // copy for the queue, so nothing uses them any more.
        self.allocs.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::super::shape::{plan_gemm, plan_gemv};
    use super::super::{Gemm, Gemv};
    use super::*;

    const CUBLAS: [c_int; 2] = cuda::OPS;
    const ROCBLAS: [c_int; 2] = rocm::OPS;

    #[test]
    fn operation_codes_are_the_libraries() {
        // cublasOperation_t: CUBLAS_OP_N = 0, CUBLAS_OP_T = 1.
        assert_eq!(CUBLAS, [0, 1]);
        // rocblas_operation: rocblas_operation_none = 111, rocblas_operation_transpose = 112.
        assert_eq!(ROCBLAS, [111, 112]);
    }

    #[test]
    fn row_major_gemm_reaches_the_libraries_transposed() {
        // C (4×3) = A (4×2) · Bᵀ, B stored 3×2 row-major: the library computes
        // Cᵀ = B · Aᵀ in column-major terms: transa = T (B's buffer is Bᵀ column-major),
        // transb = N, m = 3, n = 4, k = 2, lda = ldb_user = 2, ldb = lda_user = 2, ldc = 3.
        let call = plan_gemm("blas::gemm", &Gemm::row_major(4, 3, 2).transpose_b(), [8, 6, 12]).unwrap();
        assert_eq!(
            gemm_args(CUBLAS, &call),
            GemmArgs { transa: 1, transb: 0, m: 3, n: 4, k: 2, lda: 2, ldb: 2, ldc: 3 }
        );
        assert_eq!(
            gemm_args(ROCBLAS, &call),
            GemmArgs { transa: 112, transb: 111, m: 3, n: 4, k: 2, lda: 2, ldb: 2, ldc: 3 }
        );
        assert_eq!(call.operands("a", "b"), ("b", "a"));
    }

    #[test]
    fn column_major_gemm_reaches_the_libraries_unchanged() {
        let call =
            plan_gemm("blas::gemm", &Gemm::col_major(5, 6, 7).transpose_a().ldc(9), [35, 42, 54]).unwrap();
        assert_eq!(
            gemm_args(CUBLAS, &call),
            GemmArgs { transa: 1, transb: 0, m: 5, n: 6, k: 7, lda: 7, ldb: 7, ldc: 9 }
        );
        assert_eq!(gemm_args(ROCBLAS, &call).transa, 112);
        assert_eq!(call.operands("a", "b"), ("a", "b"));
    }

    #[test]
    fn gemv_reaches_the_libraries() {
        let call = plan_gemv("blas::gemv", &Gemv::row_major(4, 3), [12, 3, 4]).unwrap();
        assert_eq!(gemv_args(CUBLAS, &call), [1, 3, 4, 3]);
        assert_eq!(gemv_args(ROCBLAS, &call), [112, 3, 4, 3]);
        let call = plan_gemv("blas::gemv", &Gemv::col_major(4, 3).transpose(), [12, 4, 3]).unwrap();
        assert_eq!(gemv_args(CUBLAS, &call), [1, 4, 3, 4]);
        assert_eq!(gemv_args(ROCBLAS, &call), [112, 4, 3, 4]);
    }
}
