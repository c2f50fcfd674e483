// Shared memory is readable by the block only after the barrier, and writable again only
// after the barrier that ends the reads.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn peek(mut y: Region<f32>, tile: Shared<f32>) {
        let written = tile.write(1.0);
        let early = written.get(0);
        if let Some(yi) = y.mine() {
            *yi = early;
        }
    }

    #[kernel]
    pub fn write_while_reading(tile: Shared<f32>) {
        let ready = tile.write(1.0).sync();
        let _ = ready.write(2.0);
    }

    #[kernel]
    pub fn reuse_after_barrier(tile: Shared<f32>) {
        let written = tile.write(1.0);
        let ready = written.sync();
        let _ = ready.get(0);
        let _ = tile.write(3.0);
    }
}

fn main() {}
