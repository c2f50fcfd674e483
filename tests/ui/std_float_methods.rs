// Float methods of the host's standard library (`x.sqrt()`, `x.exp()`, …) do not exist on the
// GPU: a kernel that calls one fails at the host compile, with the `offload::math` function to
// use instead, rather than only in the device compile.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn norms(x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            let v = x[i];
            *yi = v.sqrt() + v.mul_add(2.0, 1.0) + v.powi(2) + v.abs();
        }
    }

    /// A method of the module's own may use such a name.
    #[derive(Clone, Copy, KernelScalar)]
    #[repr(C)]
    pub struct Fixed(pub i64);

    impl Fixed {
        pub fn exp(self) -> Fixed {
            Fixed(self.0 * 2)
        }
    }

    #[kernel]
    pub fn own_method(mut y: Region<i64>) {
        if let Some(yi) = y.mine() {
            *yi = Fixed(*yi).exp().0;
        }
    }
}

fn main() {}
