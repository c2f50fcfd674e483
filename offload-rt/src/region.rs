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
        if self.within(margin) {
            // SAFETY: `within`: `margin <= index` (else the wrapping difference exceeds any
            // `len - 2·margin`, which is at most `len`) and `index - margin < len - 2·margin`,
            // so `index < len`: in bounds; exclusive as in `mine`.
            Some(unsafe { &mut *self.ptr.add(self.index) })
        } else {
            None
        }
    }

    /// The element this thread owns if it lies at least `MARGIN` from both ends (as
    /// [`mine_within`](Self::mine_within)), and the points of `from`, an array at least as
    /// long, within `MARGIN` of it ([`Near::at`]`([offset])`), with no check per point (see
    /// [`Region2::mine_near`]).
    ///
    /// ```
    /// # use offload::Region;
    /// # fn demo(mut to: Region<f64>, from: &[f64]) {
    /// if let Some((t, near)) = to.mine_near::<1, _>(from) {
    ///     *t = (near.at([-1]) + near.at([0]) + near.at([1])) / 3.0;
    /// }
    /// # }
    /// ```
    #[inline(always)]
    pub fn mine_near<'f, const MARGIN: usize, U>(
        &mut self,
        from: &'f [U],
    ) -> Option<(&mut T, Near<'f, U, 1, MARGIN>)> {
        // `&`: one branch for both (the length test is the same in every thread).
        if self.within(MARGIN) & (from.len() >= self.len) {
            // SAFETY: as in `mine_within`.
            let mine = unsafe { &mut *self.ptr.add(self.index) };
            Some((mine, Near { data: from, centre: self.index, extents: [self.len] }))
        } else {
            None
        }
    }

    /// Whether this thread's index lies at least `margin` from both ends: `index - margin <
    /// len - 2·margin` in wrapping arithmetic (an index below the margin wraps past any
    /// `len`), one comparison.
    #[inline(always)]
    fn within(&self, margin: usize) -> bool {
        // `len - 2·margin`, or 0 (nothing inside) when the margins cover the array.
        let inner = self.len.saturating_sub(margin).saturating_sub(margin);
        self.index.wrapping_sub(margin) < inner
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
                let (linear, inside) = self.locate();
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

            /// The element this thread owns, as [`mine`](Self::mine), and the points of
            /// `from` around it: `from` is an array of the same extents (at least as many
            /// elements), read at offsets within the margin with [`Near::at`]. One check for
            /// all of them — the thread's position inside the margin, which `mine` makes
            /// anyway, and `from`'s length, the same for every thread — where a
            /// [`Stencil`](crate::Stencil) checks the span around each centre (a stencil
            /// reads at any offsets; these stay within the margin).
            ///
            /// ```
            /// # use offload::Region2;
            /// // A 5-point average over the interior (margin 1) of a 2-D grid.
            /// # fn demo(from: &[f64], mut to: Region2<f64, 1>) {
            /// if let Some((t, near)) = to.mine_near(from) {
            ///     let [w, c, e] = [near.at([-1, 0]), near.at([0, 0]), near.at([1, 0])];
            ///     *t = 0.2 * (c + w + e + near.at([0, 1]) + near.at([0, -1]));
            /// }
            /// # }
            /// ```
            ///
            /// `None` where `mine` gives `None`, and for every thread if `from` is shorter
            /// than the array.
            #[inline(always)]
            pub fn mine_near<'f, U>(&mut self, from: &'f [U]) -> Option<(&mut T, Near<'f, U, $d, MARGIN>)> {
                let (linear, inside) = self.locate();
                // The product does not overflow: `from_raw_parts`' contract makes it the
                // length of an array in memory.
                let elements = self.extents.iter().fold(1usize, |n, &e| n.wrapping_mul(e));
                // `&`: one branch for both (the length test is the same in every thread).
                if inside & (from.len() >= elements) {
                    // SAFETY: as in `mine`.
                    let mine = unsafe { &mut *self.ptr.add(linear) };
                    Some((mine, Near { data: from, centre: linear, extents: self.extents }))
                } else {
                    None
                }
            }

            /// The flattened index of this thread's position, and whether the thread owns
            /// it (its position is at least `MARGIN` from every far edge, and it is in the
            /// grid's first plane or row where the array has fewer dimensions).
            #[inline(always)]
            fn locate(&self) -> (usize, bool) {
                let mut linear = 0;
                let mut inside = self.owner;
                for d in (0..$d).rev() {
                    inside &= self.at[d] + MARGIN < self.extents[d];
                    linear = linear * self.extents[d] + self.at[d];
                }
                (linear, inside)
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

/// The points of a read-only array around a position of a [`Region`], [`Region2`] or
/// [`Region3`] with a margin of `MARGIN`, from their `mine_near`: the position
/// is inside the margin and the array is as large as the region's, so every point within
/// `MARGIN` of it in each dimension exists and [`at`](Self::at) reads it without a check.
#[derive(Clone, Copy, Debug)]
pub struct Near<'f, U, const D: usize, const MARGIN: usize> {
    data: &'f [U],
    /// The position's flattened index. Invariant: the position is at least `MARGIN` from
    /// every edge of an array of `extents`, and `data` holds at least the product of
    /// `extents` elements (`mine_near` checks both).
    centre: usize,
    extents: [usize; D],
}

impl<U: Copy, const D: usize, const MARGIN: usize> Near<'_, U, D, MARGIN> {
    /// The value at `offset` (x, y[, z]) from the position: `offset = [0; D]` is the
    /// position itself, `[1, 0]` its east neighbour in a 2-D array, `[0, -1, 0]` the row
    /// before in a 3-D one.
    ///
    /// # Panics
    ///
    /// If an offset exceeds the margin (`|offset[d]| > MARGIN`): on a GPU the launch fails with
    /// an error naming the kernel. For constant offsets, the usual case, the compiler decides
    /// the test, so it costs nothing at run time.
    #[inline(always)]
    #[track_caller]
    pub fn at(&self, offset: [isize; D]) -> U {
        if offset.iter().any(|o| o.unsigned_abs() > MARGIN) {
            outside_margin(MARGIN);
        }
        // The offset's distance in the flattened array, x fastest.
        let mut delta = 0isize;
        for d in (0..D).rev() {
            delta = delta.wrapping_mul(self.extents[d] as isize).wrapping_add(offset[d]);
        }
        let i = self.centre.wrapping_add_signed(delta);
        // SAFETY: the position p has `MARGIN <= p[d] < extents[d] - MARGIN` in every dimension
        // (the invariant) and `|offset[d]| <= MARGIN` (checked above), so `p + offset` lies in
        // the array and its flattened index, which the wrapping arithmetic computes exactly
        // (the true value is in `0..product of extents`), is below `data.len()`.
        unsafe { *self.data.get_unchecked(i) }
    }
}

/// On a GPU the message is lost: the trap ends the launch, which fails naming the kernel.
#[inline(always)]
#[track_caller]
fn outside_margin(margin: usize) -> ! {
    crate::arch::fail!("Near::at: an offset beyond the region's margin of {margin}")
}

#[cfg(test)]
mod tests {
    use super::{Region, Region2, Region3};

    /// In 2-D and 3-D, with margins 1 and 2: every thread of a grid covering the array and
    /// more gets its element exactly on the interior, and `at` reads the point of `from` at
    /// the offset's coordinates, for every offset within the margin.
    #[test]
    fn mine_near_reads_every_offset_within_the_margin() {
        fn check<const M: usize>(nx: usize, ny: usize, nz: usize) {
            let len = nx * ny * nz;
            let from: Vec<usize> = (0..len).map(|i| 1000 + i).collect();
            let mut to = vec![0usize; len];
            let m = M as isize;
            for (gx, gy, gz) in
                (0..nx + 1).flat_map(|x| (0..ny + 1).flat_map(move |y| (0..nz + 1).map(move |z| (x, y, z))))
            {
                let (x, y, z) = (gx + M, gy + M, gz + M);
                let interior = x + M < nx && y + M < ny && z + M < nz;
                let flat = |x: usize, y: usize, z: usize| x + nx * (y + ny * z);
                if nz == 1 {
                    // SAFETY: `to` outlives the view, and only this view touches it.
                    let mut r = unsafe {
                        Region2::<usize, M>::from_raw_parts(to.as_mut_ptr(), [nx, ny], [gx, gy, gz])
                    };
                    let owner = gz == 0;
                    let interior = x + M < nx && y + M < ny;
                    assert_eq!(
                        r.mine_near(&from).is_some(),
                        interior && owner,
                        "2-D {nx}x{ny}, thread {gx},{gy},{gz}"
                    );
                    assert!(r.mine_near(&from[..len - 1]).is_none(), "a shorter `from` gives nothing");
                    if let Some((t, near)) = r.mine_near(&from) {
                        *t += 1;
                        for (dx, dy) in (-m..=m).flat_map(|dx| (-m..=m).map(move |dy| (dx, dy))) {
                            let want = from[flat(x.wrapping_add_signed(dx), y.wrapping_add_signed(dy), 0)];
                            assert_eq!(near.at([dx, dy]), want, "({x},{y}) + ({dx},{dy})");
                        }
                    }
                } else {
                    // SAFETY: as above.
                    let mut r = unsafe {
                        Region3::<usize, M>::from_raw_parts(to.as_mut_ptr(), [nx, ny, nz], [gx, gy, gz])
                    };
                    assert_eq!(
                        r.mine_near(&from).is_some(),
                        interior,
                        "3-D {nx}x{ny}x{nz}, thread {gx},{gy},{gz}"
                    );
                    if let Some((t, near)) = r.mine_near(&from) {
                        *t += 1;
                        for d in 0..(2 * M + 1).pow(3) {
                            let o = [d % (2 * M + 1), d / (2 * M + 1) % (2 * M + 1), d / (2 * M + 1).pow(2)]
                                .map(|c| c as isize - m);
                            let p = [x, y, z]
                                .iter()
                                .zip(o)
                                .map(|(&c, o)| c.wrapping_add_signed(o))
                                .collect::<Vec<_>>();
                            assert_eq!(near.at(o), from[flat(p[0], p[1], p[2])], "({x},{y},{z}) + {o:?}");
                        }
                    }
                }
            }
            // Each interior element was handed out once, nothing else.
            for (i, &t) in to.iter().enumerate() {
                let (x, y, z) = (i % nx, i / nx % ny, i / (nx * ny));
                let interior = [(x, nx), (y, ny), (z, nz)]
                    .iter()
                    .enumerate()
                    .all(|(d, &(c, n))| (nz == 1 && d == 2) || (c >= M && c + M < n));
                assert_eq!(t, usize::from(interior), "element ({x},{y},{z}) of {nx}x{ny}x{nz}");
            }
        }
        for (nx, ny) in [(1, 1), (2, 3), (3, 3), (5, 4), (7, 6)] {
            check::<1>(nx, ny, 1);
            check::<2>(nx, ny, 1);
        }
        for (nx, ny, nz) in [(3, 3, 3), (4, 5, 3), (6, 5, 7)] {
            check::<1>(nx, ny, nz);
            check::<2>(nx, ny, nz);
        }
    }

    /// 1-D: the element exactly where `mine_within` gives it (and `from` is long enough),
    /// and every offset within the margin reads its own point.
    #[test]
    fn mine_near_in_1d_is_mine_within_with_the_neighbours() {
        fn check<const M: usize>() {
            for len in 0..9usize {
                let from: Vec<usize> = (0..len).map(|i| 100 + i).collect();
                let mut data = vec![0usize; len];
                for index in (0..len + 3).chain([usize::MAX - 1, usize::MAX]) {
                    // SAFETY: `data` outlives the view, and only this view touches it.
                    let mut r = unsafe { Region::from_raw_parts(data.as_mut_ptr(), len, index) };
                    let inside = r.mine_within(M).is_some();
                    assert_eq!(
                        r.mine_near::<M, _>(&from).is_some(),
                        inside,
                        "len {len}, margin {M}, index {index}"
                    );
                    if len > 0 {
                        assert!(r.mine_near::<M, _>(&from[..len - 1]).is_none(), "a shorter `from`");
                    }
                    if let Some((_, near)) = r.mine_near::<M, _>(&from) {
                        for o in -(M as isize)..=M as isize {
                            assert_eq!(near.at([o]), from[index.wrapping_add_signed(o)], "{index} + {o}");
                        }
                    }
                }
            }
        }
        check::<0>();
        check::<1>();
        check::<2>();
    }

    #[test]
    #[should_panic(expected = "an offset beyond the region's margin of 1")]
    fn an_offset_beyond_the_margin_panics() {
        let from = [0.0; 9];
        let mut to = [0.0; 9];
        // SAFETY: `to` outlives the view, and only this view touches it.
        let mut r = unsafe { Region2::<f64, 1>::from_raw_parts(to.as_mut_ptr(), [3, 3], [0, 0, 0]) };
        let (_, near) = r.mine_near(&from).expect("(1, 1) is the interior of 3 x 3");
        let _ = near.at([2, 0]);
    }

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
