//! Sparse matrix–vector product `y = A·x` in CSR form, `f64`, with a group of four lanes per
//! row: the lanes of a group stride through the row's nonzeros, combine their partial sums
//! with two warp shuffles, and the group's first lane writes the row (`Groups<f64, 4>`, which
//! gives each group of four consecutive threads one element of `y`). The matrix is the 2-D
//! five-point Laplacian on an `N × N` grid.
//!
//! Checked against the host; on a GPU also timed, with one JSON line for `scripts/gpu check`
//! beside its CUDA C++ twin `examples/cuda/spmv.cu` (the same scheme with `__shfl_down_sync`).
//!
//! Usage: spmv [N] [REPS]   (defaults 2048 and 50 on a GPU, 64 on the CPU backend)

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Lanes per row.
    pub const LANES: usize = 4;

    /// `y[row] = Σ vals[k] · x[cols[k]]` over the row's nonzeros `row_ptr[row]..row_ptr[row + 1]`.
    #[kernel]
    pub fn spmv(row_ptr: &[u32], cols: &[u32], vals: &[f64], x: &[f64], mut y: Groups<f64, LANES>, w: Warp) {
        let row = y.index();
        let mut sum = 0.0;
        if row + 1 < row_ptr.len() {
            let (start, end) = (row_ptr[row] as usize, row_ptr[row + 1] as usize);
            // The row's values and columns taken once (one bounds check each, not one per
            // nonzero); this lane's share is every LANES-th of them.
            if let (Some(v), Some(c)) = (vals.get(start..end), cols.get(start..end)) {
                let mut k = y.rank();
                while k < v.len() {
                    sum = math::fma(v[k], x[c[k] as usize], sum);
                    k += LANES;
                }
            }
        }
        let total = group_sum(sum, &w);
        if let Some(o) = y.mine() {
            *o = total;
        }
    }

    /// `spmv` with each lane's nonzeros taken two at a time: both columns and values are
    /// loaded before either `x` element, so a lane with two nonzeros waits for two loads in a
    /// row, not four (a column, its `x`, the next column, its `x`). (The row's slices are
    /// taken as in `spmv`, not by a shared helper returning them: through one, the loads lose
    /// their non-coherent cache path and the kernel grows by a fifth.)
    #[kernel]
    pub fn spmv_pairs(
        row_ptr: &[u32],
        cols: &[u32],
        vals: &[f64],
        x: &[f64],
        mut y: Groups<f64, LANES>,
        w: Warp,
    ) {
        let row = y.index();
        let mut sum = 0.0;
        if row + 1 < row_ptr.len() {
            let (start, end) = (row_ptr[row] as usize, row_ptr[row + 1] as usize);
            if let (Some(v), Some(c)) = (vals.get(start..end), cols.get(start..end)) {
                let mut k = y.rank();
                while k + LANES < v.len() {
                    let (c0, c1, v0, v1) = (c[k], c[k + LANES], v[k], v[k + LANES]);
                    // Both columns checked before either `x` is read (one branch, not one
                    // between the two column loads).
                    let (Some(&x0), Some(&x1)) = (x.get(c0 as usize), x.get(c1 as usize)) else {
                        panic!("spmv: a column index past the end of x")
                    };
                    sum = math::fma(v1, x1, math::fma(v0, x0, sum));
                    k += 2 * LANES;
                }
                if k < v.len() {
                    sum = math::fma(v[k], x[c[k] as usize], sum);
                }
            }
        }
        let total = group_sum(sum, &w);
        if let Some(o) = y.mine() {
            *o = total;
        }
    }

    /// The group's four partial sums, in its first lane (every lane makes the call).
    #[inline(always)]
    fn group_sum(mut sum: f64, w: &Warp) -> f64 {
        sum += w.shuffle_down(sum, 2);
        sum + w.shuffle_down(sum, 1)
    }
}

use offload::{Device, DeviceBuffer, Grid};
use std::time::Instant;

/// The five-point Laplacian on an `n × n` grid (Dirichlet boundary: missing neighbours left
/// out), in CSR form.
fn laplacian(n: usize) -> (Vec<u32>, Vec<u32>, Vec<f64>) {
    let (mut row_ptr, mut cols, mut vals) = (vec![0u32], Vec::new(), Vec::new());
    for i in 0..n {
        for j in 0..n {
            let mut push = |c: usize, v: f64| {
                cols.push(c as u32);
                vals.push(v);
            };
            if i > 0 {
                push((i - 1) * n + j, -1.0);
            }
            if j > 0 {
                push(i * n + j - 1, -1.0);
            }
            push(i * n + j, 4.0);
            if j + 1 < n {
                push(i * n + j + 1, -1.0);
            }
            if i + 1 < n {
                push((i + 1) * n + j, -1.0);
            }
            row_ptr.push(cols.len() as u32);
        }
    }
    (row_ptr, cols, vals)
}

fn main() -> anyhow::Result<()> {
    let dev = Device::default()?;
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(if dev.is_gpu() { 2048 } else { 64 }), |a| a.parse())?;
    let reps: usize = args.next().map_or(Ok(50), |a| a.parse())?;
    let rows = n * n;
    let (row_ptr, cols, vals) = laplacian(n);
    let x: Vec<f64> =
        (0..rows).map(|i| ((i as u64).wrapping_mul(2_654_435_761) % 1000) as f64 / 1000.0).collect();
    let grid = Grid::threads(rows * gpu::LANES).block_size(256);

    let mut y = vec![0.0; rows];
    gpu::spmv::launch(&dev, grid, &row_ptr, &cols, &vals, &x, &mut y)?;
    for r in 0..rows {
        let range = row_ptr[r] as usize..row_ptr[r + 1] as usize;
        let want: f64 = range.map(|k| vals[k] * x[cols[k] as usize]).sum();
        anyhow::ensure!(
            (y[r] - want).abs() <= 1e-12 * want.abs().max(1.0),
            "spmv: row {r} is {}, want {want}",
            y[r]
        );
    }
    println!(
        "spmv: {rows} rows, {} nonzeros, four lanes per row, on {dev}: verified against the host",
        vals.len()
    );

    if dev.is_gpu() && reps > 0 {
        let (dp, dc, dv, dx) = (
            DeviceBuffer::from_slice(&dev, &row_ptr)?,
            DeviceBuffer::from_slice(&dev, &cols)?,
            DeviceBuffer::from_slice(&dev, &vals)?,
            DeviceBuffer::from_slice(&dev, &x)?,
        );
        let mut dy = DeviceBuffer::<f64>::zeroed(&dev, rows)?;
        // Three untimed launches, then `reps` timed ones, the result checked.
        let mut time = |side: &str, launch: &dyn Fn(&mut DeviceBuffer<f64>) -> offload::Result<()>| {
            for _ in 0..3 {
                launch(&mut dy)?;
            }
            dev.sync()?;
            let start = Instant::now();
            for _ in 0..reps {
                launch(&mut dy)?;
            }
            dev.sync()?;
            let us = start.elapsed().as_secs_f64() * 1e6 / reps as f64;
            anyhow::ensure!(
                dy.to_vec()? == y,
                "spmv: the timed result ({side}) differs from the checked one"
            );
            println!(
                "{{\"bench\":\"spmv\",\"side\":\"{side}\",\"rows\":{rows},\"nonzeros\":{},\"reps\":{reps},\"us\":{us:.2}}}",
                vals.len()
            );
            eprintln!("spmv of {rows} rows ({side}): {us:.1} µs");
            anyhow::Ok(())
        };
        time("rust", &|dy| gpu::spmv::launch(&dev, grid, &dp, &dc, &dv, &dx, dy))?;
        time("rust-pairs", &|dy| gpu::spmv_pairs::launch(&dev, grid, &dp, &dc, &dv, &dx, dy))?;
    }
    Ok(())
}
