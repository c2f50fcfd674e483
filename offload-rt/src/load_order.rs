//! [`together`]: values whose loads all issue before any arithmetic on them.
//!
//! A GPU thread hides memory latency by issuing its loads back to back and only then waiting
//! for the first one. Where the compiler places the loads is its choice: LLVM's NVPTX backend
//! tends to place each load just before its first use, and `ptxas`, which would hoist loads
//! above independent arithmetic, does not move them above a branch, such as the slow path of
//! a division (`rcp.rn.f64`, `div.rn.f64`). A kernel that reads sixteen values and divides
//! after using eight of them then waits for memory twice in a row (DEL_DOT_VEC_2D in
//! rajaperf-rs: 5 % slower than CUDA at 2^25 elements, whose nvcc kept all loads first).
//!
//! [`together`] passes values through one empty inline-assembly statement (on NVIDIA GPUs; it
//! is the identity elsewhere). Every value's load must come before that statement and every
//! use of a value after it, so in the PTX all the loads precede all the arithmetic, whatever
//! order LLVM would otherwise pick. The statement emits no instruction (its text is a comment
//! naming the registers) and costs nothing at run time; it only fixes the order.
//! [`Stencil::read_together`](crate::Stencil::read_together) reads a stencil's points from
//! several arrays this way.
//!
//! ```
//! let (x, y) = ([1.0f64, 2.0, 3.0], [4.0f64, 5.0]);
//! // On the GPU the five loads issue before the additions.
//! let [[a, b, c], [d, e, _]] = offload::together([[x[0], x[1], x[2]], [y[0], y[1], 0.0]]);
//! assert_eq!(a + b + c + d + e, 15.0);
//! ```

/// Plain 64-bit values and (nested) arrays of them: what [`together`] passes through 64-bit
/// registers. Sealed: implemented for `f64`, `u64`, `i64` and arrays of these.
pub trait Lanes: Copy + sealed::Sealed {
    /// How many 64-bit values the type holds.
    const LANES: usize;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! scalar_lanes {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Lanes for $t {
            const LANES: usize = 1;
        }
    )*};
}
scalar_lanes!(f64, u64, i64);

impl<T: Lanes, const N: usize> sealed::Sealed for [T; N] {}
impl<T: Lanes, const N: usize> Lanes for [T; N] {
    const LANES: usize = N * T::LANES;
}

/// At most this many values go through [`together`] at once (registers of one statement).
pub const MAX_TOGETHER: usize = 32;

/// `values`, unchanged, with every load that produced them issued before any computation that
/// uses them (see the [module](self)): on NVIDIA GPUs the values pass through one inline
/// assembly statement that emits no instruction; elsewhere this is the identity.
///
/// Use it where a thread reads many values and the arithmetic on the first ones would
/// otherwise split the loads (a division, a branch, a call between them). It keeps every value
/// in a register until its use, so the register count grows with the values passed.
///
/// More than [`MAX_TOGETHER`] 64-bit values is a compile error.
#[inline(always)]
pub fn together<T: Lanes>(values: T) -> T {
    const { assert!(T::LANES <= MAX_TOGETHER, "offload::together passes at most 32 64-bit values") };
    let mut regs = [0u64; MAX_TOGETHER];
    // SAFETY: `T` is a sealed nested array of 8-byte plain scalars (`Lanes`), so its
    // `T::LANES` 8-byte words are initialised `u64`s, laid out contiguously; `regs` holds at
    // least that many (asserted above), and the two do not overlap.
    unsafe { core::ptr::copy_nonoverlapping((&raw const values).cast::<u64>(), regs.as_mut_ptr(), T::LANES) };
    crate::arch::keep_order(&mut regs);
    let mut out = values;
    // SAFETY: as above, and every bit pattern is a valid `f64`, `u64` or `i64`.
    unsafe { core::ptr::copy_nonoverlapping(regs.as_ptr(), (&raw mut out).cast::<u64>(), T::LANES) };
    out
}

#[cfg(test)]
mod tests {
    use super::{Lanes, together};

    #[test]
    fn returns_its_values_unchanged() {
        let v = [[1.5f64, -2.0], [f64::MAX, f64::MIN_POSITIVE]];
        assert_eq!(together(v), v);
        assert_eq!(together(7u64), 7);
        assert_eq!(together([-3i64; 32]), [-3; 32]);
    }

    #[test]
    fn counts_the_registers_of_nested_arrays() {
        assert_eq!(<[[[f64; 2]; 2]; 4]>::LANES, 16);
        assert_eq!(<f64>::LANES, 1);
    }
}
