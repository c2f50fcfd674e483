//! What kernel parameters accept on the host: plain-data values, and host data or device
//! buffers for the array parameters.

use crate::host::buffer::DeviceBuffer;
use crate::host::memory::preload::{Preload, PreloadMut};
use crate::host::memory::unique::UniqueIndices;

/// A plain-data value that can cross to the device: copied bit for bit, no pointers, no
/// destructor. Implemented for the primitive numbers and `bool`; `#[derive(KernelScalar)]`
/// implements it for `#[repr(C)]` structs of such values.
///
/// # Safety
///
/// The type must have the same layout on the host and the GPU (`#[repr(C)]` or a primitive),
/// hold no pointer or reference (its bytes mean the same on the device), and be valid as
/// all-zero bytes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed to a kernel",
    label = "not a kernel parameter type",
    note = "kernel parameters are Copy scalars (integers, floats, bool), `&[T]` (read-only) or `Region<T>` (writable); heap types like Vec, String or Box cannot reach the GPU"
)]
pub unsafe trait KernelScalar: Copy + Send + Sync + 'static {}

macro_rules! scalars {
    // SAFETY: primitives have the same layout everywhere, hold no pointer, and are valid zeroed.
    ($($t:ty),*) => {$( unsafe impl KernelScalar for $t {} )*};
}
scalars!(u8, u16, u32, u64, usize, i8, i16, i32, i64, isize, f32, f64, bool);

// SAFETY: an array of plain data is plain data with the same layout everywhere.
unsafe impl<T: KernelScalar, const N: usize> KernelScalar for [T; N] {}
macro_rules! vectors {
    // SAFETY: the vectors are `#[repr(C, align(N))]` wrappers of arrays of primitives whose size
    // is their alignment (no padding): the same layout everywhere, no pointer, valid zeroed.
    ($($t:ident),*) => {$( unsafe impl KernelScalar for crate::$t {} )*};
}
vectors!(f32x2, f32x4, f64x2, i32x4, u32x2, u32x4);

// SAFETY: `Loc` is `#[repr(C)]` plain data (a value, a `usize` index, a `u32` lock), the same
// layout on the host and the 64-bit GPU targets, valid zeroed; it is only ever copied as bytes.
unsafe impl<T: KernelScalar> KernelScalar for crate::Loc<T> {}

// SAFETY: `Stencil` is `#[repr(C)]` plain data (an `isize` and `u32`s), the same layout on the
// host and the 64-bit GPU targets, valid zeroed (its invariant, every distance within the span,
// holds for zeros); it is only ever copied as bytes.
unsafe impl<const N: usize, const W: usize> KernelScalar for crate::Stencil<N, W> {}

/// Compile-time check used by `#[derive(KernelScalar)]` on each field.
#[doc(hidden)]
pub fn assert_kernel_scalar<T: KernelScalar>() {}

/// Data a read-only argument refers to.
#[derive(Debug)]
pub enum InData<'a, T: KernelScalar> {
    /// Host memory: copied to the device for the launch.
    Host(&'a [T]),
    /// Device memory: used in place.
    Buffer(&'a DeviceBuffer<T>),
    /// Elements `start..start + len` of a buffer, used in place.
    Part { buffer: &'a DeviceBuffer<T>, start: usize, len: usize },
}

// (By hand: a derive would ask `T: Copy` of the element rather than of the references.)
impl<T: KernelScalar> Clone for InData<'_, T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: KernelScalar> Copy for InData<'_, T> {}

impl<T: KernelScalar> InData<'_, T> {
    /// Elements referred to.
    pub fn len(&self) -> usize {
        match self {
            InData::Host(h) => h.len(),
            InData::Buffer(b) => b.len(),
            InData::Part { len, .. } => *len,
        }
    }

    /// Whether no element is referred to.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a, T: KernelScalar> In<'a, T> for InData<'a, T> {
    fn in_data(self) -> InData<'a, T> {
        self
    }
}

/// Data a writable argument refers to.
#[derive(Debug)]
pub enum OutData<'a, T: KernelScalar> {
    /// Host memory: copied to the device and back.
    Host(&'a mut [T]),
    /// Host memory the kernel only writes ([`Out`]): the device starts from zeros (so does
    /// the CPU backend), and the result is copied back.
    HostWriteOnly(&'a mut [T]),
    /// Device memory: used in place.
    Buffer(&'a mut DeviceBuffer<T>),
    /// Elements `start..start + len` of a buffer that only this view reaches (the part that
    /// made it borrows the buffer mutably).
    Part { buffer: &'a DeviceBuffer<T>, start: usize, len: usize },
}

impl<T: KernelScalar> OutData<'_, T> {
    /// Elements referred to.
    pub fn len(&self) -> usize {
        match self {
            OutData::Host(h) | OutData::HostWriteOnly(h) => h.len(),
            OutData::Buffer(b) => b.len(),
            OutData::Part { len, .. } => *len,
        }
    }

    /// Whether no element is referred to.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<'a, T: KernelScalar> InOut<'a, T> for OutData<'a, T> {
    fn out_data(self) -> OutData<'a, T> {
        self
    }
}

/// What a read-only (`&[T]`) kernel parameter accepts: host data (copied in) or a device
/// buffer (used in place).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed as a read-only `&[{T}]` kernel argument",
    note = "pass a slice, `&Vec<{T}>`, `&[{T}; N]`, `&DeviceBuffer<{T}>` or a preload"
)]
pub trait In<'a, T: KernelScalar> {
    /// The data.
    fn in_data(self) -> InData<'a, T>;
}

impl<'a, T: KernelScalar> In<'a, T> for &'a [T] {
    fn in_data(self) -> InData<'a, T> {
        InData::Host(self)
    }
}
impl<'a, T: KernelScalar> In<'a, T> for &'a Vec<T> {
    fn in_data(self) -> InData<'a, T> {
        InData::Host(self)
    }
}
impl<'a, T: KernelScalar, const N: usize> In<'a, T> for &'a [T; N] {
    fn in_data(self) -> InData<'a, T> {
        InData::Host(self)
    }
}
impl<'a, T: KernelScalar> In<'a, T> for &'a DeviceBuffer<T> {
    fn in_data(self) -> InData<'a, T> {
        InData::Buffer(self)
    }
}

impl<'a, T: KernelScalar> In<'a, T> for &'a Preload<'_, T> {
    fn in_data(self) -> InData<'a, T> {
        InData::Buffer(self.buffer())
    }
}
impl<'a, T: KernelScalar> In<'a, T> for &'a PreloadMut<'_, T> {
    fn in_data(self) -> InData<'a, T> {
        InData::Buffer(self.buffer())
    }
}

/// What a writable (`Region<T>`) kernel parameter accepts: host data (copied there and
/// back) or a device buffer (used in place).
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed as a writable `Region<{T}>` kernel argument",
    note = "pass `&mut` of a slice, Vec, array, `DeviceBuffer<{T}>` or `PreloadMut<{T}>`"
)]
pub trait InOut<'a, T: KernelScalar> {
    /// The data.
    fn out_data(self) -> OutData<'a, T>;
}

impl<'a, T: KernelScalar> InOut<'a, T> for &'a mut [T] {
    fn out_data(self) -> OutData<'a, T> {
        OutData::Host(self)
    }
}
impl<'a, T: KernelScalar> InOut<'a, T> for &'a mut Vec<T> {
    fn out_data(self) -> OutData<'a, T> {
        OutData::Host(self)
    }
}
impl<'a, T: KernelScalar, const N: usize> InOut<'a, T> for &'a mut [T; N] {
    fn out_data(self) -> OutData<'a, T> {
        OutData::Host(self)
    }
}
/// A write-only output: `Out(&mut y)` where a kernel takes a `Region`, `GridStride` or
/// `Chunks` skips copying `y`'s initial contents to the device. The kernel sees zeros where it
/// has not written (on every backend), and the whole array comes back to `y`.
#[derive(Debug)]
pub struct Out<A>(pub A);

impl<'a, T: KernelScalar> InOut<'a, T> for Out<&'a mut [T]> {
    fn out_data(self) -> OutData<'a, T> {
        OutData::HostWriteOnly(self.0)
    }
}
impl<'a, T: KernelScalar> InOut<'a, T> for Out<&'a mut Vec<T>> {
    fn out_data(self) -> OutData<'a, T> {
        OutData::HostWriteOnly(self.0)
    }
}
impl<'a, T: KernelScalar, const N: usize> InOut<'a, T> for Out<&'a mut [T; N]> {
    fn out_data(self) -> OutData<'a, T> {
        OutData::HostWriteOnly(self.0)
    }
}

impl<'a, T: KernelScalar> InOut<'a, T> for &'a mut DeviceBuffer<T> {
    fn out_data(self) -> OutData<'a, T> {
        OutData::Buffer(self)
    }
}

impl<'a, T: KernelScalar> InOut<'a, T> for &'a mut PreloadMut<'_, T> {
    fn out_data(self) -> OutData<'a, T> {
        OutData::Buffer(self.buffer_mut())
    }
}

/// Where a reduction parameter's (`Sum`, `Min`, `Max`, `MinLoc`, `MaxLoc`) result is combined
/// into: a host value (`&mut x`: copied to the device and back, and the launch waits), or one
/// element of device memory (`&mut buffer` of one element, or `&mut buffer.part_mut(i..i + 1)`):
/// combined there on the device, so the launch only queues and repeated reductions make no
/// round trip to the host.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot receive a reduction of `{T}`",
    note = "pass `&mut` of a `{T}` on the host, of a one-element `DeviceBuffer<{T}>`, or of a one-element part of one (`buf.part_mut(i..i + 1)`)"
)]
pub trait ReduceInto<'a, T: KernelScalar> {
    /// The result's place.
    fn reduce_target(self) -> ReduceTarget<'a, T>;
}

/// Where a reduction's result is combined into (see [`ReduceInto`]).
#[doc(hidden)]
#[derive(Debug)]
pub enum ReduceTarget<'a, T: KernelScalar> {
    /// A host value.
    Host(&'a mut T),
    /// Device memory, which must hold exactly one element.
    Device(OutData<'a, T>),
}

impl<'a, T: KernelScalar> ReduceInto<'a, T> for &'a mut T {
    fn reduce_target(self) -> ReduceTarget<'a, T> {
        ReduceTarget::Host(self)
    }
}

impl<'a, T: KernelScalar> ReduceInto<'a, T> for &'a mut DeviceBuffer<T> {
    fn reduce_target(self) -> ReduceTarget<'a, T> {
        ReduceTarget::Device(OutData::Buffer(self))
    }
}

/// What a writable `Region2<T>` / `Region3<T>` kernel parameter accepts: data as for
/// [`InOut`], with its extents (x fastest), whose product must be the data's length.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed as a writable {D}-D region of `{T}`",
    note = "pass `(&mut data, [nx, ny])` for `Region2<T>` or `(&mut data, [nx, ny, nz])` for `Region3<T>`"
)]
pub trait InOutNd<'a, T: KernelScalar, const D: usize> {
    /// The data and its extents.
    fn out_data_nd(self) -> (OutData<'a, T>, [usize; D]);
}

impl<'a, T: KernelScalar, A: InOut<'a, T>, const D: usize> InOutNd<'a, T, D> for (A, [usize; D]) {
    fn out_data_nd(self) -> (OutData<'a, T>, [usize; D]) {
        (self.0.out_data(), self.1)
    }
}

/// What a `Scatter<T>` kernel parameter accepts: the array (as for [`InOut`]) and the checked
/// index list that says which element each thread writes.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be passed as a `Scatter<{T}>` kernel argument",
    note = "pass `(&mut data, &unique_indices)`, with a `UniqueIndices` made for `data.len()` elements"
)]
pub trait ScatterData<'a, T: KernelScalar> {
    /// The array and the index list.
    fn scatter_data(self) -> (OutData<'a, T>, &'a UniqueIndices);
}

impl<'a, T: KernelScalar, A: InOut<'a, T>> ScatterData<'a, T> for (A, &'a UniqueIndices) {
    fn scatter_data(self) -> (OutData<'a, T>, &'a UniqueIndices) {
        (self.0.out_data(), self.1)
    }
}
