//! The kernels in safe Rust, one `#[offload::kernels]` module per RAJAPerf group, and the
//! `rust` variant's timed run.
//!
//! Each group module holds the device code and a `launch_reps` that issues one timed
//! repetition loop with RAJAPerf's launch shapes: blocks of 256 threads for the 1-D kernels,
//! 32×4×2 for LTIMES, 32×8×1 for NESTED_INIT, the 2-D/3-D stencils, GEMM and 2MM, 16×16 for
//! MAT_MAT_SHARED. Index lists (`Problem::indices`) travel as
//! `DeviceBuffer<i64>`s to the kernels that read them.

mod apps;
mod basic;
mod dense;
mod lcals;
mod mesh;
mod reduce;
mod stencil;
mod stream;

use crate::problem::{Group, Problem, Timing};
use anyhow::Context;
use offload::report::Direction;
use offload::{Device, DeviceBuffer};
use std::time::Instant;

/// Threads per block of the 1-D kernels (RAJAPerf's default GPU block size).
pub const BLOCK_SIZE: u32 = 256;

/// A mesh or grid distance as a `Stencil` offset (problem sizes are far below `isize::MAX`).
fn offset(o: usize) -> isize {
    isize::try_from(o).expect("grid and mesh offsets fit an isize")
}

/// Runs `reps` repetitions of the problem's kernel on `dev` the way RAJAPerf times a GPU
/// variant: data is moved to the device first, the device is synchronised, the clock runs
/// over all repetitions and a final synchronisation, and only then are the outputs copied
/// back into `p`.
pub fn run_rust(dev: &Device, p: &mut Problem, reps: usize) -> anyhow::Result<Timing> {
    run_rust_padded(dev, p, reps, 0)
}

/// As [`run_rust`], with `pad_mib` MiB of device memory that nothing uses allocated before
/// each input and output array (`--pad-mib`): the arrays lie elsewhere in memory, and how much
/// a kernel's time moves with that is what this measures.
pub fn run_rust_padded(dev: &Device, p: &mut Problem, reps: usize, pad_mib: usize) -> anyhow::Result<Timing> {
    let mut pads = Vec::new();
    // Each array to the device, after its padding.
    let mut upload = |arrays: &[crate::problem::Array]| -> anyhow::Result<Vec<DeviceBuffer<f64>>> {
        let mut buffers = Vec::with_capacity(arrays.len());
        for a in arrays {
            if pad_mib > 0 {
                pads.push(DeviceBuffer::<u8>::zeroed(dev, pad_mib << 20)?);
            }
            buffers.push(DeviceBuffer::from_slice(dev, &a.data)?);
        }
        Ok(buffers)
    };
    // The runtime counts the copies it makes (none on the CPU backend, which has no device
    // memory): what this variant transferred is the difference over each phase.
    let copied_in = offload::transfer_report().host_to_device;
    let start = Instant::now();
    let inputs = upload(&p.inputs)?;
    // Index lists as 64-bit `Index_type`, integer data as 32-bit `Int_type`.
    let indices = p
        .indices
        .iter()
        .filter(|a| !a.int32 && !a.distinct)
        .map(|a| DeviceBuffer::from_slice(dev, &a.data))
        .collect::<Result<Vec<_>, _>>()?;
    let ints = p
        .indices
        .iter()
        .filter(|a| a.int32)
        .map(|a| {
            let narrow: Vec<i32> =
                a.data.iter().map(|&v| i32::try_from(v).expect("Int_type data fits 32 bits")).collect();
            DeviceBuffer::from_slice(dev, &narrow)
        })
        .collect::<Result<Vec<_>, _>>()?;
    // Index lists that name each element of the outputs at most once (the real-zone lists)
    // are checked once here (and copied once, with the check), so that kernels may write
    // through them without atomics.
    let bound = p.outputs.first().map_or(0, |a| a.data.len());
    let unique = p
        .indices
        .iter()
        .filter(|a| !a.int32 && a.distinct)
        .map(|a| {
            offload::UniqueIndices::new(dev, &a.data, bound).with_context(|| {
                format!("{}: index list {} (set up as naming each element once)", p.kernel, a.name)
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    let mut outputs = upload(&p.outputs)?;
    dev.sync()?;
    let h2d_seconds = start.elapsed().as_secs_f64();
    let copied_in = since(copied_in, offload::transfer_report().host_to_device);

    let start = Instant::now();
    let launch = Launch {
        dev,
        p,
        ins: &inputs,
        indices: &indices,
        unique: &unique,
        ints: &ints,
        outs: &mut outputs,
        reps,
    };
    match p.kernel.group() {
        _ if reduce::handles(p.kernel) => reduce::launch_reps(launch)?,
        _ if stencil::handles(p.kernel) => stencil::launch_reps(launch)?,
        _ if dense::handles(p.kernel) => dense::launch_reps(launch)?,
        Group::Stream => stream::launch_reps(launch)?,
        Group::Basic => basic::launch_reps(launch)?,
        Group::Lcals => lcals::launch_reps(launch)?,
        Group::Apps => apps::launch_reps(launch)?,
        Group::Polybench | Group::Algorithm => {
            unreachable!("{}: the reduction and stencil modules run these groups", p.kernel)
        }
    }
    dev.sync()?;
    let kernel_seconds = start.elapsed().as_secs_f64();

    let copied_out = offload::transfer_report().device_to_host;
    let start = Instant::now();
    for (buffer, array) in outputs.iter().zip(&mut p.outputs) {
        buffer.copy_to(&mut array.data)?;
    }
    let d2h_seconds = start.elapsed().as_secs_f64();
    let copied_out = since(copied_out, offload::transfer_report().device_to_host);

    Ok(Timing {
        kernel_seconds,
        h2d_seconds,
        d2h_seconds,
        h2d_bytes: copied_in.bytes,
        d2h_bytes: copied_out.bytes,
        h2d_copies: copied_in.count,
        d2h_copies: copied_out.count,
    })
}

/// The copies between two snapshots of the runtime's transfer report.
fn since(before: Direction, after: Direction) -> Direction {
    Direction {
        count: after.count - before.count,
        bytes: after.bytes - before.bytes,
        time: after.time.saturating_sub(before.time),
    }
}

/// What a module's `launch_reps` gets: the device, the problem, the device copies of its
/// inputs, index lists and outputs, and how many repetitions to launch.
pub(crate) struct Launch<'a> {
    pub dev: &'a Device,
    pub p: &'a Problem,
    pub ins: &'a [DeviceBuffer<f64>],
    /// The 64-bit index lists that may repeat an index (MULTI_REDUCE's and HISTOGRAM's bins).
    pub indices: &'a [DeviceBuffer<i64>],
    /// The 64-bit index lists that name each element at most once (the real-zone lists),
    /// checked for writes through them.
    pub unique: &'a [offload::UniqueIndices],
    pub ints: &'a [DeviceBuffer<i32>],
    pub outs: &'a mut [DeviceBuffer<f64>],
    pub reps: usize,
}

/// Unpacks a kernel's device buffers by position, or panics naming the kernel: the positions
/// come from `setup`, so a mismatch is a bug in this crate.
macro_rules! buffers {
    ($p:expr, $ins:expr => [$($i:ident),*], $outs:expr => [$($o:ident),+]) => {
        let ([$($i),*], [$($o),+]) = ($ins, $outs) else {
            panic!("{}: unexpected number of device buffers", $p.kernel)
        };
    };
}
pub(crate) use buffers;
