//! A stand-in for LLVM 22's liboffload (`libLLVMOffload.so.22.1`) that runs no kernels.
//!
//! It reports one NVIDIA device (`sm_90`) beside the host device. Its "device memory" is host
//! memory, copies are `memcpy`, and a launch only counts itself and checks its arguments'
//! shape. With `OFFLOAD_LIBRARY` pointing at this library under liboffload's file name, an
//! executable built for sm_90 takes the runtime's whole GPU host path (argument packing,
//! small-argument arenas, copies, queue bookkeeping) on a machine without a GPU:
//!
//! - the runtime's own cost per launch, without the driver's or liboffload's
//!   (`scripts/lib/launch-overhead.sh`);
//! - tests of that path in CI (its results are not a kernel's: outputs keep what was copied
//!   in).
//!
//! With `NULL_OFFLOAD_TRAP=N` (a positive number) the process's `N`th launch and every later
//! one "traps" (`1`: every launch): like a CUDA context after a kernel fault, every later wait
//! or copy fails, so the runtime's error path (the kernel named, the device poisoned) can be
//! tested too.
//!
//! With `NULL_OFFLOAD_DEFER=1` copies and fills queued on a queue happen only when that queue
//! (or an event recorded on it) is waited for, as late as a real device may do them: a runtime
//! that let host memory change, or be freed, before waiting on the queue that holds its copy
//! shows it in the data.
//!
//! With `NULL_OFFLOAD_LOG=1` every call that queues, waits or allocates prints one line to
//! standard error (its name and the arguments that shape the work: sizes, launch geometry,
//! argument bytes), so two builds' call sequences can be compared line by line.
//!
//! Only the entry points the runtime declares (`offload-rt/src/host/liboffload/ffi.rs`)
//! exist, with LLVM 22.1's signatures.
#![allow(non_snake_case, reason = "C names of the liboffload API")]

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ffi::{c_char, c_void};
use std::ptr::null;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// `ol_error_struct_t`.
#[repr(C)]
#[derive(Debug)]
pub struct Error {
    code: u32,
    details: *const c_char,
}

// SAFETY: the errors are immutable statics; `details` points at static NUL-terminated text.
unsafe impl Sync for Error {}

type Result = *const Error;

const OK: Result = null();
// `ol_errc_t` codes: INVALID_NULL_POINTER 4, INVALID_ARGUMENT 5, OUT_OF_RESOURCES 7,
// INVALID_ENUMERATION 9.
static NULL_POINTER: Error = Error { code: 4, details: c"null pointer".as_ptr() };
static BAD_ARGUMENT: Error = Error { code: 5, details: c"invalid argument".as_ptr() };
static NO_MEMORY: Error = Error { code: 7, details: c"out of host memory".as_ptr() };
// BACKEND_FAILURE 17, as liboffload reports a fault of the device.
static TRAPPED_ERROR: Error =
    Error { code: 17, details: c"illegal instruction (a kernel trapped: NULL_OFFLOAD_TRAP is set)".as_ptr() };
static BAD_ENUM: Error = Error { code: 9, details: c"property not provided by the null liboffload".as_ptr() };

/// Handles: addresses of distinct statics (never dereferenced by the runtime; distinct values,
/// so that no optimisation could fold two into one address).
static HOST_DEVICE: u8 = 1;
static GPU_DEVICE: u8 = 2;
static HOST_PLATFORM: u8 = 3;
static CUDA_PLATFORM: u8 = 4;
static PROGRAM: u8 = 6;
static SYMBOL: u8 = 7;

fn handle(of: &'static u8) -> *mut c_void {
    (of as *const u8).cast_mut().cast()
}

/// Whether the process's `launch`th launch (from 1) traps (`NULL_OFFLOAD_TRAP=N`: the `N`th
/// and every later one).
fn traps(launch: u64) -> bool {
    static FIRST: OnceLock<Option<u64>> = OnceLock::new();
    let first = FIRST.get_or_init(|| {
        std::env::var("NULL_OFFLOAD_TRAP").ok().and_then(|v| v.parse().ok()).filter(|&n| n > 0)
    });
    first.is_some_and(|n| launch >= n)
}

/// Whether the environment variable `name` is `1`, read once into `cell`.
fn switch(cell: &OnceLock<bool>, name: &str) -> bool {
    *cell.get_or_init(|| std::env::var(name).is_ok_and(|v| v == "1"))
}

/// Whether calls are logged to standard error (`NULL_OFFLOAD_LOG=1`).
fn logs() -> bool {
    static LOGS: OnceLock<bool> = OnceLock::new();
    switch(&LOGS, "NULL_OFFLOAD_LOG")
}

/// One line of the call log, when it is on.
macro_rules! log {
    ($($arg:tt)*) => {
        if logs() {
            eprintln!("null-liboffload: {}", format_args!($($arg)*));
        }
    };
}

/// Set by the first launch when launches trap; from then on every wait and copy fails.
static TRAPPED: AtomicBool = AtomicBool::new(false);

/// The sticky error of a trapped "kernel", or success.
fn fault() -> Result {
    if TRAPPED.load(Ordering::Relaxed) { &TRAPPED_ERROR } else { OK }
}

/// Whether queued copies and fills wait for their queue (`NULL_OFFLOAD_DEFER=1`).
fn defers() -> bool {
    static DEFERS: OnceLock<bool> = OnceLock::new();
    switch(&DEFERS, "NULL_OFFLOAD_DEFER")
}

/// A queue: the copies and fills waiting for it (with `NULL_OFFLOAD_DEFER=1`). Its handle is
/// a leaked box; events recorded on it are the same handle.
#[derive(Default)]
struct Queue {
    pending: std::sync::Mutex<Vec<Op>>,
}

/// Addresses as integers: the runtime keeps the memory valid until it waits on the queue.
enum Op {
    Copy { dst: usize, src: usize, size: usize },
    Fill { dst: usize, pattern: Vec<u8>, size: usize },
}

impl Op {
    /// # Safety
    ///
    /// The memory the op names must still be valid.
    unsafe fn run(&self) {
        match self {
            // SAFETY: the caller's contract; `copy` allows overlap.
            Op::Copy { dst, src, size } => unsafe {
                std::ptr::copy(*src as *const u8, *dst as *mut u8, *size)
            },
            Op::Fill { dst, pattern, size } => {
                // SAFETY: the caller's contract.
                let out = unsafe { std::slice::from_raw_parts_mut(*dst as *mut u8, *size) };
                for chunk in out.chunks_exact_mut(pattern.len()) {
                    chunk.copy_from_slice(pattern);
                }
            }
        }
    }
}

/// Runs `op` now, or when `queue` is waited for.
///
/// # Safety
///
/// `queue` is null or a handle from [`olCreateQueue`]; the op's memory is valid now, or
/// until the queue is waited for when deferred.
unsafe fn submit(queue: *mut c_void, op: Op) {
    if defers() && !queue.is_null() {
        // SAFETY: the caller's contract: a live queue.
        let q = unsafe { &*queue.cast::<Queue>() };
        q.pending.lock().unwrap_or_else(|e| e.into_inner()).push(op);
    } else {
        // SAFETY: the caller's contract.
        unsafe { op.run() };
    }
}

/// Runs what waits for `queue`.
///
/// # Safety
///
/// As for [`submit`].
unsafe fn flush(queue: *mut c_void) {
    if queue.is_null() {
        return;
    }
    // SAFETY: the caller's contract: a live queue.
    let q = unsafe { &*queue.cast::<Queue>() };
    let ops = std::mem::take(&mut *q.pending.lock().unwrap_or_else(|e| e.into_inner()));
    for op in ops {
        // SAFETY: the runtime keeps the memory valid until it waits for the queue.
        unsafe { op.run() };
    }
}

/// Launches so far (read by [`nullOffloadLaunches`]).
static LAUNCHES: AtomicU64 = AtomicU64::new(0);

/// The "device" memory reported: 80 GB, as an H100.
const GLOBAL_MEM: u64 = 80 << 30;
/// Alignment of allocations, as a GPU allocator's; the header before each block keeps its
/// size for `olMemFree`.
const ALIGN: usize = 256;

// The property numbers of `ol_device_info_t` and `ol_platform_info_t`, and the backends.
const DEVICE_INFO_PLATFORM: u32 = 1;
const DEVICE_INFO_NAME: u32 = 2;
const DEVICE_INFO_PRODUCT_NAME: u32 = 3;
const DEVICE_INFO_GLOBAL_MEM_SIZE: u32 = 17;
const PLATFORM_INFO_BACKEND: u32 = 3;
const BACKEND_CUDA: u32 = 1;
const BACKEND_HOST: u32 = 4;

#[unsafe(no_mangle)]
pub extern "C" fn olInit() -> Result {
    OK
}

/// Calls `callback` for the host device, then the fake GPU.
///
/// # Safety
///
/// `callback` must be callable with these handles and `user`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olIterateDevices(
    callback: unsafe extern "C" fn(*mut c_void, *mut c_void) -> bool,
    user: *mut c_void,
) -> Result {
    for device in [&HOST_DEVICE, &GPU_DEVICE] {
        // SAFETY: the caller's contract.
        if !unsafe { callback(handle(device), user) } {
            break;
        }
    }
    OK
}

/// A device string property, with its NUL.
fn device_string(device: *mut c_void, prop: u32) -> Option<&'static [u8]> {
    let gpu = device == handle(&GPU_DEVICE);
    match prop {
        DEVICE_INFO_NAME if gpu => Some(b"sm_90\0"),
        DEVICE_INFO_PRODUCT_NAME if gpu => Some(b"null liboffload device (runs no kernels)\0"),
        DEVICE_INFO_NAME | DEVICE_INFO_PRODUCT_NAME => Some(b"host\0"),
        _ => None,
    }
}

/// Copies `value` to `out` if `size` holds it.
///
/// # Safety
///
/// `out` must be valid for writes of `size` bytes.
unsafe fn answer(value: &[u8], size: usize, out: *mut c_void) -> Result {
    if out.is_null() {
        return &NULL_POINTER;
    }
    if size < value.len() {
        return &BAD_ARGUMENT;
    }
    // SAFETY: `out` holds `size >= value.len()` bytes (the caller's contract).
    unsafe { std::ptr::copy_nonoverlapping(value.as_ptr(), out.cast(), value.len()) };
    OK
}

/// # Safety
///
/// `out` must be valid for writes of `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olGetDeviceInfo(
    device: *mut c_void,
    prop: u32,
    size: usize,
    out: *mut c_void,
) -> Result {
    let platform = if device == handle(&GPU_DEVICE) { &CUDA_PLATFORM } else { &HOST_PLATFORM };
    let value: &[u8] = match prop {
        DEVICE_INFO_PLATFORM => &(handle(platform) as usize).to_ne_bytes(),
        DEVICE_INFO_GLOBAL_MEM_SIZE => &GLOBAL_MEM.to_ne_bytes(),
        _ => match device_string(device, prop) {
            Some(s) => s,
            None => return &BAD_ENUM,
        },
    };
    // SAFETY: the caller's contract.
    unsafe { answer(value, size, out) }
}

/// # Safety
///
/// `size` must be valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olGetDeviceInfoSize(device: *mut c_void, prop: u32, size: *mut usize) -> Result {
    let bytes = match prop {
        DEVICE_INFO_PLATFORM => size_of::<usize>(),
        DEVICE_INFO_GLOBAL_MEM_SIZE => 8,
        _ => match device_string(device, prop) {
            Some(s) => s.len(),
            None => return &BAD_ENUM,
        },
    };
    if size.is_null() {
        return &NULL_POINTER;
    }
    // SAFETY: the caller's contract.
    unsafe { size.write(bytes) };
    OK
}

/// # Safety
///
/// `out` must be valid for writes of `size` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olGetPlatformInfo(
    platform: *mut c_void,
    prop: u32,
    size: usize,
    out: *mut c_void,
) -> Result {
    if prop != PLATFORM_INFO_BACKEND {
        return &BAD_ENUM;
    }
    let backend = if platform == handle(&CUDA_PLATFORM) { BACKEND_CUDA } else { BACKEND_HOST };
    // SAFETY: the caller's contract.
    unsafe { answer(&backend.to_ne_bytes(), size, out) }
}

/// Writes `value` to an out-parameter.
///
/// # Safety
///
/// `out` must be null or valid for a write.
unsafe fn give(out: *mut *mut c_void, value: *mut c_void) -> Result {
    if out.is_null() {
        return &NULL_POINTER;
    }
    // SAFETY: the caller's contract.
    unsafe { out.write(value) };
    OK
}

/// # Safety
///
/// `queue` must be valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olCreateQueue(_device: *mut c_void, queue: *mut *mut c_void) -> Result {
    log!("olCreateQueue");
    // SAFETY: the caller's contract.
    unsafe { give(queue, Box::into_raw(Box::<Queue>::default()).cast()) }
}

/// Runs what still waits and frees the queue.
///
/// # Safety
///
/// `queue` comes from [`olCreateQueue`] and is not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olDestroyQueue(queue: *mut c_void) -> Result {
    if queue.is_null() {
        return &NULL_POINTER;
    }
    // SAFETY: the caller's contract; after the flush nothing refers to the box.
    unsafe {
        flush(queue);
        drop(Box::from_raw(queue.cast::<Queue>()));
    }
    OK
}

/// Runs what waits for the queue (or fails, after a launch trapped).
///
/// # Safety
///
/// `queue` comes from [`olCreateQueue`].
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olSyncQueue(queue: *mut c_void) -> Result {
    log!("olSyncQueue");
    // SAFETY: the caller's contract.
    unsafe { sync(queue) }
}

/// [`olSyncQueue`] without its log line (an event's wait logs its own).
///
/// # Safety
///
/// As for [`olSyncQueue`].
unsafe fn sync(queue: *mut c_void) -> Result {
    let trapped = fault();
    if !trapped.is_null() {
        return trapped;
    }
    // SAFETY: the caller's contract.
    unsafe { flush(queue) };
    OK
}

/// Accepts any image.
///
/// # Safety
///
/// `program` must be valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olCreateProgram(
    _device: *mut c_void,
    image: *const c_void,
    size: usize,
    program: *mut *mut c_void,
) -> Result {
    if image.is_null() || size == 0 {
        return &BAD_ARGUMENT;
    }
    // SAFETY: the caller's contract.
    unsafe { give(program, handle(&PROGRAM)) }
}

#[unsafe(no_mangle)]
pub extern "C" fn olDestroyProgram(_program: *mut c_void) -> Result {
    OK
}

/// Finds every name (and logs it, with `NULL_OFFLOAD_LOG`).
///
/// # Safety
///
/// `symbol` must be valid for a write; `name`, when not null, a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olGetSymbol(
    _program: *mut c_void,
    name: *const c_char,
    _kind: u32,
    symbol: *mut *mut c_void,
) -> Result {
    if name.is_null() {
        return &NULL_POINTER;
    }
    // SAFETY: liboffload's contract: a non-null `name` is a NUL-terminated string.
    log!("olGetSymbol {}", unsafe { std::ffi::CStr::from_ptr(name) }.to_string_lossy());
    // SAFETY: the caller's contract.
    unsafe { give(symbol, handle(&SYMBOL)) }
}

/// Symbol properties are not provided (the runtime then records no panic sites).
#[unsafe(no_mangle)]
pub extern "C" fn olGetSymbolInfo(
    _symbol: *mut c_void,
    _prop: u32,
    _size: usize,
    _value: *mut c_void,
) -> Result {
    &BAD_ENUM
}

/// Host memory, zeroed, `ALIGN`-aligned, with its size in the header before it.
///
/// # Safety
///
/// `out` must be valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olMemAlloc(
    _device: *mut c_void,
    kind: u32,
    size: usize,
    out: *mut *mut c_void,
) -> Result {
    log!("olMemAlloc kind={kind} size={size}");
    let Some(total) = size.checked_add(ALIGN) else { return &NO_MEMORY };
    let Ok(layout) = Layout::from_size_align(total, ALIGN) else { return &NO_MEMORY };
    // SAFETY: `layout` has a non-zero size.
    let base = unsafe { alloc_zeroed(layout) };
    if base.is_null() {
        return &NO_MEMORY;
    }
    // SAFETY: the block holds `ALIGN >= size_of::<usize>()` header bytes, aligned for a usize;
    // the caller's contract covers `out`.
    unsafe {
        base.cast::<usize>().write(size);
        give(out, base.add(ALIGN).cast())
    }
}

/// # Safety
///
/// `ptr` must come from [`olMemAlloc`] and not have been freed.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olMemFree(ptr: *mut c_void) -> Result {
    log!("olMemFree");
    if ptr.is_null() {
        return &NULL_POINTER;
    }
    // SAFETY: `olMemAlloc` put the block's size `ALIGN` bytes before `ptr`, and the layout
    // below is the one it allocated with.
    unsafe {
        let base = ptr.cast::<u8>().sub(ALIGN);
        let size = base.cast::<usize>().read();
        dealloc(base, Layout::from_size_align_unchecked(size + ALIGN, ALIGN));
    }
    OK
}

/// # Safety
///
/// `dst` and `src` must be valid for `size` bytes (all memory here is host memory).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olMemcpy(
    queue: *mut c_void,
    dst: *mut c_void,
    _dst_device: *mut c_void,
    src: *const c_void,
    _src_device: *mut c_void,
    size: usize,
) -> Result {
    log!("olMemcpy size={size}");
    let trapped = fault();
    if !trapped.is_null() {
        return trapped;
    }
    if size == 0 {
        return OK;
    }
    if dst.is_null() || src.is_null() {
        return &NULL_POINTER;
    }
    // SAFETY: the caller's contract (valid until the queue is waited for).
    unsafe { submit(queue, Op::Copy { dst: dst as usize, src: src as usize, size }) };
    OK
}

/// # Safety
///
/// `ptr` must be valid for `size` bytes and `pattern` for `pattern_size`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olMemFill(
    queue: *mut c_void,
    ptr: *mut c_void,
    pattern_size: usize,
    pattern: *const c_void,
    size: usize,
) -> Result {
    log!("olMemFill pattern={pattern_size} size={size}");
    if size == 0 {
        return OK;
    }
    if ptr.is_null() || pattern.is_null() {
        return &NULL_POINTER;
    }
    if pattern_size == 0 || !size.is_multiple_of(pattern_size) {
        return &BAD_ARGUMENT;
    }
    // SAFETY: the caller's contract: the pattern is read now, the memory valid until the
    // queue is waited for.
    unsafe {
        let pattern = std::slice::from_raw_parts(pattern.cast::<u8>(), pattern_size).to_vec();
        submit(queue, Op::Fill { dst: ptr as usize, pattern, size });
    }
    OK
}

/// # Safety
///
/// `event` must be valid for a write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olCreateEvent(queue: *mut c_void, event: *mut *mut c_void) -> Result {
    log!("olCreateEvent");
    // SAFETY: the caller's contract.
    unsafe { give(event, queue) }
}

/// Waits for the event's queue (everything queued before it, and after: good enough here).
///
/// # Safety
///
/// `event` comes from [`olCreateEvent`] on a live queue.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olSyncEvent(event: *mut c_void) -> Result {
    log!("olSyncEvent");
    // SAFETY: an event is its queue's handle.
    unsafe { sync(event) }
}

#[unsafe(no_mangle)]
pub extern "C" fn olDestroyEvent(_event: *mut c_void) -> Result {
    log!("olDestroyEvent");
    OK
}

/// `ol_kernel_launch_size_args_t`.
#[repr(C)]
#[derive(Debug)]
pub struct LaunchSizes {
    dimensions: usize,
    groups: [u32; 3],
    group_size: [u32; 3],
    dyn_shared_memory: usize,
}

/// Counts the launch after checking its shape; runs nothing.
///
/// # Safety
///
/// `sizes` must be valid for a read.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn olLaunchKernel(
    _queue: *mut c_void,
    _device: *mut c_void,
    symbol: *mut c_void,
    args: *const c_void,
    args_size: usize,
    sizes: *const LaunchSizes,
) -> Result {
    if symbol.is_null() || sizes.is_null() || (args.is_null() && args_size > 0) {
        return &NULL_POINTER;
    }
    // SAFETY: the caller's contract.
    let sizes = unsafe { &*sizes };
    log!(
        "olLaunchKernel args={args_size} dims={} groups={:?} group_size={:?} dyn_shared={}",
        sizes.dimensions,
        sizes.groups,
        sizes.group_size,
        sizes.dyn_shared_memory
    );
    if !(1..=3).contains(&sizes.dimensions) || sizes.groups.contains(&0) || sizes.group_size.contains(&0) {
        return &BAD_ARGUMENT;
    }
    let launch = LAUNCHES.fetch_add(1, Ordering::Relaxed) + 1;
    if traps(launch) {
        // Queued like any launch; the fault shows at the next wait or copy.
        TRAPPED.store(true, Ordering::Relaxed);
    }
    OK
}

/// Launches so far in this process (not part of liboffload's API).
#[unsafe(no_mangle)]
pub extern "C" fn nullOffloadLaunches() -> u64 {
    LAUNCHES.load(Ordering::Relaxed)
}
