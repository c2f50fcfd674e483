//! Apps kernels on RAJAPerf's `ADomain` mesh (`crate::domain`): VOL3D, DEL_DOT_VEC_2D,
//! ZONAL_ACCUMULATION_3D, MATVEC_3D_STENCIL, NODAL_ACCUMULATION_3D (tier 2: it adds to the
//! eight corner nodes of each zone, shared with neighbouring zones, with atomics as CUDA does).
//!
//! VOL3D loops over a contiguous zone range and writes `vol[i]` with a `Region`. The other
//! three loop over the real-zone index list, `i = real_zones[ii]`, and write `out[i]`: the
//! list is checked once on the host to name each zone at most once (`UniqueIndices`), and the
//! kernels write through it with a `Scatter` view — plain stores, as in CUDA.

use super::{BLOCK_SIZE, Launch, buffers};
use crate::problem::KernelId;
use offload::Grid;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// The eight values of `a` at a zone's corners (`NDPTRSET`'s v0 … v7), from one checked
    /// window `a[i..=i + span]`; `c` are the corner offsets clamped to `span` (their largest,
    /// so the clamp changes nothing but lets the compiler drop the per-corner checks).
    #[inline(always)]
    fn corners(a: &[f64], i: usize, c: &[usize; 8], span: usize) -> [f64; 8] {
        let w = &a[i..][..=span];
        c.map(|o| w[o])
    }

    /// `c`'s largest offset, and the offsets clamped to it (each unchanged).
    #[inline(always)]
    fn clamped(c: [usize; 8]) -> ([usize; 8], usize) {
        let span = c.iter().fold(0, |m, &o| m.max(o));
        (c.map(|o| o.min(span)), span)
    }

    /// One of VOL3D's three terms, `xps·cyz + yps·czx + zps·cxy`, as the multiply-adds nvcc
    /// contracts it into.
    #[inline(always)]
    fn triple(ps: [f64; 3], cr: [f64; 3]) -> f64 {
        math::fma(ps[2], cr[2], math::fma(ps[0], cr[0], ps[1] * cr[1]))
    }

    /// The volume of hexahedral zone `i` for `ibegin <= i < iend`, from its corners'
    /// coordinates (RAJAPerf's VOL3D_BODY). `vol` is longer than the zone range, so the
    /// threads outside it stop. Each term `xps·cyz + yps·czx + zps·cxy` is the two
    /// multiply-adds nvcc contracts it into, and each coordinate array is read through one
    /// checked window per zone.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn vol3d(
        range: [usize; 2],
        c: [usize; 8],
        vnormq: f64,
        x: &[f64],
        y: &[f64],
        z: &[f64],
        mut vol: Region<f64>,
    ) {
        let i = vol.index();
        if i < range[0] || i >= range[1] {
            return;
        }
        if let Some(vol) = vol.mine() {
            let (c, span) = clamped(c);
            let (x, y, z) = (corners(x, i, &c, span), corners(y, i, &c, span), corners(z, i, &c, span));
            let (x71, x72, x74) = (x[7] - x[1], x[7] - x[2], x[7] - x[4]);
            let (x30, x50, x60) = (x[3] - x[0], x[5] - x[0], x[6] - x[0]);
            let (y71, y72, y74) = (y[7] - y[1], y[7] - y[2], y[7] - y[4]);
            let (y30, y50, y60) = (y[3] - y[0], y[5] - y[0], y[6] - y[0]);
            let (z71, z72, z74) = (z[7] - z[1], z[7] - z[2], z[7] - z[4]);
            let (z30, z50, z60) = (z[3] - z[0], z[5] - z[0], z[6] - z[0]);

            let mut v = triple(
                [x71 + x60, y71 + y60, z71 + z60],
                [y72 * z30 - z72 * y30, z72 * x30 - x72 * z30, x72 * y30 - y72 * x30],
            );
            v += triple(
                [x72 + x50, y72 + y50, z72 + z50],
                [y74 * z60 - z74 * y60, z74 * x60 - x74 * z60, x74 * y60 - y74 * x60],
            );
            v += triple(
                [x74 + x30, y74 + y30, z74 + z30],
                [y71 * z50 - z71 * y50, z71 * x50 - x71 * z50, x71 * y50 - y71 * x50],
            );

            *vol = v * vnormq;
        }
    }

    /// The divergence of the vector field (xdot, ydot) in 2-D real zone `real_zones[ii]`
    /// (RAJAPerf's DEL_DOT_VEC_2D_BODY); corners 1 … 4 sit at `i + 1`, `i + 1 + jp`,
    /// `i + jp`, `i`.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn del_dot_vec_2d(
        jp: usize,
        ptiny: f64,
        half: f64,
        x: &[f64],
        y: &[f64],
        xdot: &[f64],
        ydot: &[f64],
        mut div: Scatter<f64>,
    ) {
        let Some(i) = div.index() else { return };
        let (x1, x2, x3, x4) = (x[i + 1], x[i + 1 + jp], x[i + jp], x[i]);
        let (y1, y2, y3, y4) = (y[i + 1], y[i + 1 + jp], y[i + jp], y[i]);
        let (fx1, fx2, fx3, fx4) = (xdot[i + 1], xdot[i + 1 + jp], xdot[i + jp], xdot[i]);
        let (fy1, fy2, fy3, fy4) = (ydot[i + 1], ydot[i + 1 + jp], ydot[i + jp], ydot[i]);

        let xi = half * (x1 + x2 - x3 - x4);
        let xj = half * (x2 + x3 - x4 - x1);
        let yi = half * (y1 + y2 - y3 - y4);
        let yj = half * (y2 + y3 - y4 - y1);
        let fxi = half * (fx1 + fx2 - fx3 - fx4);
        let fxj = half * (fx2 + fx3 - fx4 - fx1);
        let fyi = half * (fy1 + fy2 - fy3 - fy4);
        let fyj = half * (fy2 + fy3 - fy4 - fy1);

        let rarea = 1.0 / (xi * yj - xj * yi + ptiny);
        let dfxdx = rarea * (fxi * yj - fxj * yi);
        let dfydy = rarea * (fyj * xi - fyi * xj);
        let affine = (fy1 + fy2 + fy3 + fy4) / (y1 + y2 + y3 + y4);
        if let Some(d) = div.mine() {
            *d = dfxdx + dfydy + affine;
        }
    }

    /// The mean of a 3-D real zone's eight corner values:
    /// `vol[i] = 0.125 · Σ x[corner]` for `i = real_zones[ii]`.
    #[kernel]
    pub fn zonal_accumulation_3d(c: [usize; 8], x: &[f64], mut vol: Scatter<f64>) {
        let Some(i) = vol.index() else { return };
        let (c, span) = clamped(c);
        let v = corners(x, i, &c, span);
        if let Some(out) = vol.mine() {
            *out = 0.125 * (v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7]);
        }
    }

    /// A 27-point matrix-vector product in real zone `i = real_zones[ii]`:
    /// `b[i] = Σ coefficient[i] · x[neighbour]` over the 3×3×3 neighbourhood, summed in
    /// RAJAPerf's order. Of the 27 coefficient arrays 14 are allocated; the other 13 are
    /// those at shifted positions (RAJAPerf's `setUp` aliases them).
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn matvec_3d_stencil(
        jp: usize,
        kp: usize,
        x: &[f64],
        dbl: &[f64],
        dbc: &[f64],
        dbr: &[f64],
        dcl: &[f64],
        dcc: &[f64],
        dcr: &[f64],
        dfl: &[f64],
        dfc: &[f64],
        dfr: &[f64],
        cbl: &[f64],
        cbc: &[f64],
        cbr: &[f64],
        ccl: &[f64],
        ccc: &[f64],
        mut b: Scatter<f64>,
    ) {
        let Some(i) = b.index() else { return };
        // x around zone i: dn = down (k-1), c = centre, up (k+1); b/c/f = j-1/j/j+1; l/c/r = i-1/i/i+1.
        let (dn, up) = (i - kp, i + kp);
        let plane = |at: usize| {
            [at - jp - 1, at - jp, at - jp + 1, at - 1, at, at + 1, at + jp - 1, at + jp, at + jp + 1]
        };
        let (xd, xc, xu) = (plane(dn), plane(i), plane(up));
        let mut s = dbl[i] * x[xd[0]] + dbc[i] * x[xd[1]] + dbr[i] * x[xd[2]];
        s = s + dcl[i] * x[xd[3]] + dcc[i] * x[xd[4]] + dcr[i] * x[xd[5]];
        s = s + dfl[i] * x[xd[6]] + dfc[i] * x[xd[7]] + dfr[i] * x[xd[8]];
        s = s + cbl[i] * x[xc[0]] + cbc[i] * x[xc[1]] + cbr[i] * x[xc[2]];
        s = s + ccl[i] * x[xc[3]] + ccc[i] * x[xc[4]] + ccl[i + 1] * x[xc[5]];
        s = s + cbr[i + jp - 1] * x[xc[6]] + cbc[i + jp] * x[xc[7]] + cbl[i + jp + 1] * x[xc[8]];
        s = s + dfr[up - jp - 1] * x[xu[0]] + dfc[up - jp] * x[xu[1]] + dfl[up - jp + 1] * x[xu[2]];
        s = s + dcr[up - 1] * x[xu[3]] + dcc[up] * x[xu[4]] + dcl[up + 1] * x[xu[5]];
        s = s + dbr[up + jp - 1] * x[xu[6]] + dbc[up + jp] * x[xu[7]] + dbl[up + jp + 1] * x[xu[8]];
        if let Some(out) = b.mine() {
            *out = s;
        }
    }

    /// Spreads an eighth of each real zone's volume to its eight corner nodes, atomically
    /// (neighbouring zones share nodes).
    #[kernel]
    pub fn nodal_accumulation_3d(c: [usize; 8], real_zones: &[i64], vol: &[f64], x: Atomics<f64>) {
        let ii = global_linear_id();
        if ii >= real_zones.len() {
            return;
        }
        let i = real_zones[ii] as usize;
        let val = 0.125 * vol[i];
        for off in c {
            x.add(i + off, val);
        }
    }
}

pub(super) fn launch_reps(launch: Launch<'_>) -> offload::Result<()> {
    let Launch { dev, p, ins, indices, unique, outs, reps, .. } = launch;
    let zone_list =
        || unique.first().and_then(Option::as_ref).expect("the real-zone list names each zone once");
    let grid = Grid::threads(p.param("iend")).block_size(BLOCK_SIZE);
    let (jp, kp) = (p.param("jp"), p.param_opt("kp").unwrap_or(0));
    let corners = [0, 1, jp, 1 + jp, kp, 1 + kp, jp + kp, 1 + jp + kp];
    match p.kernel {
        KernelId::Vol3d => {
            buffers!(p, ins => [x, y, z], outs => [vol]);
            let (range, vnormq) = ([p.param("ibegin"), p.param("iend")], p.scalar("vnormq"));
            for _ in 0..reps {
                gpu::vol3d::launch(dev, grid, range, corners, vnormq, x, y, z, &mut *vol)?;
            }
        }
        KernelId::DelDotVec2d => {
            buffers!(p, ins => [x, y, xdot, ydot], outs => [div]);
            let zones = zone_list();
            let (ptiny, half) = (p.scalar("ptiny"), p.scalar("half"));
            for _ in 0..reps {
                gpu::del_dot_vec_2d::launch(
                    dev,
                    grid,
                    jp,
                    ptiny,
                    half,
                    x,
                    y,
                    xdot,
                    ydot,
                    (&mut *div, zones),
                )?;
            }
        }
        KernelId::ZonalAccumulation3d => {
            buffers!(p, ins => [x], outs => [vol]);
            let zones = zone_list();
            for _ in 0..reps {
                gpu::zonal_accumulation_3d::launch(dev, grid, corners, x, (&mut *vol, zones))?;
            }
        }
        KernelId::Matvec3dStencil => {
            buffers!(p, ins => [x, dbl, dbc, dbr, dcl, dcc, dcr, dfl, dfc, dfr, cbl, cbc, cbr, ccl, ccc], outs => [b]);
            let zones = zone_list();
            for _ in 0..reps {
                gpu::matvec_3d_stencil::launch(
                    dev,
                    grid,
                    jp,
                    kp,
                    x,
                    dbl,
                    dbc,
                    dbr,
                    dcl,
                    dcc,
                    dcr,
                    dfl,
                    dfc,
                    dfr,
                    cbl,
                    cbc,
                    cbr,
                    ccl,
                    ccc,
                    (&mut *b, zones),
                )?;
            }
        }
        KernelId::NodalAccumulation3d => {
            buffers!(p, ins => [vol], outs => [x]);
            let [real_zones] = indices else { panic!("NODAL_ACCUMULATION_3D takes one index list") };
            for _ in 0..reps {
                gpu::nodal_accumulation_3d::launch(dev, grid, corners, real_zones, vol, &mut *x)?;
            }
        }
        other => unreachable!("{other} is not in the Apps group"),
    }
    Ok(())
}
