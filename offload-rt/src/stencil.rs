//! [`Stencil<N>`]: a fixed set of offsets around a centre index, read together with one bounds
//! check instead of one per point.
//!
//! Stencil codes read a handful of neighbours at offsets that depend on the grid (`i ± 1`,
//! `i ± jp`, `i ± kp`). Indexing each one (`x[i + jp]`) is safe but costs a compare and a
//! branch per point, and on a GPU the branches keep the compiler from issuing the loads
//! together. A `Stencil` knows the lowest and highest of its offsets; [`Stencil::read`] checks
//! once that the whole span around the centre lies inside the slice and then reads every point
//! without further checks (each offset is clamped to the span, which changes nothing but lets
//! the compiler see that the reads are in bounds). A span that does not fit panics — on a GPU
//! the launch fails with an error naming the kernel — exactly as the first failing index would.
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

/// `N` offsets around a centre index, read with one bounds check (see the [module](self)).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stencil<const N: usize> {
    /// Each point's distance from the lowest point; none exceeds `span`.
    rel: [usize; N],
    /// The lowest offset.
    lowest: isize,
    /// From the lowest to the highest point.
    span: usize,
}

impl<const N: usize> Stencil<N> {
    /// The points `centre + offsets[p]`, in this order.
    #[inline(always)]
    pub fn new(offsets: [isize; N]) -> Self {
        let lowest = offsets.iter().copied().min().unwrap_or(0);
        let highest = offsets.iter().copied().max().unwrap_or(0);
        Stencil { rel: offsets.map(|o| o.abs_diff(lowest)), lowest, span: highest.abs_diff(lowest) }
    }

    /// The offsets this stencil reads, relative to the centre.
    pub fn offsets(&self) -> [isize; N] {
        self.rel.map(|r| self.lowest.wrapping_add_unsigned(r))
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
            None => out_of_bounds(centre, self.lowest, self.span, data.len()),
        }
    }

    /// As [`read`](Self::read), or `None` if any point lies outside `data`.
    #[inline(always)]
    pub fn get<T: Copy>(&self, data: &[T], centre: usize) -> Option<[T; N]> {
        if N == 0 {
            return Some(self.rel.map(|_| unreachable!()));
        }
        let start = centre.checked_add_signed(self.lowest)?;
        let window = data.get(start..)?.get(..=self.span)?;
        // `min` never changes `r` (every `r <= span`); it proves the read in bounds.
        Some(self.rel.map(|r| window[r.min(self.span)]))
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn out_of_bounds(centre: usize, lowest: isize, span: usize, len: usize) -> ! {
    panic!(
        "stencil around index {centre} (offsets {lowest} to {lowest}+{span}) reaches outside a slice of {len} elements"
    )
}

#[cfg(all(test, not(offload_gpu)))]
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
        assert_eq!(Stencil::new([]).get::<i32>(&[], 5), Some([]));
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
