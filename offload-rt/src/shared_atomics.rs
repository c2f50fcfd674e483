//! Block-private accumulation: a [`SharedAtomics<T, N>`] parameter is `N` elements of
//! block-shared memory that every thread of the block may update atomically at any index —
//! a histogram per block, counters, per-block minima — and that the block then reads and merges
//! once into global memory. Updating shared memory is far cheaper than updating global memory:
//! contention on a few hot bins stays inside one multiprocessor, and each block sends one update
//! per element to the global result instead of one per input.
//!
//! The elements start as zeros: before the kernel body runs they are zeroed (on a GPU the
//! entry point zeroes all of the kernel's shared memory at once, in 16-byte words; on the CPU
//! backend every thread zeroes the elements it owns, `t, t + n, …` in a block of `n` threads)
//! and the block meets at a barrier, so that no update can reach an element before its zero
//! does. The block's phases (see [`Block`])
//! order the rest: atomic updates need the write phase (`&Block`), plain reads the read phase
//! (`&BlockRead`, after `block.sync()`), when no thread can update, so reads see every update
//! of the phase before.
//!
//! ```
//! #[offload::kernels]
//! mod gpu {
//!     use offload::prelude::*;
//!
//!     /// A 16-bin histogram of `x`: one shared-memory histogram per block, merged once.
//!     #[kernel]
//!     pub fn histogram(x: &[u32], bins: Atomics<u32>, local: SharedAtomics<u32, 16>, block: Block) {
//!         for i in grid_stride(x.len()) {
//!             local.add(&block, (x[i] % 16) as usize, 1);
//!         }
//!         let read = block.sync();
//!         for (bin, count) in local.mine(&read) {
//!             if count != 0 {
//!                 bins.add(bin, count);
//!             }
//!         }
//!     }
//! }
//! # fn main() -> offload::Result<()> {
//! # let dev = offload::Device::cpu();
//! # let x: Vec<u32> = (0..1000).collect();
//! # let mut bins = vec![0u32; 16];
//! # gpu::histogram::launch(&dev, offload::Grid::threads(256).block_size(64), &x, &mut bins)?;
//! # assert_eq!(bins.iter().sum::<u32>(), 1000);
//! # assert_eq!(bins[0], 63);
//! # Ok(()) }
//! ```

use crate::arch;
use crate::atomic::AtomicElem;
use crate::shared::{Block, BlockRead};

/// `N` elements of block-shared memory for atomic updates by any thread of the block.
#[derive(Debug)]
pub struct SharedAtomics<T, const N: usize> {
    base: *mut T,
    tid: u32,
    n: u32,
}

impl<T: AtomicElem, const N: usize> SharedAtomics<T, N> {
    /// Thread `tid`'s view of the block's `N` elements at `base`, which are zeros already for
    /// every thread: the entry point zeroed the block's shared memory and met the block at a
    /// barrier (`zero_block_shared`), as this view's updates need; on the CPU backend each
    /// block's shared memory starts as zeros.
    ///
    /// # Safety
    ///
    /// `base` points to `N` aligned elements of block-shared memory used by no other
    /// parameter; every thread of the block makes its own view, with a distinct `tid < n`, at
    /// kernel entry; and every element is zero for every thread (on a GPU: the block has met at
    /// a barrier since `zero_block_shared` ran).
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_zeroed_parts(base: *mut T, tid: usize, n: usize) -> Self {
        SharedAtomics { base, tid: tid as u32, n: n as u32 }
    }

    /// Element `j`'s address.
    ///
    /// # Panics
    ///
    /// When `j >= N` (on a GPU the launch fails naming the kernel).
    #[inline(always)]
    #[track_caller]
    fn at(&self, j: usize) -> *mut T {
        if j >= N {
            arch::fail!("shared atomic index {j} out of bounds for length {N}");
        }
        // SAFETY: `j < N`: inside the array.
        unsafe { self.base.add(j) }
    }

    /// Adds `v` to element `j` and returns its old value (write phase). Integers wrap.
    #[inline(always)]
    #[track_caller]
    pub fn add(&self, _phase: &Block, j: usize, v: T) -> T {
        // SAFETY: `at` checked the index; in the write phase every access to the elements is
        // atomic (plain reads need the read phase, when no update can run).
        unsafe { T::fetch_add_shared(self.at(j), v) }
    }

    /// Stores the smaller of element `j` and `v`; returns the old value (write phase).
    #[inline(always)]
    #[track_caller]
    pub fn min(&self, _phase: &Block, j: usize, v: T) -> T {
        // SAFETY: as in `add`.
        unsafe { T::fetch_min(self.at(j), v) }
    }

    /// Stores the larger of element `j` and `v`; returns the old value (write phase).
    #[inline(always)]
    #[track_caller]
    pub fn max(&self, _phase: &Block, j: usize, v: T) -> T {
        // SAFETY: as in `add`.
        unsafe { T::fetch_max(self.at(j), v) }
    }

    /// Stores `v` in element `j`; returns the old value (write phase).
    #[inline(always)]
    #[track_caller]
    pub fn exchange(&self, _phase: &Block, j: usize, v: T) -> T {
        // SAFETY: as in `add`.
        unsafe { T::swap(self.at(j), v) }
    }

    /// Stores `new` in element `j` if it holds `current`: `Ok(current)`, else `Err(actual)`
    /// (write phase). Floats compare by bits.
    #[inline(always)]
    #[track_caller]
    pub fn compare_exchange(&self, _phase: &Block, j: usize, current: T, new: T) -> Result<T, T> {
        // SAFETY: as in `add`.
        unsafe { T::compare_exchange(self.at(j), current, new) }
    }

    /// Stores `v` in element `j` (write phase): an atomic store, so threads storing to one
    /// element leave one of their values there, and the read phase sees it. (A scatter into
    /// shared memory: a tile reordered before it is written out in order.)
    #[inline(always)]
    #[track_caller]
    pub fn store(&self, _phase: &Block, j: usize, v: T) {
        // SAFETY: as in `add`.
        unsafe { T::store(self.at(j), v) }
    }

    /// Element `j` now, read atomically in the write phase (other threads may be updating it).
    #[inline(always)]
    #[track_caller]
    pub fn load(&self, _phase: &Block, j: usize) -> T {
        // SAFETY: as in `add`.
        unsafe { T::load(self.at(j)) }
    }

    /// All `N` elements, in the read phase (the slice cannot outlive it).
    #[inline(always)]
    pub fn as_slice<'r>(&self, _phase: &'r BlockRead) -> &'r [T] {
        // SAFETY: `N` initialised elements (zeroed before the entry barrier); no thread can
        // update them while `_phase` — and so the slice — lives (updates need the write
        // phase, and the barrier that began this phase ordered every earlier update before
        // these reads).
        unsafe { core::slice::from_raw_parts(self.base, N) }
    }

    /// Element `j`, in the read phase.
    ///
    /// # Panics
    ///
    /// When `j >= N`.
    #[inline(always)]
    pub fn get(&self, phase: &BlockRead, j: usize) -> T {
        self.as_slice(phase)[j]
    }

    /// The elements this thread owns (`j ≡ thread (mod block threads)`) with their values, in
    /// the read phase: between them the block's threads cover every element once, which is
    /// how a block merges its accumulation into a global result with one update per element.
    #[inline(always)]
    pub fn mine<'r>(&self, phase: &'r BlockRead) -> impl Iterator<Item = (usize, T)> + 'r
    where
        T: 'r,
    {
        let values = self.as_slice(phase);
        crate::index::GridStrideIndices::new(self.tid as usize, N, self.n as usize)
            .map(move |j| (j, values[j]))
    }

    /// Number of elements, `N`.
    #[inline(always)]
    pub fn len(&self) -> usize {
        N
    }

    /// Whether `N` is 0.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        N == 0
    }
}
