//! Apps kernels on RAJAPerf's `ADomain` mesh (`crate::domain`): VOL3D, DEL_DOT_VEC_2D,
//! ZONAL_ACCUMULATION_3D, MATVEC_3D_STENCIL, NODAL_ACCUMULATION_3D (tier 2: it adds to the
//! eight corner nodes of each zone, shared with neighbouring zones, with atomics as CUDA does).
//!
//! VOL3D loops over a contiguous zone range and writes `vol[i]` with a `Region`. The other
//! three loop over the real-zone index list, `i = real_zones[ii]`, and write `out[i]`: the
//! list is checked once on the host to name each zone at most once (`UniqueIndices`), and the
//! kernels write through it with a `Scatter` view — plain stores, as in CUDA.

use super::{BLOCK_SIZE, Launch, buffers, offset};
use crate::problem::KernelId;
use offload::{Grid, Stencil};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `a·b − c·d` as nvcc contracts it: `fma(a, b, −(c·d))`.
    #[inline(always)]
    fn cross(a: f64, b: f64, c: f64, d: f64) -> f64 {
        math::fma(a, b, -(c * d))
    }

    /// One of VOL3D's three terms, `xps·cyz + yps·czx + zps·cxy`, as the multiply-adds nvcc
    /// contracts it into.
    #[inline(always)]
    fn triple(ps: [f64; 3], cr: [f64; 3]) -> f64 {
        math::fma(ps[2], cr[2], math::fma(ps[0], cr[0], ps[1] * cr[1]))
    }

    /// The volume of hexahedral zone `i` for `ibegin <= i < iend`, from its corners'
    /// coordinates (RAJAPerf's VOL3D_BODY). `vol` is longer than the zone range, so the
    /// threads outside it stop. Each term `xps·cyz + yps·czx + zps·cxy` and each cross
    /// product is written as the multiply-adds nvcc contracts it into, and each coordinate array's eight corners are
    /// read through the `corners` stencil: one bounds check per array.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn vol3d(
        range: [usize; 2],
        corners: Stencil<8>,
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
            // One check per array, each before its array's loads. (Checked together with
            // `views`, LLVM placed loads among the arithmetic: 48 registers instead of 54 and
            // faster at 1M zones, but 1.05–1.11 of CUDA's time at 2^25 instead of 0.93–0.94;
            // measured again with one trap per kernel: 0.91 of this form's time at 1M, 1.14 at
            // 2^25. `launch_bounds(256, 5)` on this form: 48 registers too, and 1.13 at 2^25.
            // Read as four runs of two with `read_runs`, all 24 loads ahead: 56 registers and
            // 1.03 of CUDA's time at 2^25 against 0.94 for this form, in the same session.)
            // Candidate: one check (`read_together`) with every load ahead in the PTX; `ptxas`
            // still moves 5 of the 24 below the first arithmetic. 48 registers, 245 SASS
            // instructions against 295, no `R2UR`. Not yet measured on the GPU.
            let [x, y, z] = corners.read_together([x, y, z], i).map(|a| a.map(|[v]| v));
            let (x71, x72, x74) = (x[7] - x[1], x[7] - x[2], x[7] - x[4]);
            let (x30, x50, x60) = (x[3] - x[0], x[5] - x[0], x[6] - x[0]);
            let (y71, y72, y74) = (y[7] - y[1], y[7] - y[2], y[7] - y[4]);
            let (y30, y50, y60) = (y[3] - y[0], y[5] - y[0], y[6] - y[0]);
            let (z71, z72, z74) = (z[7] - z[1], z[7] - z[2], z[7] - z[4]);
            let (z30, z50, z60) = (z[3] - z[0], z[5] - z[0], z[6] - z[0]);

            let mut v = triple(
                [x71 + x60, y71 + y60, z71 + z60],
                [cross(y72, z30, z72, y30), cross(z72, x30, x72, z30), cross(x72, y30, y72, x30)],
            );
            v += triple(
                [x72 + x50, y72 + y50, z72 + z50],
                [cross(y74, z60, z74, y60), cross(z74, x60, x74, z60), cross(x74, y60, y74, x60)],
            );
            v += triple(
                [x74 + x30, y74 + y30, z74 + z30],
                [cross(y71, z50, z71, y50), cross(z71, x50, x71, z50), cross(x71, y50, y71, x50)],
            );

            *vol = v * vnormq;
        }
    }

    /// The divergence of the vector field (xdot, ydot) in 2-D real zone `real_zones[ii]`
    /// (RAJAPerf's DEL_DOT_VEC_2D_BODY); `corners` reads corners 1 … 4 at `i + 1`,
    /// `i + 1 + jp`, `i + jp`, `i` of each array with one bounds check.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn del_dot_vec_2d(
        corners: Stencil<2, 2>,
        ptiny: f64,
        half: f64,
        x: &[f64],
        y: &[f64],
        xdot: &[f64],
        ydot: &[f64],
        mut div: Scatter<f64>,
    ) {
        let Some(i) = div.index() else { return };
        // Corners 4 and 1 (`i`, `i + 1`) and 3 and 2 (`i + jp`, `i + jp + 1`): two runs of two
        // in each array. Read together: all sixteen loads issue before the arithmetic, as
        // CUDA's do. Read one array at a time, LLVM placed the xdot and ydot loads after the
        // reciprocal, whose slow path is a branch that ptxas does not hoist loads above.
        let [[[x4, x1], [x3, x2]], [[y4, y1], [y3, y2]], [[fx4, fx1], [fx3, fx2]], [[fy4, fy1], [fy3, fy2]]] =
            corners.read_together([x, y, xdot, ydot], i);

        let xi = half * (x1 + x2 - x3 - x4);
        let xj = half * (x2 + x3 - x4 - x1);
        let yi = half * (y1 + y2 - y3 - y4);
        let yj = half * (y2 + y3 - y4 - y1);
        let fxi = half * (fx1 + fx2 - fx3 - fx4);
        let fxj = half * (fx2 + fx3 - fx4 - fx1);
        let fyi = half * (fy1 + fy2 - fy3 - fy4);
        let fyj = half * (fy2 + fy3 - fy4 - fy1);

        // The differences of products as nvcc contracts them.
        let rarea = 1.0 / (cross(xi, yj, xj, yi) + ptiny);
        let dfxdx = rarea * cross(fxi, yj, fxj, yi);
        let dfydy = rarea * cross(fyj, xi, fyi, xj);
        let affine = (fy1 + fy2 + fy3 + fy4) / (y1 + y2 + y3 + y4);
        if let Some(d) = div.mine() {
            *d = dfxdx + dfydy + affine;
        }
    }

    /// The mean of a 3-D real zone's eight corner values:
    /// `vol[i] = 0.125 · Σ x[corner]` for `i = real_zones[ii]`.
    #[kernel]
    pub fn zonal_accumulation_3d(corners: Stencil<4, 2>, x: &[f64], mut vol: Scatter<f64>) {
        let Some(i) = vol.index() else { return };
        let [[v0, v1], [v2, v3], [v4, v5], [v6, v7]] = corners.read_runs(x, i);
        if let Some(out) = vol.mine() {
            *out = 0.125 * (v0 + v1 + v2 + v3 + v4 + v5 + v6 + v7);
        }
    }

    /// A 27-point matrix-vector product in real zone `i = real_zones[ii]`:
    /// `b[i] = Σ coefficient[i] · x[neighbour]` over the 3×3×3 neighbourhood, summed in
    /// RAJAPerf's order with the multiply-adds nvcc contracts the sum into. Of the 27
    /// coefficient arrays 14 are allocated; the other 13 are those at shifted positions
    /// (RAJAPerf's `setUp` aliases them). `around` checks the 27 points of x and of the
    /// coefficient arrays (as long as x) together.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn matvec_3d_stencil(
        around: Stencil<9, 3>,
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
        // The output first: taken after the sum, it would let LLVM sink the sum below the
        // check but leave every load above it, all 54 loaded before the first multiply-add
        // (120 registers where CUDA's interleaved loads need 40).
        let Some(out) = b.mine() else { return };
        // The 27 points around zone i of x and of the coefficient arrays, checked together
        // (one branch), each loaded where it is used, as CUDA's body loads it. Point
        // p = 9·(k+1) + 3·(j+1) + (i+1) is the neighbour at (k, j, i) in {-1, 0, 1}³
        // (`matvec_rows`: run p / 3 holds it).
        let [x, dbl, dbc, dbr, dcl, dcc, dcr, dfl, dfc, dfr, cbl, cbc, cbr, ccl, ccc] =
            around.views([x, dbl, dbc, dbr, dcl, dcc, dcr, dfl, dfc, dfr, cbl, cbc, cbr, ccl, ccc], i);
        // A coefficient array at i (point 13) and at the mirrored neighbour's point, whose
        // coefficient RAJAPerf's `setUp` aliases into this array at a shifted position.
        // The sum as nvcc contracts CUDA's one-expression body: the first two products into
        // one multiply-add, then a multiply-add per further term.
        // Point p is element p % 3 of run p / 3: its distance from the run's start is a
        // constant, folded into the load's address.
        let pt = |a: &Neighbours<'_, f64, 9, 3>, p: usize| a.run(p / 3)[p % 3];
        let t = |c: &Neighbours<'_, f64, 9, 3>, q: usize, p: usize, s: f64| math::fma(pt(c, q), pt(&x, p), s);
        let mut s = math::fma(pt(&dbl, 13), pt(&x, 0), pt(&dbc, 13) * pt(&x, 1));
        s = t(&dbr, 13, 2, s);
        s = t(&dcl, 13, 3, s);
        s = t(&dcc, 13, 4, s);
        s = t(&dcr, 13, 5, s);
        s = t(&dfl, 13, 6, s);
        s = t(&dfc, 13, 7, s);
        s = t(&dfr, 13, 8, s);
        s = t(&cbl, 13, 9, s);
        s = t(&cbc, 13, 10, s);
        s = t(&cbr, 13, 11, s);
        s = t(&ccl, 13, 12, s);
        s = t(&ccc, 13, 13, s);
        s = t(&ccl, 14, 14, s);
        s = t(&cbr, 15, 15, s);
        s = t(&cbc, 16, 16, s);
        s = t(&cbl, 17, 17, s);
        s = t(&dfr, 18, 18, s);
        s = t(&dfc, 19, 19, s);
        s = t(&dfl, 20, 20, s);
        s = t(&dcr, 21, 21, s);
        s = t(&dcc, 22, 22, s);
        s = t(&dcl, 23, 23, s);
        s = t(&dbr, 24, 24, s);
        s = t(&dbc, 25, 25, s);
        *out = t(&dbl, 26, 26, s);
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
    let Launch { dev, p, ins, unique, outs, reps, .. } = launch;
    let zone_list = || unique.first().expect("the Apps kernels have a real-zone list");
    let grid = Grid::threads(p.param("iend")).block_size(BLOCK_SIZE);
    let (jp, kp) = (p.param("jp"), p.param_opt("kp").unwrap_or(0));
    // A 3-D zone's eight corners, in RAJAPerf's order; for ZONAL_ACCUMULATION_3D, as runs of
    // two at 0, jp, kp and jp + kp (VOL3D was slower with runs: see the kernel).
    let corners = [0, 1, jp, 1 + jp, kp, 1 + kp, jp + kp, 1 + jp + kp];
    let corner_points = Stencil::new(corners.map(offset));
    let corner_runs = Stencil::<4, 2>::runs([0, jp, kp, jp + kp].map(offset));
    match p.kernel {
        KernelId::Vol3d => {
            buffers!(p, ins => [x, y, z], outs => [vol]);
            let (range, vnormq) = ([p.param("ibegin"), p.param("iend")], p.scalar("vnormq"));
            for _ in 0..reps {
                gpu::vol3d::launch(dev, grid, range, corner_points, vnormq, x, y, z, &mut *vol)?;
            }
        }
        KernelId::DelDotVec2d => {
            buffers!(p, ins => [x, y, xdot, ydot], outs => [div]);
            let zones = zone_list();
            let (ptiny, half) = (p.scalar("ptiny"), p.scalar("half"));
            // Corners 4, 1 and 3, 2 of a 2-D zone: runs of two at 0 and jp.
            let quad = Stencil::<2, 2>::runs([0, jp].map(offset));
            for _ in 0..reps {
                gpu::del_dot_vec_2d::launch(
                    dev,
                    grid,
                    quad,
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
                gpu::zonal_accumulation_3d::launch(dev, grid, corner_runs, x, (&mut *vol, zones))?;
            }
        }
        KernelId::Matvec3dStencil => {
            buffers!(p, ins => [x, dbl, dbc, dbr, dcl, dcc, dcr, dfl, dfc, dfr, cbl, cbc, cbr, ccl, ccc], outs => [b]);
            let zones = zone_list();
            let around = Stencil::<9, 3>::runs(matvec_rows(offset(jp), offset(kp)));
            for _ in 0..reps {
                gpu::matvec_3d_stencil::launch(
                    dev,
                    grid,
                    around,
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
            for _ in 0..reps {
                gpu::nodal_accumulation_3d::launch(dev, grid, corners, zone_list(), vol, &mut *x)?;
            }
        }
        other => unreachable!("{other} is not in the Apps group"),
    }
    Ok(())
}

/// MATVEC_3D_STENCIL's 27 points of x around a zone as nine runs of three (i-1, i, i+1):
/// planes k-1, k, k+1; in each, rows j-1, j, j+1.
fn matvec_rows(jp: isize, kp: isize) -> [isize; 9] {
    std::array::from_fn(|r| {
        let (dk, dj) = (r as isize / 3 - 1, r as isize % 3 - 1);
        dk * kp + dj * jp - 1
    })
}
