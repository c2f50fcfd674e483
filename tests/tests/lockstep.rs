//! Kernels that the CPU backend runs in lockstep (the kernels macro's copy cut at barriers and
//! warp operations: `offload-macros/backend/src/lockstep/`) and kernels it cannot cut, which
//! keep the futures: both give what the host computes. `scripts/test.sh` also runs this file
//! with `OFFLOAD_CPU_LOCKSTEP=0`, every kernel as futures.

use offload::{Device, Error, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Rounds of a `for` loop over a scalar bound, each a write, a barrier, a read of the
    /// neighbour and a barrier back; then an `if`/`else` on a scalar with a barrier on each
    /// side, a nested block with a local of its own across a barrier, and a warp sum.
    #[kernel]
    pub fn phases(
        rounds: u32,
        flip: u32,
        w: Warp,
        x: &[u32],
        mut y: Region<[u32; 3]>,
        tile: Shared<u32>,
        block: Block,
    ) {
        let i = global_linear_id();
        let t = thread_idx_x() as usize;
        let n = tile.len();
        let mut block = block;
        let mut v = if i < x.len() { x[i] } else { 0 };
        for r in 0..rounds {
            tile.write(&block, v);
            let read = block.sync();
            v = tile.get(&read, (t + 1) % n) + r;
            block = read.sync();
        }
        let mut side = v;
        if flip > 0 {
            tile.write(&block, v + 1);
            let read = block.sync();
            side += tile.get(&read, n - 1 - t);
            block = read.sync();
        } else {
            let read = block.sync();
            side += t as u32;
            block = read.sync();
        }
        {
            let doubled = v * 2;
            let read = block.sync();
            side += doubled - v - v;
            block = read.sync();
        }
        let total = w.sum(v);
        tile.write(&block, side);
        if let Some(o) = y.mine() {
            *o = [v, side, total];
        }
    }

    /// Thread 3 of block 1 reads past `x` after a barrier.
    #[kernel]
    pub fn fails_after_barrier(x: &[u32], mut y: Region<u32>, block: Block) {
        let t = thread_idx_x() as usize;
        let read = block.sync();
        let _ = read;
        let at = if block_idx_x() == 1 && t == 3 { x.len() } else { 0 };
        if let Some(o) = y.mine() {
            *o = x[at];
        }
    }

    /// Values read through a shared-reference parameter's methods live across a barrier (they
    /// borrow only what it points to).
    #[kernel]
    pub fn reads(x: &[u32], mut y: Region<u32>, tile: Shared<u32>, block: Block) {
        let i = global_linear_id();
        let mine = x.get(i).copied().unwrap_or(0);
        let rows = x.chunks(4);
        tile.write(&block, mine);
        let read = block.sync();
        if let Some(o) = y.mine() {
            *o = mine + rows.len() as u32 + tile.get(&read, 0);
        }
    }

    /// A lane's running sum and count: not `Copy`, so a loop may use it in its slot only
    /// where nothing moves it.
    struct Acc {
        sum: u32,
        count: u32,
    }

    impl Acc {
        fn add(&mut self, v: u32) {
            self.sum += v;
            self.count += 1;
        }
        fn peek(&self) -> u32 {
            self.sum
        }
        fn scaled_mean(self, k: u32) -> u32 {
            self.sum * k / self.count.max(1)
        }
    }

    /// Kept locals used in place (a method that changes one, a field's compound assignment, a
    /// comparison, a closure that reads one) and taken out (a whole assignment from itself,
    /// a move at the last use), across a `for` loop of barriers.
    #[kernel]
    pub fn in_place(rounds: u32, x: &[u32], mut y: Region<[u32; 4]>, tile: Shared<u32>, block: Block) {
        let i = global_linear_id();
        let t = thread_idx_x() as usize;
        let n = tile.len();
        let mut block = block;
        let mut acc = Acc { sum: 0, count: 0 };
        let mut pair = (x[i % x.len()], 1u32);
        let mut high = 0u32;
        for r in 0..rounds {
            tile.write(&block, pair.0 + acc.peek());
            let read = block.sync();
            let got = tile.get(&read, (t + 1) % n);
            acc.add(got);
            pair.1 += r;
            if got > high {
                high = got;
            }
            let shift = |v: u32| v + pair.1;
            pair = (shift(pair.0) % 1000, pair.1);
            block = read.sync();
        }
        let peek: u32 = acc.peek();
        tile.write(&block, high);
        let read = block.sync();
        if let Some(o) = y.mine() {
            *o = [acc.scaled_mean(3), pair.0 + pair.1, peek, tile.get(&read, n - 1 - t)];
        }
    }

    /// A tree sum by halving, a `while` loop over a bound every thread of the block has (the
    /// lockstep copy runs each round's first piece with the condition, at the end of the loop
    /// before): a local of that piece (`mine`) lives across its barrier, and the round goes on
    /// after its last barrier.
    #[kernel]
    pub fn tree(x: &[u32], mut sums: PerBlock<[u32; 2]>, tile: Shared<u32>, block: Block) {
        let i = global_linear_id();
        let t = thread_idx_x() as usize;
        let mut block = block;
        let mut v = if i < x.len() { x[i] } else { 0 };
        let mut half = tile.len() / 2;
        let mut rounds = 0u32;
        while half > 0 {
            let mine = v;
            tile.write(&block, mine);
            let read = block.sync();
            if t < half {
                v = mine + tile.get(&read, t + half);
            }
            block = read.sync();
            half /= 2;
            rounds += 1;
        }
        if let Some(s) = sums.mine() {
            *s = [v, rounds];
        }
    }

    /// An outer local used, then shadowed, in a piece that ends at a barrier, and read after
    /// the block: the value kept across the barrier is the outer one's (the macro makes no
    /// lockstep copy of this: the name at the barrier is the inner one's).
    #[kernel]
    pub fn shadow_then_barrier(x: &[u32], mut y: Region<u32>, block: Block) {
        let v = x[global_linear_id() % x.len()];
        let mut block = block;
        let read = block.sync();
        block = read.sync();
        {
            let w = v + 1;
            let v = w * 2;
            y.index();
            let _ = v;
            let read = block.sync();
            block = read.sync();
        }
        let _ = block;
        if let Some(o) = y.mine() {
            *o = v;
        }
    }

    /// A reference to a local lives across a barrier: the kernel keeps the futures.
    #[kernel]
    pub fn lends(x: &[u32], mut y: Region<u32>, tile: Shared<u32>, block: Block) {
        let i = global_linear_id();
        let pair = [x[i % x.len()], 7];
        let r = &pair;
        tile.write(&block, r[0]);
        let read = block.sync();
        if let Some(o) = y.mine() {
            *o = r[0] + r[1] + tile.get(&read, 0);
        }
    }
}

// (These five have lockstep copies: the imports fail to compile if the macro made none.)
/// Lockstep kernels over blocks that are not rows, and one whose module has an index function
/// of its own by an intrinsic's name.
#[offload::kernels]
mod places {
    use offload::prelude::*;

    /// Each thread's indices, after a barrier (the lockstep loops give them from the block's
    /// place, not from the thread's context).
    #[kernel]
    pub fn indices(mut y: Region<[u32; 6]>, tile: Shared<u32>, block: Block) {
        tile.write(&block, thread_idx_y());
        let read = block.sync();
        let id = global_linear_id() as u32;
        let row = tile.get(&read, tile.len() - 1);
        if let Some(o) = y.mine() {
            *o = [id, thread_idx_x(), thread_idx_y(), global_id_x() as u32, global_id_y() as u32, row];
        }
    }
}

#[offload::kernels]
mod own_index {
    use offload::prelude::*;

    /// Not the intrinsic: the kernel's calls must reach this.
    fn global_id_x() -> usize {
        1000
    }

    #[kernel]
    pub fn uses_its_own(mut y: Region<u32>, tile: Shared<u32>, block: Block) {
        tile.write(&block, 1);
        let read = block.sync();
        let ones = tile.get(&read, 0);
        if let Some(o) = y.mine() {
            *o = global_id_x() as u32 + ones;
        }
    }
}

#[allow(unused_imports)]
use {own_index::__lockstep_uses_its_own as _, places::__lockstep_indices as _};

#[test]
fn lanes_of_two_dimensional_blocks_see_their_own_indices() {
    let dev = device();
    let (nx, ny, bx, by) = (24usize, 10usize, 8u32, 5u32);
    let mut y = vec![[0u32; 6]; nx * ny];
    places::indices::launch(&dev, Grid::threads_xy(nx, ny).block_xy(bx, by), &mut y).unwrap();
    for gy in 0..ny {
        for gx in 0..nx {
            let (tx, ty) = (gx as u32 % bx, gy as u32 % by);
            let want = [(gx + nx * gy) as u32, tx, ty, gx as u32, gy as u32, by - 1];
            assert_eq!(y[gx + nx * gy], want, "thread ({gx}, {gy})");
        }
    }
}

#[test]
fn a_module_s_own_function_by_an_intrinsic_s_name_is_the_one_called() {
    let dev = device();
    let mut y = vec![0u32; 64];
    own_index::uses_its_own::launch(&dev, Grid::threads(64).block_size(32), &mut y).unwrap();
    assert!(y.iter().all(|&v| v == 1001), "{y:?}");
}

#[allow(unused_imports)]
use gpu::{
    __lockstep_fails_after_barrier as _, __lockstep_in_place as _, __lockstep_phases as _,
    __lockstep_reads as _, __lockstep_tree as _,
};

const BLOCK: usize = 64;

fn device() -> Device {
    Device::default().expect("a device")
}

/// What `phases` gives, block by block, on the host.
fn phases_on_host(x: &[u32], rounds: u32, flip: u32, warp: usize) -> Vec<[u32; 3]> {
    let mut out = Vec::new();
    for chunk in x.chunks(BLOCK) {
        let mut v: Vec<u32> = chunk.to_vec();
        for r in 0..rounds {
            v = (0..BLOCK).map(|t| v[(t + 1) % BLOCK] + r).collect();
        }
        let side: Vec<u32> =
            (0..BLOCK).map(|t| v[t] + if flip > 0 { v[BLOCK - 1 - t] + 1 } else { t as u32 }).collect();
        for t in 0..BLOCK {
            let w = t / warp * warp;
            let total = v[w..w + warp].iter().sum();
            out.push([v[t], side[t], total]);
        }
    }
    out
}

#[test]
fn loops_branches_blocks_and_warps_give_what_the_host_does() {
    let dev = device();
    let n = 4 * BLOCK;
    let x: Vec<u32> = (0..n as u32).map(|i| i * 7 % 31).collect();
    let warp = dev.properties().warp_size as usize;
    for (rounds, flip) in [(0, 0), (3, 1), (5, 0)] {
        let mut y = vec![[0u32; 3]; n];
        gpu::phases::launch(&dev, Grid::threads(n).block_size(BLOCK as u32), rounds, flip, &x, &mut y)
            .unwrap();
        assert_eq!(y, phases_on_host(&x, rounds, flip, warp), "rounds {rounds}, flip {flip}");
    }
}

#[test]
fn a_panic_after_a_barrier_names_its_thread_and_block() {
    let dev = device();
    let x = vec![1u32; 16];
    let mut y = vec![0u32; 4 * 8];
    let err =
        gpu::fails_after_barrier::launch(&dev, Grid::threads(32).block_size(8), &x, &mut y).unwrap_err();
    match err {
        Error::KernelPanicked { block, thread, message, .. } => {
            assert_eq!((block.as_str(), thread.as_str()), ("1", "3"), "{message}");
            assert!(message.contains("index out of bounds"), "{message}");
        }
        // A GPU reports a trap, not the thread.
        Error::KernelFailed { .. } if dev.is_gpu() => {}
        other => panic!("{other}"),
    }
}

#[test]
fn a_kernel_that_cannot_be_cut_keeps_working() {
    let dev = device();
    let n = 2 * BLOCK;
    let x: Vec<u32> = (0..n as u32).collect();
    let mut y = vec![0u32; n];
    gpu::lends::launch(&dev, Grid::threads(n).block_size(BLOCK as u32), &x, &mut y).unwrap();
    let want: Vec<u32> = (0..n).map(|i| x[i] + 7 + x[i / BLOCK * BLOCK]).collect();
    assert_eq!(y, want);
}

#[test]
fn values_through_shared_references_live_across_barriers() {
    let dev = device();
    let n = 2 * BLOCK;
    let x: Vec<u32> = (0..n as u32).map(|i| i * 3).collect();
    let mut y = vec![0u32; n];
    gpu::reads::launch(&dev, Grid::threads(n).block_size(BLOCK as u32), &x, &mut y).unwrap();
    let want: Vec<u32> = (0..n).map(|i| x[i] + n.div_ceil(4) as u32 + x[i / BLOCK * BLOCK]).collect();
    assert_eq!(y, want);
}

/// What `in_place` gives, block by block, on the host.
fn in_place_on_host(x: &[u32], rounds: u32) -> Vec<[u32; 4]> {
    let mut out = Vec::new();
    for (b, chunk) in x.chunks(BLOCK).enumerate() {
        let mut sum = vec![0u32; BLOCK];
        let mut pair: Vec<(u32, u32)> = (0..BLOCK).map(|t| (x[(b * BLOCK + t) % x.len()], 1)).collect();
        let mut high = vec![0u32; BLOCK];
        let _ = chunk;
        for r in 0..rounds {
            let tile: Vec<u32> = (0..BLOCK).map(|t| pair[t].0 + sum[t]).collect();
            for t in 0..BLOCK {
                let got = tile[(t + 1) % BLOCK];
                sum[t] += got;
                pair[t].1 += r;
                high[t] = high[t].max(got);
                pair[t] = ((pair[t].0 + pair[t].1) % 1000, pair[t].1);
            }
        }
        for t in 0..BLOCK {
            let mean = sum[t] * 3 / rounds.max(1);
            out.push([mean, pair[t].0 + pair[t].1, sum[t], high[BLOCK - 1 - t]]);
        }
    }
    out
}

#[test]
fn locals_used_in_place_and_taken_out_give_what_the_host_does() {
    let dev = device();
    let n = 3 * BLOCK;
    let x: Vec<u32> = (0..n as u32).map(|i| i * 13 % 97).collect();
    for rounds in [0, 1, 6] {
        let mut y = vec![[0u32; 4]; n];
        gpu::in_place::launch(&dev, Grid::threads(n).block_size(BLOCK as u32), rounds, &x, &mut y).unwrap();
        assert_eq!(y, in_place_on_host(&x, rounds), "rounds {rounds}");
    }
}

#[test]
fn a_while_loop_of_barriers_runs_every_round_and_none() {
    let dev = device();
    let n = 300usize;
    let x: Vec<u32> = (0..n as u32).map(|i| i * 7 % 23).collect();
    // Blocks of one thread run no round; six halve to three, then one (threads 3..6 and 1..3
    // drop out unread, as on a GPU).
    for block in [1usize, 6, 64] {
        let blocks = n.div_ceil(block);
        let mut sums = vec![[0u32; 2]; blocks];
        gpu::tree::launch(&dev, Grid::threads(n).block_size(block as u32), &x, &mut sums).unwrap();
        let want: Vec<[u32; 2]> = (0..blocks)
            .map(|b| {
                let mut v: Vec<u32> =
                    (0..block).map(|t| x.get(b * block + t).copied().unwrap_or(0)).collect();
                let (mut half, mut rounds) = (block / 2, 0);
                while half > 0 {
                    let old = v.clone();
                    for t in 0..half {
                        v[t] = old[t] + old[t + half];
                    }
                    half /= 2;
                    rounds += 1;
                }
                [v[0], rounds]
            })
            .collect();
        assert_eq!(sums, want, "blocks of {block}");
    }
}

#[test]
fn an_outer_local_shadowed_before_a_barrier_is_the_one_kept() {
    let dev = device();
    let n = 2 * BLOCK;
    let x: Vec<u32> = (0..n as u32).map(|i| i * 5 + 1).collect();
    let mut y = vec![0u32; n];
    gpu::shadow_then_barrier::launch(&dev, Grid::threads(n).block_size(BLOCK as u32), &x, &mut y).unwrap();
    assert_eq!(y, x);
}
