//! Loading liboffload, finding GPUs, and checked calls that return [`Error`]s.

use super::ffi::{self, Api, ol_device_handle_t, ol_result_t};
use crate::host::error::{Error, Result};
use crate::host::images::{self, Image};
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_void};
use std::sync::atomic::AtomicUsize;
use std::sync::{Mutex, OnceLock};

/// Soname of the library whose API `ffi` declares.
pub(crate) const LIBRARY: &str = "libLLVMOffload.so.22.1";
const FALLBACK_PATHS: [&str; 2] =
    ["/usr/lib/llvm-22/lib/libLLVMOffload.so.22.1", "/usr/lib/x86_64-linux-gnu/libLLVMOffload.so.22.1"];

/// Which GPU vendor's plugin drives a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Vendor {
    Nvidia,
    Amd,
}

/// A GPU that liboffload found.
#[derive(Debug)]
pub(crate) struct Gpu {
    pub handle: ol_device_handle_t,
    pub vendor: Vendor,
    /// Product name, e.g. "NVIDIA H200".
    pub name: String,
    /// Architecture, e.g. "sm_90" or "gfx90a"; empty when the plugin did not say.
    pub arch: String,
    /// The first failure that left the device unusable.
    pub poison: Mutex<Option<Error>>,
    /// Whether `poison` holds a failure: lets the common case skip the lock.
    pub poisoned: std::sync::atomic::AtomicBool,
    /// Loaded program and kernel handles, created on first launch.
    pub program: Mutex<Option<LoadedProgram>>,
    /// The CUDA device ordinal (NVIDIA only), for driver queries.
    pub cuda_ordinal: Option<i32>,
    /// Bytes of device memory this process holds on the device through the runtime.
    pub allocated: AtomicUsize,
    /// The most shared memory a block may have.
    pub max_shared: usize,
    /// The device's memory in bytes, when the driver says (NVIDIA).
    pub total_memory: Option<usize>,
    /// Multiprocessors (NVIDIA) or compute units (AMD); 0 if neither liboffload nor the
    /// driver said.
    pub multiprocessors: u32,
    /// Threads resident on one multiprocessor at most.
    pub threads_per_multiprocessor: u32,
    /// Blocks resident on one multiprocessor at most.
    pub blocks_per_multiprocessor: u32,
    /// Threads a block may have at most.
    pub max_block_threads: u32,
    /// 32-bit registers of one multiprocessor (0: unknown).
    pub registers_per_multiprocessor: u32,
    /// Shared memory of one multiprocessor, in bytes (0: unknown).
    pub shared_per_multiprocessor: usize,
    /// Shared memory the driver sets aside for each resident block (NVIDIA: 1 KiB since sm_80).
    pub reserved_shared_per_block: usize,
}

#[derive(Debug)]
pub(crate) struct LoadedProgram {
    pub handle: ffi::ol_program_handle_t,
    pub arch: String,
    pub kernels: HashMap<&'static str, ffi::ol_symbol_handle_t>,
    /// Where a panicking thread records its panic's site (`None`: the image records none).
    pub trap_record: Option<super::trap_record::TrapRecord>,
}

/// The loaded library and the devices it found; lives for the rest of the process (device
/// handles stay valid until `olShutDown`, which we never call).
pub(crate) struct Runtime {
    pub api: Api,
    pub host: ol_device_handle_t,
    pub gpus: Vec<Gpu>,
    pub library: String,
}

// SAFETY: liboffload's handles are plain identifiers usable from any thread; the library
// serialises its own internal state. Mutable per-device state sits behind mutexes.
unsafe impl Send for Runtime {}
// SAFETY: as above.
unsafe impl Sync for Runtime {}
// SAFETY: as above: handles are identifiers, the mutable parts are in mutexes.
unsafe impl Send for Gpu {}
// SAFETY: as above.
unsafe impl Sync for Gpu {}
// SAFETY: program and symbol handles are identifiers valid on any thread.
unsafe impl Send for LoadedProgram {}

impl Runtime {
    /// Turns a liboffload result into an [`Error`] naming the call. Inline: success (null) is
    /// every call's common case, and the check is on the path of every launch.
    #[inline]
    pub fn check(&self, call: &'static str, result: ol_result_t) -> Result<()> {
        if result.is_null() { Ok(()) } else { Err(Self::error(call, result)) }
    }

    /// The [`Error`] of a liboffload call that failed with the non-null `result`.
    #[cold]
    #[inline(never)]
    fn error(call: &'static str, result: ol_result_t) -> Error {
        // SAFETY: a non-null result points to an error struct the library keeps alive for the
        // whole process; `details` is null or a NUL-terminated string.
        let (code, details) = unsafe {
            let e = &*result;
            let details = if e.details.is_null() {
                String::new()
            } else {
                CStr::from_ptr(e.details).to_string_lossy().into_owned()
            };
            (e.code, details)
        };
        let code = ffi::ERRC_NAMES.get(code as usize).copied().unwrap_or("UNKNOWN_CODE");
        Error::Offload { call, code, details }
    }

    fn device_string(&self, dev: ol_device_handle_t, prop: u32) -> Option<String> {
        let mut size = 0usize;
        // SAFETY: valid device handle and out-pointer.
        self.check("olGetDeviceInfoSize", unsafe { (self.api.olGetDeviceInfoSize)(dev, prop, &mut size) })
            .ok()?;
        let mut buf = vec![0u8; size.max(1)];
        // SAFETY: `buf` holds `size` writable bytes, as the library asked for.
        self.check("olGetDeviceInfo", unsafe {
            (self.api.olGetDeviceInfo)(dev, prop, buf.len(), buf.as_mut_ptr().cast())
        })
        .ok()?;
        let s = CStr::from_bytes_until_nul(&buf).ok()?.to_string_lossy().trim().to_owned();
        Some(s)
    }

    /// A `uint32_t` property of a device, if the plugin reports it.
    fn device_u32(&self, dev: ol_device_handle_t, prop: u32) -> Option<u32> {
        let mut value = 0u32;
        // SAFETY: the property is a `uint32_t` (OffloadAPI.h), written to `value`.
        self.check("olGetDeviceInfo", unsafe {
            (self.api.olGetDeviceInfo)(dev, prop, size_of::<u32>(), (&raw mut value).cast())
        })
        .ok()?;
        Some(value)
    }

    fn backend(&self, dev: ol_device_handle_t) -> Result<u32> {
        let mut platform: ffi::ol_platform_handle_t = std::ptr::null_mut();
        // SAFETY: the property is a platform handle, pointer-sized, written to `platform`.
        self.check("olGetDeviceInfo(PLATFORM)", unsafe {
            (self.api.olGetDeviceInfo)(
                dev,
                ffi::OL_DEVICE_INFO_PLATFORM,
                size_of::<ffi::ol_platform_handle_t>(),
                (&raw mut platform).cast(),
            )
        })?;
        let mut backend = 0u32;
        // SAFETY: the property is an `ol_platform_backend_t`, a 32-bit enum.
        self.check("olGetPlatformInfo(BACKEND)", unsafe {
            (self.api.olGetPlatformInfo)(
                platform,
                ffi::OL_PLATFORM_INFO_BACKEND,
                4,
                (&raw mut backend).cast(),
            )
        })?;
        Ok(backend)
    }
}

/// Why the loader refused a library: its own message (libloading's is only "dlopen failed";
/// the reason, such as a missing dependency, is its source).
fn loader_error(e: &libloading::Error) -> String {
    std::error::Error::source(e).map_or_else(|| e.to_string(), ToString::to_string)
}

fn open_library() -> Result<(libloading::Library, String)> {
    let missing = |reason: String| Error::LibraryMissing { reason };
    if let Some(path) = crate::host::config::config().library.clone() {
        let path = std::path::PathBuf::from(path);
        let shown = path.display().to_string();
        if !shown.contains(".so.22") {
            return Err(missing(format!(
                "OFFLOAD_LIBRARY={shown} is not LLVM 22's {LIBRARY}; this runtime speaks only the LLVM 22 liboffload API, which later majors change"
            )));
        }
        // SAFETY: loading liboffload runs its initialisers, which have no preconditions.
        return unsafe { libloading::Library::new(&path) }
            .map(|l| (l, shown.clone()))
            .map_err(|e| missing(format!("OFFLOAD_LIBRARY={shown}: {}", loader_error(&e))));
    }
    let mut tried = Vec::new();
    for candidate in std::iter::once(LIBRARY).chain(FALLBACK_PATHS) {
        // SAFETY: as above.
        match unsafe { libloading::Library::new(candidate) } {
            Ok(lib) => return Ok((lib, candidate.to_owned())),
            // The loader's own words name the file (and a missing dependency).
            Err(e) => tried.push(loader_error(&e)),
        }
    }
    Err(missing(format!("not found ({})", tried.join("; "))))
}

unsafe extern "C" fn collect_device(dev: ol_device_handle_t, user: *mut c_void) -> bool {
    // SAFETY: `user` is the `Vec` that `load` passes to olIterateDevices, alive for the call.
    let devices = unsafe { &mut *user.cast::<Vec<ol_device_handle_t>>() };
    devices.push(dev);
    true
}

fn load() -> Result<Runtime> {
    let debug = crate::host::config::config().debug;
    let (lib, library) = open_library()?;
    // SAFETY: `open_library` only returns LLVM 22's liboffload, whose API `ffi` declares.
    let api = unsafe { Api::load(lib) }.map_err(|reason| Error::LibraryMissing { reason })?;
    let cuda = super::cuda::retain_primary_contexts();
    if debug {
        eprintln!("offload: CUDA primary contexts retained: {cuda:?}");
    }
    let mut cuda_devices = cuda.unwrap_or_default().into_iter().zip(0..);
    let mut rt = Runtime { api, host: std::ptr::null_mut(), gpus: Vec::new(), library };
    // SAFETY: no preconditions; called once per process (guarded by `runtime`'s OnceLock).
    rt.check("olInit", unsafe { (rt.api.olInit)() })?;
    let mut handles: Vec<ol_device_handle_t> = Vec::new();
    // SAFETY: the callback only pushes into `handles`, which outlives the call.
    rt.check("olIterateDevices", unsafe {
        (rt.api.olIterateDevices)(collect_device, (&raw mut handles).cast())
    })?;
    for handle in handles {
        let vendor = match rt.backend(handle)? {
            ffi::OL_PLATFORM_BACKEND_HOST => {
                rt.host = handle;
                continue;
            }
            ffi::OL_PLATFORM_BACKEND_CUDA => Vendor::Nvidia,
            ffi::OL_PLATFORM_BACKEND_AMDGPU => Vendor::Amd,
            _ => continue,
        };
        let name = rt.device_string(handle, ffi::OL_DEVICE_INFO_NAME).unwrap_or_default();
        let product = rt.device_string(handle, ffi::OL_DEVICE_INFO_PRODUCT_NAME).unwrap_or_default();
        if debug {
            eprintln!("offload: liboffload device: name={name:?} product={product:?}");
        }
        let mut arch = offload_wire::images::arch_in(&[&name, &product]);
        let mut cuda_ordinal = None;
        // AMD: 64 KiB of LDS per workgroup on CDNA. NVIDIA: what the driver says, else the most
        // any supported GPU allows (a launch beyond the real limit then fails in the driver).
        let mut max_shared =
            if vendor == Vendor::Amd { 64 << 10 } else { crate::host::launch::MAX_SHARED_BYTES };
        let mut total_memory = None;
        let mut multiprocessors = rt.device_u32(handle, ffi::OL_DEVICE_INFO_NUM_COMPUTE_UNITS).unwrap_or(0);
        let max_block_threads =
            rt.device_u32(handle, ffi::OL_DEVICE_INFO_MAX_WORK_GROUP_SIZE).filter(|&t| t > 0).unwrap_or(1024);
        // What liboffload 22 does not report: from the CUDA driver on NVIDIA; on AMD CDNA a
        // compute unit holds 32 wavefronts of 64 lanes and at most 32 workgroups.
        let (mut threads_per_multiprocessor, mut blocks_per_multiprocessor) = (2048, 32);
        // AMD CDNA: 64 KiB of LDS per compute unit; registers per lane are counted differently
        // (VGPRs per SIMD) and not modelled: 0, unknown.
        let (mut registers_per_multiprocessor, mut shared_per_multiprocessor, mut reserved_shared_per_block) =
            if vendor == Vendor::Amd { (0, 64 << 10, 0) } else { (0, 0, 0) };
        if vendor == Vendor::Nvidia {
            // liboffload enumerates CUDA devices in ordinal order.
            if let Some((from_driver, ordinal)) = cuda_devices.next() {
                cuda_ordinal = Some(ordinal);
                if arch.is_empty() {
                    arch = from_driver.arch;
                }
                if from_driver.max_shared > 0 {
                    max_shared = from_driver.max_shared;
                }
                total_memory = Some(from_driver.total_memory).filter(|&b| b > 0);
                if from_driver.multiprocessors > 0 {
                    multiprocessors = from_driver.multiprocessors;
                }
                if from_driver.threads_per_multiprocessor > 0 {
                    threads_per_multiprocessor = from_driver.threads_per_multiprocessor;
                }
                if from_driver.blocks_per_multiprocessor > 0 {
                    blocks_per_multiprocessor = from_driver.blocks_per_multiprocessor;
                }
                registers_per_multiprocessor = from_driver.registers_per_multiprocessor;
                shared_per_multiprocessor = from_driver.shared_per_multiprocessor;
                reserved_shared_per_block = from_driver.reserved_shared_per_block;
            }
        }
        let shown = if product.is_empty() || product == arch { name.clone() } else { product.clone() };
        rt.gpus.push(Gpu {
            handle,
            vendor,
            name: shown,
            arch,
            poison: Mutex::new(None),
            poisoned: std::sync::atomic::AtomicBool::new(false),
            program: Mutex::new(None),
            cuda_ordinal,
            allocated: AtomicUsize::new(0),
            max_shared,
            total_memory,
            multiprocessors,
            threads_per_multiprocessor,
            blocks_per_multiprocessor,
            max_block_threads,
            registers_per_multiprocessor,
            shared_per_multiprocessor,
            reserved_shared_per_block,
        });
    }
    if rt.host.is_null() && !rt.gpus.is_empty() {
        return Err(Error::NoGpu { reason: "liboffload reported no host device for copies".into() });
    }
    Ok(rt)
}

/// The process-wide runtime, loaded on first use.
pub(crate) fn runtime() -> Result<&'static Runtime> {
    static RUNTIME: OnceLock<Result<Runtime>> = OnceLock::new();
    RUNTIME.get_or_init(load).as_ref().map_err(Clone::clone)
}

impl Gpu {
    /// Fails fast with the first failure once one has poisoned the device.
    pub fn check_poison(&self) -> Result<()> {
        if !self.poisoned.load(std::sync::atomic::Ordering::Acquire) {
            return Ok(());
        }
        match &*self.poison.lock().unwrap_or_else(|e| e.into_inner()) {
            None => Ok(()),
            Some(cause) => Err(Error::Poisoned { device: self.name.clone(), cause: Box::new(cause.clone()) }),
        }
    }

    /// Records `error` as the device's first failure and returns it.
    pub fn poison(&self, error: Error) -> Error {
        let mut slot = self.poison.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert_with(|| error.clone());
        self.poisoned.store(true, std::sync::atomic::Ordering::Release);
        error
    }

    /// The handle of `kernel` (an entry-point symbol), loading the program on first use.
    pub fn kernel(
        &'static self,
        rt: &Runtime,
        symbol: &'static str,
        path: &str,
    ) -> Result<ffi::ol_symbol_handle_t> {
        let mut slot = self.program.lock().unwrap_or_else(|e| e.into_inner());
        if slot.is_none() {
            *slot = Some(self.load_program(rt)?);
        }
        let program = slot.as_mut().expect("loaded above");
        if let Some(&k) = program.kernels.get(symbol) {
            return Ok(k);
        }
        let name = CString::new(symbol).expect("symbol names have no NUL");
        let mut handle = std::ptr::null_mut();
        // SAFETY: valid program handle, NUL-terminated name, valid out-pointer.
        let found = rt.check("olGetSymbol", unsafe {
            (rt.api.olGetSymbol)(program.handle, name.as_ptr(), ffi::OL_SYMBOL_KIND_KERNEL, &mut handle)
        });
        if found.is_err() {
            return Err(Error::KernelMissing { kernel: path.to_owned(), arch: program.arch.clone() });
        }
        program.kernels.insert(symbol, handle);
        Ok(handle)
    }

    /// The embedded image this GPU should run: see [`images::select`].
    pub fn image(&self) -> Result<Image<'static>> {
        let no_image = |available: String| Error::NoImage {
            device: self.name.clone(),
            arch: if self.arch.is_empty() { "unknown architecture".into() } else { self.arch.clone() },
            available,
        };
        let Some(container) = images::embedded() else {
            return Err(no_image(
                "no images: it was built with plain `cargo build`, not `cargo offload build`".into(),
            ));
        };
        let all = images::parse(container).map_err(|e| Error::BadImages(e.to_string()))?;
        let prefix = match self.vendor {
            Vendor::Nvidia => "nvptx",
            Vendor::Amd => "amdgcn",
        };
        let candidates: Vec<Image<'static>> =
            all.iter().filter(|i| i.target.starts_with(prefix)).cloned().collect();
        images::select(&candidates, &self.arch)
            .or_else(|| {
                // An NVIDIA GPU of unknown architecture still JITs the newest PTX we carry.
                let unknown_nvidia = self.arch.is_empty() && self.vendor == Vendor::Nvidia;
                candidates.iter().rev().find(|i| unknown_nvidia && i.kind == images::ImageKind::Ptx)
            })
            .cloned()
            .ok_or_else(|| no_image(images::describe(&all)))
    }

    /// The registers and static shared memory of kernel `symbol` in the image this device
    /// runs, where the image records them (an NVIDIA cubin); `None` otherwise (PTX for the
    /// driver to compile, AMD code objects, which are not read yet).
    pub fn kernel_resources(&self, symbol: &str) -> Option<offload_wire::cubin::KernelResources> {
        let image = self.image().ok()?;
        if image.kind != images::ImageKind::Cubin {
            return None;
        }
        offload_wire::cubin::kernel_resources(image.data, symbol).ok().flatten()
    }

    /// Where and why a kernel panicked, when a thread of the loaded image recorded it before
    /// trapping.
    pub fn device_panic(&self) -> Option<crate::host::error::DevicePanic> {
        let program = self.program.lock().unwrap_or_else(|e| e.into_inner());
        let record = program.as_ref()?.trap_record.as_ref()?;
        record.read(&self.image().ok()?.sites)
    }

    fn load_program(&'static self, rt: &Runtime) -> Result<LoadedProgram> {
        let image = self.image()?;
        if crate::host::config::config().debug {
            eprintln!(
                "offload: loading {} {} ({} bytes) on {}",
                image.kind,
                image.arch,
                image.data.len(),
                self.name
            );
        }
        // Kernels whose stack the driver cannot size (calls through function pointers, as
        // `core::fmt` makes them) get the bound the build computed, before any of them runs.
        if let (Some(ordinal), true) = (self.cuda_ordinal, image.stack_bytes > 0) {
            let bytes = image.stack_bytes as usize;
            let now = super::cuda::raise_stack_limit(ordinal, bytes).map_err(|reason| Error::OutOfMemory {
                what: format!("a stack of {bytes} bytes per thread on {} (its kernels call functions whose depth only the build knows)", self.name),
                request: reason,
            })?;
            if crate::host::config::config().debug {
                eprintln!(
                    "offload: stack per thread on {}: {now} bytes (the image needs up to {bytes})",
                    self.name
                );
            }
        }
        let mut handle = std::ptr::null_mut();
        // SAFETY: the data is a complete image that lives for the whole program (it is part of
        // the executable's read-only data); the out-pointer is valid.
        rt.check("olCreateProgram", unsafe {
            (rt.api.olCreateProgram)(self.handle, image.data.as_ptr().cast(), image.data.len(), &mut handle)
        })?;
        // (Only an image built to record panic sites has a use for the record.)
        let trap_record = if image.sites.is_empty() {
            None
        } else {
            super::trap_record::TrapRecord::install(rt, self, handle)
        };
        Ok(LoadedProgram { handle, arch: image.arch.to_owned(), kernels: HashMap::new(), trap_record })
    }
}
