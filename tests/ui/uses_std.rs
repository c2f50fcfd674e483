// Kernels modules are `no_std`: the GPU has no `std`.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn roots(x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = std::primitive::f32::sqrt(x[i]);
        }
    }
}

fn main() {}
