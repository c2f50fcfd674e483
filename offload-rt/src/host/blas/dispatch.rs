//! What every routine does around its library call: argument lengths, the device checks of
//! its arguments, and the backend it runs on (bound to the device for one call).

use super::super::args::{InData, OutData};
use super::super::device::Device;
use super::super::error::Result;
use super::*;
use crate::host::backend::cpu::track_name as cpu_track_name;
use crate::host::timeline;

pub(super) fn in_len<T: crate::host::args::KernelScalar>(d: &InData<'_, T>) -> usize {
    match d {
        InData::Host(h) => h.len(),
        InData::Buffer(b) => b.len(),
        InData::Part { len, .. } => *len,
    }
}

pub(super) fn out_len<T: crate::host::args::KernelScalar>(d: &OutData<'_, T>) -> usize {
    d.len()
}

/// A read-only argument and its name.
pub(crate) type InArg<'a, T> = (InData<'a, T>, &'static str);
/// A written argument, its name, and whether the routine reads it first.
pub(crate) type OutArg<'a, T> = (OutData<'a, T>, &'static str, bool);

/// A backend, bound to one device for one call.
pub(super) enum Backend<'d> {
    Cpu,
    Gpu(gpu::Gpu<'d>),
}

/// Runs one routine on `device`'s backend, and records it in the transfer report and, as
/// `label()` ("gemm 1024×1024×1024"), on the timeline.
pub(super) fn run<R>(
    device: &Device,
    routine: &'static str,
    label: impl FnOnce() -> String,
    body: impl FnOnce(&mut Backend<'_>) -> Result<R>,
) -> Result<R> {
    let started = std::time::Instant::now();
    let recording = timeline::on();
    let mut backend = match device.backend().gpu() {
        None => Backend::Cpu,
        Some(g) => Backend::Gpu(gpu::Gpu::new(device, g, routine)?),
    };
    let result = body(&mut backend);
    if recording {
        let on_cpu = matches!(backend, Backend::Cpu);
        let device_time = if on_cpu {
            "measured (the CPU backend runs it before the call returns)"
        } else {
            "within this call: it waits for the queue, runs on the library's own stream and waits for that"
        };
        let args = serde_json::json!({ "routine": routine, "device": device.name(),
            "device_time": device_time, "ok": result.is_ok() });
        let name = label();
        if on_cpu {
            timeline::device(timeline::CPU_QUEUE, cpu_track_name, started, name.clone(), args.clone());
        }
        timeline::host(started, "blas", name, args);
        crate::host::report::record_device_time(routine, on_cpu.then(|| started.elapsed()));
    }
    let result = result?;
    crate::host::report::record_launch(routine, started.elapsed());
    Ok(result)
}

impl Backend<'_> {
    #[expect(clippy::too_many_arguments, reason = "BLAS's own argument list")]
    pub(super) fn gemm<T: Scalar>(
        &mut self,
        shape: &Gemm,
        call: &shape::GemmCall,
        alpha: T,
        a: InArg<'_, T>,
        b: InArg<'_, T>,
        beta: T,
        c: OutArg<'_, T>,
    ) -> Result<()> {
        match self {
            Backend::Cpu => cpu::gemm(shape, alpha, a, b, beta, c),
            Backend::Gpu(gpu) => gpu.gemm(call, alpha, a, b, beta, c),
        }
    }

    #[expect(clippy::too_many_arguments, reason = "BLAS's own argument list")]
    pub(super) fn gemv<T: Scalar>(
        &mut self,
        shape: &Gemv,
        call: &shape::GemvCall,
        alpha: T,
        a: InArg<'_, T>,
        x: InArg<'_, T>,
        beta: T,
        y: OutArg<'_, T>,
    ) -> Result<()> {
        match self {
            Backend::Cpu => cpu::gemv(shape, alpha, a, x, beta, y),
            Backend::Gpu(gpu) => gpu.gemv(call, alpha, a, x, beta, y),
        }
    }

    pub(super) fn axpy<T: Scalar>(
        &mut self,
        n: usize,
        alpha: T,
        x: InArg<'_, T>,
        y: OutArg<'_, T>,
    ) -> Result<()> {
        match self {
            Backend::Cpu => cpu::axpy(n, alpha, x, y),
            Backend::Gpu(gpu) => gpu.axpy(n, alpha, x, y),
        }
    }

    pub(super) fn dot<T: Scalar>(&mut self, n: usize, x: InArg<'_, T>, y: InArg<'_, T>) -> Result<T> {
        match self {
            Backend::Cpu => cpu::dot(n, x, y),
            Backend::Gpu(gpu) => gpu.dot(n, x, y),
        }
    }

    pub(super) fn nrm2<T: Scalar>(&mut self, n: usize, x: InArg<'_, T>) -> Result<T> {
        match self {
            Backend::Cpu => cpu::nrm2(n, x),
            Backend::Gpu(gpu) => gpu.nrm2(n, x),
        }
    }

    pub(super) fn scal<T: Scalar>(&mut self, n: usize, alpha: T, x: OutArg<'_, T>) -> Result<()> {
        match self {
            Backend::Cpu => cpu::scal(n, alpha, x),
            Backend::Gpu(gpu) => gpu.scal(n, alpha, x),
        }
    }
}

/// Fails with [`BlasError::WrongDevice`] when a read-only argument is a buffer of another
/// device.
pub(super) fn check_in<T: crate::host::args::KernelScalar, const N: usize>(
    device: &Device,
    routine: &'static str,
    args: [(&InData<'_, T>, &'static str); N],
) -> Result<()> {
    for (data, argument) in args {
        match data {
            InData::Buffer(b) => same_device(routine, argument, b.device(), device)?,
            InData::Part { buffer, .. } => same_device(routine, argument, buffer.device(), device)?,
            InData::Host(_) => {}
        }
    }
    Ok(())
}

/// Fails with [`BlasError::WrongDevice`] when the written argument is a buffer of another
/// device.
pub(super) fn check_out<T: crate::host::args::KernelScalar>(
    device: &Device,
    routine: &'static str,
    (data, argument): (&OutData<'_, T>, &'static str),
) -> Result<()> {
    match data {
        OutData::Buffer(b) => same_device(routine, argument, b.device(), device),
        OutData::Part { buffer, .. } => same_device(routine, argument, buffer.device(), device),
        OutData::Host(_) | OutData::HostWriteOnly(_) => Ok(()),
    }
}

pub(super) fn same_device(
    routine: &'static str,
    argument: &'static str,
    buffer: &Device,
    device: &Device,
) -> Result<()> {
    if buffer.same_device(device) {
        return Ok(());
    }
    Err(BlasError::WrongDevice { routine, argument, buffer: buffer.to_string(), device: device.to_string() }
        .into())
}
