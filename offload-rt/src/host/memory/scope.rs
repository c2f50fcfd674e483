//! Launch scopes: `dev.scope(|s| …)` stages host data once for every launch inside, queues
//! the launches without waiting, and writes results back once, when the scope ends.

use super::buffer::DeviceBuffer;
use super::preload::Preload;
use crate::host::args::{In, InData, InOut, KernelScalar, OutData};
use crate::host::device::Device;
use crate::host::error::Result;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::Deref;

type WriteBack<'env> = Box<dyn FnOnce() -> Result<()> + 'env>;

/// A launch scope on a device (see [`Device::scope`]). It dereferences to the [`Device`], so
/// launches take `s` where they take `&dev`.
pub struct Scope<'env> {
    device: Device,
    writebacks: RefCell<Vec<WriteBack<'env>>>,
    _env: PhantomData<&'env mut &'env ()>,
}

impl std::fmt::Debug for Scope<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scope").field("device", &self.device).finish_non_exhaustive()
    }
}

impl Deref for Scope<'_> {
    type Target = Device;

    fn deref(&self) -> &Device {
        &self.device
    }
}

/// Host data staged by a scope for launches that write it: `&mut staged` where a kernel takes
/// a `Region` (or a partition, or atomics), `&staged` where it reads `&[T]`. Its contents come
/// back to the host data when the scope ends, after the scope's queued work.
pub struct Staged<'s, 'env, T: KernelScalar> {
    buffer: Option<DeviceBuffer<T>>,
    host: Option<&'env mut [T]>,
    scope: &'s Scope<'env>,
}

impl<T: KernelScalar> std::fmt::Debug for Staged<'_, '_, T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Staged").field("buffer", &self.buffer).finish_non_exhaustive()
    }
}

impl Device {
    /// Runs `body` with a launch scope: host-slice convenience at the cost of preloads. Host
    /// data given to [`Scope::input`], [`Scope::in_out`] or [`Scope::output`] is copied to
    /// the device once (outputs not at all: they start from zeros) and stays borrowed for the
    /// whole scope, so safe code cannot touch it meanwhile; launches inside only queue; when
    /// `body` returns, the scope waits for the device once and copies every writable array
    /// back. The first error — from `body`, the queued work, or a copy back — is returned.
    ///
    /// ```
    /// # #[offload::kernels] mod gpu { use offload::prelude::*;
    /// #     #[kernel] pub fn axpy(a: f32, x: &[f32], mut y: Region<f32>) {
    /// #         let i = y.index(); if let Some(v) = y.mine() { *v += a * x[i]; } } }
    /// # fn main() -> offload::Result<()> {
    /// let dev = offload::Device::default()?;
    /// let (x, mut y) = (vec![1.0f32; 1000], vec![0.0f32; 1000]);
    /// dev.scope(|s| {
    ///     let x = s.input(&x)?;
    ///     let mut y = s.in_out(&mut y)?;
    ///     for _ in 0..10 {
    ///         gpu::axpy::launch(s, 1000, 0.5, &x, &mut y)?; // no copies, no waiting
    ///     }
    ///     Ok(())
    /// })?;
    /// assert!(y.iter().all(|&v| v == 5.0));
    /// # Ok(()) }
    /// ```
    pub fn scope<'env, R>(&self, body: impl FnOnce(&Scope<'env>) -> Result<R>) -> Result<R> {
        let scope = Scope { device: self.clone(), writebacks: RefCell::new(Vec::new()), _env: PhantomData };
        let result = body(&scope);
        let finished = scope.finish();
        let value = result?;
        finished.map(|()| value)
    }
}

impl<'env> Scope<'env> {
    /// Stages read-only data: copied once; `&input` is accepted where a kernel takes `&[T]`.
    pub fn input<T: KernelScalar>(&self, data: &'env [T]) -> Result<Preload<'env, T>> {
        self.device.preload(data)
    }

    /// Stages data that launches read and write: copied in now, back when the scope ends.
    pub fn in_out<'s, T: KernelScalar>(&'s self, data: &'env mut [T]) -> Result<Staged<'s, 'env, T>> {
        let buffer = DeviceBuffer::from_slice(&self.device, data)?;
        Ok(Staged { buffer: Some(buffer), host: Some(data), scope: self })
    }

    /// Stages a write-only output: nothing is copied in (the device starts from zeros); the
    /// result comes back when the scope ends.
    pub fn output<'s, T: KernelScalar>(&'s self, data: &'env mut [T]) -> Result<Staged<'s, 'env, T>> {
        let buffer = DeviceBuffer::zeroed(&self.device, data.len())?;
        Ok(Staged { buffer: Some(buffer), host: Some(data), scope: self })
    }

    /// Waits for the queued work once, then copies every staged array back, in staging order.
    fn finish(self) -> Result<()> {
        let synced = self.device.sync();
        let mut first = synced.err();
        for write_back in self.writebacks.into_inner() {
            if let Err(e) = write_back() {
                first.get_or_insert(e);
            }
        }
        first.map_or(Ok(()), Err)
    }
}

impl<T: KernelScalar> Staged<'_, '_, T> {
    fn buffer(&self) -> &DeviceBuffer<T> {
        self.buffer.as_ref().expect("a staged array holds its buffer until dropped")
    }
}

impl<'env, T: KernelScalar> Drop for Staged<'_, 'env, T> {
    fn drop(&mut self) {
        if let (Some(buffer), Some(host)) = (self.buffer.take(), self.host.take()) {
            self.scope.writebacks.borrow_mut().push(Box::new(move || buffer.copy_to(host)));
        }
    }
}

impl<'a, T: KernelScalar> In<'a, T> for &'a Staged<'_, '_, T> {
    fn in_data(self) -> InData<'a, T> {
        InData::Buffer(self.buffer())
    }
}

impl<'a, T: KernelScalar> InOut<'a, T> for &'a mut Staged<'_, '_, T> {
    fn out_data(self) -> OutData<'a, T> {
        OutData::Buffer(self.buffer.as_mut().expect("a staged array holds its buffer until dropped"))
    }
}
