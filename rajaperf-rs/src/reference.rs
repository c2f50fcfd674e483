//! Plain sequential Rust versions of every kernel, written from RAJAPerf's reference loops.
//! They define the expected results, and timed on the host they are the `cpu` variant.

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
    let Problem { kernel, inputs, outputs: outs, scalars, params, .. } = p;
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
            KernelId::Daxpy => {
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
        }
    }
}

/// How many repetitions the reference needs to reproduce `reps` repetitions of a variant:
/// all of them when a repetition builds on the last, else one (the result is the same).
pub fn reps_needed(kernel: KernelId, reps: usize) -> usize {
    if kernel.accumulates() { reps } else { reps.min(1) }
}
