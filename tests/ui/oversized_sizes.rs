// Sizes the compiler knows are checked when compiling: a `SharedArray` larger than any
// block's shared memory, and a by-value parameter larger than a kernel's parameter space.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn huge_tile(tile: SharedArray<f64, 1_000_000>, block: Block) {
        tile.set(&block, 0, 1.0);
    }

    #[kernel]
    pub fn huge_parameter(table: [u32; 2048], mut y: Region<u32>) {
        if let Some(o) = y.mine() { *o = table[0]; }
    }
}

fn main() {}
