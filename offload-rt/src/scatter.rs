//! `Scatter<T>`: writes through an index list, one element per thread — `out[idx[t]]` for
//! thread `t` — race-free because the host proved the list has no repeats before any kernel
//! could use it ([`UniqueIndices`](crate::UniqueIndices)). For mesh codes that update the
//! zones of a list (RAJAPerf's real-zone loops), where an atomic view would pay for
//! synchronisation that the list's uniqueness makes unnecessary.

use core::marker::PhantomData;

/// A writable array of which thread `t` owns element `idx[t]`, for an index list `idx` known
/// to hold each index at most once. The host passes `(&mut data, &unique_indices)`.
#[derive(Debug)]
pub struct Scatter<'a, T> {
    ptr: *mut T,
    len: usize,
    target: Option<usize>,
    position: usize,
    _borrow: PhantomData<&'a mut [T]>,
}

impl<'a, T> Scatter<'a, T> {
    /// The view of the thread at `position` among the list's entries.
    ///
    /// # Safety
    ///
    /// `ptr` must be valid for reads and writes of `len` elements for `'a`; `idx` must hold
    /// `idx_len` indices, each below `len` and none twice, unchanged for `'a`; no other code
    /// may access the elements except through views of other positions.
    #[doc(hidden)]
    #[inline(always)]
    pub unsafe fn from_raw_parts(
        ptr: *mut T,
        len: usize,
        idx: *const i64,
        idx_len: usize,
        position: usize,
    ) -> Self {
        let target = if position < idx_len {
            // SAFETY: `position < idx_len`, inside the index list (the caller's contract).
            Some(unsafe { idx.add(position).read() } as usize)
        } else {
            None
        };
        Scatter { ptr, len, target, position, _borrow: PhantomData }
    }

    /// The element this thread owns, `data[idx[position]]`, or `None` past the list's end.
    #[inline(always)]
    pub fn mine(&mut self) -> Option<&mut T> {
        // No comparison with `len` here: the list was checked when it was made, and the launch
        // checked that it was made for arrays of this length (`from_raw_parts`' contract).
        let j = self.target?;
        debug_assert!(j < self.len, "a checked index list names {j} of {} elements", self.len);
        // SAFETY: `j < len` by `from_raw_parts`' contract (every index in the list is below
        // `len`); the list holds `j` once, so only this thread reaches it, and `&mut self`
        // makes the reference unique within the thread.
        Some(unsafe { &mut *self.ptr.add(j) })
    }

    /// The index this thread writes, `idx[position]` (`None` past the list's end): use it to
    /// read the matching elements of other arrays.
    #[inline(always)]
    pub fn index(&self) -> Option<usize> {
        self.target
    }

    /// This thread's position in the index list (its linear thread id).
    #[inline(always)]
    pub fn position(&self) -> usize {
        self.position
    }
}
