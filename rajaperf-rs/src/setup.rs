//! Each kernel's `setUp`: sizes derived from the target size, and arrays and scalars
//! initialised in exactly RAJAPerf's order (the order decides the values, see [`DataInit`]).

use crate::data::DataInit;
use crate::domain::ADomain;
use crate::problem::{
    Array, FIR_COEFFLEN, IndexArray, KernelId, LTIMES_NUM_D, LTIMES_NUM_G, LTIMES_NUM_M, Problem,
    ltimes_num_z,
};

/// INIT_VIEW1D's `m_val`.
pub const INIT_VIEW1D_VAL: f64 = 0.00000123;

/// INT_PREDICT's `m_px_initval`: px starts at it, and it is subtracted before the checksum.
pub const INT_PREDICT_PX_INITVAL: f64 = 1.0;

/// COPY8's arrays, in RAJAPerf's order.
pub const COPY8_OUT: [&str; 8] = ["y0", "y1", "y2", "y3", "y4", "y5", "y6", "y7"];
pub const COPY8_IN: [&str; 8] = ["x0", "x1", "x2", "x3", "x4", "x5", "x6", "x7"];

/// ENERGY's scalars, in RAJAPerf's order.
pub const ENERGY_SCALARS: [&str; 4] = ["rho0", "e_cut", "emin", "q_cut"];

/// ENERGY's read-only arrays, in RAJAPerf's order (`e_new` and `q_new` are the outputs).
pub const ENERGY_IN: [&str; 13] = [
    "e_old",
    "delvc",
    "p_new",
    "p_old",
    "q_old",
    "work",
    "compHalfStep",
    "pHalfStep",
    "bvc",
    "pbvc",
    "ql_old",
    "qq_old",
    "vnewc",
];

/// VOL3D's `m_vnormq`, RAJAPerf's `0.083333333333333333` (the double nearest 1/12).
pub const VOL3D_VNORMQ: f64 = 1.0 / 12.0;

/// MATVEC_3D_STENCIL's 14 allocated coefficient arrays, in RAJAPerf's order; the other 13
/// of the 27 are these at shifted positions.
pub const MATVEC_MATRICES: [&str; 14] =
    ["dbl", "dbc", "dbr", "dcl", "dcc", "dcr", "dfl", "dfc", "dfr", "cbl", "cbc", "cbr", "ccl", "ccc"];

/// HYDRO_2D's `m_s` and `m_t`.
pub const HYDRO_2D_S: f64 = 0.0041;
pub const HYDRO_2D_T: f64 = 0.0037;

/// HYDRO_2D's arrays in RAJAPerf's initialisation order, and whether each is written.
const HYDRO_2D_ARRAYS: [(&str, bool); 11] = [
    ("zrout", true),
    ("zzout", true),
    ("za", true),
    ("zb", true),
    ("zm", false),
    ("zp", false),
    ("zq", false),
    ("zr", false),
    ("zu", true),
    ("zv", true),
    ("zz", false),
];

/// HISTOGRAM's and MULTI_REDUCE's number of bins (RAJAPerf's default).
pub const NUM_BINS: usize = 10;

/// REDUCE3_INT's results, in the order RAJAPerf adds them to the checksum.
pub const REDUCE3_INT_OUT: [&str; 3] = ["vsum", "vmin", "vmax"];

/// REDUCE_STRUCT's results, in the order RAJAPerf adds them to the checksum.
pub const REDUCE_STRUCT_OUT: [&str; 6] = ["xcenter", "xmin", "xmax", "ycenter", "ymin", "ymax"];

/// FIR's filter (RAJAPerf's `FIR_COEFF`).
pub const FIR_COEFF: [f64; FIR_COEFFLEN] =
    [3.0, -1.0, -1.0, -1.0, -1.0, 3.0, -1.0, -1.0, -1.0, -1.0, 3.0, -1.0, -1.0, -1.0, -1.0, 3.0];

fn array(name: &'static str, data: Vec<f64>) -> Array {
    Array { name, data, checksum_len: 0, checksum_offset: 0.0, plain: false }
}

fn checked(name: &'static str, data: Vec<f64>) -> Array {
    let checksum_len = data.len();
    Array { name, data, checksum_len, checksum_offset: 0.0, plain: false }
}

/// A scalar result, kept as a one-element output: RAJAPerf adds it to the checksum as it is.
fn scalar_result(name: &'static str, initial: f64) -> Array {
    Array { name, data: vec![initial], checksum_len: 1, checksum_offset: 0.0, plain: true }
}

/// The 3-D domain of the real-zone kernels for `target`: the problem size is the number of
/// real zones, the loop bound and strides become parameters.
fn real_zone_domain_3d(p: &mut Problem, target: usize) -> ADomain {
    let d = ADomain::for_target_3d(target);
    p.size = d.n_real_zones;
    p.params = vec![("iend", d.n_real_zones), ("jp", d.jp), ("kp", d.kp)];
    d
}

/// Adds the real-zone list (its `-1` fill counts as an initialisation, as in RAJAPerf).
fn real_zones(p: &mut Problem, init: &mut DataInit, d: &ADomain) {
    init.count_int_constant();
    p.indices.push(IndexArray { name: "real_zones", data: d.real_zones(), int32: false, distinct: true });
}

/// The problem `kernel` runs for a target size of `target` (RAJAPerf's `--size`), initialised
/// as a fresh variant run would see it.
pub fn setup(kernel: KernelId, target: usize) -> Problem {
    let mut init = DataInit::new();
    let n = target;
    let mut problem = Problem {
        kernel,
        size: n,
        inputs: vec![],
        outputs: vec![],
        indices: vec![],
        scalars: vec![],
        params: vec![("iend", n)],
    };
    let p = &mut problem;
    match kernel {
        KernelId::Copy => {
            p.inputs.push(array("a", init.data(n)));
            p.outputs.push(checked("c", init.constant(n, 0.0)));
        }
        KernelId::Mul => {
            p.outputs.push(checked("b", init.constant(n, 0.0)));
            p.inputs.push(array("c", init.data(n)));
            p.scalars.push(("alpha", init.scalar()));
        }
        KernelId::Add => {
            p.inputs.push(array("a", init.data(n)));
            p.inputs.push(array("b", init.data(n)));
            p.outputs.push(checked("c", init.constant(n, 0.0)));
        }
        KernelId::Triad => {
            p.outputs.push(checked("a", init.constant(n, 0.0)));
            p.inputs.push(array("b", init.data(n)));
            p.inputs.push(array("c", init.data(n)));
            p.scalars.push(("alpha", init.scalar()));
        }
        KernelId::Daxpy => {
            p.outputs.push(checked("y", init.constant(n, 0.0)));
            p.inputs.push(array("x", init.data(n)));
            p.scalars.push(("a", init.scalar()));
        }
        KernelId::Init3 | KernelId::MulAddSub => {
            p.outputs.push(checked("out1", init.constant(n, 0.0)));
            p.outputs.push(checked("out2", init.constant(n, 0.0)));
            p.outputs.push(checked("out3", init.constant(n, 0.0)));
            p.inputs.push(array("in1", init.data(n)));
            p.inputs.push(array("in2", init.data(n)));
        }
        KernelId::IfQuad => {
            p.inputs.push(array("a", init.rand_sign(n)));
            p.inputs.push(array("b", init.data(n)));
            p.inputs.push(array("c", init.data(n)));
            p.outputs.push(checked("x1", init.constant(n, 0.0)));
            p.outputs.push(checked("x2", init.constant(n, 0.0)));
        }
        KernelId::Hydro1d => {
            // The loop reads z[i+10] and z[i+11]; all three arrays get 12 spare elements.
            let len = n + 12;
            let mut x = array("x", init.constant(len, 0.0));
            x.checksum_len = n;
            p.outputs.push(x);
            p.inputs.push(array("y", init.data(len)));
            p.inputs.push(array("z", init.data(len)));
            for name in ["q", "r", "t"] {
                p.scalars.push((name, init.scalar()));
            }
        }
        KernelId::Pressure => {
            p.inputs.push(array("compression", init.data(n)));
            // bvc is written by the first loop and read by the second; only p_new is summed.
            p.outputs.push(array("bvc", init.data(n)));
            p.outputs.push(checked("p_new", init.constant(n, 0.0)));
            p.inputs.push(array("e_old", init.data(n)));
            p.inputs.push(array("vnewc", init.data(n)));
            for name in ["cls", "p_cut", "pmin", "eosvmax"] {
                p.scalars.push((name, init.scalar()));
            }
        }
        KernelId::Fir => {
            // The filter reads in[i .. i+coefflen], so the loop stops coefflen short.
            p.params = vec![("iend", n.saturating_sub(FIR_COEFFLEN)), ("coefflen", FIR_COEFFLEN)];
            p.inputs.push(array("coeff", FIR_COEFF.to_vec()));
            p.inputs.push(array("in", init.data(n)));
            p.outputs.push(checked("out", init.constant(n, 0.0)));
        }
        KernelId::Ltimes => {
            let (num_d, num_g, num_m) = (LTIMES_NUM_D, LTIMES_NUM_G, LTIMES_NUM_M);
            let num_z = ltimes_num_z(target);
            p.size = num_d * num_g * num_z;
            p.params = vec![("num_d", num_d), ("num_m", num_m), ("num_g", num_g), ("num_z", num_z)];
            p.outputs.push(checked("phi", init.constant(num_m * num_g * num_z, 0.0)));
            p.inputs.push(array("ell", init.data(num_d * num_m)));
            p.inputs.push(array("psi", init.data(num_d * num_g * num_z)));
        }
        KernelId::Eos => {
            // u[i+1 ..= i+6] is read; every array gets 7 spare elements.
            let len = n + 7;
            let mut x = array("x", init.constant(len, 0.0));
            x.checksum_len = n;
            p.outputs.push(x);
            for name in ["y", "z", "u"] {
                p.inputs.push(array(name, init.data(len)));
            }
            for name in ["q", "r", "t"] {
                p.scalars.push((name, init.scalar()));
            }
        }
        KernelId::FirstDiff => {
            // x[i] = y[i+1] - y[i]: both arrays have n + 1 elements, n are summed.
            let len = n + 1;
            let mut x = array("x", init.constant(len, 0.0));
            x.checksum_len = n;
            p.outputs.push(x);
            p.inputs.push(array("y", init.data(len)));
        }
        KernelId::IntPredict => {
            // One array of 13 slabs of n; the loop writes slab 0 from slabs 2, 4..=12.
            p.params.push(("offset", n));
            let mut px = array("px", init.constant(13 * n, INT_PREDICT_PX_INITVAL));
            px.checksum_len = n;
            px.checksum_offset = INT_PREDICT_PX_INITVAL;
            p.outputs.push(px);
            for name in ["dm22", "dm23", "dm24", "dm25", "dm26", "dm27", "dm28", "c0"] {
                p.scalars.push((name, init.scalar()));
            }
        }
        KernelId::DiffPredict => {
            // 14 slabs of n; the loop updates slabs 4..=13 of px from slab 4 of cx.
            p.params.push(("offset", n));
            p.outputs.push(checked("px", init.constant(14 * n, 0.0)));
            p.inputs.push(array("cx", init.data(14 * n)));
        }
        KernelId::Planckian => {
            // y is written (u / v) and read back; only w is summed.
            p.inputs.push(array("x", init.data(n)));
            p.outputs.push(array("y", init.data(n)));
            p.inputs.push(array("u", init.data(n)));
            p.inputs.push(array("v", init.data(n)));
            p.outputs.push(checked("w", init.constant(n, 0.0)));
        }
        KernelId::InitView1d => {
            p.outputs.push(checked("a", init.constant(n, 0.0)));
            // Assigned, not initialised: the counter does not move.
            p.scalars.push(("val", INIT_VIEW1D_VAL));
        }
        KernelId::Copy8 => {
            for name in COPY8_OUT {
                p.outputs.push(checked(name, init.constant(n, 0.0)));
            }
            for name in COPY8_IN {
                p.inputs.push(array(name, init.data(n)));
            }
        }
        KernelId::NestedInit => {
            // n = cbrt(target), truncated, in each dimension.
            let side = (target as f64).cbrt() as usize;
            p.size = side * side * side;
            p.params = vec![("ni", side), ("nj", side), ("nk", side)];
            p.outputs.push(checked("array", init.constant(p.size, 0.0)));
        }
        KernelId::FirstSum | KernelId::TridiagElim => {
            // The loops run over 1..N (element 0 of the output stays).
            let first = if kernel == KernelId::FirstSum { "x" } else { "xout" };
            p.outputs.push(checked(first, init.constant(n, 0.0)));
            let names: &[&'static str] =
                if kernel == KernelId::FirstSum { &["y"] } else { &["xin", "y", "z"] };
            for name in names {
                p.inputs.push(array(name, init.data(n)));
            }
        }
        KernelId::GenLinRecur => {
            // stb5 is read and rewritten by both loops; only b5 is summed.
            p.outputs.push(checked("b5", init.constant(n, 0.0)));
            p.outputs.push(array("stb5", init.data(n)));
            p.inputs.push(array("sa", init.data(n)));
            p.inputs.push(array("sb", init.data(n)));
        }
        KernelId::Energy => {
            // e_new (const), e_old, delvc, p_new, p_old, q_new (const), q_old, …: the two
            // outputs sit between the inputs in the initialisation order.
            p.outputs.push(checked("e_new", init.constant(n, 0.0)));
            for name in &ENERGY_IN[..4] {
                p.inputs.push(array(name, init.data(n)));
            }
            p.outputs.push(checked("q_new", init.constant(n, 0.0)));
            for name in &ENERGY_IN[4..] {
                p.inputs.push(array(name, init.data(n)));
            }
            for name in ENERGY_SCALARS {
                p.scalars.push((name, init.scalar()));
            }
        }
        KernelId::Vol3d => {
            let d = ADomain::for_target_3d(target);
            // RAJAPerf's actual size is the zone range the loop covers.
            p.size = d.lpz + 1 - d.fpz;
            p.params = vec![("ibegin", d.fpz), ("iend", d.lpz + 1), ("jp", d.jp), ("kp", d.kp)];
            let len = d.nnalls;
            let (mut x, mut y, mut z) =
                (init.constant(len, 0.0), init.constant(len, 0.0), init.constant(len, 0.0));
            d.set_mesh_positions_3d([&mut x, &mut y, &mut z], [0.3, 0.2, 0.1]);
            p.inputs.extend([array("x", x), array("y", y), array("z", z)]);
            p.outputs.push(checked("vol", init.constant(len, 0.0)));
            p.scalars.push(("vnormq", VOL3D_VNORMQ));
        }
        KernelId::DelDotVec2d => {
            let d = ADomain::for_target_2d(target);
            p.size = d.n_real_zones;
            p.params = vec![("iend", d.n_real_zones), ("jp", d.jp)];
            let len = d.nnalls;
            let (mut x, mut y) = (init.constant(len, 0.0), init.constant(len, 0.0));
            // real_zones is initialised to -1 (counted) before the mesh is set.
            real_zones(p, &mut init, &d);
            d.set_mesh_positions_2d(&mut x, 0.2, &mut y, 0.1);
            p.inputs.extend([array("x", x), array("y", y)]);
            p.inputs.push(array("xdot", init.data(len)));
            p.inputs.push(array("ydot", init.data(len)));
            p.outputs.push(checked("div", init.constant(len, 0.0)));
            p.scalars.extend([("ptiny", 1.0e-20), ("half", 0.5)]);
        }
        KernelId::ZonalAccumulation3d => {
            let d = real_zone_domain_3d(p, target);
            p.inputs.push(array("x", init.constant(d.nnalls, 1.0)));
            p.outputs.push(checked("vol", init.constant(d.lpz + 1, 0.0)));
            real_zones(p, &mut init, &d);
        }
        KernelId::Matvec3dStencil => {
            let d = real_zone_domain_3d(p, target);
            let len = d.lpz + 1;
            p.outputs.push(checked("b", init.constant(len, 0.0)));
            p.inputs.push(array("x", init.data(len)));
            for name in MATVEC_MATRICES {
                p.inputs.push(array(name, init.data(len)));
            }
            real_zones(p, &mut init, &d);
        }
        KernelId::Dot => {
            p.inputs.push(array("a", init.data(n)));
            p.inputs.push(array("b", init.data(n)));
            p.outputs.push(scalar_result("dot", 0.0));
        }
        KernelId::ReduceSum => {
            p.inputs.push(array("x", init.data(n)));
            // calcChecksum(&m_sum, 1): weighted like an array of one.
            p.outputs.push(checked("sum", vec![0.0]));
        }
        KernelId::PiReduce | KernelId::PiAtomic => {
            p.scalars.push(("dx", 1.0 / n as f64));
            let name = if kernel == KernelId::PiReduce { "pi" } else { "pi_final" };
            p.outputs.push(scalar_result(name, 0.0));
        }
        KernelId::TrapInt => {
            // xn, x0, xp, y, yp are initialised in that order; h = xn - x0.
            let xn = init.scalar();
            let x0 = init.scalar();
            p.scalars.push(("x0", x0));
            for name in ["xp", "y", "yp"] {
                p.scalars.push((name, init.scalar()));
            }
            p.scalars.push(("h", xn - x0));
            p.outputs.push(scalar_result("sumx", 0.0));
        }
        KernelId::DaxpyAtomic => {
            p.outputs.push(checked("y", init.constant(n, 0.0)));
            p.inputs.push(array("x", init.data(n)));
            p.scalars.push(("a", init.scalar()));
        }
        KernelId::FirstMin => {
            let mut x = init.constant(n, 0.0);
            x[n / 2] = -1.0e+10;
            p.inputs.push(array("x", x));
            p.outputs.push(scalar_result("minloc", -1.0));
        }
        KernelId::ReduceStruct => {
            // x and y are initialised (counted), then overwritten with evenly spaced points on
            // [0, Lx) and [0, Ly), Lx = 100, Ly = 50.
            let (_x, _y) = (init.data(n), init.data(n));
            let (dx, dy) = (100.0 / n as f64, 50.0 / n as f64);
            p.inputs.push(array("x", (0..n).map(|i| i as f64 * dx).collect()));
            p.inputs.push(array("y", (0..n).map(|i| i as f64 * dy).collect()));
            for name in REDUCE_STRUCT_OUT {
                p.outputs.push(scalar_result(name, 0.0));
            }
        }
        KernelId::MultiReduce | KernelId::Histogram => {
            // Bins from rand()/RAND_MAX values: bin = ⌊value · num_bins⌋, clamped.
            let data = init.rand_value(n);
            let bins =
                data.iter().map(|v| ((v * NUM_BINS as f64) as i64).clamp(0, NUM_BINS as i64 - 1)).collect();
            p.params.push(("num_bins", NUM_BINS));
            if kernel == KernelId::MultiReduce {
                p.inputs.push(array("data", data));
                p.outputs.push(checked("values", vec![0.0; NUM_BINS]));
            } else {
                p.outputs.push(checked("counts", vec![0.0; NUM_BINS]));
            }
            p.indices.push(IndexArray { name: "bins", data: bins, int32: false, distinct: false });
        }
        KernelId::Hydro2d => {
            // jn = kn = ⌊√size⌋; RAJAPerf's actual size stays the target.
            let side = (target as f64).sqrt() as usize;
            p.params = vec![("jn", side), ("kn", side)];
            p.scalars.extend([("s", HYDRO_2D_S), ("t", HYDRO_2D_T)]);
            let len = side * side;
            for (name, written) in HYDRO_2D_ARRAYS {
                if name == "zrout" || name == "zzout" {
                    p.outputs.push(checked(name, init.constant(len, 0.0)));
                } else if written {
                    p.outputs.push(array(name, init.data(len)));
                } else {
                    p.inputs.push(array(name, init.data(len)));
                }
            }
        }
        KernelId::Jacobi1d | KernelId::Jacobi2d | KernelId::Heat3d => {
            // N points per side, the interior is N - 2: N = size + 2 in 1-D, and
            // ⌊√size + 2 + √2 − 1⌋, ⌊∛size + 2 + ∛3 − 1⌋ in 2-D and 3-D.
            let t = target as f64;
            let (side, dims) = match kernel {
                KernelId::Jacobi1d => (target + 2, 1),
                KernelId::Jacobi2d => ((t.sqrt() + 2.0 + 2f64.sqrt() - 1.0) as usize, 2),
                _ => ((t.cbrt() + 2.0 + 3f64.cbrt() - 1.0) as usize, 3),
            };
            p.size = (side - 2).pow(dims);
            p.params = vec![("n", side)];
            let len = side.pow(dims);
            p.outputs.push(checked("A", init.data(len)));
            p.outputs.push(checked("B", init.data(len)));
        }
        KernelId::MatMatShared => {
            // N = max(⌊√size⌋, 1); A = B = 1, so C = N everywhere.
            let side = ((target as f64).sqrt() as usize).max(1);
            p.size = side * side;
            p.params = vec![("n", side)];
            p.inputs.push(array("A", init.constant(side * side, 1.0)));
            p.inputs.push(array("B", init.constant(side * side, 1.0)));
            p.outputs.push(checked("C", init.constant(side * side, 0.0)));
        }
        KernelId::Gemm | KernelId::Mm2 => {
            // ni = nj (= nl) = ⌊√size + √2 − 1⌋, nk = ⌊nk_default/ni_default · ni⌋.
            let ni = ((target as f64).sqrt() + 2f64.sqrt() - 1.0) as usize;
            let nk_default = if kernel == KernelId::Gemm { 1200.0 } else { 1120.0 };
            let nk = (nk_default / 1000.0 * ni as f64) as usize;
            p.size = ni * ni;
            if kernel == KernelId::Gemm {
                p.params = vec![("ni", ni), ("nj", ni), ("nk", nk)];
                p.scalars.extend([("alpha", 0.62), ("beta", 1.002)]);
                p.inputs.push(array("A", init.data(ni * nk)));
                p.inputs.push(array("B", init.data(nk * ni)));
                p.outputs.push(checked("C", init.constant(ni * ni, 0.0)));
            } else {
                p.params = vec![("ni", ni), ("nj", ni), ("nk", nk), ("nl", ni)];
                p.scalars.extend([("alpha", 1.5), ("beta", 1.2)]);
                p.outputs.push(array("tmp", init.data(ni * ni)));
                p.inputs.push(array("A", init.data(ni * nk)));
                p.inputs.push(array("B", init.data(nk * ni)));
                p.inputs.push(array("C", init.data(ni * ni)));
                p.outputs.push(checked("D", init.constant(ni * ni, 0.0)));
            }
        }
        KernelId::Reduce3Int => {
            p.indices.push(IndexArray { name: "vec", data: init.int_data(n), int32: true, distinct: false });
            for name in REDUCE3_INT_OUT {
                p.outputs.push(scalar_result(name, 0.0));
            }
        }
        KernelId::NodalAccumulation3d => {
            let d = real_zone_domain_3d(p, target);
            p.outputs.push(checked("x", init.constant(d.nnalls, 0.0)));
            p.inputs.push(array("vol", init.constant(d.lpz + 1, 1.0)));
            real_zones(p, &mut init, &d);
        }
    }
    problem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_sets_up_at_a_small_size() {
        for k in KernelId::ALL {
            let p = setup(k, 1000);
            assert!(!p.outputs.is_empty(), "{k}");
            assert!(p.outputs.iter().any(|a| a.checksum_len > 0), "{k}");
            assert!(p.size > 0, "{k}");
        }
    }

    #[test]
    fn triad_scalar_is_the_fourth_initialisation() {
        let p = setup(KernelId::Triad, 10);
        // a (const), b, c, then alpha: the fourth call, odd counter, factor 0.1.
        assert_eq!(p.scalar("alpha"), 0.1 * 1.1 / 1.12345);
        assert_eq!(p.input("b")[0], 0.1 * 1.1 / 1.12345);
        assert_eq!(p.input("c")[0], 0.2 * 1.1 / 1.12345);
    }

    #[test]
    fn derived_sizes() {
        let fir = setup(KernelId::Fir, 1000);
        assert_eq!(fir.param("iend"), 984);
        let hydro = setup(KernelId::Hydro1d, 1000);
        assert_eq!(hydro.output("x").len(), 1012);
        let lt = setup(KernelId::Ltimes, 1_000_000);
        assert_eq!(lt.size, 999_424);
        assert_eq!(lt.output("phi").len(), 25 * 32 * 488);
        let eos = setup(KernelId::Eos, 1000);
        assert_eq!((eos.output("x").len(), eos.outputs[0].checksum_len), (1007, 1000));
        let ip = setup(KernelId::IntPredict, 1000);
        assert_eq!((ip.output("px").len(), ip.param("offset")), (13_000, 1000));
        assert_eq!(setup(KernelId::DiffPredict, 1000).input("cx").len(), 14_000);
    }

    #[test]
    fn default_sizes_of_the_later_tiers() {
        let n = |k: KernelId, name: &str| setup(k, 1_000_000).param(name);
        assert_eq!(n(KernelId::NestedInit, "ni"), 100);
        // lpz + 1 - fpz of the 104³-node domain: 1113942 + 1 - 10921.
        assert_eq!(setup(KernelId::Vol3d, 1_000_000).size, 1_103_022);
        assert_eq!(setup(KernelId::DelDotVec2d, 1_000_000).size, 1_000_000);
        assert_eq!(setup(KernelId::Matvec3dStencil, 1_000_000).size, 1_000_000);
        assert_eq!((n(KernelId::Jacobi2d, "n"), n(KernelId::Heat3d, "n")), (1002, 102));
        assert_eq!(n(KernelId::Jacobi1d, "n"), 1_000_002);
        assert_eq!((n(KernelId::Gemm, "ni"), n(KernelId::Gemm, "nk")), (1000, 1200));
        assert_eq!((n(KernelId::Mm2, "nl"), n(KernelId::Mm2, "nk")), (1000, 1120));
        assert_eq!((n(KernelId::MatMatShared, "n"), n(KernelId::Hydro2d, "jn")), (1000, 1000));
        assert_eq!(setup(KernelId::Hydro2d, 1_000_000).size, 1_000_000);
    }

    #[test]
    fn tier_1b_initialisation_orders() {
        // EOS: x (const), y, z, u, then q, r, t: q is the fifth call (factor 0.2).
        let eos = setup(KernelId::Eos, 10);
        assert_eq!(eos.input("y")[0], 0.1 * 1.1 / 1.12345);
        assert_eq!(eos.input("u")[0], 0.1 * 1.1 / 1.12345);
        assert_eq!(eos.scalar("q"), 0.2 * 1.1 / 1.12345);
        // PLANCKIAN: x, y, u, v, then w (const).
        let pl = setup(KernelId::Planckian, 10);
        assert_eq!((pl.input("x")[0], pl.output("y")[0]), (0.2 * 1.1 / 1.12345, 0.1 * 1.1 / 1.12345));
        assert_eq!(pl.input("v")[0], 0.1 * 1.1 / 1.12345);
        // COPY8: eight constant outputs first, so x0 is the ninth call (factor 0.2).
        let c8 = setup(KernelId::Copy8, 10);
        assert_eq!((c8.input("x0")[0], c8.input("x7")[0]), (0.2 * 1.1 / 1.12345, 0.1 * 1.1 / 1.12345));
        // INT_PREDICT: px (const 1), then dm22 .. c0.
        let ip = setup(KernelId::IntPredict, 10);
        assert!(ip.output("px").iter().all(|v| *v == 1.0));
        assert_eq!((ip.scalar("dm22"), ip.scalar("c0")), (0.1 * 1.1 / 1.12345, 0.2 * 1.1 / 1.12345));
    }
}
