//! The 2-D heat equation (Jacobi relaxation of Laplace's equation: the top edge held at 1, the
//! other edges at 0) on an `nx × ny` grid decomposed by rows over the MPI ranks, one device each
//! (`offload_mpi`). Each rank holds its rows and a ghost row above and below; every step it
//! computes its first and last rows, then sends them to its neighbours while the kernel for its
//! interior rows runs (`Comm::exchange_while`), and every `check` steps the ranks add up the
//! change (`all_reduce`). At the end rank 0 gathers the grid and compares it with the same
//! steps run on its device alone: they must agree bit for bit (each point's update is the same
//! arithmetic, however the rows are split).
//!
//! ```text
//! mpirun -n 4 target/offload/host/release/examples/mpi_heat [nx] [ny] [steps] [check] [serial]
//! ```
//! (default 512 512 200 50). Rank 0 prints the per-step time and a JSON line. With `serial`
//! the halos are exchanged after the interior kernel has finished instead of while it runs:
//! the difference of the two per-step times is what the overlap hides.

use offload::{Device, DeviceBuffer, Grid};
use offload_mpi::{Comm, Op, Recv, Send};
use std::time::Instant;

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// One Jacobi step for the rows of `new` (a part of `nx` columns, from local row `row` on):
    /// each point becomes the mean of its four neighbours in `old`. Local row `r` is global row
    /// `global_row0 + r` (local row 0 is the ghost row above); the grid's edges keep their
    /// values. Threads are laid out as the part's columns × rows, as the CUDA twin's are.
    #[kernel]
    pub fn relax(ny: usize, row: usize, global_row0: usize, old: &[f64], mut new: Region2<f64>) {
        let [c, i] = new.index();
        let [nx, _] = new.extents();
        let r = row + i;
        let at = r * nx + c;
        let g = global_row0.wrapping_add(r); // (rank 0's local row 0 is global row −1)
        if let Some(v) = new.mine() {
            *v = if g == 0 || g + 1 >= ny || c == 0 || c + 1 >= nx {
                old[at]
            } else {
                0.25 * (old[at - nx] + old[at + nx] + old[at - 1] + old[at + 1])
            };
        }
    }

    /// Σ (new − old)² over the elements.
    #[kernel]
    pub fn change(old: &[f64], new: &[f64], mut total: Sum<f64>) {
        for i in grid_stride(new.len().min(old.len())) {
            let d = new[i] - old[i];
            total.add(d * d);
        }
    }
}

/// The rows `[first, end)` of `ny` that rank `rank` of `size` owns.
fn rows_of(rank: usize, size: usize, ny: usize) -> (usize, usize) {
    (rank * ny / size, (rank + 1) * ny / size)
}

/// The starting grid: 1 on the top edge (global row 0), 0 elsewhere, for local rows holding
/// global rows `global_row0..` (`rows` of them, ghosts included).
fn initial(nx: usize, rows: usize, global_row0: isize) -> Vec<f64> {
    // (Local row −global_row0 is global row 0.)
    let mut u = vec![0.0; nx * rows];
    if (0..rows as isize).contains(&-global_row0) {
        let top = (-global_row0) as usize;
        u[top * nx..(top + 1) * nx].fill(1.0);
    }
    u
}

/// One step on `own` (≥ 2) local rows (1..=own) of `old` into `new`, the halos exchanged with
/// the ranks above (`up`) and below (`down`) while the interior rows compute — or, without
/// `overlap`, after they have (the baseline that shows what the overlap saves). Alone (`comm`
/// `None`), no halos.
#[allow(clippy::too_many_arguments, reason = "the grid's shape and the rank's place in it")]
fn step(
    dev: &Device,
    comm: Option<&Comm>,
    (nx, ny, own, global_row0): (usize, usize, usize, usize),
    up: Option<usize>,
    down: Option<usize>,
    old: &DeviceBuffer<f64>,
    new: &mut DeviceBuffer<f64>,
    overlap: bool,
) -> anyhow::Result<()> {
    // new = [ghost above][first row][interior rows][last row][ghost below]; own ≥ 2.
    let interior_rows = own - 2;
    let (mut above, mut r1) = new.split_at_mut(nx);
    let (mut first, mut r2) = r1.split_at_mut(nx);
    let (mut interior, mut r3) = r2.split_at_mut(interior_rows * nx);
    let (mut last, mut below) = r3.split_at_mut(nx);
    // Edge rows in blocks of 256 × 1, the interior in tiles of 32 × 8 (as the CUDA twin).
    let row = Grid::threads_xy(nx, 1).block_xy(256, 1);
    gpu::relax::launch(dev, row, ny, 1, global_row0, old, (&mut first, [nx, 1]))?;
    gpu::relax::launch(dev, row, ny, own, global_row0, old, (&mut last, [nx, 1]))?;
    let tiles = Grid::threads_xy(nx, interior_rows).block_xy(32, 8);
    let mut interior_kernel = || -> offload::Result<()> {
        gpu::relax::launch(dev, tiles, ny, 2, global_row0, old, (&mut interior, [nx, interior_rows]))?;
        if !overlap {
            dev.sync()?;
        }
        Ok(())
    };
    let Some(comm) = comm else {
        return Ok(interior_kernel()?);
    };
    let (first_row, last_row) = (first.part(..), last.part(..));
    let mut sends = Vec::new();
    let mut recvs = Vec::new();
    if let Some(up) = up {
        sends.push(Send { data: &first_row, to: up, tag: 1 });
        recvs.push(Recv { data: &mut above, from: up, tag: 2 });
    }
    if let Some(down) = down {
        sends.push(Send { data: &last_row, to: down, tag: 2 });
        recvs.push(Recv { data: &mut below, from: down, tag: 1 });
    }
    comm.exchange_while(&sends, &mut recvs, interior_kernel)??;
    Ok(())
}

fn main() -> anyhow::Result<()> {
    let mpi = offload_mpi::init()?;
    let world = mpi.world();
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let overlap = !args.last().is_some_and(|a| a == "serial");
    if !overlap {
        args.pop();
    }
    let args: Vec<usize> = args.iter().map(|a| a.parse()).collect::<Result<_, _>>()?;
    let arg = |i: usize, default: usize| args.get(i).copied().unwrap_or(default);
    let (nx, ny, steps, check) = (arg(0, 512), arg(1, 512), arg(2, 200), arg(3, 50).max(1));
    let (rank, size) = (world.rank(), world.size());
    anyhow::ensure!(
        nx >= 3 && ny >= 2 * size,
        "the grid ({nx} × {ny}) needs at least 3 columns and 2 rows per rank"
    );
    let dev = world.device()?;
    let (g0, g1) = rows_of(rank, size, ny);
    let own = g1 - g0;
    // Local row r is global row g0 − 1 + r: local row 0 is the ghost above (for rank 0 the
    // wrapped global row −1, never read: its first row is the grid's edge).
    let shape = (nx, ny, own, g0.wrapping_sub(1));
    let start = initial(nx, own + 2, g0 as isize - 1);
    let mut old = DeviceBuffer::from_slice(&dev, &start)?;
    let mut new = DeviceBuffer::from_slice(&dev, &start)?;
    let up = (rank > 0).then(|| rank - 1);
    let down = (rank + 1 < size).then_some(rank + 1);

    world.barrier();
    let started = Instant::now();
    let mut residual = f64::NAN;
    for s in 1..=steps {
        step(&dev, Some(world), shape, up, down, &old, &mut new, overlap)?;
        if s % check == 0 || s == steps {
            let mut local = 0.0;
            gpu::change::launch(
                &dev,
                gpu::change::resident(&dev, 256)?,
                &old.part(nx..(own + 1) * nx),
                &new.part(nx..(own + 1) * nx),
                &mut local,
            )?;
            residual = world.all_reduce(local, Op::Sum)?.sqrt();
        }
        std::mem::swap(&mut old, &mut new);
    }
    dev.sync()?;
    world.barrier();
    let seconds = started.elapsed().as_secs_f64();

    // Rank 0 gathers the rows (each rank's own, without ghosts) and checks them against the same
    // steps run alone.
    let rows = old.part(nx..(own + 1) * nx);
    if rank == 0 {
        let mut all = DeviceBuffer::<f64>::zeroed(&dev, nx * ny)?;
        all.part_mut(0..own * nx).copy_from(&rows.to_vec()?)?;
        for r in 1..size {
            let (a, b) = rows_of(r, size, ny);
            world.recv(&mut all.part_mut(a * nx..b * nx), r, 9)?;
        }
        let alone = run_alone(&dev, nx, ny, steps)?;
        let got = all.to_vec()?;
        let differ = got.iter().zip(&alone).filter(|(a, b)| a.to_bits() != b.to_bits()).count();
        anyhow::ensure!(differ == 0, "{differ} of {} points differ from the one-rank run", nx * ny);
        let per_step_us = seconds / steps as f64 * 1e6;
        println!(
            "mpi_heat: {nx} × {ny}, {steps} steps on {size} rank(s) (rank 0 on {dev}), halos {}, {per_step_us:.1} µs per step, residual {residual:.3e}: verified against one rank",
            if overlap {
                "exchanged while the interior computes"
            } else {
                "exchanged after the interior (serial)"
            }
        );
        println!(
            "{{\"bench\":\"mpi_heat\",\"side\":\"rust\",\"nx\":{nx},\"ny\":{ny},\"steps\":{steps},\"ranks\":{size},\"overlap\":{overlap},\"per_step_us\":{per_step_us:.3},\"residual\":{residual:e}}}"
        );
    } else {
        world.send(&rows, 0, 9)?;
    }
    Ok(())
}

/// The same steps on one device without MPI: the reference.
fn run_alone(dev: &Device, nx: usize, ny: usize, steps: usize) -> anyhow::Result<Vec<f64>> {
    // One rank's layout with every row its own: ghost rows above and below, never read.
    let start = initial(nx, ny + 2, -1);
    let mut old = DeviceBuffer::from_slice(dev, &start)?;
    let mut new = DeviceBuffer::from_slice(dev, &start)?;
    for _ in 0..steps {
        step(dev, None, (nx, ny, ny, usize::MAX), None, None, &old, &mut new, true)?;
        std::mem::swap(&mut old, &mut new);
    }
    Ok(old.part(nx..(ny + 1) * nx).to_vec()?)
}
