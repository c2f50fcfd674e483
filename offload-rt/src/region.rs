//! `Region<T>`: a writable kernel argument, partitioned so that no two threads can ever hold
//! the same element.

use core::marker::PhantomData;

/// A writable view of an array, of which each GPU thread owns exactly one element: the one
/// at its global index ([`Region::index`]). A thread gets that element with
/// [`Region::mine`]; no safe code can reach another thread's element, so thousands of
/// threads write one array without data races and without `unsafe`.
///
/// A `Region` exists only as a kernel parameter; the host passes `&mut [T]` (copied to the
/// device and back) in its place.
///
/// The element is borrowed from the `Region` (`mine(&mut self)`), which is what makes a
/// second view of it a compile error; read [`Region::index`] before taking the element:
///
/// ```text
/// let i = y.index();
/// if let Some(yi) = y.mine() {
///     *yi += a * x[i];
/// }
/// ```
#[derive(Debug)]
pub struct Region<'a, T> {
    ptr: *mut T,
    len: usize,
    index: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> Region<'a, T> {
    /// Builds the calling thread's view of an array of `len` elements at `ptr`.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads and writes of `len` elements for `'a`; during `'a` no
    /// other code may access those elements except through `Region`s built for the same
    /// array by *other* threads, each with its own distinct `index`.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(ptr: *mut T, len: usize, index: usize) -> Self {
        Region { ptr, len, index, _borrow: PhantomData }
    }

    /// The element this thread owns, or `None` when the thread's index lies past the end
    /// (grids are rounded up to whole blocks, so the last block usually has spare threads).
    #[inline(always)]
    pub fn mine(&mut self) -> Option<&mut T> {
        if self.index < self.len {
            // SAFETY: `index < len`, so the pointer is in bounds; `from_raw_parts`' contract
            // gives this thread exclusive use of element `index`, and `&mut self` makes the
            // returned reference unique within the thread.
            Some(unsafe { &mut *self.ptr.add(self.index) })
        } else {
            None
        }
    }

    /// The element this thread owns if it lies at least `margin` elements from both ends
    /// (`margin <= index < len - margin`): a stencil's interior, where the neighbours
    /// `index ± margin` exist. One comparison, `index - margin < len - 2·margin` in wrapping
    /// arithmetic, where the two tests `index >= margin && index + margin < len` take two
    /// branches (and an overflow check) on a GPU.
    ///
    /// ```
    /// # use offload::Region;
    /// # fn demo(mut to: Region<f64>, from: &[f64]) {
    /// let i = to.index();
    /// if let Some(t) = to.mine_within(1) {
    ///     *t = (from[i - 1] + from[i] + from[i + 1]) / 3.0;
    /// }
    /// # }
    /// ```
    #[inline(always)]
    pub fn mine_within(&mut self, margin: usize) -> Option<&mut T> {
        // `len - 2·margin`, or 0 (nothing inside) when the margins cover the array.
        let inner = self.len.saturating_sub(margin).saturating_sub(margin);
        if self.index.wrapping_sub(margin) < inner {
            // SAFETY: `margin <= index` (else the wrapping difference exceeds any `inner`,
            // which is at most `len`) and `index - margin < len - 2·margin`, so `index < len`:
            // in bounds; exclusive as in `mine`.
            Some(unsafe { &mut *self.ptr.add(self.index) })
        } else {
            None
        }
    }

    /// The global index of this thread's element (`global_id_x()` for 1-D launches). Use it
    /// to read the matching elements of read-only inputs.
    #[inline(always)]
    pub fn index(&self) -> usize {
        self.index
    }

    /// Length of the whole array (all threads' elements together).
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

macro_rules! region_nd {
    ($(#[$doc:meta])* $name:ident, $d:literal) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T, const MARGIN: usize = 0> {
            ptr: *mut T,
            extents: [usize; $d],
            /// The thread's position in the array: its global position plus `MARGIN` in
            /// every dimension.
            at: [usize; $d],
            /// For an array of fewer dimensions than the grid: whether the thread is in the
            /// grid's first plane or row (only those own elements).
            owner: bool,
            _borrow: PhantomData<&'a mut [T]>,
        }

        impl<'a, T, const MARGIN: usize> $name<'a, T, MARGIN> {
            /// Builds the view of the thread at global position `at` (x, y, z) of a row-major
            /// array with `extents` (x fastest).
            ///
            /// # Safety
            ///
            /// `ptr` must be valid for reads and writes of the product of `extents` elements
            /// for `'a`; during `'a` no other code may access them except through views built
            /// for the same array by threads at *other* global positions.
            #[doc(hidden)]
            #[inline(always)]
            pub unsafe fn from_raw_parts(ptr: *mut T, extents: [usize; $d], at: [usize; 3]) -> Self {
                const { assert!(MARGIN <= 1 << 20, "a region's margin is at most 2^20 elements") };
                // A lower-dimensional array in a higher-dimensional grid: only the threads of
                // the first plane (or row) own elements, so that no two threads share one.
                let owner = at[$d..].iter().all(|&c| c == 0);
                let mut pos = [0; $d];
                // No overflow: a global id is below 2^42 and the margin at most 2^20.
                pos.copy_from_slice(&at[..$d]);
                $name { ptr, extents, at: pos.map(|p| p + MARGIN), owner, _borrow: PhantomData }
            }

            /// The element this thread owns, or `None` when its position lies in the margin
            /// or outside the array.
            #[inline(always)]
            pub fn mine(&mut self) -> Option<&mut T> {
                let mut linear = 0;
                let mut inside = self.owner;
                for d in (0..$d).rev() {
                    inside &= self.at[d] + MARGIN < self.extents[d];
                    linear = linear * self.extents[d] + self.at[d];
                }
                if inside {
                    // SAFETY: every coordinate is below its extent less the margin, so
                    // `linear` is in bounds; `from_raw_parts`' contract gives this thread
                    // exclusive use of the element at its position (distinct global positions
                    // plus the same margin are distinct positions), and `&mut self` makes the
                    // reference unique in the thread.
                    Some(unsafe { &mut *self.ptr.add(linear) })
                } else {
                    None
                }
            }

            /// This thread's position in the array (x, y[, z]): its global ids plus the margin.
            #[inline(always)]
            pub fn index(&self) -> [usize; $d] {
                self.at
            }

            /// This thread's position as an index into the flattened array,
            /// `x + nx·(y + ny·z)`: the centre to read other arrays of the same shape at.
            #[inline(always)]
            pub fn linear(&self) -> usize {
                let mut linear = 0usize;
                for d in (0..$d).rev() {
                    linear = linear.wrapping_mul(self.extents[d]).wrapping_add(self.at[d]);
                }
                linear
            }

            /// The array's extents.
            #[inline(always)]
            pub fn extents(&self) -> [usize; $d] {
                self.extents
            }
        }
    };
}

region_nd!(
    /// A writable 2-D array (row-major, x fastest: element `(x, y)` is at `x + nx·y`) of which
    /// each thread owns the element at its global `(x, y)` position. The host passes
    /// `(&mut data, [nx, ny])`. In a 3-D launch only threads with `z == 0` own elements.
    ///
    /// `Region2<T, M>` leaves a margin of `M` elements on every side (a stencil's halo): the
    /// thread at global `(x, y)` owns the element at `(x + M, y + M)` if that lies at least
    /// `M` from the far edges, so a launch over `(nx − 2M) × (ny − 2M)` threads covers the
    /// interior, as CUDA stencils that add `M` to the thread's position do. The margin is a
    /// constant: it costs nothing at run time.
    Region2,
    2
);
region_nd!(
    /// A writable 3-D array (row-major, x fastest: element `(x, y, z)` is at
    /// `x + nx·(y + ny·z)`) of which each thread owns the element at its global `(x, y, z)`
    /// position. The host passes `(&mut data, [nx, ny, nz])`. `Region3<T, M>` leaves a margin
    /// of `M` on every side (see [`Region2`]).
    Region3,
    3
);

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

#[cfg(test)]
mod tests {
    use super::Region;

    /// `mine_within(m)` gives the element exactly when `m <= index < len - m`, for every
    /// index of small arrays and for margins up to and past half the length.
    #[test]
    fn mine_within_is_the_interior_and_nothing_else() {
        for len in 0..9usize {
            let mut data: Vec<usize> = (0..len).collect();
            for margin in [0, 1, 2, 3, 4, 5, usize::MAX / 2, usize::MAX] {
                for index in (0..len + 3).chain([usize::MAX - 1, usize::MAX]) {
                    // SAFETY: `data` outlives the view, and only this view touches it.
                    let mut r = unsafe { Region::from_raw_parts(data.as_mut_ptr(), len, index) };
                    let inside = index >= margin && index.checked_add(margin).is_some_and(|e| e < len);
                    let got = r.mine_within(margin).map(|v| *v);
                    assert_eq!(got, inside.then_some(index), "len {len}, margin {margin}, index {index}");
                }
            }
        }
    }
}
