// A tile has at least one element per thread: `Tiles<T, 0>` does not compile.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn empty(mut out: Tiles<u32, 0>) {
        if let Some(o) = out.get_mut(0) {
            *o = 1;
        }
    }
}

fn main() {}
