// Parts of a buffer are borrows: one part cannot be read and written by one launch, and the
// buffer itself is out of reach while a writable part lives.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn axpy(a: f64, x: &[f64], mut y: Region<f64>) {
        let i = y.index();
        if let Some(v) = y.mine() {
            *v += a * x[i];
        }
    }
}

fn main() -> offload::Result<()> {
    let dev = offload::Device::cpu();
    let mut buf = offload::DeviceBuffer::<f64>::zeroed(&dev, 8)?;
    let (mut head, tail) = buf.split_at_mut(4);
    gpu::axpy::launch(&dev, 4, 1.0, &head, &mut head)?;
    let all = buf.to_vec()?;
    gpu::axpy::launch(&dev, 4, 1.0, &tail, &mut head)?;
    let _ = all;
    Ok(())
}
