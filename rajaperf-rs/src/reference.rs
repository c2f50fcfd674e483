//! Plain sequential Rust versions of every kernel, written from RAJAPerf's reference loops.
//! They define the expected results, and timed on the host they are the `cpu` variant.

use crate::checksum::KahanSum;
use crate::problem::{KernelId, Problem};

/// Mutable views of a problem's outputs, by position (the order `setup` gives them).
macro_rules! outputs {
    ($outs:expr, [$($name:ident),+]) => {
        let [$($name),+] = &mut $outs[..] else {
            unreachable!("a kernel got a different number of outputs")
        };
        $(let $name = &mut $name.data[..];)+
    };
}

/// Runs `reps` repetitions of the kernel on the host, in place.
pub fn run(p: &mut Problem, reps: usize) {
    if reduce_to_scalar(p, reps) {
        return;
    }
    let Problem { kernel, inputs, outputs: outs, scalars, params, indices, .. } = p;
    let param = |name: &str| params.iter().find(|s| s.0 == name).map_or(0, |s| s.1);
    let zones: &[i64] = indices.first().map_or(&[], |a| &a.data[..]);
    let iend = params.iter().find(|s| s.0 == "iend").map(|s| s.1);
    let offset = params.iter().find(|s| s.0 == "offset").map_or(0, |s| s.1);
    let ins: Vec<&[f64]> = inputs.iter().map(|a| &a.data[..]).collect();
    let s: Vec<f64> = scalars.iter().map(|s| s.1).collect();
    for _ in 0..reps {
        match kernel {
            KernelId::Copy => {
                outputs!(outs, [c]);
                c.copy_from_slice(ins[0]);
            }
            KernelId::Mul => {
                outputs!(outs, [b]);
                for (b, c) in b.iter_mut().zip(ins[0]) {
                    *b = s[0] * c;
                }
            }
            KernelId::Add => {
                outputs!(outs, [c]);
                for ((c, a), b) in c.iter_mut().zip(ins[0]).zip(ins[1]) {
                    *c = a + b;
                }
            }
            KernelId::Triad => {
                outputs!(outs, [a]);
                for ((a, b), c) in a.iter_mut().zip(ins[0]).zip(ins[1]) {
                    *a = b + s[0] * c;
                }
            }
            KernelId::Daxpy | KernelId::DaxpyAtomic => {
                outputs!(outs, [y]);
                for (y, x) in y.iter_mut().zip(ins[0]) {
                    *y += s[0] * x;
                }
            }
            KernelId::Init3 => {
                outputs!(outs, [out1, out2, out3]);
                for i in 0..out1.len() {
                    let v = -ins[0][i] - ins[1][i];
                    (out1[i], out2[i], out3[i]) = (v, v, v);
                }
            }
            KernelId::MulAddSub => {
                outputs!(outs, [out1, out2, out3]);
                for i in 0..out1.len() {
                    let (in1, in2) = (ins[0][i], ins[1][i]);
                    (out1[i], out2[i], out3[i]) = (in1 * in2, in1 + in2, in1 - in2);
                }
            }
            KernelId::IfQuad => {
                outputs!(outs, [x1, x2]);
                let (a, b, c) = (ins[0], ins[1], ins[2]);
                for i in 0..x1.len() {
                    let s = b[i] * b[i] - 4.0 * a[i] * c[i];
                    if s >= 0.0 {
                        let s = s.sqrt();
                        x2[i] = (-b[i] + s) / (2.0 * a[i]);
                        x1[i] = (-b[i] - s) / (2.0 * a[i]);
                    } else {
                        x2[i] = 0.0;
                        x1[i] = 0.0;
                    }
                }
            }
            KernelId::Hydro1d => {
                outputs!(outs, [x]);
                let (y, z, q, r, t) = (ins[0], ins[1], s[0], s[1], s[2]);
                for i in 0..iend.unwrap_or(0) {
                    x[i] = q + y[i] * (r * z[i + 10] + t * z[i + 11]);
                }
            }
            KernelId::Pressure => {
                outputs!(outs, [bvc, p_new]);
                let (compression, e_old, vnewc) = (ins[0], ins[1], ins[2]);
                let (cls, p_cut, pmin, eosvmax) = (s[0], s[1], s[2], s[3]);
                for i in 0..bvc.len() {
                    bvc[i] = cls * (compression[i] + 1.0);
                }
                for i in 0..p_new.len() {
                    p_new[i] = bvc[i] * e_old[i];
                    if p_new[i].abs() < p_cut {
                        p_new[i] = 0.0;
                    }
                    if vnewc[i] >= eosvmax {
                        p_new[i] = 0.0;
                    }
                    if p_new[i] < pmin {
                        p_new[i] = pmin;
                    }
                }
            }
            KernelId::Fir => {
                outputs!(outs, [out]);
                let (coeff, input) = (ins[0], ins[1]);
                for i in 0..iend.unwrap_or(0) {
                    let mut sum = 0.0;
                    for (j, c) in coeff.iter().enumerate() {
                        sum += c * input[i + j];
                    }
                    out[i] = sum;
                }
            }
            KernelId::Ltimes => {
                let dims: Vec<usize> = params.iter().map(|s| s.1).collect();
                let [num_d, num_m, num_g, num_z] = dims[..] else { unreachable!() };
                outputs!(outs, [phi]);
                let (ell, psi) = (ins[0], ins[1]);
                for z in 0..num_z {
                    for g in 0..num_g {
                        for m in 0..num_m {
                            for d in 0..num_d {
                                phi[m + num_m * (g + num_g * z)] +=
                                    ell[d + num_d * m] * psi[d + num_d * (g + num_g * z)];
                            }
                        }
                    }
                }
            }
            KernelId::Eos => {
                outputs!(outs, [x]);
                let (y, z, u) = (ins[0], ins[1], ins[2]);
                let (q, r, t) = (s[0], s[1], s[2]);
                for i in 0..iend.unwrap_or(0) {
                    x[i] = u[i]
                        + r * (z[i] + r * y[i])
                        + t * (u[i + 3]
                            + r * (u[i + 2] + r * u[i + 1])
                            + t * (u[i + 6] + q * (u[i + 5] + q * u[i + 4])));
                }
            }
            KernelId::FirstDiff => {
                outputs!(outs, [x]);
                let y = ins[0];
                for i in 0..iend.unwrap_or(0) {
                    x[i] = y[i + 1] - y[i];
                }
            }
            KernelId::IntPredict => {
                outputs!(outs, [px]);
                let [dm22, dm23, dm24, dm25, dm26, dm27, dm28, c0] = s[..] else { unreachable!() };
                let o = offset;
                for i in 0..iend.unwrap_or(0) {
                    px[i] = dm28 * px[i + o * 12]
                        + dm27 * px[i + o * 11]
                        + dm26 * px[i + o * 10]
                        + dm25 * px[i + o * 9]
                        + dm24 * px[i + o * 8]
                        + dm23 * px[i + o * 7]
                        + dm22 * px[i + o * 6]
                        + c0 * (px[i + o * 4] + px[i + o * 5])
                        + px[i + o * 2];
                }
            }
            KernelId::DiffPredict => {
                outputs!(outs, [px]);
                let cx = ins[0];
                let o = offset;
                for i in 0..iend.unwrap_or(0) {
                    let mut ar = cx[i + o * 4];
                    let mut br = ar - px[i + o * 4];
                    px[i + o * 4] = ar;
                    let mut cr = br - px[i + o * 5];
                    px[i + o * 5] = br;
                    ar = cr - px[i + o * 6];
                    px[i + o * 6] = cr;
                    br = ar - px[i + o * 7];
                    px[i + o * 7] = ar;
                    cr = br - px[i + o * 8];
                    px[i + o * 8] = br;
                    ar = cr - px[i + o * 9];
                    px[i + o * 9] = cr;
                    br = ar - px[i + o * 10];
                    px[i + o * 10] = ar;
                    cr = br - px[i + o * 11];
                    px[i + o * 11] = br;
                    px[i + o * 13] = cr - px[i + o * 12];
                    px[i + o * 12] = cr;
                }
            }
            KernelId::Planckian => {
                outputs!(outs, [y, w]);
                let (x, u, v) = (ins[0], ins[1], ins[2]);
                for i in 0..w.len() {
                    y[i] = u[i] / v[i];
                    w[i] = x[i] / (y[i].exp() - 1.0);
                }
            }
            KernelId::InitView1d => {
                outputs!(outs, [a]);
                for (i, a) in a.iter_mut().enumerate() {
                    *a = (i + 1) as f64 * s[0];
                }
            }
            KernelId::Copy8 => {
                for (y, x) in outs.iter_mut().zip(&ins) {
                    y.data.copy_from_slice(x);
                }
            }
            KernelId::NestedInit => {
                outputs!(outs, [array]);
                let (ni, nj, nk) = (param("ni"), param("nj"), param("nk"));
                for k in 0..nk {
                    for j in 0..nj {
                        for i in 0..ni {
                            array[i + ni * (j + nj * k)] = 0.00000001 * i as f64 * j as f64 * k as f64;
                        }
                    }
                }
            }
            KernelId::FirstSum => {
                outputs!(outs, [x]);
                let y = ins[0];
                for i in 1..x.len() {
                    x[i] = y[i - 1] + y[i];
                }
            }
            KernelId::TridiagElim => {
                outputs!(outs, [xout]);
                let (xin, y, z) = (ins[0], ins[1], ins[2]);
                for i in 1..xout.len() {
                    xout[i] = z[i] * (y[i] - xin[i - 1]);
                }
            }
            KernelId::GenLinRecur => {
                outputs!(outs, [b5, stb5]);
                let (sa, sb) = (ins[0], ins[1]);
                let n = b5.len();
                let step = |k: usize, b5: &mut [f64], stb5: &mut [f64]| {
                    b5[k] = sa[k] + stb5[k] * sb[k];
                    stb5[k] = b5[k] - stb5[k];
                };
                for k in 0..n {
                    step(k, b5, stb5);
                }
                for i in 1..n + 1 {
                    step(n - i, b5, stb5);
                }
            }
            KernelId::Energy => energy(outs, &ins, &s),
            KernelId::Vol3d => {
                outputs!(outs, [vol]);
                vol3d(
                    vol,
                    [ins[0], ins[1], ins[2]],
                    s[0],
                    [param("ibegin"), param("iend")],
                    [param("jp"), param("kp")],
                );
            }
            KernelId::DelDotVec2d => {
                outputs!(outs, [div]);
                let jp = param("jp");
                for &zone in zones {
                    let i = zone as usize;
                    div[i] = del_dot_vec_2d_zone(i, jp, [ins[0], ins[1], ins[2], ins[3]], s[0], s[1]);
                }
            }
            KernelId::ZonalAccumulation3d => {
                outputs!(outs, [vol]);
                let x = ins[0];
                let c = corners_3d(param("jp"), param("kp"));
                for &zone in zones {
                    let i = zone as usize;
                    vol[i] = 0.125
                        * (x[i + c[0]]
                            + x[i + c[1]]
                            + x[i + c[2]]
                            + x[i + c[3]]
                            + x[i + c[4]]
                            + x[i + c[5]]
                            + x[i + c[6]]
                            + x[i + c[7]]);
                }
            }
            KernelId::Dot
            | KernelId::ReduceSum
            | KernelId::PiReduce
            | KernelId::TrapInt
            | KernelId::PiAtomic
            | KernelId::FirstMin
            | KernelId::ReduceStruct
            | KernelId::Reduce3Int => unreachable!("reduce_to_scalar runs {kernel}"),
            KernelId::MultiReduce | KernelId::Histogram => {
                // Every repetition starts the bins from zero.
                let out = &mut outs[0].data;
                out.fill(0.0);
                for (k, &bin) in zones.iter().enumerate() {
                    out[bin as usize] += if *kernel == KernelId::MultiReduce { ins[0][k] } else { 1.0 };
                }
            }
            KernelId::Hydro2d => {
                outputs!(outs, [zrout, zzout, za, zb, zu, zv]);
                let (zm, zp, zq, zr, zz) = (ins[0], ins[1], ins[2], ins[3], ins[4]);
                let (jn, kn, s, t) = (param("jn"), param("kn"), s[0], s[1]);
                let at = |j: usize, k: usize| j + k * jn;
                for k in 1..kn.saturating_sub(1) {
                    for j in 1..jn - 1 {
                        za[at(j, k)] = (zp[at(j - 1, k + 1)] + zq[at(j - 1, k + 1)]
                            - zp[at(j - 1, k)]
                            - zq[at(j - 1, k)])
                            * (zr[at(j, k)] + zr[at(j - 1, k)])
                            / (zm[at(j - 1, k)] + zm[at(j - 1, k + 1)]);
                        zb[at(j, k)] = (zp[at(j - 1, k)] + zq[at(j - 1, k)] - zp[at(j, k)] - zq[at(j, k)])
                            * (zr[at(j, k)] + zr[at(j, k - 1)])
                            / (zm[at(j, k)] + zm[at(j - 1, k)]);
                    }
                }
                for k in 1..kn.saturating_sub(1) {
                    for j in 1..jn - 1 {
                        let c = at(j, k);
                        let flux = |f: &[f64]| {
                            za[c] * (f[c] - f[at(j + 1, k)])
                                - za[at(j - 1, k)] * (f[c] - f[at(j - 1, k)])
                                - zb[c] * (f[c] - f[at(j, k - 1)])
                                + zb[at(j, k + 1)] * (f[c] - f[at(j, k + 1)])
                        };
                        zu[c] += s * flux(zz);
                        zv[c] += s * flux(zr);
                    }
                }
                for k in 1..kn.saturating_sub(1) {
                    for j in 1..jn - 1 {
                        zrout[at(j, k)] = zr[at(j, k)] + t * zu[at(j, k)];
                        zzout[at(j, k)] = zz[at(j, k)] + t * zv[at(j, k)];
                    }
                }
            }
            KernelId::MatMatShared => {
                // The tiled product computes, for each C[row][col], Σ_k A[row][k]·B[k][col] in
                // k order (zero padding adds nothing).
                outputs!(outs, [c]);
                let n = param("n");
                product(c, n, [0.0, 1.0], ins[0], ins[1]);
            }
            KernelId::Gemm => {
                outputs!(outs, [c]);
                product(c, param("nj"), [0.0, s[0]], ins[0], ins[1]);
            }
            KernelId::Mm2 => {
                outputs!(outs, [tmp, d]);
                let (alpha, beta) = (s[0], s[1]);
                product(tmp, param("nj"), [0.0, alpha], ins[0], ins[1]);
                product(d, param("nl"), [beta, 1.0], tmp, ins[2]);
            }
            KernelId::Jacobi1d => {
                outputs!(outs, [a, b]);
                let n = param("n");
                for i in 1..n - 1 {
                    b[i] = 0.33333 * (a[i - 1] + a[i] + a[i + 1]);
                }
                for i in 1..n - 1 {
                    a[i] = 0.33333 * (b[i - 1] + b[i] + b[i + 1]);
                }
            }
            KernelId::Jacobi2d => {
                outputs!(outs, [a, b]);
                let n = param("n");
                let sweep = |to: &mut [f64], from: &[f64]| {
                    for i in 1..n - 1 {
                        for j in 1..n - 1 {
                            let c = j + i * n;
                            to[c] = 0.2 * (from[c] + from[c - 1] + from[c + 1] + from[c + n] + from[c - n]);
                        }
                    }
                };
                sweep(b, a);
                sweep(a, b);
            }
            KernelId::Heat3d => {
                outputs!(outs, [a, b]);
                let n = param("n");
                let sweep = |to: &mut [f64], from: &[f64]| {
                    for i in 1..n - 1 {
                        for j in 1..n - 1 {
                            for k in 1..n - 1 {
                                let c = k + n * (j + n * i);
                                let along = |d: usize| 0.125 * (from[c + d] - 2.0 * from[c] + from[c - d]);
                                to[c] = along(n * n) + along(n) + along(1) + from[c];
                            }
                        }
                    }
                };
                sweep(b, a);
                sweep(a, b);
            }
            KernelId::NodalAccumulation3d => {
                outputs!(outs, [x]);
                let vol = ins[0];
                let c = corners_3d(param("jp"), param("kp"));
                for &zone in zones {
                    let i = zone as usize;
                    let val = 0.125 * vol[i];
                    for off in c {
                        x[i + off] += val;
                    }
                }
            }
            KernelId::Matvec3dStencil => {
                outputs!(outs, [b]);
                let (jp, kp) = (param("jp"), param("kp"));
                let matrices: [&[f64]; 14] = std::array::from_fn(|m| ins[1 + m]);
                for &zone in zones {
                    let i = zone as usize;
                    b[i] = matvec_zone(i, jp, kp, ins[0], &matrices);
                }
            }
        }
    }
}

/// How many repetitions the reference needs to reproduce `reps` repetitions of a variant:
/// all of them when a repetition builds on the last, else one (the result is the same).
pub fn reps_needed(kernel: KernelId, reps: usize) -> usize {
    if kernel.accumulates() { reps } else { reps.min(1) }
}

/// The kernels that reduce to a scalar: each repetition computes the same value, so it is
/// computed once and folded into the result as RAJAPerf's repetition loop folds it (added
/// each time for DOT and TRAP_INT, assigned for the others). False for other kernels.
fn reduce_to_scalar(p: &mut Problem, reps: usize) -> bool {
    let input = |k: usize| &p.inputs[k].data[..];
    let n = p.size;
    let s = |name: &str| p.scalars.iter().find(|s| s.0 == name).map_or(0.0, |s| s.1);
    // (value of one repetition, whether repetitions add up)
    let (value, adds) = match p.kernel {
        KernelId::Dot => (exact_sum(input(0).iter().zip(input(1)).map(|(a, b)| a * b)), true),
        KernelId::ReduceSum => (exact_sum(input(0).iter().copied()), false),
        KernelId::PiReduce | KernelId::PiAtomic => {
            let dx = s("dx");
            let pi = exact_sum((0..n).map(|i| {
                let x = (i as f64 + 0.5) * dx;
                dx / (1.0 + x * x)
            }));
            (4.0 * pi, false)
        }
        KernelId::TrapInt => {
            let (x0, xp, y, yp, h) = (s("x0"), s("xp"), s("y"), s("yp"), s("h"));
            let sumx = exact_sum((0..n).map(|i| {
                let x = x0 + i as f64 * h;
                let denom = (x - xp) * (x - xp) + (y - yp) * (y - yp);
                1.0 / denom.sqrt()
            }));
            (sumx * h, true)
        }
        KernelId::FirstMin => {
            // The first index holding the smallest value, starting from x[0].
            let x = input(0);
            let (mut val, mut loc) = (x[0], 0);
            for (i, &v) in x.iter().enumerate() {
                if v < val {
                    (val, loc) = (v, i);
                }
            }
            (loc as f64, false)
        }
        KernelId::Reduce3Int => {
            // m_vsum adds every repetition's sum; the minimum and maximum stay.
            let v = &p.indices[0].data;
            let sum: i64 = v.iter().sum();
            let (lo, hi) = (
                v.iter().copied().fold(i64::from(i32::MAX), i64::min),
                v.iter().copied().fold(i64::from(i32::MIN), i64::max),
            );
            let results = [(sum * reps as i64) as f64, lo as f64, hi as f64];
            for (out, v) in p.outputs.iter_mut().zip(results) {
                out.data[0] = if reps == 0 { 0.0 } else { v };
            }
            return true;
        }
        KernelId::ReduceStruct => {
            let (x, y) = (input(0), input(1));
            let stats = |a: &[f64]| {
                let sum = exact_sum(a.iter().copied());
                let lo = a.iter().fold(f64::MAX, |m, &v| if v < m { v } else { m });
                let hi = a.iter().fold(f64::MIN, |m, &v| if v > m { v } else { m });
                [sum / n as f64, lo, hi]
            };
            let [xc, xlo, xhi] = stats(x);
            let [yc, ylo, yhi] = stats(y);
            for (out, v) in p.outputs.iter_mut().zip([xc, xlo, xhi, yc, ylo, yhi]) {
                out.data[0] = v;
            }
            return true;
        }
        _ => return false,
    };
    let out = &mut p.outputs[0].data[0];
    for _ in 0..reps {
        *out = if adds { *out + value } else { value };
    }
    true
}

/// The sum of `terms`, compensated: the reference of a reduction over 2^25 elements must not
/// carry the ~1e-9 relative drift of a plain sequential sum, which exceeds the tolerance that
/// the GPU's tree-and-atomics order (far more accurate) is held to.
fn exact_sum(terms: impl Iterator<Item = f64>) -> f64 {
    terms
        .fold(KahanSum::new(), |mut sum, t| {
            sum.add(t);
            sum
        })
        .value()
}

/// `out[i][j] = init + Σ_k scale · x[i][k] · y[k][j]`, summed in k order (`[init, scale]`;
/// scale 1 multiplies exactly). Rows are independent, so they are spread over the host's
/// threads: the values are those of the sequential loops, and large sizes stay affordable.
///
/// Each element's sum is the sequential one, `((init + s·x₀·y₀) + s·x₁·y₁) + …` with every
/// product formed as `(s·x[i][k])·y[k][j]`, but the loops run k outside j: a thread takes
/// [`PRODUCT_TILE_ROWS`] rows of `out` at a time and adds row k of `y` (contiguous) into all
/// of them, so `y` is streamed once per tile instead of read down its columns once per
/// element. The additions into one element still happen in k order, so the results are
/// bit-identical to the element-by-element loop (a test pins that).
fn product(out: &mut [f64], cols: usize, [init, scale]: [f64; 2], x: &[f64], y: &[f64]) {
    if out.is_empty() || cols == 0 {
        return;
    }
    let rows = out.len() / cols;
    let inner = x.len().checked_div(rows).unwrap_or(0);
    let threads = std::thread::available_parallelism().map_or(1, usize::from);
    let rows_per_thread = rows.div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        for (chunk, block) in out.chunks_mut(rows_per_thread * cols).enumerate() {
            scope.spawn(move || {
                let first = chunk * rows_per_thread;
                for (t, tile) in block.chunks_mut(PRODUCT_TILE_ROWS * cols).enumerate() {
                    let row0 = first + t * PRODUCT_TILE_ROWS;
                    tile.fill(init);
                    for k in 0..inner {
                        let yk = &y[k * cols..][..cols];
                        for (r, row) in tile.chunks_mut(cols).enumerate() {
                            let a = scale * x[(row0 + r) * inner + k];
                            for (o, yv) in row.iter_mut().zip(yk) {
                                *o += a * yv;
                            }
                        }
                    }
                }
            });
        }
    });
}

/// Rows of `out` that one thread of [`product`] accumulates together (8 rows of 2^25-sized
/// GEMM are 8 × 46 KB, which stay in a core's L2 cache while a row of `y` streams past).
const PRODUCT_TILE_ROWS: usize = 8;

/// `NDPTRSET`'s corner offsets (see [`crate::domain::ADomain::corners_3d`]).
pub fn corners_3d(jp: usize, kp: usize) -> [usize; 8] {
    [0, 1, jp, 1 + jp, kp, 1 + kp, jp + kp, 1 + jp + kp]
}

/// ENERGY's six loops, one after the other over the whole range.
fn energy(outs: &mut [crate::problem::Array], ins: &[&[f64]], s: &[f64]) {
    outputs!(outs, [e_new, q_new]);
    let [
        e_old,
        delvc,
        p_new,
        p_old,
        q_old,
        work,
        comp_half_step,
        p_half_step,
        bvc,
        pbvc,
        ql_old,
        qq_old,
        vnewc,
    ] = ins[..]
    else {
        unreachable!()
    };
    let [rho0, e_cut, emin, q_cut] = s[..] else { unreachable!() };
    let n = e_new.len();
    let ssc_q = |ssc: f64, i: usize| {
        let ssc = if ssc <= 0.1111111e-36 { 0.3333333e-18 } else { ssc.sqrt() };
        ssc * ql_old[i] + qq_old[i]
    };
    for i in 0..n {
        e_new[i] = e_old[i] - 0.5 * delvc[i] * (p_old[i] + q_old[i]) + 0.5 * work[i];
    }
    for i in 0..n {
        q_new[i] = if delvc[i] > 0.0 {
            0.0
        } else {
            let vhalf = 1.0 / (1.0 + comp_half_step[i]);
            ssc_q((pbvc[i] * e_new[i] + vhalf * vhalf * bvc[i] * p_half_step[i]) / rho0, i)
        };
    }
    for i in 0..n {
        e_new[i] += 0.5 * delvc[i] * (3.0 * (p_old[i] + q_old[i]) - 4.0 * (p_half_step[i] + q_new[i]));
    }
    let cut = |e: f64| {
        let e = if e.abs() < e_cut { 0.0 } else { e };
        if e < emin { emin } else { e }
    };
    for i in 0..n {
        e_new[i] = cut(e_new[i] + 0.5 * work[i]);
    }
    let ssc_new = |i: usize, e_new: f64| (pbvc[i] * e_new + vnewc[i] * vnewc[i] * bvc[i] * p_new[i]) / rho0;
    for i in 0..n {
        let q_tilde = if delvc[i] > 0.0 { 0.0 } else { ssc_q(ssc_new(i, e_new[i]), i) };
        e_new[i] = cut(e_new[i]
            - (7.0 * (p_old[i] + q_old[i]) - 8.0 * (p_half_step[i] + q_new[i]) + (p_new[i] + q_tilde))
                * delvc[i]
                / 6.0);
    }
    for i in 0..n {
        if delvc[i] <= 0.0 {
            let q = ssc_q(ssc_new(i, e_new[i]), i);
            q_new[i] = if q.abs() < q_cut { 0.0 } else { q };
        }
    }
}

/// VOL3D over zones `ibegin..iend`: the hexahedron volume from its eight corners.
fn vol3d(vol: &mut [f64], xyz: [&[f64]; 3], vnormq: f64, range: [usize; 2], strides: [usize; 2]) {
    let c = corners_3d(strides[0], strides[1]);
    for i in range[0]..range[1] {
        let [x, y, z] = xyz.map(|a| -> [f64; 8] { std::array::from_fn(|v| a[i + c[v]]) });
        vol[i] = vol3d_zone(&x, &y, &z, vnormq);
    }
}

/// RAJAPerf's `VOL3D_BODY` for one zone, given its corners' coordinates: three terms
/// `ps · (c × d)` of edge vectors between corners, in RAJAPerf's order of operations.
pub fn vol3d_zone(x: &[f64; 8], y: &[f64; 8], z: &[f64; 8], vnormq: f64) -> f64 {
    let edge = |p: usize, q: usize| [x[p] - x[q], y[p] - y[q], z[p] - z[q]];
    let (e71, e72, e74, e30, e50, e60) =
        (edge(7, 1), edge(7, 2), edge(7, 4), edge(3, 0), edge(5, 0), edge(6, 0));
    let sum = |a: [f64; 3], b: [f64; 3]| [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
    let term = |ps: [f64; 3], c: [f64; 3], d: [f64; 3]| {
        let cross = [c[1] * d[2] - c[2] * d[1], c[2] * d[0] - c[0] * d[2], c[0] * d[1] - c[1] * d[0]];
        ps[0] * cross[0] + ps[1] * cross[1] + ps[2] * cross[2]
    };
    let mut vol = term(sum(e71, e60), e72, e30);
    vol += term(sum(e72, e50), e74, e60);
    vol += term(sum(e74, e30), e71, e50);
    vol * vnormq
}

/// RAJAPerf's `DEL_DOT_VEC_2D_BODY` for zone `i`: `xyf` is x, y, xdot, ydot.
pub fn del_dot_vec_2d_zone(i: usize, jp: usize, xyf: [&[f64]; 4], ptiny: f64, half: f64) -> f64 {
    // Corners 1..4 at offsets 1, 1 + jp, jp, 0 (NDSET2D).
    let [x, y, fx, fy] = xyf.map(|a| [a[i + 1], a[i + 1 + jp], a[i + jp], a[i]]);
    let along_i = |v: [f64; 4]| half * (v[0] + v[1] - v[2] - v[3]);
    let along_j = |v: [f64; 4]| half * (v[1] + v[2] - v[3] - v[0]);
    let (xi, xj, yi, yj) = (along_i(x), along_j(x), along_i(y), along_j(y));
    let (fxi, fxj, fyi, fyj) = (along_i(fx), along_j(fx), along_i(fy), along_j(fy));
    let rarea = 1.0 / (xi * yj - xj * yi + ptiny);
    let dfxdx = rarea * (fxi * yj - fxj * yi);
    let dfydy = rarea * (fyj * xi - fyi * xj);
    let affine = (fy[0] + fy[1] + fy[2] + fy[3]) / (y[0] + y[1] + y[2] + y[3]);
    dfxdx + dfydy + affine
}

/// Where each of MATVEC_3D_STENCIL's 27 coefficients of zone `i` lives: (allocated array,
/// its index), in the body's order (dbl, dbc, … ufr). The 13 not allocated are aliases of
/// allocated ones at shifted positions, as RAJAPerf's `setUp` sets them.
pub fn matvec_coefficients(i: usize, jp: usize, kp: usize) -> [(usize, usize); 27] {
    // Allocated: dbl dbc dbr dcl dcc dcr dfl dfc dfr cbl cbc cbr ccl ccc = 0..14.
    let (dbl, dbc, dbr, dcl, dcc, dcr, dfl, dfc, dfr, cbl, cbc, cbr, ccl, ccc) =
        (0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13);
    [
        (dbl, i),
        (dbc, i),
        (dbr, i),
        (dcl, i),
        (dcc, i),
        (dcr, i),
        (dfl, i),
        (dfc, i),
        (dfr, i),
        (cbl, i),
        (cbc, i),
        (cbr, i),
        (ccl, i),
        (ccc, i),
        (ccl, i + 1),           // ccr
        (cbr, i + jp - 1),      // cfl
        (cbc, i + jp),          // cfc
        (cbl, i + jp + 1),      // cfr
        (dfr, i + kp - jp - 1), // ubl
        (dfc, i + kp - jp),     // ubc
        (dfl, i + kp - jp + 1), // ubr
        (dcr, i + kp - 1),      // ucl
        (dcc, i + kp),          // ucc
        (dcl, i + kp + 1),      // ucr
        (dbr, i + kp + jp - 1), // ufl
        (dbc, i + kp + jp),     // ufc
        (dbl, i + kp + jp + 1), // ufr
    ]
}

/// The position in `x` each of MATVEC_3D_STENCIL's 27 terms of zone `i` reads: the
/// neighbours from (−1, −1, −1) to (+1, +1, +1), i fastest.
pub fn matvec_x_positions(i: usize, jp: usize, kp: usize) -> [usize; 27] {
    std::array::from_fn(|t| i + (t % 3) + jp * (t / 3 % 3) + kp * (t / 9) - 1 - jp - kp)
}

/// RAJAPerf's `MATVEC_3D_STENCIL_BODY` for zone `i`, summed left to right.
pub fn matvec_zone(i: usize, jp: usize, kp: usize, x: &[f64], m: &[&[f64]; 14]) -> f64 {
    let coeff = matvec_coefficients(i, jp, kp);
    let pos = matvec_x_positions(i, jp, kp);
    let mut sum = 0.0;
    for ((a, at), p) in coeff.into_iter().zip(pos) {
        sum += m[a][at] * x[p];
    }
    sum
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The element-by-element form `product` replaced: each element a fold in k order.
    fn product_by_element(out: &mut [f64], cols: usize, [init, scale]: [f64; 2], x: &[f64], y: &[f64]) {
        let rows = out.len() / cols.max(1);
        let inner = x.len().checked_div(rows).unwrap_or(0);
        for (i, row) in out.chunks_mut(cols).enumerate() {
            let xi = &x[i * inner..][..inner];
            for (j, o) in row.iter_mut().enumerate() {
                *o = xi.iter().enumerate().fold(init, |dot, (k, xv)| dot + scale * xv * y[j + k * cols]);
            }
        }
    }

    /// Values with full mantissas and mixed signs and magnitudes, so that any change in the
    /// order of the additions or the association of the products shows in the last bits.
    fn values(n: usize, seed: u64) -> Vec<f64> {
        let mut state = seed;
        (0..n)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let unit = (state >> 11) as f64 / (1u64 << 53) as f64;
                (unit - 0.37) * 10f64.powi((state % 7) as i32 - 3)
            })
            .collect()
    }

    #[test]
    fn product_is_bit_identical_to_the_element_by_element_sum() {
        // Row counts around the tile and thread splits, including fewer rows than a tile.
        for (rows, inner, cols) in [(1, 1, 1), (3, 5, 2), (8, 7, 9), (17, 13, 11), (37, 41, 29), (64, 3, 70)]
        {
            for coeffs in [[0.0, 1.0], [0.0, 1.5], [0.75, 1.0], [-2.25, 0.3]] {
                let x = values(rows * inner, 7 + rows as u64);
                let y = values(inner * cols, 11 + cols as u64);
                let mut want = vec![f64::NAN; rows * cols];
                let mut got = vec![f64::NAN; rows * cols];
                product_by_element(&mut want, cols, coeffs, &x, &y);
                product(&mut got, cols, coeffs, &x, &y);
                let bits = |v: &[f64]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&got), bits(&want), "{rows}x{inner}x{cols}, {coeffs:?}");
            }
        }
    }
}
