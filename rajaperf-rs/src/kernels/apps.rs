//! Apps group: PRESSURE, FIR, LTIMES, ENERGY; the kernels on RAJAPerf's `ADomain` mesh
//! (VOL3D, DEL_DOT_VEC_2D, ZONAL_ACCUMULATION_3D, MATVEC_3D_STENCIL) are in `mesh`.

use super::{BLOCK_SIZE, Launch, buffers};
use crate::problem::KernelId;
use crate::setup::ENERGY_SCALARS;
use offload::Grid;

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

    /// ENERGY's artificial-viscosity term `ssc·ql + qq`, with RAJAPerf's floor on `ssc`. The
    /// ENERGY kernels are written as the multiply-adds nvcc contracts the CUDA bodies into.
    fn viscosity(ssc: f64, ql: f64, qq: f64) -> f64 {
        let ssc = if ssc <= 0.1111111e-36 { 0.3333333e-18 } else { math::sqrt(ssc) };
        math::fma(ssc, ql, qq)
    }

    /// ENERGY's sound-speed term `(pbvc·e + v²·bvc·p) / rho0`, as nvcc contracts it.
    fn sound_speed(pbvc: f64, e: f64, v: f64, bvc: f64, p: f64, rho0: f64) -> f64 {
        math::fma(pbvc, e, v * v * bvc * p) / rho0
    }

    /// ENERGY's cut-offs: values below `e_cut` in magnitude become 0, then at least `emin`.
    fn energy_cut(e: f64, e_cut: f64, emin: f64) -> f64 {
        let e = if math::abs(e) < e_cut { 0.0 } else { e };
        if e < emin { emin } else { e }
    }

    /// ENERGY loop 1: the half-step energy.
    #[kernel]
    pub fn energy1(
        e_old: &[f64],
        delvc: &[f64],
        p_old: &[f64],
        q_old: &[f64],
        work: &[f64],
        mut e_new: Region<f64>,
    ) {
        let i = e_new.index();
        if let Some(e) = e_new.mine() {
            *e = math::fma(work[i], 0.5, e_old[i] - 0.5 * delvc[i] * (p_old[i] + q_old[i]));
        }
    }

    /// ENERGY loop 2: the half-step viscosity where the volume shrinks.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn energy2(
        rho0: f64,
        delvc: &[f64],
        comp_half_step: &[f64],
        p_half_step: &[f64],
        e_new: &[f64],
        bvc: &[f64],
        pbvc: &[f64],
        ql_old: &[f64],
        qq_old: &[f64],
        mut q_new: Region<f64>,
    ) {
        let i = q_new.index();
        if let Some(q) = q_new.mine() {
            *q = if delvc[i] > 0.0 {
                0.0
            } else {
                let vhalf = 1.0 / (1.0 + comp_half_step[i]);
                let ssc = sound_speed(pbvc[i], e_new[i], vhalf, bvc[i], p_half_step[i], rho0);
                viscosity(ssc, ql_old[i], qq_old[i])
            };
        }
    }

    /// ENERGY loop 3: the energy correction from the half-step pressure and viscosity.
    #[kernel]
    pub fn energy3(
        delvc: &[f64],
        p_old: &[f64],
        q_old: &[f64],
        p_half_step: &[f64],
        q_new: &[f64],
        mut e_new: Region<f64>,
    ) {
        let i = e_new.index();
        if let Some(e) = e_new.mine() {
            let change = math::fma(3.0, p_old[i] + q_old[i], -4.0 * (p_half_step[i] + q_new[i]));
            *e = math::fma(0.5 * delvc[i], change, *e);
        }
    }

    /// ENERGY loop 4: the work term, then the cut-offs.
    #[kernel]
    pub fn energy4(e_cut: f64, emin: f64, work: &[f64], mut e_new: Region<f64>) {
        let i = e_new.index();
        if let Some(e) = e_new.mine() {
            *e = energy_cut(math::fma(work[i], 0.5, *e), e_cut, emin);
        }
    }

    /// ENERGY loop 5: the full-step energy with the estimated viscosity `q_tilde`.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn energy5(
        limits: [f64; 3],
        delvc: &[f64],
        pbvc: &[f64],
        vnewc: &[f64],
        bvc: &[f64],
        p_new: &[f64],
        ql_old: &[f64],
        qq_old: &[f64],
        p_old: &[f64],
        q_old: &[f64],
        p_half_step: &[f64],
        q_new: &[f64],
        mut e_new: Region<f64>,
    ) {
        let [rho0, e_cut, emin] = limits;
        let i = e_new.index();
        if let Some(e) = e_new.mine() {
            let q_tilde = if delvc[i] > 0.0 {
                0.0
            } else {
                let ssc = sound_speed(pbvc[i], *e, vnewc[i], bvc[i], p_new[i], rho0);
                viscosity(ssc, ql_old[i], qq_old[i])
            };
            let change = (math::fma(7.0, p_old[i] + q_old[i], -8.0 * (p_half_step[i] + q_new[i]))
                + (p_new[i] + q_tilde))
                * delvc[i]
                / 6.0;
            *e = energy_cut(*e - change, e_cut, emin);
        }
    }

    /// ENERGY loop 6: the full-step viscosity where the volume shrinks, cut below `q_cut`.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn energy6(
        rho0: f64,
        q_cut: f64,
        delvc: &[f64],
        pbvc: &[f64],
        e_new: &[f64],
        vnewc: &[f64],
        bvc: &[f64],
        p_new: &[f64],
        ql_old: &[f64],
        qq_old: &[f64],
        mut q_new: Region<f64>,
    ) {
        let i = q_new.index();
        if let Some(q) = q_new.mine()
            && delvc[i] <= 0.0
        {
            let ssc = sound_speed(pbvc[i], e_new[i], vnewc[i], bvc[i], p_new[i], rho0);
            let v = viscosity(ssc, ql_old[i], qq_old[i]);
            *q = if math::abs(v) < q_cut { 0.0 } else { v };
        }
    }
}

pub(super) fn launch_reps(launch: Launch<'_>) -> offload::Result<()> {
    let Launch { dev, p, ins, indices, unique, ints, outs, reps } = launch;
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
        KernelId::Energy => {
            buffers!(p, ins => [
                e_old, delvc, p_new, p_old, q_old, work, comp_half_step, p_half_step, bvc, pbvc, ql_old, qq_old, vnewc
            ], outs => [e_new, q_new]);
            let [rho0, e_cut, emin, q_cut] = ENERGY_SCALARS.map(|n| p.scalar(n));
            let grid = Grid::threads(p.param("iend")).block_size(BLOCK_SIZE);
            for _ in 0..reps {
                gpu::energy1::launch(dev, grid, e_old, delvc, p_old, q_old, work, &mut *e_new)?;
                gpu::energy2::launch(
                    dev,
                    grid,
                    rho0,
                    delvc,
                    comp_half_step,
                    p_half_step,
                    &*e_new,
                    bvc,
                    pbvc,
                    ql_old,
                    qq_old,
                    &mut *q_new,
                )?;
                gpu::energy3::launch(dev, grid, delvc, p_old, q_old, p_half_step, &*q_new, &mut *e_new)?;
                gpu::energy4::launch(dev, grid, e_cut, emin, work, &mut *e_new)?;
                gpu::energy5::launch(
                    dev,
                    grid,
                    [rho0, e_cut, emin],
                    delvc,
                    pbvc,
                    vnewc,
                    bvc,
                    p_new,
                    ql_old,
                    qq_old,
                    p_old,
                    q_old,
                    p_half_step,
                    &*q_new,
                    &mut *e_new,
                )?;
                gpu::energy6::launch(
                    dev,
                    grid,
                    rho0,
                    q_cut,
                    delvc,
                    pbvc,
                    &*e_new,
                    vnewc,
                    bvc,
                    p_new,
                    ql_old,
                    qq_old,
                    &mut *q_new,
                )?;
            }
        }
        _ => super::mesh::launch_reps(Launch { dev, p, ins, indices, unique, ints, outs, reps })?,
    }
    Ok(())
}
