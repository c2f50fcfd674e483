//! Each kernel's `setUp`: sizes derived from the target size, and arrays and scalars
//! initialised in exactly RAJAPerf's order (the order decides the values, see [`DataInit`]).

use crate::data::DataInit;
use crate::problem::{
    Array, FIR_COEFFLEN, KernelId, LTIMES_NUM_D, LTIMES_NUM_G, LTIMES_NUM_M, Problem, ltimes_num_z,
};

/// FIR's filter (RAJAPerf's `FIR_COEFF`).
pub const FIR_COEFF: [f64; FIR_COEFFLEN] =
    [3.0, -1.0, -1.0, -1.0, -1.0, 3.0, -1.0, -1.0, -1.0, -1.0, 3.0, -1.0, -1.0, -1.0, -1.0, 3.0];

fn array(name: &'static str, data: Vec<f64>) -> Array {
    Array { name, data, checksum_len: 0 }
}

fn checked(name: &'static str, data: Vec<f64>) -> Array {
    let checksum_len = data.len();
    Array { name, data, checksum_len }
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
    }
}
