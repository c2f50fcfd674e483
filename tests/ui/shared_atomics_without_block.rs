// Block-shared atomics are zeroed, updated and read through the block's phases: a kernel that
// has them takes the block's phase token.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn no_block(local: SharedAtomics<u32, 16>) {
        let _ = local.len();
    }
}

fn main() {}
