// `launch_bounds` takes CUDA's two numbers: the most threads a block may have (1 to 1024)
// and, optionally, the fewest blocks per multiprocessor (at least 1).
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel(launch_bounds(2048))]
    pub fn too_wide(mut y: Region<f32>) {
        if let Some(v) = y.mine() {
            *v = 1.0;
        }
    }

    #[kernel(launch_bounds(256, 0))]
    pub fn no_blocks(mut y: Region<f32>) {
        if let Some(v) = y.mine() {
            *v = 1.0;
        }
    }

    #[kernel(launch_bounds(256, 2), launch_bounds(128))]
    pub fn twice(mut y: Region<f32>) {
        if let Some(v) = y.mine() {
            *v = 1.0;
        }
    }
}

fn main() {}
