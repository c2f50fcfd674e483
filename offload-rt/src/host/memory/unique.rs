//! `UniqueIndices`: an index list checked once, on the host, to hold each index at most once
//! and only indices below a bound; kernels then write through it without atomics
//! ([`Scatter`](crate::Scatter)).

use super::buffer::DeviceBuffer;
use crate::host::args::{In, InData};
use crate::host::device::Device;
use crate::host::error::{Error, Result};

/// A list of distinct indices below `bound`, on a device. Made by [`UniqueIndices::new`],
/// which checks the list; it cannot be changed afterwards (there is no mutable access), so
/// the check holds for every launch that uses it. `&list` also reads as a `&[i64]` input.
#[derive(Debug)]
pub struct UniqueIndices {
    buffer: DeviceBuffer<i64>,
    bound: usize,
}

impl UniqueIndices {
    /// Checks `indices` (every one in `0..bound`, none twice) and copies them to `device`.
    pub fn new(device: &Device, indices: &[i64], bound: usize) -> Result<UniqueIndices> {
        let fail = |position: usize, reason: String| Err(Error::InvalidIndices { position, reason });
        // Sorted (index, position) pairs find repeats with memory in proportion to the list,
        // whatever the bound.
        let mut sorted = crate::host::alloc::try_vec(indices.len(), (0usize, 0usize), "the index check")?;
        for (position, (&i, slot)) in indices.iter().zip(&mut sorted).enumerate() {
            let Ok(j) = usize::try_from(i) else { return fail(position, format!("index {i} is negative")) };
            if j >= bound {
                return fail(position, format!("index {j} is not below the bound {bound}"));
            }
            *slot = (j, position);
        }
        sorted.sort_unstable();
        if let Some(w) = sorted.windows(2).filter(|w| w[0].0 == w[1].0).min_by_key(|w| w[1].1.max(w[0].1)) {
            let later = w[0].1.max(w[1].1);
            return fail(later, format!("index {} appears twice", w[0].0));
        }
        Ok(UniqueIndices { buffer: DeviceBuffer::from_slice(device, indices)?, bound })
    }

    /// Number of indices.
    pub fn len(&self) -> usize {
        self.buffer.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.buffer.is_empty()
    }

    /// The bound every index is below: the length of the arrays written through the list.
    pub fn bound(&self) -> usize {
        self.bound
    }

    pub(crate) fn buffer(&self) -> &DeviceBuffer<i64> {
        &self.buffer
    }
}

impl<'a> In<'a, i64> for &'a UniqueIndices {
    fn in_data(self) -> InData<'a, i64> {
        InData::Buffer(&self.buffer)
    }
}
