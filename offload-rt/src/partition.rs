//! Partitions of a writable array among the threads of a launch — [`GridStride`], [`Chunks`],
//! one element per block ([`PerBlock`]) or per group of threads ([`Groups`]): each thread's
//! share is disjoint from every other's by construction.

use core::marker::PhantomData;

/// A 1-D partition of a writable array among all threads of a launch: each thread's share is
/// disjoint from every other's by construction.
#[doc(hidden)]
pub trait Partition<'a, T>: Sized {
    /// The share of the thread with linear id `index` among `total` threads.
    ///
    /// # Safety
    ///
    /// As for [`Region::from_raw_parts`], with `total` the number of threads sharing the
    /// array, each with a distinct `index < total`.
    unsafe fn from_raw_parts(ptr: *mut T, len: usize, index: usize, total: usize) -> Self;

    /// [`from_raw_parts`](Self::from_raw_parts) on the CPU backend, whose thread token also
    /// knows the thread's block (its linear index `block` over the grid) and whether the
    /// thread is its block's first (`first`): a share by block takes them from there rather
    /// than from the emulated thread's context.
    ///
    /// # Safety
    ///
    /// As for [`from_raw_parts`](Self::from_raw_parts), with `block` and `first` the calling
    /// thread's.
    #[cfg(not(offload_gpu))]
    #[inline(always)]
    unsafe fn from_cpu_parts(
        ptr: *mut T,
        len: usize,
        index: usize,
        total: usize,
        block: usize,
        first: bool,
    ) -> Self {
        let _ = (block, first);
        // SAFETY: the caller's contract.
        unsafe { Self::from_raw_parts(ptr, len, index, total) }
    }
}

/// A writable array of which each thread owns every `total`-th element starting at its own
/// linear id (`i ≡ id mod total`): the grid-stride loop, for arrays larger than the grid.
///
/// ```text
/// for (i, yi) in y.iter_mut() { *yi = 2.0 * x[i]; }
/// ```
#[derive(Debug)]
pub struct GridStride<'a, T> {
    ptr: *mut T,
    len: usize,
    start: usize,
    step: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> Partition<'a, T> for GridStride<'a, T> {
    #[inline(always)]
    unsafe fn from_raw_parts(ptr: *mut T, len: usize, index: usize, total: usize) -> Self {
        GridStride { ptr, len, start: index, step: total.max(1), _borrow: PhantomData }
    }
}

impl<T> GridStride<'_, T> {
    /// This thread's elements with their indices.
    #[inline(always)]
    pub fn iter_mut(&mut self) -> StrideIter<'_, T> {
        StrideIter { ptr: self.ptr, len: self.len, next: self.start, step: self.step, _borrow: PhantomData }
    }

    /// Length of the whole array.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the whole array is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Iterator over a thread's elements of a [`GridStride`].
#[derive(Debug)]
pub struct StrideIter<'r, T> {
    ptr: *mut T,
    len: usize,
    next: usize,
    step: usize,
    _borrow: PhantomData<&'r mut [T]>,
}

impl<'r, T> Iterator for StrideIter<'r, T> {
    type Item = (usize, &'r mut T);

    #[inline(always)]
    fn next(&mut self) -> Option<(usize, &'r mut T)> {
        if self.next >= self.len {
            return None;
        }
        let i = self.next;
        self.next = self.next.saturating_add(self.step);
        // SAFETY: `i < len`; the iterator yields each of this thread's indices once (the
        // index only grows), other threads' indices differ modulo `step`, and the iterator
        // borrows the `GridStride` mutably for `'r`.
        Some((i, unsafe { &mut *self.ptr.add(i) }))
    }
}

/// A writable array cut into one contiguous chunk per thread (`ceil(len / threads)` elements,
/// the last chunks shorter or empty): for per-thread sequential work on a block of data.
#[derive(Debug)]
pub struct Chunks<'a, T> {
    ptr: *mut T,
    start: usize,
    end: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> Partition<'a, T> for Chunks<'a, T> {
    #[inline(always)]
    unsafe fn from_raw_parts(ptr: *mut T, len: usize, index: usize, total: usize) -> Self {
        let chunk = len.div_ceil(total.max(1));
        let start = index.saturating_mul(chunk).min(len);
        let end = start.saturating_add(chunk).min(len);
        Chunks { ptr, start, end, _borrow: PhantomData }
    }
}

impl<T> Chunks<'_, T> {
    /// This thread's chunk (empty for threads past the end).
    #[inline(always)]
    pub fn mine(&mut self) -> &mut [T] {
        // SAFETY: `start <= end <= len`; chunks of distinct threads do not overlap, since
        // thread `k` owns `[k·chunk, (k+1)·chunk)`; `&mut self` makes the slice unique.
        unsafe { core::slice::from_raw_parts_mut(self.ptr.add(self.start), self.end - self.start) }
    }

    /// Index of the chunk's first element in the whole array.
    #[inline(always)]
    pub fn start(&self) -> usize {
        self.start
    }
}

/// One element of a writable array that only one thread of a launch reaches (its `leader`):
/// what [`PerBlock`] and [`Groups`] hand out.
#[derive(Debug)]
struct LeaderElement<'a, T> {
    ptr: *mut T,
    len: usize,
    element: usize,
    leader: bool,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<T> LeaderElement<'_, T> {
    /// The element, in the leader (`None` in other threads, and past the end).
    ///
    /// # Safety
    ///
    /// Of all threads whose views of the array have the same `element`, only one is the
    /// leader (the callers' constructions guarantee it).
    #[inline(always)]
    unsafe fn mine(&mut self) -> Option<&mut T> {
        if self.leader && self.element < self.len {
            // SAFETY: `element < len`; the caller's contract keeps every other thread away
            // from this element; `&mut self` makes the reference unique.
            Some(unsafe { &mut *self.ptr.add(self.element) })
        } else {
            None
        }
    }
}

/// A writable array with one element per block: block `b` (its linear index over the grid,
/// `x + X·(y + Y·z)` over block indices) owns element `b`, and only the block's first thread
/// (thread index 0 in every dimension) gets it — for per-block results (a block's total, a
/// block's flag) written once, without atomics. Blocks past the array's end get nothing.
///
/// ```text
/// let total = block_sum(...);                // the same in every thread of the block
/// if let Some(t) = totals.mine() { *t = total; }
/// ```
#[derive(Debug)]
pub struct PerBlock<'a, T>(LeaderElement<'a, T>);

impl<'a, T> Partition<'a, T> for PerBlock<'a, T> {
    #[inline(always)]
    unsafe fn from_raw_parts(ptr: *mut T, len: usize, _index: usize, _total: usize) -> Self {
        use crate::index::{
            block_idx_x, block_idx_y, block_idx_z, grid_dim_x, grid_dim_y, thread_idx_x, thread_idx_y,
            thread_idx_z,
        };
        let (gx, gy) = (grid_dim_x() as usize, grid_dim_y() as usize);
        let element = block_idx_x() as usize + gx * (block_idx_y() as usize + gy * block_idx_z() as usize);
        let leader = (thread_idx_x() | thread_idx_y() | thread_idx_z()) == 0;
        PerBlock(LeaderElement { ptr, len, element, leader, _borrow: PhantomData })
    }

    #[cfg(not(offload_gpu))]
    #[inline(always)]
    unsafe fn from_cpu_parts(
        ptr: *mut T,
        len: usize,
        _index: usize,
        _total: usize,
        block: usize,
        first: bool,
    ) -> Self {
        // (The same element and leader as `from_raw_parts` computes from the intrinsics.)
        PerBlock(LeaderElement { ptr, len, element: block, leader: first, _borrow: PhantomData })
    }
}

impl<T> PerBlock<'_, T> {
    /// The block's element, in its first thread (`None` in the others, and past the end).
    #[inline(always)]
    pub fn mine(&mut self) -> Option<&mut T> {
        // SAFETY: blocks have distinct linear indices, and one thread of a block has index 0
        // in every dimension.
        unsafe { self.0.mine() }
    }

    /// The index of the block's element (its linear block index).
    #[inline(always)]
    pub fn index(&self) -> usize {
        self.0.element
    }

    /// Length of the whole array.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether the whole array is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }
}

/// A writable array with one element per group of `G` consecutive threads (by linear id):
/// group `g` — threads `g·G … g·G + G − 1` — owns element `g`, and the group's first thread
/// gets it. With `G` dividing the warp size, a group is a run of lanes of one warp: the
/// group-per-row scheme of sparse matrix–vector products, where lanes of a group combine their
/// partial sums with shuffles and the leader writes the row.
///
/// ```text
/// let mut v = partial;
/// let mut off = G / 2;
/// while off > 0 { v += w.shuffle_down(v, off as u32); off /= 2; }   // the leader holds the sum
/// if let Some(y) = rows.mine() { *y = v; }
/// ```
#[derive(Debug)]
pub struct Groups<'a, T, const G: usize>(LeaderElement<'a, T>, usize);

impl<'a, T, const G: usize> Partition<'a, T> for Groups<'a, T, G> {
    #[inline(always)]
    unsafe fn from_raw_parts(ptr: *mut T, len: usize, index: usize, _total: usize) -> Self {
        const { assert!(G > 0, "a group has at least one thread") };
        Groups(
            LeaderElement {
                ptr,
                len,
                element: index / G,
                leader: index.is_multiple_of(G),
                _borrow: PhantomData,
            },
            index % G,
        )
    }
}

impl<T, const G: usize> Groups<'_, T, G> {
    /// The group's element, in the group's first thread (`None` in the others, and past the
    /// end).
    #[inline(always)]
    pub fn mine(&mut self) -> Option<&mut T> {
        // SAFETY: groups are disjoint runs of `G` distinct linear ids, each with one first.
        unsafe { self.0.mine() }
    }

    /// The index of the group's element.
    #[inline(always)]
    pub fn index(&self) -> usize {
        self.0.element
    }

    /// This thread's position in its group, `0..G`.
    #[inline(always)]
    pub fn rank(&self) -> usize {
        // (Kept from the launch's index: worked out again here, the linear id's test for a
        // 1-D launch stood between the two and LLVM computed it twice.)
        self.1
    }

    /// Length of the whole array.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.0.len
    }

    /// Whether the whole array is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.0.len == 0
    }
}

/// A writable array cut into tiles of `V` elements per thread of a block, each tile
/// *striped* across its block: thread `t` of block `b` (of `B` threads) owns elements
/// `b·B·V + k·B + t` for `k < V`. A warp's `k`-th elements are consecutive, so that reading
/// and writing them is one coalesced access per warp — the layout of CUB's block-wide
/// algorithms (scans, sorts) where a block works on a contiguous tile.
///
/// ```text
/// for k in 0..V {
///     if let Some(o) = out.get_mut(k) { *o = f(out.index(k)); }
/// }
/// ```
#[derive(Debug)]
pub struct Tiles<'a, T, const V: usize> {
    ptr: *mut T,
    len: usize,
    /// This thread's first element (`k = 0`), and the distance between its elements.
    first: usize,
    stride: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T, const V: usize> Partition<'a, T> for Tiles<'a, T, V> {
    #[inline(always)]
    unsafe fn from_raw_parts(ptr: *mut T, len: usize, index: usize, _total: usize) -> Self {
        const { assert!(V > 0, "a tile has at least one element per thread") };
        use crate::index::{block_dim_x, block_dim_y, block_dim_z};
        let block = (block_dim_x() * block_dim_y() * block_dim_z()) as usize;
        let (b, t) = (index / block, index % block);
        // Saturating: a first element past the end owns nothing.
        let first = b.saturating_mul(block).saturating_mul(V).saturating_add(t);
        Tiles { ptr, len, first, stride: block, _borrow: PhantomData }
    }
}

impl<T, const V: usize> Tiles<'_, T, V> {
    /// This thread's `k`-th element (`None` for `k ≥ V` and past the end of the array).
    #[inline(always)]
    pub fn get_mut(&mut self, k: usize) -> Option<&mut T> {
        let i = self.index(k);
        if k < V && i < self.len {
            // SAFETY: element `i` is this thread's alone: `(b, k, t)` ↦ `b·B·V + k·B + t` is
            // one-to-one for `k < V`, `t < B`, over the threads of the launch; `&mut self`
            // keeps two of this thread's references from overlapping.
            Some(unsafe { &mut *self.ptr.add(i) })
        } else {
            None
        }
    }

    /// The array index of this thread's `k`-th element (it may lie past the end).
    #[inline(always)]
    pub fn index(&self, k: usize) -> usize {
        self.first.saturating_add(k.saturating_mul(self.stride))
    }

    /// The index of the block's tile's first element.
    #[inline(always)]
    pub fn tile_start(&self) -> usize {
        self.first - self.first % self.stride.max(1) // b·B·V + t − t
    }

    /// Length of the whole array.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the whole array is empty.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}
