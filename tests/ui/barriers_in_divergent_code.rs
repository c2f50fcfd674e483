// Barriers and warp operations must be reached by every thread of the block (lane of the
// warp) together: each of these is undefined behaviour on a GPU, and a compile error here.
#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    // Half the block writes `a` and waits, the other half `b`: the halves would meet at each
    // other's barriers and read slots the other half is still writing.
    #[kernel]
    pub fn crossed_halves(mut y: Region<f32>, a: Shared<f32>, b: Shared<f32>, block: Block) {
        let t = thread_idx_x() as usize;
        if t < 32 {
            a.write(&block, 1.0);
            let read = block.sync();
            if let Some(o) = y.mine() { *o = a.get(&read, t + 32); }
        } else {
            b.write(&block, 2.0);
            let read = block.sync();
            if let Some(o) = y.mine() { *o = b.get(&read, t - 32); }
        }
    }

    // A data-dependent number of barriers.
    #[kernel]
    pub fn counted_by_data(counts: &[u32], block: Block) {
        let mut block = block;
        for _ in 0..counts[global_linear_id()] {
            block = block.sync().sync();
        }
    }

    // A barrier after some threads returned.
    #[kernel]
    pub fn after_early_return(mut y: Region<u32>, block: Block) {
        let Some(o) = y.mine() else { return };
        *o = 1;
        let _read = block.sync();
    }

    // A warp operation in a lane-dependent branch.
    #[kernel]
    pub fn lane_branch(w: Warp, mut out: Region<u32>) {
        let n = if w.lane() < 7 { w.shuffle(1u32, 0) } else { 0 };
        if let Some(o) = out.mine() { *o = n; }
    }

    // A helper that synchronises, called where not every thread goes.
    fn step(block: Block) -> Block {
        block.sync().sync()
    }

    #[kernel]
    pub fn helper_in_branch(x: &[f32], block: Block) {
        if x[global_linear_id()] > 0.0 {
            let _block = step(block);
        }
    }
}

fn main() {}
