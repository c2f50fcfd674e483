// A kernels module may use `core`, `offload` and the crates its package lists in
// `[package.metadata.offload] device-dependencies`: a crate used without being listed is an
// error at the host build, where the device build would fail later.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;
    use half::f16;

    #[kernel]
    pub fn widen(x: &[u16], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi = f16::from_bits(x[i]).to_f32();
        }
    }
}

fn main() {}
