//! The record a panicking GPU thread leaves for the host before it traps (both GPU targets).
//!
//! The device linker numbers every panic site of an image and sends each function's failure
//! paths through [`__offload_trap_at`] with the site's number (`cargo-offload`'s
//! `linker/traps.rs`). The first thread of the launch to get here writes the number, its block
//! and its thread to the record whose address the host stored in [`__offload_trap_record`]
//! after loading the image: page-locked host memory, which the host can still read once the
//! trap has made the device unusable; the other panicking threads wait for the record before
//! they trap. Nothing of this runs on a path that does not panic.

use core::sync::atomic::{AtomicU32, Ordering};

/// The host address of the trap record, set by the runtime after it loads the image (null
/// until then: nothing is recorded). Layout: `offload_wire::images::trap::RECORD_BYTES`.
/// Exported, not `#[used]`: without panic sites the NVIDIA device linker drops it with the
/// function that alone reads it.
#[unsafe(no_mangle)]
static mut __offload_trap_record: *mut u32 = core::ptr::null_mut();

/// Which thread records: the first to take it (never reset: a trap ends the device's use).
static CLAIM: AtomicU32 = AtomicU32::new(0);

/// Records panic site `site` (0: unknown) with the calling thread's place, then traps.
/// Inlined into each failure path: a call would make `ptxas` keep registers for the calling
/// convention in every kernel (22 at least, where a copy needs 12).
#[unsafe(no_mangle)]
#[cold]
#[inline(always)]
pub extern "C" fn __offload_trap_at(site: u32) -> ! {
    use super::{block_idx, thread_idx};
    // SAFETY: a plain read of a pointer-sized global that only the host writes, before any
    // launch of the image.
    let record = unsafe { core::ptr::read_volatile(&raw const __offload_trap_record) };
    if record.is_null() {
        super::trap()
    }
    if CLAIM.compare_exchange(0, 1, Ordering::Relaxed, Ordering::Relaxed).is_err() {
        // Another thread records. A trap ends the whole launch, and with it that thread's writes
        // still on their way to host memory (seen on an H200 when threads of many blocks
        // failed at once): wait until its record is complete. (Bounded: where the lanes of a
        // warp cannot run apart, a lane waiting on its warp's recording lane would hang.)
        let mut spins = 0u32;
        // SAFETY: the record's first word, as below; the recording thread writes it last.
        while unsafe { core::ptr::read_volatile(record) } != 1 && spins < 1 << 20 {
            spins += 1;
            core::hint::spin_loop();
        }
        super::trap()
    }
    let words = [
        site,
        block_idx::<0>(),
        block_idx::<1>(),
        block_idx::<2>(),
        thread_idx::<0>(),
        thread_idx::<1>(),
        thread_idx::<2>(),
    ];
    for (i, w) in words.into_iter().enumerate() {
        // SAFETY: the record has 8 words (`RECORD_BYTES`) of page-locked host memory that the
        // runtime keeps alive while the image is loaded; only the claiming thread writes.
        unsafe { core::ptr::write_volatile(record.add(1 + i), w) };
    }
    super::fence(Ordering::SeqCst, crate::atomic::MemoryScope::System);
    // SAFETY: as above; the written flag last, after the fence.
    unsafe { core::ptr::write_volatile(record, 1) };
    super::fence(Ordering::SeqCst, crate::atomic::MemoryScope::System);
    super::trap()
}
