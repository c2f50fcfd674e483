//! Block-shared memory and the barrier that orders it.
//!
//! Every thread of a block holds one [`Block`] — a kernel parameter (`block: Block`) — which is
//! the block's phase as this thread sees it. In the *write* phase (`Block`) each thread may
//! write only the shared elements it owns: its own slot of a [`Shared<T>`], its elements of a
//! [`SharedArray<T, N>`](crate::SharedArray). [`Block::sync`] is the barrier: it consumes the
//! `Block` and gives a [`BlockRead`], the *read* phase, in which every thread may read every
//! element and none may write; [`BlockRead::sync`] is the barrier back.
//!
//! One token for the whole block is what makes this sound: each barrier moves *all* of the
//! block's shared memory to the next phase, so after the same number of barriers every thread
//! agrees on the phase — two arrays cannot be in different phases for different threads, however
//! the barriers are interleaved. That every thread reaches the same barriers is the kernels
//! macro's business: it rejects a `sync` that some threads of a block might not reach (see
//! *Uniform control flow* in the crate documentation), and the CPU backend checks it again at
//! run time.
//!
//! ```
//! #[offload::kernels]
//! mod gpu {
//!     use offload::prelude::*;
//!
//!     /// `y[i] = x[i - 1] + x[i + 1]` inside each block of 64 threads.
//!     #[kernel]
//!     pub fn neighbours(x: &[f32], mut y: Region<f32>, tile: Shared<f32>, block: Block) {
//!         let (i, t) = (y.index(), thread_idx_x() as usize);
//!         tile.write(&block, x.get(i).copied().unwrap_or(0.0)); // my slot, write phase
//!         let read = block.sync();                           // the barrier
//!         let left = if t > 0 { tile.get(&read, t - 1) } else { 0.0 };
//!         let right = if t + 1 < tile.len() { tile.get(&read, t + 1) } else { 0.0 };
//!         if let Some(yi) = y.mine() {
//!             *yi = left + right;
//!         }
//!     }
//! }
//! # fn main() -> offload::Result<()> {
//! # let dev = offload::Device::cpu();
//! # let x: Vec<f32> = (0..128).map(|i| i as f32).collect();
//! # let mut y = vec![0.0f32; 128];
//! # gpu::neighbours::launch(&dev, offload::Grid::threads(128).block_size(64), &x, &mut y)?;
//! # assert_eq!(y[1], 2.0);
//! # Ok(()) }
//! ```

use crate::arch;
use crate::lane::{collective, wait};
use crate::warp::WarpValue;

/// This thread's view of its block in the *write* phase: shared memory may be written (each
/// thread its own elements) and not read, except a thread's own elements. A kernel takes it
/// as a parameter (`block: Block`); [`sync`](Block::sync) is the barrier to the read phase.
#[derive(Debug)]
pub struct Block {
    /// 8 bytes of shared memory for [`broadcast`](Block::broadcast).
    slot: *mut u64,
    tid: u32,
}

/// This thread's view of its block in the *read* phase: every element of shared memory may be
/// read, and none written. [`sync`](BlockRead::sync) is the barrier back to the write phase.
#[derive(Debug)]
pub struct BlockRead {
    slot: *mut u64,
    tid: u32,
}

impl Block {
    /// This thread's token.
    ///
    /// # Safety
    ///
    /// Called once per thread, by every thread of the block, at kernel entry (generated code);
    /// `slot` is 8 bytes of the block's shared memory used by nothing else; `tid` is the
    /// thread's linear index in the block.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(slot: *mut u64, tid: usize) -> Block {
        Block { slot, tid: tid as u32 }
    }

    collective! {
        at site;
        /// The barrier: waits until every thread of the block has arrived; then all that any of
        /// them wrote to shared memory is readable by all.
        pub fn sync(self) -> BlockRead {
            wait!(arch::barrier(site));
            BlockRead { slot: self.slot, tid: self.tid }
        }
    }

    collective! {
        at site;
        /// Thread 0's `v`, returned to every thread of the block (two barriers; the phase stays).
        /// Its result is the same in every thread, so a loop bound or condition computed from it
        /// may guard barriers and warp operations.
        pub fn broadcast<T: WarpValue>(&self, v: T) -> T {
            // SAFETY: the slot is this block's (`from_raw_parts`), and only `broadcast` uses it.
            wait!(unsafe { broadcast(self.slot, self.tid, v, site) })
        }
    }
}

/// A block's phase token, passed from one phase to the next by a barrier that the CPU
/// backend's lockstep copy of a kernel (`offload::__private::Lockstep`) makes the boundary
/// between two loops over the block's lanes: there every lane has finished the phase before
/// any starts the next, and the barrier is the token's change alone. (It takes the token, as
/// the barrier does: a read-phase slice borrows its token, so no write-phase token can be made
/// while the slice lives.)
#[cfg(not(offload_gpu))]
#[doc(hidden)]
pub trait BlockToken {
    /// The other phase's token.
    type Next;
    /// The token after the barrier.
    fn lockstep_sync(self) -> Self::Next;
}

#[cfg(not(offload_gpu))]
impl BlockToken for Block {
    type Next = BlockRead;
    #[inline(always)]
    fn lockstep_sync(self) -> BlockRead {
        BlockRead { slot: self.slot, tid: self.tid }
    }
}

#[cfg(not(offload_gpu))]
impl BlockToken for BlockRead {
    type Next = Block;
    #[inline(always)]
    fn lockstep_sync(self) -> Block {
        Block { slot: self.slot, tid: self.tid }
    }
}

impl BlockRead {
    collective! {
        at site;
        /// The barrier back to the write phase: waits until every thread has finished reading.
        pub fn sync(self) -> Block {
            wait!(arch::barrier(site));
            Block { slot: self.slot, tid: self.tid }
        }
    }

    collective! {
        at site;
        /// Thread 0's `v`, returned to every thread of the block (see [`Block::broadcast`]).
        pub fn broadcast<T: WarpValue>(&self, v: T) -> T {
            // SAFETY: as in `Block::broadcast`.
            wait!(unsafe { broadcast(self.slot, self.tid, v, site) })
        }
    }
}

collective! {
    /// Thread 0 writes the slot, everyone reads it after a barrier, and a second barrier keeps the
    /// next broadcast's write after every read of this one.
    ///
    /// # Safety
    ///
    /// `slot` is the block's broadcast slot, which only this function uses, and every thread of
    /// the block calls it together.
    unsafe fn broadcast<T: WarpValue>(slot: *mut u64, tid: u32, v: T, site: arch::Site) -> T {
        if tid == 0 {
            // SAFETY: only thread 0 writes the slot, between barriers that order it with the reads.
            unsafe { slot.write_volatile(v.to_bits64()) };
        }
        wait!(arch::barrier(site));
        // SAFETY: written before the barrier; nobody writes it until after the next one.
        let bits = unsafe { slot.read_volatile() };
        wait!(arch::barrier(site));
        T::from_bits64(bits)
    }
}

/// Zeroes the first `bytes` bytes of the block's launch-sized shared memory, the block's `n`
/// threads taking its 16-byte words in turn, then meets the block at a barrier: after it every
/// byte is zero for every thread. A kernel with a `SharedAtomics` parameter (whose zeros need a
/// barrier before any update anyway) zeroes all of its shared parameters so at entry, once,
/// where each would zero its own elements (4-byte stores for `u32`s), with a barrier per
/// `SharedAtomics`.
///
/// # Safety
///
/// Called at kernel entry by every thread of the block, with distinct `tid < n`, before any
/// other use of shared memory and any other barrier; the launch reserves at least `bytes`
/// bytes, a multiple of 16, and the shared memory's base is 16-byte aligned (CUDA's and
/// AMD's launch-sized shared memory starts a block's shared memory, which nothing else uses).
#[cfg(offload_gpu)]
#[inline(always)]
pub(crate) unsafe fn zero_block_shared(bytes: usize, tid: usize, n: usize) {
    /// One 16-byte word, aligned: NVIDIA's backend stores it as two 8-byte stores.
    #[repr(C, align(16))]
    struct Word([u32; 4]);
    let base = arch::shared_base().cast::<Word>();
    // At most 227 KiB (the launch checks it): word indices fit in 32 bits, which keeps the
    // loop's counter to one register.
    let (words, step) = ((bytes / 16) as u32, n as u32);
    let mut j = tid as u32;
    while j < words {
        // SAFETY: word `j < bytes / 16` of the reservation, aligned (the caller's contract);
        // before the barrier below nothing else reads or writes shared memory.
        unsafe { base.add(j as usize).write(Word([0; 4])) };
        j += step;
    }
    arch::barrier(core::panic::Location::caller());
}

/// Writes zeros over `*p` in words as wide as `T`'s alignment allows (a plain zeroed write of
/// an array of 8-byte elements lowers to byte stores on NVIDIA).
///
/// # Safety
///
/// `p` is valid for writes and aligned; `T` is valid as all-zero bytes.
#[inline(always)]
pub(crate) unsafe fn zero<T>(p: *mut T) {
    use core::mem::{align_of, size_of};
    if align_of::<T>() >= 8 && size_of::<T>().is_multiple_of(8) {
        for i in 0..size_of::<T>() / 8 {
            // SAFETY: word `i` of `*p`, aligned (`T`'s alignment is at least 8).
            unsafe { p.cast::<u64>().add(i).write(0) };
        }
    } else if align_of::<T>() >= 4 && size_of::<T>().is_multiple_of(4) {
        for i in 0..size_of::<T>() / 4 {
            // SAFETY: as above, in 4-byte words.
            unsafe { p.cast::<u32>().add(i).write(0) };
        }
    } else {
        // SAFETY: the caller's contract.
        unsafe { p.write(core::mem::zeroed()) };
    }
}

/// One slot of block-shared memory per thread of the block. In the write phase a thread
/// writes its own slot ([`write`](Shared::write)); in the read phase any slot is readable
/// ([`get`](Shared::get)). A thread's own slot is readable in either phase
/// ([`mine`](Shared::mine)). Slots start as zeros.
#[derive(Debug)]
pub struct Shared<T> {
    base: *mut T,
    tid: u32,
    n: u32,
}

impl<T: Copy> Shared<T> {
    /// Thread `tid`'s view of `n` slots at `base`; zeroes the thread's own slot.
    ///
    /// # Safety
    ///
    /// `base` points to `n` slots of block-shared memory used by no other parameter; every
    /// thread of the block makes its own view, with a distinct `tid < n`, at kernel entry;
    /// `T` is valid as all-zero bytes.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(base: *mut T, tid: usize, n: usize) -> Self {
        // SAFETY: slot `tid < n` is this thread's; at entry the block is in its write phase;
        // zero is a valid `T` (the caller's contract).
        unsafe { zero(base.add(tid)) };
        Shared { base, tid: tid as u32, n: n as u32 }
    }

    /// Thread `tid`'s view of `n` slots at `base` that are zeros already.
    ///
    /// # Safety
    ///
    /// As [`from_raw_parts`](Shared::from_raw_parts), and every slot is zero for every thread
    /// (`zero_block_shared` ran).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_zeroed_parts(base: *mut T, tid: usize, n: usize) -> Self {
        Shared { base, tid: tid as u32, n: n as u32 }
    }

    /// Writes this thread's slot (write phase).
    #[inline(always)]
    pub fn write(&self, _phase: &Block, value: T) {
        // SAFETY: `tid < n`; in the write phase only this thread touches its slot.
        unsafe { self.base.add(self.tid as usize).write(value) };
    }

    /// Slot `j` (a thread index within the block), in the read phase.
    ///
    /// # Panics
    ///
    /// When `j` is not below the block's thread count.
    #[inline(always)]
    #[track_caller]
    pub fn get(&self, _phase: &BlockRead, j: usize) -> T {
        if j >= self.n as usize {
            arch::fail!("shared slot {j} out of bounds for a block of {} threads", self.n);
        }
        // SAFETY: `j < n`; in the read phase no thread writes.
        unsafe { self.base.add(j).read() }
    }

    /// All slots, in the read phase (the slice cannot outlive it).
    #[inline(always)]
    pub fn as_slice<'r>(&self, _phase: &'r BlockRead) -> &'r [T] {
        // SAFETY: `n` initialised slots (each zeroed by its owner at entry), which no thread
        // writes while `_phase` — and so the slice — lives.
        unsafe { core::slice::from_raw_parts(self.base, self.n as usize) }
    }

    /// This thread's own slot, in either phase (only this thread ever writes it).
    #[inline(always)]
    pub fn mine(&self) -> T {
        // SAFETY: `tid < n`, written only by this thread.
        unsafe { self.base.add(self.tid as usize).read() }
    }

    /// Number of slots: the block's thread count.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.n as usize
    }

    /// Whether there are no slots (never, inside a kernel).
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.n == 0
    }
}
