// Block-shared atomics are updated in the block's write phase and read plainly only in its read
// phase, after the barrier; they need the block's phase token and an atomic element type.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn update_while_reading(local: SharedAtomics<u32, 16>, block: Block) {
        let read = block.sync();
        local.add(&read, 0, 1);
    }

    #[kernel]
    pub fn read_before_the_barrier(mut y: Region<u32>, local: SharedAtomics<u32, 16>, block: Block) {
        local.add(&block, 0, 1);
        let early = local.get(&block, 0);
        if let Some(yi) = y.mine() {
            *yi = early;
        }
    }

    #[kernel]
    pub fn keep_the_slice_past_the_barrier(local: SharedAtomics<u32, 16>, block: Block) {
        let read = block.sync();
        let all = local.as_slice(&read);
        let block = read.sync();
        local.add(&block, 0, all[1]);
    }

    #[kernel]
    pub fn bytes_are_not_atomic(local: SharedAtomics<u8, 16>, block: Block) {
        let _ = (local.len(), block);
    }
}

fn main() {}
