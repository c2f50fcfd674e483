//! Apps group: PRESSURE, FIR, LTIMES.

use super::{BLOCK_SIZE, buffers};
use crate::problem::{KernelId, Problem};
use offload::{Device, DeviceBuffer, Grid};

/// LTIMES' thread block: 32 moments × 4 groups × 2 zones, the shape RAJAPerf's CUDA variant
/// derives for 256 threads (32 in x, the squarest factor pair of 256/32 in y and z).
pub const LTIMES_BLOCK: [u32; 3] = [32, 4, 2];

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// PRESSURE's first loop: `bvc[i] = cls * (compression[i] + 1)`.
    #[kernel]
    pub fn pressure_calc1(cls: f64, compression: &[f64], mut bvc: Region<f64>) {
        let i = bvc.index();
        if let Some(bvc) = bvc.mine() {
            *bvc = cls * (compression[i] + 1.0);
        }
    }

    /// PRESSURE's second loop: the new pressure, cut off below `p_cut`, zero where the
    /// volume reaches `eosvmax`, and at least `pmin`.
    #[kernel]
    pub fn pressure_calc2(
        p_cut: f64,
        eosvmax: f64,
        pmin: f64,
        bvc: &[f64],
        e_old: &[f64],
        vnewc: &[f64],
        mut p_new: Region<f64>,
    ) {
        let i = p_new.index();
        if let Some(p) = p_new.mine() {
            let mut value = bvc[i] * e_old[i];
            if math::abs(value) < p_cut {
                value = 0.0;
            }
            if vnewc[i] >= eosvmax {
                value = 0.0;
            }
            if value < pmin {
                value = pmin;
            }
            *p = value;
        }
    }

    /// Taps of the FIR filter (RAJAPerf's `FIR_COEFFLEN`).
    pub const COEFFLEN: usize = 16;

    /// A finite impulse response filter: `out[i] = Σ_j coeff[j] · in[i+j]` for `i < iend`
    /// (the last `coefflen` elements of `out` stay as they are, as in RAJAPerf).
    ///
    /// The coefficients travel by value, in the kernel's parameter space — the equivalent of
    /// the `__constant__` array of RAJAPerf's CUDA version, read through the constant cache —
    /// and the input window is sliced once, so the fixed-length loop unrolls without bounds
    /// checks. The taps are fused multiply-adds, which is what nvcc makes of the CUDA
    /// version's `sum += coeff[j] * in[i + j]`.
    #[kernel]
    pub fn fir(iend: usize, coeff: [f64; COEFFLEN], input: &[f64], mut out: Region<f64>) {
        let i = out.index();
        if i >= iend {
            return;
        }
        if let Some(out) = out.mine() {
            let window = &input[i..i + COEFFLEN];
            let mut sum = 0.0;
            for j in 0..COEFFLEN {
                sum = math::fma(coeff[j], window[j], sum);
            }
            *out = sum;
        }
    }

    /// Discrete-ordinates moment accumulation: each thread owns `phi[z][g][m]` and adds
    /// `Σ_d ell[m][d] · psi[z][g][d]` to it.
    #[kernel]
    pub fn ltimes(num_d: usize, ell: &[f64], psi: &[f64], mut phi: Region3<f64>) {
        let [m, g, z] = phi.index();
        let num_g = phi.extents()[1];
        if let Some(phi) = phi.mine() {
            let ell_m = &ell[m * num_d..(m + 1) * num_d];
            let zg = num_d * (g + num_g * z);
            let psi_zg = &psi[zg..zg + num_d];
            for (e, s) in ell_m.iter().zip(psi_zg) {
                *phi += e * s;
            }
        }
    }
}

pub(super) fn launch_reps(
    dev: &Device,
    p: &Problem,
    ins: &[DeviceBuffer<f64>],
    outs: &mut [DeviceBuffer<f64>],
    reps: usize,
) -> offload::Result<()> {
    match p.kernel {
        KernelId::Pressure => {
            buffers!(p, ins => [compression, e_old, vnewc], outs => [bvc, p_new]);
            let grid = Grid::threads(p.param("iend")).block_size(BLOCK_SIZE);
            let (cls, p_cut) = (p.scalar("cls"), p.scalar("p_cut"));
            let (pmin, eosvmax) = (p.scalar("pmin"), p.scalar("eosvmax"));
            for _ in 0..reps {
                gpu::pressure_calc1::launch(dev, grid, cls, compression, &mut *bvc)?;
                gpu::pressure_calc2::launch(
                    dev,
                    grid,
                    p_cut,
                    eosvmax,
                    pmin,
                    &*bvc,
                    e_old,
                    vnewc,
                    &mut *p_new,
                )?;
            }
        }
        KernelId::Fir => {
            buffers!(p, ins => [_coeff_buffer, input], outs => [out]);
            let coeff: [f64; gpu::COEFFLEN] =
                p.input("coeff").try_into().expect("setup makes FIR_COEFFLEN coefficients");
            let iend = p.param("iend");
            let grid = Grid::threads(iend).block_size(BLOCK_SIZE);
            for _ in 0..reps {
                gpu::fir::launch(dev, grid, iend, coeff, input, &mut *out)?;
            }
        }
        KernelId::Ltimes => {
            buffers!(p, ins => [ell, psi], outs => [phi]);
            let (num_d, num_m) = (p.param("num_d"), p.param("num_m"));
            let (num_g, num_z) = (p.param("num_g"), p.param("num_z"));
            let [bx, by, bz] = LTIMES_BLOCK;
            let grid = Grid::threads_xyz(num_m, num_g, num_z).block_xyz(bx, by, bz);
            for _ in 0..reps {
                gpu::ltimes::launch(dev, grid, num_d, ell, psi, (&mut *phi, [num_m, num_g, num_z]))?;
            }
        }
        other => unreachable!("{other} is not in the Apps group"),
    }
    Ok(())
}
