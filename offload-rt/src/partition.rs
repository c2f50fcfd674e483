//! 1-D partitions of a writable array among all threads of a launch ([`GridStride`],
//! [`Chunks`]): each thread's share is disjoint from every other's by construction.

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
