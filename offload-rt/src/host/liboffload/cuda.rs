//! The CUDA primary-context fix from our measurements on the H200.
//!
//! liboffload's CUDA plugin sets `CU_CTX_SCHED_BLOCKING_SYNC` on a device's primary context
//! when that context is still inactive, which makes every launch+synchronise cost ~25 µs
//! instead of ~8.5 µs. Retaining the primary context with the default scheduling flags
//! *before* `olInit` keeps CUDA's default behaviour, on par with CUDA C++.

use std::ffi::{c_int, c_uint, c_void};

type CuResult = c_int;
const CU_CTX_SCHED_AUTO: c_uint = 0;

const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: c_int = 75;
const CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: c_int = 76;
const CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN: c_int = 97;
const CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: c_int = 16;
const CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR: c_int = 39;
const CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR: c_int = 106;
const CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR: c_int = 81;
const CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR: c_int = 82;
const CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK: c_int = 111;

/// What the driver tells us of a CUDA device that liboffload 22 does not.
#[derive(Debug, Default)]
pub(crate) struct DriverInfo {
    /// `sm_90`; empty if unknown.
    pub arch: String,
    /// The most dynamic shared memory a block may have (the plugin opts kernels in to it);
    /// 0 if unknown.
    pub max_shared: usize,
    /// The device's memory in bytes; 0 if unknown.
    pub total_memory: usize,
    /// Multiprocessors; 0 if unknown.
    pub multiprocessors: u32,
    /// Threads resident on one multiprocessor at most; 0 if unknown.
    pub threads_per_multiprocessor: u32,
    /// Blocks resident on one multiprocessor at most; 0 if unknown.
    pub blocks_per_multiprocessor: u32,
    /// 32-bit registers of one multiprocessor; 0 if unknown.
    pub registers_per_multiprocessor: u32,
    /// Shared memory of one multiprocessor, in bytes; 0 if unknown.
    pub shared_per_multiprocessor: usize,
    /// Shared memory the driver reserves for each resident block, in bytes.
    pub reserved_shared_per_block: usize,
}

/// Retains every CUDA device's primary context with automatic scheduling and returns what the
/// driver says of each device, by CUDA ordinal. Best effort: a machine without the CUDA driver
/// simply has nothing to fix, so failures come back as a note for `OFFLOAD_DEBUG` and never
/// stop device discovery.
pub(crate) fn retain_primary_contexts() -> Result<Vec<DriverInfo>, String> {
    // SAFETY: loading the CUDA driver library runs its initialisers, which have no
    // preconditions; liboffload loads the same library a moment later.
    let lib = unsafe { libloading::Library::new("libcuda.so.1") }
        .map_err(|e| format!("CUDA driver not loaded: {e}"))?;
    // SAFETY: the signatures are those of the CUDA driver API (cuda.h), stable since CUDA 7.
    let (init, count, get, set_flags, retain, attribute, total_mem) = unsafe {
        (
            *lib.get::<unsafe extern "C" fn(c_uint) -> CuResult>(b"cuInit\0").map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(*mut c_int) -> CuResult>(b"cuDeviceGetCount\0")
                .map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(*mut c_int, c_int) -> CuResult>(b"cuDeviceGet\0")
                .map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(c_int, c_uint) -> CuResult>(b"cuDevicePrimaryCtxSetFlags_v2\0")
                .map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(*mut *mut c_void, c_int) -> CuResult>(
                b"cuDevicePrimaryCtxRetain\0",
            )
            .map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(*mut c_int, c_int, c_int) -> CuResult>(b"cuDeviceGetAttribute\0")
                .map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(*mut usize, c_int) -> CuResult>(b"cuDeviceTotalMem_v2\0")
                .map_err(|e| e.to_string())?,
        )
    };
    // SAFETY: plain driver calls with valid out-pointers.
    unsafe {
        if init(0) != 0 {
            return Err("cuInit failed".into());
        }
        let mut n = 0;
        if count(&mut n) != 0 {
            return Err("cuDeviceGetCount failed".into());
        }
        let mut infos = Vec::new();
        for ordinal in 0..n {
            let mut dev = 0;
            if get(&mut dev, ordinal) != 0 {
                infos.push(DriverInfo::default());
                continue;
            }
            let (mut major, mut minor, mut shared) = (0, 0, 0);
            attribute(&mut major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev);
            attribute(&mut minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev);
            attribute(&mut shared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, dev);
            let (mut sms, mut threads, mut blocks) = (0, 0, 0);
            attribute(&mut sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, dev);
            attribute(&mut threads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR, dev);
            attribute(&mut blocks, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR, dev);
            let (mut regs, mut sm_shared, mut reserved) = (0, 0, 0);
            attribute(&mut regs, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR, dev);
            attribute(&mut sm_shared, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR, dev);
            attribute(&mut reserved, CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK, dev);
            let mut bytes = 0usize;
            if total_mem(&mut bytes, dev) != 0 {
                bytes = 0;
            }
            infos.push(DriverInfo {
                arch: if major > 0 { format!("sm_{major}{minor}") } else { String::new() },
                max_shared: usize::try_from(shared).unwrap_or(0),
                total_memory: bytes,
                multiprocessors: u32::try_from(sms).unwrap_or(0),
                threads_per_multiprocessor: u32::try_from(threads).unwrap_or(0),
                blocks_per_multiprocessor: u32::try_from(blocks).unwrap_or(0),
                registers_per_multiprocessor: u32::try_from(regs).unwrap_or(0),
                shared_per_multiprocessor: usize::try_from(sm_shared).unwrap_or(0),
                reserved_shared_per_block: usize::try_from(reserved).unwrap_or(0),
            });
            // Fails harmlessly if the context is already active with other flags.
            set_flags(dev, CU_CTX_SCHED_AUTO);
            let mut ctx = std::ptr::null_mut();
            retain(&mut ctx, dev);
        }
        // The retained contexts must outlive the process's use of liboffload.
        std::mem::forget(lib);
        Ok(infos)
    }
}

/// Runs `call` with CUDA device `ordinal`'s primary context current on this thread: the
/// driver library (already loaded and initialised by [`retain_primary_contexts`]) is handed to
/// `call` for the symbols it needs; the context is pushed before and popped after, and the
/// retain balanced by a release.
fn in_primary_context<R>(
    ordinal: i32,
    call: impl FnOnce(&libloading::Library) -> Result<R, String>,
) -> Result<R, String> {
    // SAFETY: as in `retain_primary_contexts`; the driver is already loaded and initialised.
    let lib = unsafe { libloading::Library::new("libcuda.so.1") }.map_err(|e| e.to_string())?;
    type Ctx = *mut c_void;
    // SAFETY: the signatures are those of the CUDA driver API (cuda.h), stable since CUDA 7.
    let (get, retain, release, push, pop) = unsafe {
        (
            *lib.get::<unsafe extern "C" fn(*mut c_int, c_int) -> CuResult>(b"cuDeviceGet\0")
                .map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(*mut Ctx, c_int) -> CuResult>(b"cuDevicePrimaryCtxRetain\0")
                .map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(c_int) -> CuResult>(b"cuDevicePrimaryCtxRelease_v2\0")
                .map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(Ctx) -> CuResult>(b"cuCtxPushCurrent_v2\0")
                .map_err(|e| e.to_string())?,
            *lib.get::<unsafe extern "C" fn(*mut Ctx) -> CuResult>(b"cuCtxPopCurrent_v2\0")
                .map_err(|e| e.to_string())?,
        )
    };
    // SAFETY: plain driver calls with valid out-pointers; the context pushed here is popped
    // before returning, and the retain is balanced by the release.
    unsafe {
        let mut dev = 0;
        if get(&mut dev, ordinal) != 0 {
            return Err(format!("cuDeviceGet({ordinal}) failed"));
        }
        let mut ctx = std::ptr::null_mut();
        if retain(&mut ctx, dev) != 0 {
            return Err("cuDevicePrimaryCtxRetain failed".into());
        }
        let result = if push(ctx) == 0 {
            let result = call(&lib);
            let mut popped = std::ptr::null_mut();
            pop(&mut popped);
            result
        } else {
            Err("cuCtxPushCurrent failed".into())
        };
        release(dev);
        result
    }
}

/// Free and total memory of CUDA device `ordinal`, from the driver (`cuMemGetInfo` in the
/// device's primary context).
pub(crate) fn memory_info(ordinal: i32) -> Result<(usize, usize), String> {
    in_primary_context(ordinal, |lib| {
        // SAFETY: the signature is the CUDA driver API's; the out-pointers are valid.
        unsafe {
            let info = *lib
                .get::<unsafe extern "C" fn(*mut usize, *mut usize) -> CuResult>(b"cuMemGetInfo_v2\0")
                .map_err(|e| e.to_string())?;
            let (mut free, mut total) = (0, 0);
            if info(&mut free, &mut total) == 0 {
                Ok((free, total))
            } else {
                Err("cuMemGetInfo failed".into())
            }
        }
    })
}

/// `CU_LIMIT_STACK_SIZE`: the stack of each thread, in bytes.
const CU_LIMIT_STACK_SIZE: c_int = 0;

/// Raises CUDA device `ordinal`'s stack per thread to at least `bytes` (the driver reserves it
/// for every thread the device can hold at once), leaving a larger limit as it is. Returns the
/// limit now in force.
pub(crate) fn raise_stack_limit(ordinal: i32, bytes: usize) -> Result<usize, String> {
    in_primary_context(ordinal, |lib| {
        // SAFETY: the signatures are the CUDA driver API's; the out-pointer is valid.
        unsafe {
            let get = *lib
                .get::<unsafe extern "C" fn(*mut usize, c_int) -> CuResult>(b"cuCtxGetLimit\0")
                .map_err(|e| e.to_string())?;
            let set = *lib
                .get::<unsafe extern "C" fn(c_int, usize) -> CuResult>(b"cuCtxSetLimit\0")
                .map_err(|e| e.to_string())?;
            let mut now = 0;
            if get(&mut now, CU_LIMIT_STACK_SIZE) != 0 {
                return Err("cuCtxGetLimit(CU_LIMIT_STACK_SIZE) failed".into());
            }
            if now >= bytes {
                return Ok(now);
            }
            match set(CU_LIMIT_STACK_SIZE, bytes) {
                0 => Ok(bytes),
                code => {
                    Err(format!("cuCtxSetLimit(CU_LIMIT_STACK_SIZE, {bytes}) failed with CUDA error {code}"))
                }
            }
        }
    })
}
