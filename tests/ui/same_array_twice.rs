// One host array cannot be two writable kernel arguments (or writable and read-only at once).
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn copy(x: &[f32], mut y: Region<f32>, mut z: Region<f32>) {
        let i = y.index();
        if let (Some(yi), Some(zi)) = (y.mine(), z.mine()) {
            *yi = x[i];
            *zi = x[i];
        }
    }
}

fn main() {
    let dev = offload::Device::cpu();
    let mut a = vec![0.0f32; 8];
    let b = vec![1.0f32; 8];
    let _ = gpu::copy::launch(&dev, 8, &b, &mut a, &mut a);
    let _ = gpu::copy::launch(&dev, 8, &a, &mut a, &mut vec![0.0; 8]);
}
