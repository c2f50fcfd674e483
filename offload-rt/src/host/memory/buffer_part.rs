//! Parts of a device buffer as kernel arguments: `buffer.part(a..b)` reads a range in place,
//! and `buffer.split_at_mut(mid)` gives two disjoint writable halves, so that one launch can
//! write one part of an array while it reads another (a row of a table that the kernel
//! updates from the table's other rows) — the borrow checker keeps the parts apart.

use super::buffer::{DeviceBuffer, as_bytes_mut, zero};
use crate::host::alloc::try_vec;
use crate::host::args::{In, InData, InOut, KernelScalar, OutData};
use crate::host::error::{Error, Result};
use std::marker::PhantomData;
use std::ops::{Bound, RangeBounds};

/// Elements `start..start + len` of a buffer, read-only: `&part` is accepted where a kernel
/// takes `&[T]`.
#[derive(Debug)]
pub struct BufferPart<'a, T: KernelScalar> {
    pub(crate) buffer: &'a DeviceBuffer<T>,
    pub(crate) start: usize,
    pub(crate) len: usize,
}

/// Elements `start..start + len` of a buffer that no other view can reach: `&mut part` is
/// accepted where a kernel takes a `Region` (or a partition, or atomics), `&part` where it
/// takes `&[T]`.
#[derive(Debug)]
pub struct BufferPartMut<'a, T: KernelScalar> {
    pub(crate) buffer: &'a DeviceBuffer<T>,
    pub(crate) start: usize,
    pub(crate) len: usize,
    _exclusive: PhantomData<&'a mut [T]>,
}

fn bounds(range: impl RangeBounds<usize>, len: usize) -> (usize, usize) {
    let start = match range.start_bound() {
        Bound::Included(&s) => Some(s),
        Bound::Excluded(&s) => s.checked_add(1),
        Bound::Unbounded => Some(0),
    };
    let end = match range.end_bound() {
        Bound::Included(&e) => e.checked_add(1),
        Bound::Excluded(&e) => Some(e),
        Bound::Unbounded => Some(len),
    };
    match (start, end) {
        (Some(start), Some(end)) if start <= end && end <= len => (start, end - start),
        _ => panic!(
            "range {:?}..{:?} out of bounds for a buffer of {len} elements",
            range.start_bound(),
            range.end_bound()
        ),
    }
}

impl<T: KernelScalar> DeviceBuffer<T> {
    /// A read-only view of `range`, used in place by launches.
    ///
    /// # Panics
    ///
    /// When the range is out of bounds, like slicing.
    pub fn part(&self, range: impl RangeBounds<usize>) -> BufferPart<'_, T> {
        let (start, len) = bounds(range, self.len());
        BufferPart { buffer: self, start, len }
    }

    /// A writable view of `range`.
    ///
    /// # Panics
    ///
    /// When the range is out of bounds, like slicing.
    pub fn part_mut(&mut self, range: impl RangeBounds<usize>) -> BufferPartMut<'_, T> {
        let (start, len) = bounds(range, self.len());
        BufferPartMut { buffer: self, start, len, _exclusive: PhantomData }
    }

    /// Two writable views, `..mid` and `mid..`, which one launch may use side by side.
    ///
    /// # Panics
    ///
    /// When `mid` is past the end.
    pub fn split_at_mut(&mut self, mid: usize) -> (BufferPartMut<'_, T>, BufferPartMut<'_, T>) {
        let len = self.len();
        assert!(mid <= len, "split at {mid} past the end of a buffer of {len} elements");
        let buffer: &DeviceBuffer<T> = self;
        (
            BufferPartMut { buffer, start: 0, len: mid, _exclusive: PhantomData },
            BufferPartMut { buffer, start: mid, len: len - mid, _exclusive: PhantomData },
        )
    }
}

impl<T: KernelScalar> BufferPart<'_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Copies the part into `out`, after the device's queued work.
    pub fn copy_to(&self, out: &mut [T]) -> Result<()> {
        download(self.buffer, self.start, self.len, out)
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &crate::Device {
        self.buffer.device()
    }

    /// The part's elements, after the device's queued work.
    pub fn to_vec(&self) -> Result<Vec<T>> {
        let mut out = try_vec(self.len, zero::<T>(), "a host copy of a buffer part")?;
        self.copy_to(&mut out)?;
        Ok(out)
    }

    /// Whether the part is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl<T: KernelScalar> BufferPartMut<'_, T> {
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Copies the part into `out`, after the device's queued work.
    pub fn copy_to(&self, out: &mut [T]) -> Result<()> {
        download(self.buffer, self.start, self.len, out)
    }

    /// The device the buffer lives on.
    pub fn device(&self) -> &crate::Device {
        self.buffer.device()
    }

    /// A read-only view of `range` of this part (the part stays borrowed while it lives).
    ///
    /// # Panics
    ///
    /// When the range is out of the part's bounds, like slicing.
    pub fn part(&self, range: impl RangeBounds<usize>) -> BufferPart<'_, T> {
        let (start, len) = bounds(range, self.len);
        // Inside the part, which lies inside the buffer: no overflow.
        BufferPart { buffer: self.buffer, start: self.start + start, len }
    }

    /// Overwrites the part with `data`, after the device's queued work (the rest of the buffer
    /// stays as it is).
    pub fn copy_from(&mut self, data: &[T]) -> Result<()> {
        if data.len() != self.len {
            return Err(Error::LengthMismatch { buffer: self.len, host: data.len() });
        }
        self.buffer.upload_part(self.start, data)
    }

    /// The part split in two, `..mid` and `mid..` of it, which one launch may use side by side
    /// (e.g. one element each for several reductions into device memory).
    ///
    /// # Panics
    ///
    /// When `mid` is past the part's end.
    pub fn split_at_mut(&mut self, mid: usize) -> (BufferPartMut<'_, T>, BufferPartMut<'_, T>) {
        assert!(mid <= self.len, "split at {mid} past the end of a part of {} elements", self.len);
        let buffer = self.buffer;
        (
            BufferPartMut { buffer, start: self.start, len: mid, _exclusive: PhantomData },
            // Inside the part, which lies inside the buffer: no overflow.
            BufferPartMut { buffer, start: self.start + mid, len: self.len - mid, _exclusive: PhantomData },
        )
    }

    /// Whether the part is empty.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// Copies elements `start..start + len` of `buffer` into `out` (of that length).
fn download<T: KernelScalar>(
    buffer: &DeviceBuffer<T>,
    start: usize,
    len: usize,
    out: &mut [T],
) -> Result<()> {
    if out.len() != len {
        return Err(Error::LengthMismatch { buffer: len, host: out.len() });
    }
    // (Inside the buffer: no overflow.)
    let offset = start * std::mem::size_of::<T>();
    // SAFETY: the device's bytes there are a copy of `len` of the buffer's `T`s, as many as
    // `out` holds.
    buffer.device().backend().download(unsafe { as_bytes_mut(out) }, buffer.mem(), offset)
}

impl<'a, T: KernelScalar> In<'a, T> for &'a BufferPart<'_, T> {
    fn in_data(self) -> InData<'a, T> {
        InData::Part { buffer: self.buffer, start: self.start, len: self.len }
    }
}

impl<'a, T: KernelScalar> In<'a, T> for &'a BufferPartMut<'_, T> {
    fn in_data(self) -> InData<'a, T> {
        InData::Part { buffer: self.buffer, start: self.start, len: self.len }
    }
}

impl<'a, T: KernelScalar> InOut<'a, T> for &'a mut BufferPartMut<'_, T> {
    fn out_data(self) -> OutData<'a, T> {
        OutData::Part { buffer: self.buffer, start: self.start, len: self.len }
    }
}

impl<'a, T: KernelScalar> crate::host::args::ReduceInto<'a, T> for &'a mut BufferPartMut<'_, T> {
    fn reduce_target(self) -> crate::host::args::ReduceTarget<'a, T> {
        crate::host::args::ReduceTarget::Device(OutData::Part {
            buffer: self.buffer,
            start: self.start,
            len: self.len,
        })
    }
}
