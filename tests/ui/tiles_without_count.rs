// A tile says how many elements each thread owns: `Tiles<T>` alone does not compile.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn no_count(mut out: Tiles<u32>) {
        if let Some(o) = out.get_mut(0) {
            *o = 1;
        }
    }
}

fn main() {}
