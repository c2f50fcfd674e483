//! Tiled matrix multiply with block-shared memory: each 16×16 block stages a tile of `a` and
//! of `b` in `Shared` memory; the block's barrier (`block.sync()`) is what makes the tiles
//! readable, and the types make reading before it a compile error.

use offload::Grid;

const TILE: usize = 16;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    #[kernel]
    pub fn matmul(
        n: usize,
        a: &[f32],
        b: &[f32],
        mut c: Region2<f32>,
        ta: Shared<f32>,
        tb: Shared<f32>,
        block: Block,
    ) {
        const TILE: usize = 16;
        let [col, row] = c.index();
        let (tx, ty) = (thread_idx_x() as usize, thread_idx_y() as usize);
        let mut block = block;
        let mut sum = 0.0f32;
        for t in 0..n.div_ceil(TILE) {
            let (ac, br) = (t * TILE + tx, t * TILE + ty);
            ta.write(&block, if row < n && ac < n { a[row * n + ac] } else { 0.0 });
            tb.write(&block, if br < n && col < n { b[br * n + col] } else { 0.0 });
            let read = block.sync(); // both tiles become readable
            for k in 0..TILE {
                sum = math::fma(ta.get(&read, ty * TILE + k), tb.get(&read, k * TILE + tx), sum);
            }
            block = read.sync(); // everyone is done reading: the tiles may be written again
        }
        if let Some(ci) = c.mine() {
            *ci = sum;
        }
    }
}

fn main() -> anyhow::Result<()> {
    let n: usize = std::env::args().nth(1).map_or(Ok(300), |s| s.parse())?;
    let dev = offload::Device::default()?;
    let a: Vec<f32> = (0..n * n).map(|i| (i % 7) as f32 - 3.0).collect();
    let b: Vec<f32> = (0..n * n).map(|i| (i % 5) as f32 * 0.5).collect();
    let mut c = vec![0.0f32; n * n];
    let grid = Grid::threads_xy(n, n).block_xy(TILE as u32, TILE as u32);
    gpu::matmul::launch(&dev, grid, n, &a, &b, (&mut c, [n, n]))?;
    for r in 0..n {
        for col in 0..n {
            // The same fused multiply-adds in the same order as the kernel.
            let want = (0..n).fold(0.0f32, |s, k| a[r * n + k].mul_add(b[k * n + col], s));
            anyhow::ensure!(
                c[r * n + col] == want,
                "matmul: c[{r}][{col}] = {}, want {want}",
                c[r * n + col]
            );
        }
    }
    println!("matmul: {n}×{n} f32 with 16×16 shared-memory tiles on {dev}: verified against the host");
    Ok(())
}
