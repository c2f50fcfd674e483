// The generated launch function is checked like any Rust function.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn saxpy(a: f32, x: &[f32], mut y: Region<f32>) {
        let i = y.index();
        if let Some(yi) = y.mine() {
            *yi += a * x[i];
        }
    }
}

fn main() {
    let dev = offload::Device::cpu();
    let x = vec![1.0f32; 4];
    let mut y = vec![0.0f64; 4];
    let _ = gpu::saxpy::launch(&dev, 4, 2.0, &x, &mut y);
    let _ = gpu::saxpy::launch(&dev, 4, 2.0, &mut y, &x);
}
