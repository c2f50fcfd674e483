// A group of threads has at least one thread: `Groups<T, 0>` does not compile.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn nobody(mut rows: Groups<f32, 0>) {
        if let Some(r) = rows.mine() {
            *r = 1.0;
        }
    }
}

fn main() {}
