//! A launch on a GPU: arguments packed for the entry point, host data placed in device memory
//! (small arguments gathered in the device's arenas, larger ones in allocations of their own),
//! the launch queued, and — when host data is involved — the results copied back and waited
//! for.

use super::KernelInfo;
use super::pack::{FoldFn, abi_ptr, fold_slots, push_bytes};
use crate::host::backend::gpu::GpuBackend;
use crate::host::backend::staging::{SMALL_ARENA, SMALL_COPY, SmallArena};
use crate::host::buffer::Byte;
use crate::host::config::config;
use crate::host::error::{Error, Result};
use crate::host::grid::Grid;
use crate::host::liboffload::memory::DeviceAlloc;
use crate::host::liboffload::queue::LaunchSize;
use crate::host::liboffload::runtime::Gpu;
use crate::host::report::{self, Way};
use crate::host::timeline::HostKind;
use crate::reduce::{Reduction, SLOT_BYTES};
use std::cell::Cell;
use std::sync::MutexGuard;
use std::time::{Duration, Instant};

/// A writable host-data argument to copy back after the kernel: from its own allocation
/// (`allocs[alloc]`) or from its slot of the small arenas (byte offset and size), or a
/// reduction result spread over `slots` slots of the arenas, folded into `host` by `fold`.
pub(super) enum Writeback {
    Alloc { alloc: usize, host: *mut u8 },
    Arena { offset: usize, bytes: usize, host: *mut u8 },
    Fold { offset: usize, slots: usize, host: *mut u8, fold: FoldFn },
}

pub(super) struct GpuArgs<'d> {
    dev: &'d GpuBackend,
    pub(super) packed: Vec<Byte>,
    allocs: Vec<DeviceAlloc>,
    pub(super) writebacks: Vec<Writeback>,
    pub(super) queued: bool,
    /// When the first copy to the device was queued, and how many bytes were copied.
    copies_in: Option<(Instant, u64, u64)>,
    /// The device's small arenas (pinned and device memory) while this launch uses them, and
    /// the bytes used: small host-data arguments are gathered in the pinned arena and copied
    /// to the device arena, and back, with one copy each way per launch.
    small: Option<MutexGuard<'d, Option<SmallArena>>>,
    small_used: usize,
    /// The end of the last small argument placed in the arenas (0: none): the bytes the one
    /// copy to the device arena carries.
    arena_in: usize,
    /// The bytes of the arguments gathered for that copy.
    arena_bytes: u64,
    /// Whether every byte gathered for it is zero (reduction slots starting from a zero
    /// identity, zero-initialised results): then the device arena is filled with zeros
    /// instead, which costs the round trip less than a copy (`GpuArgs::flush_arena`).
    arena_zero: bool,
}

thread_local! {
    /// The packed-arguments vector of this thread's last launch, kept for the next one: a
    /// launch then allocates nothing for its arguments. (A fresh vector allocated and grew
    /// for every launch: a tenth of a launch's host cost on the host-only stand-in for
    /// liboffload, `tests/null-liboffload`.)
    static PACKED: Cell<Vec<Byte>> = const { Cell::new(Vec::new()) };
}

/// Alignment of the slots of the small arenas (see `GpuArgs::small_slot`).
const SLOT_ALIGN: usize = 256;

/// Where `GpuArgs::place` put an argument: its own allocation (`allocs` index) or a slot of
/// the small arenas (byte offset).
pub(super) enum Placed {
    Alloc(usize),
    Arena(usize),
}

impl<'d> GpuArgs<'d> {
    /// The arguments of a launch on `dev` (whose poisoning the caller has checked).
    #[inline]
    pub(super) fn new(dev: &'d GpuBackend) -> GpuArgs<'d> {
        GpuArgs {
            dev,
            // (A fresh vector if this thread's is gone: a launch from a thread-local's
            // destructor.)
            packed: PACKED.try_with(Cell::take).unwrap_or_default(),
            allocs: Vec::new(),
            writebacks: Vec::new(),
            queued: false,
            copies_in: None,
            small: None,
            small_used: 0,
            arena_in: 0,
            arena_bytes: 0,
            arena_zero: true,
        }
    }

    /// Adds an array at device address `ptr` with its extents to the entry point's
    /// parameters.
    #[inline]
    pub(super) fn push_array<T>(&mut self, ptr: *mut std::ffi::c_void, extents: &[usize]) {
        push_bytes(&mut self.packed, &abi_ptr::<T>(ptr));
        for e in extents {
            push_bytes(&mut self.packed, e);
        }
    }

    /// Gives a host-data argument of `bytes` bytes its device memory for the launch, with the
    /// contents of `source` (or zeros for a write-only output). A small argument gets a slot
    /// of the device's small arenas: its bytes are gathered in the pinned arena and reach the
    /// device with every other small argument of the launch in one copy, queued just before
    /// the kernel. A larger one gets its own allocation and copy (large pageable data is
    /// staged through pinned memory, before this returns), and so does a small one when
    /// gathering is off (`OFFLOAD_GATHER=0`), copied from a pinned slot.
    pub(super) fn place(
        &mut self,
        source: Option<*const u8>,
        bytes: usize,
    ) -> Result<(*mut std::ffi::c_void, Placed)> {
        if bytes > 0
            && config().gather
            && let Some((pinned, offset)) = self.small_slot(bytes)?
        {
            match source {
                Some(host) => {
                    self.arena_zero = false;
                    // SAFETY: `source` is valid for `bytes` reads: it comes from the `&'a [T]`
                    // or `&'a mut [T]` argument being added; `small_slot` gave `bytes` bytes
                    // of the arena this launch holds.
                    unsafe { std::ptr::copy_nonoverlapping(host, pinned, bytes) }
                }
                // SAFETY: as above, for the slot.
                None => unsafe { std::ptr::write_bytes(pinned, 0, bytes) },
            }
            return Ok((self.gathered(offset, bytes), Placed::Arena(offset)));
        }
        let alloc = self.dev.alloc(bytes, source.is_none())?;
        if source.is_none() {
            self.queued = true; // the zeroing
        }
        let ptr = alloc.ptr;
        self.allocs.push(alloc);
        let placed = Placed::Alloc(self.allocs.len() - 1);
        let Some(host) = source.filter(|_| bytes > 0) else {
            return Ok((ptr, placed));
        };
        let (_, count, total) = self.copies_in.get_or_insert((Instant::now(), 0, 0));
        *count += 1;
        *total += bytes as u64;
        if let Some((pinned, _)) = self.small_slot(bytes)? {
            // Gathering is off (`OFFLOAD_GATHER=0`): a copy of its own, from a pinned slot.
            // SAFETY: `host` is valid for `bytes` reads (the argument being added) and the
            // slot holds `bytes` bytes of the arena this launch holds.
            unsafe { std::ptr::copy_nonoverlapping(host, pinned, bytes) };
            self.queued = true;
            // SAFETY: `ptr` holds `bytes` bytes on the device; the pinned slot stays reserved
            // for this launch until its queue is synchronised.
            unsafe { self.dev.queue().copy_in(ptr, pinned.cast(), bytes, HostKind::Arena) }?;
            return Ok((ptr, placed));
        }
        // SAFETY: `host` is valid for `bytes` reads: it comes from the `&'a [T]` or
        // `&'a mut [T]` argument being added.
        let data = unsafe { std::slice::from_raw_parts(host.cast::<Byte>(), bytes) };
        if self.dev.upload_if_staged(ptr, data)? {
            return Ok((ptr, placed));
        }
        self.queued = true;
        // SAFETY: `ptr` holds `bytes` bytes on the device; `host` is valid for `bytes` reads
        // and stays borrowed (`'a`) until the queue is synchronised, by `launch` or by `Drop`
        // on an early return.
        unsafe { self.dev.queue().copy_in(ptr, data.as_ptr(), bytes, HostKind::User) }?;
        Ok((ptr, placed))
    }

    /// Counts `bytes` just written at `offset` of the pinned arena into the one copy to the
    /// device arena; returns their device address.
    fn gathered(&mut self, offset: usize, bytes: usize) -> *mut std::ffi::c_void {
        self.arena_bytes += bytes as u64;
        self.arena_in = self.arena_in.max(offset + bytes);
        self.arena().device.cast::<u8>().wrapping_add(offset).cast()
    }

    /// Places reduction `K`'s result `result` as `slots` slots, [`SLOT_BYTES`] apart, in the
    /// small arenas, adds their address and count to the arguments and notes the fold for the
    /// copy back. Every slot starts from `K`'s identity; after the copy back the host folds
    /// the slots into the result's own value (so a sum's slots start as zeros, and the device
    /// arena can be filled instead of copied to: see `flush_arena`). `false` (nothing done)
    /// when gathering is off or the arenas have no room.
    pub(super) fn spread_result<T: Copy, K: Reduction<T>>(
        &mut self,
        result: *mut T,
        slots: usize,
    ) -> Result<bool> {
        let bytes = slots * SLOT_BYTES;
        if size_of::<T>() > SLOT_BYTES || align_of::<T>() > SLOT_BYTES || !config().gather {
            return Ok(false);
        }
        let Some((pinned, offset)) = self.small_slot(bytes)? else { return Ok(false) };
        let identity = K::identity();
        for s in 0..slots {
            // SAFETY: the slot's `bytes` bytes are in the arena this launch holds; slot `s`
            // lies within them, and is aligned for `T`: the arena and its slots start at
            // multiples of 256 bytes, and `SLOT_BYTES` (128) is a multiple of `T`'s alignment
            // (a power of two of at most 128, checked above).
            unsafe { pinned.add(s * SLOT_BYTES).cast::<T>().write(identity) };
        }
        self.arena_zero &= K::ZERO_IDENTITY;
        let device = self.gathered(offset, bytes);
        push_bytes(&mut self.packed, &device);
        push_bytes(&mut self.packed, &slots);
        self.writebacks.push(Writeback::Fold {
            offset,
            slots,
            host: result.cast(),
            fold: fold_slots::<T, K>,
        });
        Ok(true)
    }

    /// `bytes` bytes of the device's small arenas for this launch — the pinned slot and its
    /// byte offset, the same in the device arena — when the argument is small and the arenas
    /// have room (`None` otherwise: the caller copies another way).
    fn small_slot(&mut self, bytes: usize) -> Result<Option<(*mut u8, usize)>> {
        // Each slot in its own 256-byte block: reduction results a kernel's blocks update with
        // atomics must not share a cache line (at 64-byte slots REDUCE3_INT's three results
        // took 337 µs per repetition at 2^25 elements on an H200, against 261 µs in separate
        // allocations).
        let start = self.small_used.next_multiple_of(SLOT_ALIGN);
        if bytes > SMALL_COPY || start + bytes > SMALL_ARENA {
            return Ok(None);
        }
        if self.small.is_none() {
            self.small = Some(self.dev.small_arena()?);
        }
        let base = self.arena().base;
        self.small_used = start + bytes;
        // SAFETY: `start + bytes <= SMALL_ARENA`, inside the arena.
        Ok(Some((unsafe { base.add(start) }, start)))
    }

    /// The small arenas this launch holds (`small_slot` took them before any slot was used).
    fn arena(&self) -> &SmallArena {
        self.small.as_ref().and_then(|g| g.as_ref()).expect("the launch holds the small arenas")
    }

    /// Queues the one copy of the gathered small arguments to the device arena — or, when
    /// they are all zeros (a sum's slots, zero-initialised results), fills the device arena
    /// with zeros instead: a fill costs the round trip of a short reduction less than a copy
    /// of the same bytes, which waits for the host's memory (`results/README.md`).
    fn flush_arena(&mut self) -> Result<()> {
        if self.arena_in == 0 {
            return Ok(());
        }
        self.queued = true;
        if self.arena_zero {
            let device = self.arena().device;
            // The arena's bytes between the arguments are unused: zeroing them is harmless.
            return self.dev.zero(device, self.arena_in);
        }
        let (_, count, total) = self.copies_in.get_or_insert((Instant::now(), 0, 0));
        *count += 1; // the gathered arguments travel as one copy
        *total += self.arena_bytes;
        let arena = self.arena();
        // SAFETY: both arenas hold `SMALL_ARENA >= arena_in` bytes; this launch holds them (the
        // guard) until its queue is synchronised, so the pinned bytes stay put until copied.
        unsafe { self.dev.queue().copy_in(arena.device, arena.base.cast(), self.arena_in, HostKind::Arena) }
    }

    /// Launches the kernel (see [`submit`](Self::submit)). On success everything that read host
    /// memory has been waited for; after a failure, dropping `self` waits for copies that may
    /// still be queued.
    #[inline]
    pub(super) fn launch(
        &mut self,
        kernel: &'static KernelInfo,
        grid: &Grid,
        blocks: [u32; 3],
        shared_bytes: usize,
    ) -> Result<()> {
        let result = self.submit(kernel, grid, blocks, shared_bytes);
        if result.is_ok() {
            self.queued = false;
        }
        result
    }

    /// Queues the copies in and the launch, then — when host data is involved — the copies
    /// back, and waits for them.
    fn submit(
        &mut self,
        kernel: &'static KernelInfo,
        grid: &Grid,
        blocks: [u32; 3],
        shared_bytes: usize,
    ) -> Result<()> {
        let gpu = self.dev.gpu;
        if shared_bytes > gpu.max_shared || self.packed.len() > crate::host::private::MAX_PARAM_BYTES {
            return Err(too_large(kernel, gpu, shared_bytes, self.packed.len()));
        }
        let block_threads = grid.block().iter().product::<u32>();
        let symbol = kernel_handle(kernel, block_threads, self.dev)?;
        let timed = report::reporting();
        self.flush_arena()?;
        if let Some((started, count, bytes)) = self.copies_in {
            if timed {
                self.dev.sync_queue()?;
            }
            let time = if timed { started.elapsed() } else { Duration::ZERO };
            report::record_copy(Way::In, count, bytes, time, Some(kernel.path));
        }
        // Only device buffers and scalars: nothing to copy back or free, so the launch stays
        // queued and the host goes on (and needs no clock).
        let queued_only = self.allocs.is_empty() && self.small.is_none();
        let started = if queued_only { None } else { Some(Instant::now()) };
        let queue = self.dev.queue();
        if !blocks.contains(&0) {
            let size = LaunchSize { dims: grid.dims(), blocks, threads: grid.block(), shared_bytes };
            // SAFETY: `packed` holds the entry point's parameters in order, each at its C
            // alignment, as the generated entry point declares them (the same parameter kinds
            // pushed in the same order); the device memory they name stays allocated until the
            // queue has been waited for (the launch's own allocations and arenas below,
            // buffers by their drop), and the memory a kernel writes is borrowed mutably by
            // this launch.
            unsafe { queue.launch(symbol, kernel.path, &self.packed, size) }
                .map_err(|e| launch_error(kernel, gpu.name.clone(), e))?;
            self.dev.queued(kernel.path);
        }
        let Some(started) = started else {
            report::record_queued(kernel);
            return Ok(());
        };
        let copies_out = Instant::now();
        if timed {
            drop(queue);
            self.dev.sync_queue()?;
            report::record_launch(kernel.path, started.elapsed());
            return self.copy_back(kernel, Instant::now());
        }
        drop(queue);
        let result = self.copy_back(kernel, copies_out);
        report::record_launch(kernel.path, started.elapsed());
        result
    }

    /// Copies the writable host-data arguments back and waits for everything.
    fn copy_back(&mut self, kernel: &'static KernelInfo, started: Instant) -> Result<()> {
        let (mut count, mut bytes) = (0, 0);
        // Small results come back through the pinned arena: (arena slot, host, bytes).
        let mut via_arena = Vec::new();
        let writebacks = std::mem::take(&mut self.writebacks);
        // A kernel that traps is reported by whichever call comes next (a copy back or the
        // synchronisation): either way it is a failure of the kernels queued since the last
        // synchronisation, and it poisons the device.
        // The results in arena slots come back with one copy of the range they span.
        let mut span = (usize::MAX, 0);
        let mut folds = Vec::new();
        for w in &writebacks {
            let (offset, size) = match *w {
                Writeback::Arena { offset, bytes, .. } => (offset, bytes),
                Writeback::Fold { offset, slots, .. } => (offset, slots * SLOT_BYTES),
                Writeback::Alloc { .. } => continue,
            };
            span = (span.0.min(offset), span.1.max(offset + size));
            bytes += size as u64;
            // SAFETY: `offset + size <= SMALL_ARENA` (`small_slot` made it so).
            let pinned = unsafe { self.arena().base.add(offset) };
            if let Writeback::Fold { slots, host, fold, .. } = *w {
                folds.push((fold, host, pinned, slots));
            } else if let Writeback::Arena { host, .. } = *w {
                via_arena.push((pinned, host, size));
            }
        }
        if span.0 < span.1 {
            count += 1;
            let arena = self.arena();
            // SAFETY: both arenas hold `SMALL_ARENA >= span.1` bytes and this launch holds them
            // until the queue is synchronised below.
            unsafe {
                self.dev.queue().copy_out(
                    arena.base.add(span.0).cast(),
                    arena.device.cast::<u8>().add(span.0).cast(),
                    span.1 - span.0,
                    HostKind::Arena,
                )
            }
            .map_err(|e| self.dev.queued_failure(e))?;
        }
        for w in writebacks {
            let Writeback::Alloc { alloc, host } = w else { continue };
            let (dptr, size) = (self.allocs[alloc].ptr, self.allocs[alloc].bytes);
            if size == 0 {
                continue;
            }
            count += 1;
            bytes += size as u64;
            let (dst, staged) = match self.small_slot(size)? {
                Some((pinned, _)) => (pinned, true),
                None => {
                    // SAFETY: the host range is the `&'a mut [T]` this argument borrows,
                    // `size` bytes long, and nothing else uses it until the launch returns.
                    let host = unsafe { std::slice::from_raw_parts_mut(host.cast::<Byte>(), size) };
                    if self.dev.download_if_staged(host, dptr)? {
                        continue;
                    }
                    (host.as_mut_ptr().cast::<u8>(), false)
                }
            };
            // SAFETY: `dst` is the argument's host range or a slot of the arena this launch
            // holds, `size` bytes either way; the device range was allocated with the same
            // size, and the queue is synchronised before the launch returns.
            unsafe {
                let kind = if staged { HostKind::Arena } else { HostKind::User };
                self.dev.queue().copy_out(dst.cast(), dptr, size, kind)
            }
            .map_err(|e| self.dev.queued_failure(e))?;
            if staged {
                via_arena.push((dst, host, size));
            }
        }
        self.dev.sync_queue()?;
        for (pinned, host, size) in via_arena {
            // SAFETY: the copy into the slot completed (the queue is synchronised); `host` is
            // the argument's `size`-byte range, borrowed mutably by this launch.
            unsafe { std::ptr::copy_nonoverlapping(pinned, host, size) };
        }
        for (fold, host, pinned, slots) in folds {
            // SAFETY: the copy back completed; the pinned range holds the `slots` slots
            // `spread_result` initialised and the kernel updated, and `host` is the
            // `&'a mut T` result this launch borrows.
            unsafe { fold(host, pinned, slots) };
        }
        let time = if report::reporting() { started.elapsed() } else { Duration::ZERO };
        report::record_copy(Way::Out, count, bytes, time, Some(kernel.path));
        Ok(())
    }
}

/// The handle, on the GPU of `dev`, of the entry point that runs blocks of `block_threads`
/// threads (see `KernelInfo::entry`), looked up once per GPU.
#[inline]
fn kernel_handle(
    kernel: &KernelInfo,
    block_threads: u32,
    dev: &GpuBackend,
) -> Result<crate::host::liboffload::ffi::ol_symbol_handle_t> {
    use std::sync::atomic::Ordering;
    let (symbol, variant) = kernel.entry(block_threads, dev.warp_size());
    let slot = kernel.cache.handles.get(dev.index).map(|v| &v[variant]);
    if let Some(h) = slot.map(|s| s.load(Ordering::Acquire)).filter(|h| !h.is_null()) {
        return Ok(h);
    }
    let h = dev.gpu.kernel(dev.rt, symbol, kernel.path)?;
    if let Some(s) = slot {
        s.store(h, Ordering::Release);
    }
    Ok(h)
}

/// The error of a launch whose shared memory or parameters exceed what `gpu` allows.
#[cold]
#[inline(never)]
fn too_large(kernel: &KernelInfo, gpu: &Gpu, shared_bytes: usize, param_bytes: usize) -> Error {
    let reason = if shared_bytes > gpu.max_shared {
        format!(
            "its blocks need {shared_bytes} bytes of shared memory, and {} allows {}",
            gpu.name, gpu.max_shared
        )
    } else {
        format!(
            "its parameters take {param_bytes} bytes, more than a kernel's may ({} bytes): pass large values as slices",
            crate::host::private::MAX_PARAM_BYTES
        )
    };
    Error::InvalidLaunch { kernel: kernel.path.to_owned(), reason }
}

fn launch_error(kernel: &KernelInfo, device: String, e: Error) -> Error {
    Error::KernelFailed { kernel: kernel.path.to_owned(), device, details: e.to_string(), panic: None }
}

impl Drop for GpuArgs<'_> {
    fn drop(&mut self) {
        if self.queued {
            // An argument failed after earlier copies were queued: they read host memory that
            // is about to be released, so wait for them.
            let _ = self.dev.queue().sync();
        }
        // The vector goes back for this thread's next launch, emptied, its capacity kept
        // (unless it grew unusually large).
        let mut packed = std::mem::take(&mut self.packed);
        if packed.capacity() <= 4096 {
            packed.clear();
            let _ = PACKED.try_with(|p| p.set(packed));
        }
    }
}
