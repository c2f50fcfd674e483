// The GPU compiles the kernels module on its own: it cannot reach items outside it.
const SCALE: f32 = 2.0;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;
    use crate::helpers::clamp;

    #[kernel]
    pub fn scale(x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = clamp(x[i] * super::SCALE);
        }
    }
}

mod helpers {
    pub fn clamp(v: f32) -> f32 { v.min(1.0) }
}

fn main() {}
