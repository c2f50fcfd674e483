//! The byte protocol between the runner and the CUDA baseline process
//! (`cuda/driver.cpp`). Everything is little-endian; strings are a `u32` length and UTF-8
//! bytes; arrays are a `u64` element count and that many `f64`s (index lists: `i64`s).
//!
//! Request: magic, kernel name, tuning name (RAJAPerf's name of one of the kernel's Base_CUDA
//! tunings, [`KernelId::cuda_tunings`](crate::KernelId::cuda_tunings); `default` for a kernel
//! with one; any other name is answered with a failure), `u32` reps, `u32` padding (MiB of device memory that nothing
//! uses, allocated before each array: the runner's `--pad-mib`), then `u32`-counted lists of integer parameters
//! (name, `i64`), scalars (name, `f64`), inputs (name, array), outputs (name, array with
//! the initial contents) and index lists (name, `u8` width the kernels read, 4 or 8 bytes,
//! array of `i64`).
//!
//! The same request also asks for the device copy bandwidth: kernel `MEMCPY_D2D` (not a
//! RAJAPerf kernel), tuning `default`, reps = copies timed, padding 0, one parameter `n` (elements of each of two device
//! arrays), nothing else; the response's kernel seconds are the fastest copy's time and it has
//! no outputs. A helper that predates it answers with a failure ("unknown kernel").
//!
//! Response: magic, `i32` status (0 = success), message (the error, or empty), device name,
//! kernel/H2D/D2H seconds (`f64`), H2D/D2H bytes (`u64`), H2D/D2H copies (`u64`), then a
//! `u32`-counted list of output arrays (empty on failure).

use crate::problem::{Problem, Timing};
use anyhow::{Context, bail, ensure};
use std::io::{Read, Write};

/// First bytes of every request and response: protocol name and version.
pub const MAGIC: &[u8; 8] = b"RPCUDA05";

/// What the baseline process reports for one run.
#[derive(Clone, Debug, PartialEq)]
pub struct Response {
    /// The GPU it ran on.
    pub device: String,
    /// Its timing.
    pub timing: Timing,
    /// The outputs after all repetitions, in request order.
    pub outputs: Vec<Vec<f64>>,
}

fn put_u32(out: &mut Vec<u8>, v: usize) {
    out.extend_from_slice(&(v as u32).to_le_bytes());
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    put_u32(out, s.len());
    out.extend_from_slice(s.as_bytes());
}

fn put_array<T: Copy>(out: &mut Vec<u8>, data: &[T], bytes: impl Fn(T) -> [u8; 8]) {
    out.extend_from_slice(&(data.len() as u64).to_le_bytes());
    out.reserve(data.len() * 8);
    for &x in data {
        out.extend_from_slice(&bytes(x));
    }
}

/// Encodes a request to run `reps` repetitions of `p` in its CUDA tuning `tuning`, with
/// `pad_mib` MiB of unused device memory before each array.
pub fn encode_request(p: &Problem, tuning: &str, reps: usize, pad_mib: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(p.bytes_in() + 1024);
    out.extend_from_slice(MAGIC);
    put_str(&mut out, p.kernel.name());
    put_str(&mut out, tuning);
    put_u32(&mut out, reps);
    put_u32(&mut out, pad_mib as usize);
    put_u32(&mut out, p.params.len());
    for (name, value) in &p.params {
        put_str(&mut out, name);
        out.extend_from_slice(&(*value as i64).to_le_bytes());
    }
    put_u32(&mut out, p.scalars.len());
    for (name, value) in &p.scalars {
        put_str(&mut out, name);
        out.extend_from_slice(&value.to_le_bytes());
    }
    for list in [&p.inputs, &p.outputs] {
        put_u32(&mut out, list.len());
        for array in list {
            put_str(&mut out, array.name);
            put_array(&mut out, &array.data, f64::to_le_bytes);
        }
    }
    put_u32(&mut out, p.indices.len());
    for list in &p.indices {
        put_str(&mut out, list.name);
        out.push(if list.int32 { 4 } else { 8 });
        put_array(&mut out, &list.data, i64::to_le_bytes);
    }
    out
}

/// The name under which the helper measures the device copy bandwidth.
pub const COPY_BANDWIDTH_KERNEL: &str = "MEMCPY_D2D";

/// Encodes a request for the device copy bandwidth: `trials` timed `cudaMemcpy` copies
/// between two device arrays of `elements` doubles.
pub fn encode_copy_bandwidth_request(elements: u64, trials: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(MAGIC);
    put_str(&mut out, COPY_BANDWIDTH_KERNEL);
    put_str(&mut out, crate::problem::DEFAULT_TUNING);
    put_u32(&mut out, trials as usize);
    put_u32(&mut out, 0);
    put_u32(&mut out, 1);
    put_str(&mut out, "n");
    out.extend_from_slice(&(elements as i64).to_le_bytes());
    // No scalars, inputs, outputs or index lists.
    for _ in 0..4 {
        put_u32(&mut out, 0);
    }
    out
}

/// Reads fixed-size little-endian values from a stream.
pub(crate) struct Reader<R>(pub R);

impl<R: Read> Reader<R> {
    fn bytes<const N: usize>(&mut self) -> anyhow::Result<[u8; N]> {
        let mut buf = [0u8; N];
        self.0.read_exact(&mut buf).context("the CUDA baseline process closed its output early")?;
        Ok(buf)
    }

    pub fn u32(&mut self) -> anyhow::Result<usize> {
        Ok(u32::from_le_bytes(self.bytes()?) as usize)
    }

    pub fn u64(&mut self) -> anyhow::Result<u64> {
        Ok(u64::from_le_bytes(self.bytes()?))
    }

    #[cfg(test)]
    pub fn i64(&mut self) -> anyhow::Result<i64> {
        Ok(i64::from_le_bytes(self.bytes()?))
    }

    pub fn f64(&mut self) -> anyhow::Result<f64> {
        Ok(f64::from_le_bytes(self.bytes()?))
    }

    pub fn string(&mut self) -> anyhow::Result<String> {
        let len = self.u32()?;
        let mut buf = vec![0u8; len];
        self.0.read_exact(&mut buf)?;
        String::from_utf8(buf).context("a string in the protocol is not UTF-8")
    }

    pub fn array(&mut self) -> anyhow::Result<Vec<f64>> {
        self.array_of(f64::from_le_bytes)
    }

    #[cfg(test)]
    pub fn u8(&mut self) -> anyhow::Result<u8> {
        Ok(self.bytes::<1>()?[0])
    }

    #[cfg(test)]
    pub fn index_array(&mut self) -> anyhow::Result<Vec<i64>> {
        self.array_of(i64::from_le_bytes)
    }

    fn array_of<T>(&mut self, from: impl Fn([u8; 8]) -> T) -> anyhow::Result<Vec<T>> {
        let len = usize::try_from(self.u64()?)?;
        let mut buf = vec![0u8; len.checked_mul(8).context("array length overflows")?];
        self.0.read_exact(&mut buf)?;
        Ok(buf
            .chunks_exact(8)
            .map(|c| {
                let mut b = [0u8; 8];
                b.copy_from_slice(c);
                from(b)
            })
            .collect())
    }

    pub fn magic(&mut self) -> anyhow::Result<()> {
        let magic: [u8; 8] = self.bytes()?;
        ensure!(&magic == MAGIC, "the CUDA baseline speaks another protocol (got {magic:?})");
        Ok(())
    }
}

/// Reads one response; a failure the baseline reports becomes an error with its message.
pub fn read_response(input: impl Read) -> anyhow::Result<Response> {
    let mut r = Reader(input);
    r.magic()?;
    let status = r.u32()? as i32;
    let message = r.string()?;
    let device = r.string()?;
    let timing = Timing {
        kernel_seconds: r.f64()?,
        h2d_seconds: r.f64()?,
        d2h_seconds: r.f64()?,
        h2d_bytes: r.u64()?,
        d2h_bytes: r.u64()?,
        h2d_copies: r.u64()?,
        d2h_copies: r.u64()?,
    };
    let count = r.u32()?;
    let outputs = (0..count).map(|_| r.array()).collect::<anyhow::Result<Vec<_>>>()?;
    if status != 0 {
        bail!("the CUDA baseline failed (status {status}) on {device}: {message}");
    }
    Ok(Response { device, timing, outputs })
}

/// Writes `bytes` and flushes.
pub fn send(mut out: impl Write, bytes: &[u8]) -> anyhow::Result<()> {
    out.write_all(bytes).context("failed to send a request to the CUDA baseline process")?;
    out.flush()?;
    Ok(())
}

#[cfg(test)]
mod tests;
