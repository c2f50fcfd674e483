//! Short vectors with their natural alignment — [`f32x4`], [`f64x2`], [`f32x2`], [`u32x4`],
//! [`i32x4`], [`u32x2`] — that load and store as one vector access (`ld.v4.f32` on NVIDIA) where
//! an array of them is read or written: the `float4` of CUDA C++. `[f32; 4]` has the alignment
//! of an `f32`, so the compiler must assume four separate accesses.
//!
//! They are plain data: kernel parameters by value, elements of `&[T]`, `Region<T>`, buffers,
//! `SharedArray` and `Shared`. Float vectors add, subtract, multiply and divide element-wise
//! (and by a scalar); every vector converts from and to its array and indexes like one.
//!
//! ```
//! use offload::f32x4;
//! let a = f32x4::new(1.0, 2.0, 3.0, 4.0);
//! let b = a * 2.0 + f32x4::splat(1.0);
//! assert_eq!(b.to_array(), [3.0, 5.0, 7.0, 9.0]);
//! assert_eq!(b[2], 7.0);
//! assert_eq!(b.dot(f32x4::splat(1.0)), 24.0);
//! ```

use core::ops::{Add, AddAssign, Div, Index, IndexMut, Mul, MulAssign, Sub, SubAssign};

macro_rules! vector {
    ($(#[$doc:meta])* $name:ident, $t:ty, $n:literal, $align:literal, ($($arg:ident),*)) => {
        $(#[$doc])*
        #[allow(non_camel_case_types, reason = "named like `core::simd`'s vectors")]
        #[derive(Clone, Copy, Debug, Default, PartialEq)]
        #[repr(C, align($align))]
        pub struct $name(pub [$t; $n]);

        impl $name {
            /// The vector of these elements.
            #[inline(always)]
            pub const fn new($($arg: $t),*) -> Self {
                $name([$($arg),*])
            }

            /// Every element `v`.
            #[inline(always)]
            pub const fn splat(v: $t) -> Self {
                $name([v; $n])
            }

            /// The elements.
            #[inline(always)]
            pub const fn to_array(self) -> [$t; $n] {
                self.0
            }

            /// `x` as the elements before its first aligned vector, the aligned vectors, and
            /// the elements after them: a kernel that reads the middle loads whole vectors.
            /// The first and last parts are shorter than a vector; a buffer's slice from its
            /// start has no first part, since buffers are aligned to at least a vector.
            ///
            /// ```
            #[doc = concat!("use offload::", stringify!($name), ";")]
            #[doc = concat!("let x = [1 as ", stringify!($t), "; 19];")]
            #[doc = concat!("let (head, body, tail) = ", stringify!($name), "::split_aligned(&x[1..]);")]
            #[doc = concat!("assert_eq!(head.len() + body.len() * ", stringify!($n), " + tail.len(), 18);")]
            #[doc = concat!("assert!(head.len() < ", stringify!($n), " && tail.len() < ", stringify!($n), ");")]
            /// ```
            #[inline(always)]
            pub fn split_aligned(x: &[$t]) -> (&[$t], &[Self], &[$t]) {
                // SAFETY: `Self` is `repr(C)` around `[$t; $n]` with no padding (asserted
                // below), and every bit pattern of `[$t; $n]` is a valid `$t` array, so any
                // aligned run of `$n` elements is a valid `Self`; `align_to` keeps the lifetime
                // and the shared borrow.
                unsafe { x.align_to::<Self>() }
            }

            /// [`Self::split_aligned`] for a mutable slice.
            #[inline(always)]
            pub fn split_aligned_mut(x: &mut [$t]) -> (&mut [$t], &mut [Self], &mut [$t]) {
                // SAFETY: as in `split_aligned`; the three parts are disjoint, and writing any
                // vector writes valid `$t`s.
                unsafe { x.align_to_mut::<Self>() }
            }
        }

        const _: () = assert!(core::mem::size_of::<$name>() == $n * core::mem::size_of::<$t>());

        impl From<[$t; $n]> for $name {
            #[inline(always)]
            fn from(a: [$t; $n]) -> Self {
                $name(a)
            }
        }

        impl From<$name> for [$t; $n] {
            #[inline(always)]
            fn from(v: $name) -> Self {
                v.0
            }
        }

        impl Index<usize> for $name {
            type Output = $t;
            #[inline(always)]
            #[track_caller]
            fn index(&self, i: usize) -> &$t {
                &self.0[i]
            }
        }

        impl IndexMut<usize> for $name {
            #[inline(always)]
            #[track_caller]
            fn index_mut(&mut self, i: usize) -> &mut $t {
                &mut self.0[i]
            }
        }
    };
}

macro_rules! float_ops {
    ($name:ident, $t:ty) => {
        impl $name {
            /// The sum of the element-wise products.
            #[inline(always)]
            pub fn dot(self, other: Self) -> $t {
                let mut s = 0.0;
                for i in 0..self.0.len() {
                    s += self.0[i] * other.0[i];
                }
                s
            }
        }

        float_ops!(@binary $name, Add, add, AddAssign, add_assign, +=);
        float_ops!(@binary $name, Sub, sub, SubAssign, sub_assign, -=);
        float_ops!(@binary $name, Mul, mul, MulAssign, mul_assign, *=);

        impl Div for $name {
            type Output = Self;
            #[inline(always)]
            fn div(self, rhs: Self) -> Self {
                let mut out = self;
                for i in 0..out.0.len() {
                    out.0[i] /= rhs.0[i];
                }
                out
            }
        }

        impl Mul<$t> for $name {
            type Output = Self;
            #[inline(always)]
            fn mul(self, rhs: $t) -> Self {
                self * $name::splat(rhs)
            }
        }

        impl Div<$t> for $name {
            type Output = Self;
            #[inline(always)]
            fn div(self, rhs: $t) -> Self {
                self / $name::splat(rhs)
            }
        }
    };
    (@binary $name:ident, $tr:ident, $f:ident, $tra:ident, $fa:ident, $op:tt) => {
        impl $tr for $name {
            type Output = Self;
            #[inline(always)]
            fn $f(mut self, rhs: Self) -> Self {
                self $op rhs;
                self
            }
        }

        impl $tra for $name {
            #[inline(always)]
            fn $fa(&mut self, rhs: Self) {
                for i in 0..self.0.len() {
                    self.0[i] $op rhs.0[i];
                }
            }
        }
    };
}

vector!(
    /// Four `f32`, 16-byte aligned: CUDA's `float4`.
    f32x4, f32, 4, 16, (x, y, z, w)
);
vector!(
    /// Two `f32`, 8-byte aligned: CUDA's `float2`.
    f32x2, f32, 2, 8, (x, y)
);
vector!(
    /// Two `f64`, 16-byte aligned: CUDA's `double2`.
    f64x2, f64, 2, 16, (x, y)
);
vector!(
    /// Four `u32`, 16-byte aligned: CUDA's `uint4`.
    u32x4, u32, 4, 16, (x, y, z, w)
);
vector!(
    /// Four `i32`, 16-byte aligned: CUDA's `int4`.
    i32x4, i32, 4, 16, (x, y, z, w)
);
vector!(
    /// Two `u32`, 8-byte aligned: CUDA's `uint2`.
    u32x2, u32, 2, 8, (x, y)
);
float_ops!(f32x4, f32);
float_ops!(f32x2, f32);
float_ops!(f64x2, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vectors_have_their_natural_alignment_and_no_padding() {
        assert_eq!((core::mem::size_of::<f32x4>(), core::mem::align_of::<f32x4>()), (16, 16));
        assert_eq!((core::mem::size_of::<f64x2>(), core::mem::align_of::<f64x2>()), (16, 16));
        assert_eq!((core::mem::size_of::<f32x2>(), core::mem::align_of::<f32x2>()), (8, 8));
        assert_eq!((core::mem::size_of::<u32x4>(), core::mem::align_of::<u32x4>()), (16, 16));
        assert_eq!((core::mem::size_of::<i32x4>(), core::mem::align_of::<i32x4>()), (16, 16));
        assert_eq!((core::mem::size_of::<u32x2>(), core::mem::align_of::<u32x2>()), (8, 8));
    }

    #[test]
    fn split_aligned_covers_every_element_once_in_order() {
        let x: Vec<f64> = (0..37).map(f64::from).collect();
        for start in 0..4 {
            for end in start..x.len() {
                let part = &x[start..end];
                let (head, body, tail) = f64x2::split_aligned(part);
                assert!(head.len() < 2 && tail.len() < 2);
                let flat: Vec<f64> = head
                    .iter()
                    .copied()
                    .chain(body.iter().flat_map(|v| v.to_array()))
                    .chain(tail.iter().copied())
                    .collect();
                assert_eq!(flat, part);
                assert!(body.iter().all(|v| (v as *const f64x2).addr().is_multiple_of(16)));
            }
        }
    }

    #[test]
    fn split_aligned_mut_writes_through() {
        let mut x = [0u32; 11];
        let (head, body, tail) = u32x4::split_aligned_mut(&mut x[1..]);
        head.iter_mut().chain(tail.iter_mut()).for_each(|v| *v = 1);
        body.iter_mut().for_each(|v| *v = u32x4::splat(2));
        assert_eq!(x[0], 0);
        assert_eq!(x[1..].iter().filter(|&&v| v == 2).count(), body_len_of(&x[1..]) * 4);
        assert!(x[1..].iter().all(|&v| v == 1 || v == 2));

        fn body_len_of(x: &[u32]) -> usize {
            u32x4::split_aligned(x).1.len()
        }
    }

    #[test]
    fn arithmetic_is_element_wise() {
        let a = f64x2::new(1.0, -2.0);
        let mut b = a + f64x2::splat(3.0);
        assert_eq!(b.to_array(), [4.0, 1.0]);
        b -= a;
        assert_eq!(b, f64x2::splat(3.0));
        b *= f64x2::new(2.0, 0.5);
        assert_eq!((b / 2.0).to_array(), [3.0, 0.75]);
        assert_eq!((a * 2.0).dot(a), 10.0);
        let mut u = u32x4::from([1, 2, 3, 4]);
        u[3] = 9;
        assert_eq!(<[u32; 4]>::from(u), [1, 2, 3, 9]);
    }
}
