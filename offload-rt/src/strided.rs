//! `Strided<T>`: a read-only view of every `stride`-th element of a slice — a column of a
//! row-major matrix — whose bounds are checked once, when the view is made, so that reading
//! it in a loop costs no check per element.

use core::marker::PhantomData;

/// `count` elements of a slice, `stride` apart from `start` (see [`Strided::new`]).
#[derive(Clone, Copy, Debug)]
pub struct Strided<'a, T> {
    base: *const T,
    stride: usize,
    count: usize,
    _borrow: PhantomData<&'a [T]>,
}

impl<'a, T: Copy> Strided<'a, T> {
    /// Elements `data[start + k·stride]` for `k < count`: column `j` of a row-major `n × m`
    /// matrix is `Strided::new(a, j, m, n)`. `None` when the last of them lies past the end.
    #[inline(always)]
    pub fn new(data: &'a [T], start: usize, stride: usize, count: usize) -> Option<Strided<'a, T>> {
        if count > 0 {
            let last = (count - 1).checked_mul(stride)?.checked_add(start)?;
            if last >= data.len() {
                return None;
            }
        }
        Some(Strided { base: data.as_ptr().wrapping_add(start), stride, count, _borrow: PhantomData })
    }

    /// Number of elements.
    #[inline(always)]
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether there are none.
    #[inline(always)]
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Element `k`, if `k < len()`.
    #[inline(always)]
    pub fn get(&self, k: usize) -> Option<T> {
        // SAFETY: `k < count`, and `new` checked that `start + (count - 1)·stride` is inside
        // the borrowed slice, so `start + k·stride` is too.
        (k < self.count).then(|| unsafe { self.base.add(k * self.stride).read() })
    }

    /// The elements in order.
    #[inline(always)]
    pub fn iter(&self) -> impl Iterator<Item = T> + 'a {
        let (base, stride) = (self.base, self.stride);
        // SAFETY: as in `get`: every `k` here is below `count`.
        (0..self.count).map(move |k| unsafe { base.add(k * stride).read() })
    }
}

#[cfg(test)]
mod tests {
    use super::Strided;

    #[test]
    fn columns_of_a_row_major_matrix() {
        let a: Vec<u32> = (0..12).collect(); // 3 × 4
        let col = Strided::new(&a, 2, 4, 3).unwrap();
        assert_eq!(col.iter().collect::<Vec<_>>(), [2, 6, 10]);
        assert_eq!((col.get(1), col.get(3), col.len()), (Some(6), None, 3));
        assert!(Strided::new(&a, 3, 4, 4).is_none(), "15 is past the end");
        assert!(Strided::new(&a, 0, usize::MAX, 3).is_none(), "overflow is refused");
        assert!(Strided::new(&a, 100, 4, 0).unwrap().is_empty());
    }
}
