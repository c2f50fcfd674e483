// Shared memory is readable by the block only after the barrier, and writable again only
// after the barrier that ends the reads: the phase is the block's token, which `sync` consumes.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn peek(mut y: Region<f32>, tile: Shared<f32>, block: Block) {
        tile.write(&block, 1.0);
        let early = tile.get(&block, 0);
        if let Some(yi) = y.mine() {
            *yi = early;
        }
    }

    #[kernel]
    pub fn write_while_reading(tile: Shared<f32>, block: Block) {
        let read = block.sync();
        tile.write(&read, 2.0);
    }

    #[kernel]
    pub fn write_with_a_spent_token(tile: SharedArray<f32, 64>, block: Block) {
        let read = block.sync();
        let _ = tile.get(&read, 0);
        tile.set(&block, 0, 3.0);
    }

    #[kernel]
    pub fn keep_a_slice_past_the_barrier(tile: SharedArray<f32, 64>, block: Block) {
        let read = block.sync();
        let all = tile.as_slice(&read);
        let block = read.sync();
        tile.set(&block, 0, all[1]);
    }
}

fn main() {}
