//! The launch's arguments as the GPU's entry point takes them: one buffer of the parameters
//! in declaration order, each at its C alignment; and the host-side fold of a reduction result
//! spread over several slots.

use crate::host::buffer::Byte;
use crate::reduce::{Reduction, SLOT_BYTES};

/// A device pointer for the packed arguments: never null, so that the entry point may assume
/// it is not (zero-length data gets a dangling, aligned address that is never accessed).
pub(super) fn abi_ptr<T>(p: *mut std::ffi::c_void) -> *mut std::ffi::c_void {
    if p.is_null() { std::ptr::dangling_mut::<T>().cast() } else { p }
}

/// Appends `value` at its C alignment, as the entry point declares its parameters. The bytes
/// that align it are left as they are (`MaybeUninit`: the entry point never reads them).
#[inline]
pub(super) fn push_bytes<T: Copy>(packed: &mut Vec<Byte>, value: &T) {
    let offset = packed.len().next_multiple_of(align_of::<T>());
    let end = offset + size_of::<T>();
    packed.reserve(end - packed.len());
    // SAFETY: the vector has room for `end` bytes (reserved above); an unaligned write of a
    // `T` at byte `offset` stays inside them, and every byte up to `end` is a valid
    // `MaybeUninit<u8>` whatever it holds, so the new length is sound.
    unsafe {
        packed.as_mut_ptr().add(offset).cast::<T>().write_unaligned(*value);
        packed.set_len(end);
    }
}

/// Combines the host's result with a reduction result's `slots` slots (the first at the
/// pointer, [`SLOT_BYTES`] apart), into the host's result.
pub(super) type FoldFn = unsafe fn(host: *mut u8, first: *const u8, slots: usize);

/// The [`FoldFn`] of reduction `K` on `T`.
///
/// # Safety
///
/// `host` must be valid for reading and writing a `T`, and `first` point to `slots`
/// initialised `T`s [`SLOT_BYTES`] apart, each aligned.
pub(super) unsafe fn fold_slots<T: Copy, K: Reduction<T>>(host: *mut u8, first: *const u8, slots: usize) {
    // SAFETY: the caller's contract.
    let mut acc = unsafe { host.cast::<T>().read() };
    for s in 0..slots {
        // SAFETY: slot `s < slots` is an initialised, aligned `T` (the caller's contract).
        acc = K::combine(acc, unsafe { first.add(s * SLOT_BYTES).cast::<T>().read() });
    }
    // SAFETY: the caller's contract.
    unsafe { host.cast::<T>().write(acc) };
}

#[cfg(test)]
mod tests {
    use super::{Byte, SLOT_BYTES, fold_slots, push_bytes};

    #[test]
    fn arguments_pack_at_their_c_alignment_padding_included() {
        #[derive(Clone, Copy)]
        #[repr(C)]
        struct Padded {
            flag: u8,
            value: u32,
        }
        let mut packed: Vec<Byte> = Vec::new();
        push_bytes(&mut packed, &7u8);
        push_bytes(&mut packed, &Padded { flag: 1, value: 0x0102_0304 });
        push_bytes(&mut packed, &0x1122_3344_5566_7788u64);
        // 7 at 0; the struct at 4 (its field `value` at 8, bytes 5..8 its padding); the u64 at 16.
        assert_eq!(packed.len(), 24);
        // SAFETY: bytes 0, 4, 8..12 and 16..24 hold values; the bytes that align them and the
        // struct's padding are not read.
        let byte = |i: usize| unsafe { packed[i].assume_init() };
        assert_eq!((byte(0), byte(4)), (7, 1));
        assert_eq!([byte(8), byte(9), byte(10), byte(11)], 0x0102_0304u32.to_le_bytes());
        let wide: [u8; 8] = std::array::from_fn(|k| byte(16 + k));
        assert_eq!(u64::from_le_bytes(wide), 0x1122_3344_5566_7788);
    }
    use crate::reduce::{Loc, MinLocOp, SumOp};

    /// `slots` values laid out as a launch's spread result: `SLOT_BYTES` apart, aligned.
    fn spread<T: Copy>(values: &[T]) -> Vec<u128> {
        let mut slots = vec![0u128; values.len() * SLOT_BYTES / 16];
        for (s, v) in values.iter().enumerate() {
            // SAFETY: slot `s` lies within the vector and is 16-byte aligned, which suffices
            // for the test's types.
            unsafe { slots.as_mut_ptr().cast::<u8>().add(s * SLOT_BYTES).cast::<T>().write(*v) };
        }
        slots
    }

    #[test]
    fn a_spread_sum_folds_every_slot() {
        let slots = spread(&[5.0f64, 1.5, 0.0, 2.0, 0.25, 0.0, 0.0, 4.0]);
        let mut host = 100.0;
        // SAFETY: `host` is an f64; the vector holds 8 slots of f64.
        unsafe { fold_slots::<f64, SumOp>((&raw mut host).cast(), slots.as_ptr().cast(), 8) };
        assert_eq!(host, 112.75, "the host's value plus every slot");
    }

    #[test]
    fn a_spread_min_loc_keeps_the_first_occurrence_whichever_slot_holds_it() {
        let slots =
            spread(&[Loc::new(3.0f64, 0), Loc::new(-1.0, 90), Loc::min_identity(), Loc::new(-1.0, 12)]);
        let mut host = Loc::new(0.0, 0);
        // SAFETY: `host` is a Loc<f64>; the vector holds 4 slots of them.
        unsafe { fold_slots::<Loc<f64>, MinLocOp>((&raw mut host).cast(), slots.as_ptr().cast(), 4) };
        assert_eq!((host.value, host.index), (-1.0, 12));
        // The host's own value takes part: an earlier equal value wins.
        let mut host = Loc::new(-1.0, 3);
        // SAFETY: as above.
        unsafe { fold_slots::<Loc<f64>, MinLocOp>((&raw mut host).cast(), slots.as_ptr().cast(), 4) };
        assert_eq!((host.value, host.index), (-1.0, 3));
    }
}
