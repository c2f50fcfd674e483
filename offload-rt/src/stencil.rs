//! [`Stencil<N>`]: a fixed set of offsets around a centre index, read together with one bounds
//! check instead of one per point.
//!
//! Stencil codes read a handful of neighbours at offsets that depend on the grid (`i ± 1`,
//! `i ± jp`, `i ± kp`). Indexing each one (`x[i + jp]`) is safe but costs a compare and a
//! branch per point, and on a GPU the branches keep the compiler from issuing the loads
//! together. A `Stencil` knows the lowest and highest of its offsets; [`Stencil::read`] checks
//! once that the whole span around the centre lies inside the slice and then reads every point
//! without further checks (every offset lies in the span by construction: the fields are
//! private). A span that does not fit panics — on a GPU the launch fails with an error naming
//! the kernel — exactly as the first failing index would. Offsets are kept as 32-bit distances
//! (a stencil spans at most `u32::MAX` elements), which keeps the address arithmetic and the
//! registers of a 27-point stencil close to CUDA's.
//!
//! Several slices read at the same points around one centre (struct-of-arrays data) are
//! checked together by [`Stencil::views`]: one failure path for all of them.
//!
//! Build a stencil once, on the host, and pass it to the kernel as a parameter (it is plain
//! data), or build it in the kernel from its parameters:
//!
//! ```
//! use offload::Stencil;
//! // The 7-point neighbourhood of a 3-D grid with rows of `jp` and planes of `kp` elements.
//! let (jp, kp) = (10isize, 100isize);
//! let seven = Stencil::new([-kp, -jp, -1, 0, 1, jp, kp]);
//! let x: Vec<f64> = (0..1000).map(f64::from).collect();
//! assert_eq!(seven.read(&x, 555), [455.0, 545.0, 554.0, 555.0, 556.0, 565.0, 655.0]);
//! assert_eq!(seven.get(&x, 50), None); // 50 - 100 is outside
//! ```

use crate::load_order::{Lanes, together};

/// `N` offsets around a centre index, read with one bounds check (see the [module](self)).
///
/// `Stencil<N, W>` (made by [`Stencil::runs`]) reads a run of `W` consecutive elements from
/// each of its `N` offsets: the elements of a run are at constant distances from its start,
/// which the GPU folds into the loads' address (`[r + 8]`), where `W` separate points would
/// each need their address computed.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stencil<const N: usize, const W: usize = 1> {
    /// The lowest offset.
    lowest: isize,
    /// From the lowest point to the highest (a run's last element is `W - 1` further).
    span: u32,
    /// Each point's distance from the lowest point. Invariant: none exceeds `span` (`new` and
    /// `runs` make it so, the fields are private, and the all-zero value keeps it); `W > 0`.
    rel: [u32; N],
}

impl<const N: usize> Stencil<N> {
    /// The points `centre + offsets[p]`, in this order.
    ///
    /// # Panics
    ///
    /// If the offsets span more than `u32::MAX` elements.
    #[inline(always)]
    #[track_caller]
    pub fn new(offsets: [isize; N]) -> Self {
        Self::runs(offsets)
    }
}

impl<const N: usize, const W: usize> Stencil<N, W> {
    /// Runs of `W` consecutive elements starting at `centre + starts[p]`, in this order.
    ///
    /// ```
    /// use offload::Stencil;
    /// // The 3×3 neighbourhood of a 2-D grid with rows of 10: three runs of three.
    /// let rows = Stencil::<3, 3>::runs([-11, -1, 9]);
    /// let x: Vec<i32> = (0..100).collect();
    /// let v = rows.view(&x, 55);
    /// assert_eq!([v.run(0), v.run(2)], [[44, 45, 46], [64, 65, 66]]);
    /// ```
    ///
    /// # Panics
    ///
    /// If the runs' starts span more than `u32::MAX` elements; `W = 0` is a compile error.
    #[inline(always)]
    #[track_caller]
    pub fn runs(starts: [isize; N]) -> Self {
        const { assert!(W > 0 && W <= u32::MAX as usize, "a stencil's runs hold 1 to u32::MAX elements") };
        let lowest = starts.iter().copied().min().unwrap_or(0);
        let highest = starts.iter().copied().max().unwrap_or(0);
        let Ok(span) = u32::try_from(highest.abs_diff(lowest)) else {
            panic!("a stencil spans at most u32::MAX elements (offsets {lowest} to {highest}, runs of {W})")
        };
        // Each distance is at most `span`, so it fits a `u32` too.
        Stencil { lowest, span, rel: starts.map(|o| o.abs_diff(lowest) as u32) }
    }

    /// The offsets this stencil reads, relative to the centre.
    pub fn offsets(&self) -> [isize; N] {
        self.rel.map(|r| self.lowest.wrapping_add_unsigned(r as usize))
    }

    /// The values of `data` at `centre + offset` for every offset, in order.
    ///
    /// # Panics
    ///
    /// If any point lies outside `data` (or below index 0): on a GPU the launch then fails with
    /// an error naming the kernel.
    #[inline(always)]
    #[track_caller]
    pub fn read<T: Copy>(&self, data: &[T], centre: usize) -> [T; N] {
        match self.get(data, centre) {
            Some(values) => values,
            None => out_of_bounds(centre, self.lowest, self.extent(), data.len()),
        }
    }

    /// Every run of `data` around `centre`: `[run 0, run 1, …]`, each `W` consecutive values
    /// (the 8 corners of a 3-D cell are 4 runs of 2). One check, as [`read`](Self::read)'s.
    ///
    /// ```
    /// use offload::Stencil;
    /// // A cell's corners in a 3-D grid with rows of 10 and planes of 100.
    /// let corners = Stencil::<4, 2>::runs([0, 10, 100, 110]);
    /// let x: Vec<i32> = (0..1000).collect();
    /// assert_eq!(corners.read_runs(&x, 5), [[5, 6], [15, 16], [105, 106], [115, 116]]);
    /// ```
    ///
    /// # Panics
    ///
    /// As [`read`](Self::read).
    #[inline(always)]
    #[track_caller]
    pub fn read_runs<T: Copy>(&self, data: &[T], centre: usize) -> [[T; W]; N] {
        let view = self.view(data, centre);
        core::array::from_fn(|p| view.run(p))
    }

    /// The values of `data` at the listed points only (`points` index this stencil's offsets):
    /// for an array that needs a few of the points another array needs all of. The check is
    /// the same as [`read`](Self::read)'s: the whole span around `centre` must lie in `data`.
    ///
    /// # Panics
    ///
    /// As [`read`](Self::read), and if a point is not below `N`.
    #[inline(always)]
    #[track_caller]
    pub fn pick<T: Copy, const M: usize>(&self, data: &[T], centre: usize, points: [usize; M]) -> [T; M] {
        let view = self.view(data, centre);
        points.map(|p| view.at(p))
    }

    /// The points around `centre` in `data`, checked now and read later, one at a time, with
    /// [`Neighbours::at`]: for long stencils whose values are best loaded where they are used
    /// (a 27-point product read all at once keeps 27 values live in registers).
    ///
    /// # Panics
    ///
    /// As [`read`](Self::read).
    #[inline(always)]
    #[track_caller]
    pub fn view<'a, T>(&'a self, data: &'a [T], centre: usize) -> Neighbours<'a, T, N, W> {
        match self.window(data, centre) {
            Some(window) => Neighbours { window, stencil: self },
            None => out_of_bounds(centre, self.lowest, self.extent(), data.len()),
        }
    }

    /// The points around `centre` in each of several slices, checked together: one failure
    /// path for all of them (on a GPU, one branch), and per slice one comparison of its
    /// length. For arrays of one mesh read at the same points (struct-of-arrays codes).
    ///
    /// # Panics
    ///
    /// As [`read`](Self::read), if the span around `centre` reaches outside any of the slices.
    #[inline(always)]
    #[track_caller]
    pub fn views<'a, T, const K: usize>(
        &'a self,
        data: [&'a [T]; K],
        centre: usize,
    ) -> [Neighbours<'a, T, N, W>; K] {
        let span = self.span(centre);
        // `&`, not `&&`: every slice's comparison is made, and only one branch taken.
        let fits = data.iter().fold(span.is_some(), |ok, d| ok & span.is_some_and(|(_, end)| end < d.len()));
        if !fits {
            let len = data.iter().map(|d| d.len()).min().unwrap_or(0);
            out_of_bounds(centre, self.lowest, self.extent(), len)
        }
        let start = span.map_or(0, |(start, _)| start);
        data.map(|d| Neighbours {
            // SAFETY: `start + extent = end < d.len()` for every slice, checked above.
            window: unsafe { d.get_unchecked(start..=start + self.extent()) },
            stencil: self,
        })
    }

    /// Every run around `centre` in each of several slices, checked together (as
    /// [`views`](Self::views)) and loaded together: on a GPU all `K · N · W` loads issue
    /// before any arithmetic on the values ([`together`](crate::together)), whatever order
    /// the compiler would pick. For a kernel that reads a few arrays at a cell's corners and
    /// then divides or branches: each array's loads would otherwise wait until the arithmetic
    /// on the arrays read before it (DEL_DOT_VEC_2D's four arrays at four corners).
    ///
    /// ```
    /// use offload::Stencil;
    /// // A 2-D cell's corners in rows of 10: runs of two at the cell's row and the next.
    /// let corners = Stencil::<2, 2>::runs([0, 10]);
    /// let x: Vec<f64> = (0..100).map(f64::from).collect();
    /// let y: Vec<f64> = x.iter().map(|v| v * 2.0).collect();
    /// let [xs, ys] = corners.read_together([&x, &y], 5);
    /// assert_eq!(xs, [[5.0, 6.0], [15.0, 16.0]]);
    /// assert_eq!(ys, [[10.0, 12.0], [30.0, 32.0]]);
    /// ```
    ///
    /// # Panics
    ///
    /// As [`views`](Self::views). More than [`MAX_TOGETHER`](crate::MAX_TOGETHER) values is
    /// a compile error.
    #[inline(always)]
    #[track_caller]
    pub fn read_together<T: Lanes, const K: usize>(
        &self,
        data: [&[T]; K],
        centre: usize,
    ) -> [[[T; W]; N]; K] {
        let views = self.views(data, centre);
        together(views.map(|v| core::array::from_fn(|p| v.run(p))))
    }

    /// From the window's first element to its last: the span plus a run's length less one
    /// (at most `2 · u32::MAX`: no overflow).
    #[inline(always)]
    fn extent(&self) -> usize {
        self.span as usize + (W - 1)
    }

    /// The first and last index of the span around `centre`, if neither overflows (the
    /// slice-independent part of every check).
    #[inline(always)]
    fn span(&self, centre: usize) -> Option<(usize, usize)> {
        let (start, below) = centre.overflowing_add_signed(self.lowest);
        let (end, above) = start.overflowing_add(self.extent());
        (!below & !above).then_some((start, end))
    }

    /// The `span + W` elements of `data` from `centre + lowest`, if they exist: one
    /// comparison with the slice's length once the span's ends are known (they are the same
    /// for every slice read around one centre, so LLVM computes them once).
    #[inline(always)]
    fn window<'d, T>(&self, data: &'d [T], centre: usize) -> Option<&'d [T]> {
        let (start, end) = self.span(centre)?;
        if end >= data.len() {
            return None;
        }
        // SAFETY: `start <= end < len`, checked just above.
        Some(unsafe { data.get_unchecked(start..=end) })
    }

    /// As [`read`](Self::read), or `None` if any point lies outside `data`.
    #[inline(always)]
    pub fn get<T: Copy>(&self, data: &[T], centre: usize) -> Option<[T; N]> {
        if N == 0 {
            // No points: nothing to read, nothing out of bounds.
            return Some(core::array::from_fn(|_| unreachable!()));
        }
        let view = Neighbours { window: self.window(data, centre)?, stencil: self };
        Some(core::array::from_fn(|p| view.at(p)))
    }
}

/// A [`Stencil`]'s points around one centre of one slice, already checked: [`at`](Self::at)
/// reads one point without a further check.
#[derive(Clone, Copy, Debug)]
pub struct Neighbours<'a, T, const N: usize, const W: usize = 1> {
    /// The stencil's span around the centre: `stencil.span + W` elements.
    window: &'a [T],
    stencil: &'a Stencil<N, W>,
}

impl<T: Copy, const N: usize, const W: usize> Neighbours<'_, T, N, W> {
    /// The value at the stencil's point `p` (its `p`-th offset).
    ///
    /// # Panics
    ///
    /// If `p >= N` (for a constant `p` the compiler decides the test: no run-time cost).
    #[inline(always)]
    #[track_caller]
    pub fn at(&self, p: usize) -> T {
        let r = self.stencil.rel[p] as usize;
        // SAFETY: `window` has `span + W` elements (`Stencil::view`/`get` made it so) and every
        // distance of the stencil is at most `span` (its invariant).
        // (The window is a sub-slice of a read-only kernel argument, so LLVM emits these loads
        // as `ld.global.nc`, as nvcc does for CUDA's `const __restrict__` pointers.)
        unsafe { *self.window.get_unchecked(r) }
    }

    /// The `W` elements of the run at the stencil's point `p` (for `W = 1`, `[self.at(p)]`).
    ///
    /// # Panics
    ///
    /// If `p >= N` (for a constant `p` the compiler decides the test: no run-time cost).
    #[inline(always)]
    #[track_caller]
    pub fn run(&self, p: usize) -> [T; W] {
        let r = self.stencil.rel[p] as usize;
        // SAFETY: as in `at`: every run starts at most `span` into the window's `span + W`
        // elements, so its `W` elements (`c < W`) lie in the window.
        core::array::from_fn(|c| unsafe { *self.window.get_unchecked(r + c) })
    }
}

/// On a GPU a panic traps and its message is lost (the launch fails naming the kernel), so
/// every stencil check shares one argument-free failure path there: LLVM then folds the checks
/// of several slices around one centre into one branch.
#[inline(always)]
#[track_caller]
fn out_of_bounds(centre: usize, lowest: isize, span: usize, len: usize) -> ! {
    crate::arch::fail!(
        "stencil around index {centre} (offsets {lowest} to {lowest}+{span}) reaches outside a slice of {len} elements"
    )
}

#[cfg(test)]
mod tests {
    use super::Stencil;

    #[test]
    fn reads_every_offset_in_order_with_one_check() {
        let x: Vec<i32> = (0..100).collect();
        let s = Stencil::new([3, -2, 0, 7]);
        assert_eq!(s.offsets(), [3, -2, 0, 7]);
        assert_eq!(s.read(&x, 10), [13, 8, 10, 17]);
        assert_eq!(s.get(&x, 2), Some([5, 0, 2, 9]));
        assert_eq!(s.get(&x, 1), None, "1 - 2 is below 0");
        assert_eq!(s.get(&x, 92), Some([95, 90, 92, 99]));
        assert_eq!(s.get(&x, 93), None, "93 + 7 is past the end");
        assert_eq!(s.get(&x, usize::MAX), None);
        // Only positive offsets: the window starts above the centre.
        assert_eq!(Stencil::new([1, 2]).read(&x, 97), [98, 99]);
        assert_eq!(Stencil::new([1, 2]).get(&x, 98), None);
        // A positive lowest offset past usize::MAX wraps to a small start: refused all the same.
        assert_eq!(Stencil::new([1, 2]).get(&x, usize::MAX - 1), None);
        assert_eq!(Stencil::new([1, 2]).get(&x, usize::MAX), None);
        assert_eq!(Stencil::new([]).get::<i32>(&[], 5), Some([]));
        // Some points only; the check still covers the whole span.
        assert_eq!(s.pick(&x, 10, [3, 0]), [17, 13]);
        let v = s.view(&x, 10);
        assert_eq!([v.at(3), v.at(1), v.at(3)], [17, 8, 17]);
    }

    #[test]
    fn runs_read_consecutive_elements_and_the_span_covers_them() {
        let x: Vec<i32> = (0..100).collect();
        let rows = Stencil::<3, 3>::runs([-11, -1, 9]);
        assert_eq!(rows.offsets(), [-11, -1, 9]);
        let v = rows.view(&x, 55);
        assert_eq!([v.run(0), v.run(1), v.run(2)], [[44, 45, 46], [54, 55, 56], [64, 65, 66]]);
        assert_eq!(v.at(1), 54);
        // The last run ends two past its start: 88 + 9 + 2 = 99 is the last element.
        assert!(rows.get(&x, 88).is_some());
        assert!(rows.get(&x, 89).is_none());
        assert!(rows.get(&x, 10).is_none(), "10 - 11 is below 0");
    }

    #[test]
    fn several_slices_are_checked_together() {
        let x: Vec<i32> = (0..100).collect();
        let y: Vec<i32> = (100..200).collect();
        let s = Stencil::new([-1, 0, 1]);
        let [a, b] = s.views([&x, &y], 50);
        assert_eq!([a.at(0), a.at(2), b.at(0), b.at(2)], [49, 51, 149, 151]);
        let [c] = s.views([&y[..60]], 58);
        assert_eq!(c.at(2), 159);
    }

    #[test]
    #[should_panic(
        expected = "stencil around index 59 (offsets -1 to -1+2) reaches outside a slice of 60 elements"
    )]
    fn the_shortest_slice_decides() {
        let x: Vec<i32> = (0..100).collect();
        let _ = Stencil::new([-1, 0, 1]).views([&x, &x[..60]], 59);
    }

    #[test]
    #[should_panic(expected = "stencil around index 1 (offsets -2 to -2+9)")]
    fn picking_checks_the_whole_span() {
        let x: Vec<i32> = (0..100).collect();
        let _ = Stencil::new([3, -2, 0, 7]).pick(&x, 1, [2]);
    }

    #[test]
    #[should_panic(expected = "a stencil spans at most u32::MAX elements")]
    fn spans_beyond_u32_are_refused() {
        let _ = Stencil::new([0, 1 << 33]);
    }

    #[test]
    #[should_panic(
        expected = "stencil around index 99 (offsets -1 to -1+2) reaches outside a slice of 100 elements"
    )]
    fn a_point_outside_panics_with_the_span() {
        let x = [0u8; 100];
        let _ = Stencil::new([-1, 0, 1]).read(&x, 99);
    }
}
