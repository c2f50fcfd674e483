// A generic kernel runs only for the types it was compiled for.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel(f32)]
    pub fn scale<T: Copy + core::ops::Mul<Output = T>>(k: T, mut y: Region<T>) {
        if let Some(yi) = y.mine() {
            *yi = *yi * k;
        }
    }
}

fn main() {
    let dev = offload::Device::cpu();
    let mut y = vec![1.0f64; 4];
    let _ = gpu::scale::launch(&dev, 4, 2.0f64, &mut y);
}
