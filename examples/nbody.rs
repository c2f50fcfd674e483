//! An all-pairs n-body step in `f32`, the classic GPU way: each thread owns one body; the block
//! walks the bodies in tiles of one body per thread, staged through shared memory (`Shared`,
//! one barrier in and one out per tile), and every pair's interaction takes one fast
//! reciprocal square root (`math::fast::rsqrt`, CUDA's `rsqrtf`) instead of a square root and
//! a division. Positions are `f32x4` (x, y, z, mass): one 16-byte load per body.
//!
//! The accelerations are checked against an `f64` computation on the host for a sample of
//! bodies; then the step's velocities and positions. On a GPU it also times the step and
//! prints one JSON line for `scripts/gpu check`, beside its CUDA C++ twin
//! `examples/cuda/nbody.cu` (the same algorithm with `rsqrtf`).
//!
//! Usage: nbody [BODIES] [STEPS]   (defaults 65536 and 10; 4096 on the CPU backend)

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Added to every squared distance, so that a body exerts no force on itself and close
    /// encounters stay finite (Plummer softening).
    pub const SOFTENING2: f32 = 1e-4;

    /// Body `i`'s acceleration from every body (`G = 1`).
    #[kernel]
    pub fn accelerations(pos: &[f32x4], mut acc: Region<f32x4>, tile: Shared<f32x4>, block: Block) {
        let i = acc.index();
        let me = pos.get(i).copied().unwrap_or_default();
        let mut a = [0.0f32; 3];
        let width = block_dim_x() as usize;
        let mut block = block;
        for k in 0..pos.len().div_ceil(width) {
            // A body past the end has mass zero: it pulls on nothing.
            let j = k * width + thread_idx_x() as usize;
            tile.write(&block, pos.get(j).copied().unwrap_or_default());
            let read = block.sync();
            // Four bodies at a time (CUDA's `#pragma unroll 4`), then the rest.
            let (quads, rest) = tile.as_slice(&read).as_chunks::<4>();
            for quad in quads {
                for &p in quad {
                    a = pull(a, me, p);
                }
            }
            for &p in rest {
                a = pull(a, me, p);
            }
            block = read.sync();
        }
        if let Some(out) = acc.mine() {
            *out = f32x4::new(a[0], a[1], a[2], 0.0);
        }
    }

    /// `a` plus the pull of body `p` on body `me`: one fast reciprocal square root per pair.
    #[inline(always)]
    fn pull(a: [f32; 3], me: f32x4, p: f32x4) -> [f32; 3] {
        let (dx, dy, dz) = (p[0] - me[0], p[1] - me[1], p[2] - me[2]);
        let r2 = math::fma(dx, dx, math::fma(dy, dy, math::fma(dz, dz, SOFTENING2)));
        let inv = math::fast::rsqrt(r2);
        let s = p[3] * inv * inv * inv;
        [math::fma(dx, s, a[0]), math::fma(dy, s, a[1]), math::fma(dz, s, a[2])]
    }

    /// Leapfrog (kick-drift): `v += a·dt`, then `x += v·dt`; the mass stays.
    #[kernel]
    pub fn integrate(dt: f32, acc: &[f32x4], mut vel: Region<f32x4>, mut pos: Region<f32x4>) {
        let i = vel.index();
        if let (Some(v), Some(p)) = (vel.mine(), pos.mine()) {
            let a = acc[i];
            let nv = f32x4::new(
                math::fma(a[0], dt, v[0]),
                math::fma(a[1], dt, v[1]),
                math::fma(a[2], dt, v[2]),
                0.0,
            );
            *v = nv;
            *p = f32x4::new(
                math::fma(nv[0], dt, p[0]),
                math::fma(nv[1], dt, p[1]),
                math::fma(nv[2], dt, p[2]),
                p[3],
            );
        }
    }
}

use offload::{Device, DeviceBuffer, Grid, f32x4};
use std::time::Instant;

const BLOCK: u32 = 256;
const DT: f32 = 1e-3;

/// Bodies in a unit cube with masses in [0.5, 1.5) / n (a fixed pseudo-random sequence).
fn bodies(n: usize) -> Vec<f32x4> {
    let mut state = 0x2545_F491_4F6C_DD1Du64;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 40) as f32 / (1u64 << 24) as f32
    };
    (0..n)
        .map(|_| {
            f32x4::new(next() * 2.0 - 1.0, next() * 2.0 - 1.0, next() * 2.0 - 1.0, (0.5 + next()) / n as f32)
        })
        .collect()
}

/// Body `i`'s acceleration in `f64`, with the kernel's softening.
fn reference(pos: &[f32x4], i: usize) -> [f64; 3] {
    let me = pos[i];
    let mut a = [0.0f64; 3];
    for p in pos {
        let d: [f64; 3] = std::array::from_fn(|k| f64::from(p[k]) - f64::from(me[k]));
        let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] + f64::from(gpu::SOFTENING2);
        let s = f64::from(p[3]) / (r2 * r2.sqrt());
        for k in 0..3 {
            a[k] += d[k] * s;
        }
    }
    a
}

fn main() -> anyhow::Result<()> {
    let dev = Device::default()?;
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(if dev.is_gpu() { 65536 } else { 4096 }), |a| a.parse())?;
    let steps: usize = args.next().map_or(Ok(10), |a| a.parse())?;
    anyhow::ensure!(n > 0, "nbody: at least one body");
    let pos0 = bodies(n);
    let grid = Grid::threads(n).block_size(BLOCK);

    // Accelerations against the host's, for a sample of bodies: relative to the largest
    // acceleration's size, as the sum of many terms of both signs has no better scale.
    let mut acc = vec![f32x4::default(); n];
    gpu::accelerations::launch(&dev, grid, &pos0, &mut acc)?;
    let sample: Vec<usize> = (0..n).step_by((n / 64).max(1)).chain([n - 1]).collect();
    let want: Vec<[f64; 3]> = sample.iter().map(|&i| reference(&pos0, i)).collect();
    let scale = want.iter().flatten().fold(0.0f64, |m, v| m.max(v.abs()));
    let mut worst = 0.0f64;
    for (&i, w) in sample.iter().zip(&want) {
        for k in 0..3 {
            worst = worst.max((f64::from(acc[i][k]) - w[k]).abs() / scale);
        }
    }
    anyhow::ensure!(worst <= 1e-4, "nbody: accelerations differ from the host's by {worst:e} of their scale");

    // One step: the velocities and positions follow from the accelerations.
    let mut vel = vec![f32x4::default(); n];
    let mut pos = pos0.clone();
    gpu::integrate::launch(&dev, grid, DT, &acc, &mut vel, &mut pos)?;
    for i in 0..n {
        for k in 0..3 {
            let v = acc[i][k] * DT;
            anyhow::ensure!(vel[i][k] == v, "nbody: body {i}'s velocity {k} is {}, want {v}", vel[i][k]);
            let p = v.mul_add(DT, pos0[i][k]);
            anyhow::ensure!(pos[i][k] == p, "nbody: body {i}'s position {k} is {}, want {p}", pos[i][k]);
        }
    }
    println!("nbody: {n} bodies on {dev}: accelerations within {worst:.1e} of the host's, one step verified");

    if dev.is_gpu() && steps > 0 {
        let mut pos = DeviceBuffer::from_slice(&dev, &pos0)?;
        let mut vel = DeviceBuffer::<f32x4>::zeroed(&dev, n)?;
        let mut acc = DeviceBuffer::<f32x4>::zeroed(&dev, n)?;
        let mut step = || -> offload::Result<()> {
            gpu::accelerations::launch(&dev, grid, &pos, &mut acc)?;
            gpu::integrate::launch(&dev, grid, DT, &acc, &mut vel, &mut pos)
        };
        step()?;
        dev.sync()?;
        let start = Instant::now();
        for _ in 0..steps {
            step()?;
        }
        dev.sync()?;
        let us = start.elapsed().as_secs_f64() * 1e6 / steps as f64;
        let interactions = (n as f64) * (n as f64) / (us * 1e-6) / 1e9;
        println!(
            "{{\"bench\":\"nbody\",\"side\":\"rust\",\"bodies\":{n},\"steps\":{steps},\"us_per_step\":{us:.2},\"ginteractions_per_s\":{interactions:.1}}}"
        );
        eprintln!("nbody: {us:.1} µs per step of {n} bodies ({interactions:.1} G interactions/s)");
    }
    Ok(())
}
