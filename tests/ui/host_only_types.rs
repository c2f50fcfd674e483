// Heap types cannot reach the GPU.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn lengths(names: String, mut out: Region<usize>) {
        if let Some(o) = out.mine() {
            *o = names.len();
        }
    }

    #[kernel]
    pub fn nested(rows: &[Vec<f32>], mut out: Region<f32>) {
        if let Some(o) = out.mine() {
            *o = rows.len() as f32;
        }
    }
}

fn main() {}
