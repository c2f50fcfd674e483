//! Tier 2, reductions and atomics: DOT (Stream), REDUCE_SUM (Algorithm), PI_REDUCE, TRAP_INT,
//! PI_ATOMIC, DAXPY_ATOMIC, REDUCE_STRUCT, MULTI_REDUCE, REDUCE3_INT (Basic), FIRST_MIN (Lcals), HISTOGRAM
//! (Algorithm).
//!
//! A reduction is a `Sum`/`Min` parameter: each thread folds a grid-stride share of the
//! elements over a grid that fills the device (each kernel's `resident`), each block combines
//! its threads' values in shared memory and adds one atomic update to the result. The host
//! passes `&mut f64`, copied to the device and back around every launch, as RAJAPerf's
//! Base_CUDA variants copy their reduction variable in and out every repetition; the
//! repetitions are combined on the host as RAJAPerf combines them (`m_dot += dot`).

use super::{BLOCK_SIZE, Launch, buffers};
use crate::problem::KernelId;
use offload::{DeviceBuffer, Grid, Loc};

/// Whether this module runs `kernel`.
pub(super) fn handles(kernel: KernelId) -> bool {
    matches!(
        kernel,
        KernelId::Dot
            | KernelId::ReduceSum
            | KernelId::PiReduce
            | KernelId::TrapInt
            | KernelId::PiAtomic
            | KernelId::DaxpyAtomic
            | KernelId::FirstMin
            | KernelId::ReduceStruct
            | KernelId::MultiReduce
            | KernelId::Histogram
            | KernelId::Reduce3Int
    )
}

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// `dot += a[i] · b[i]`
    #[kernel]
    pub fn dot(a: &[f64], b: &[f64], mut dot: Sum<f64>) {
        for i in grid_stride(a.len().min(b.len())) {
            dot.add(a[i] * b[i]);
        }
    }

    /// `sum += x[i]`
    #[kernel]
    pub fn reduce_sum(x: &[f64], mut sum: Sum<f64>) {
        for i in grid_stride(x.len()) {
            sum.add(x[i]);
        }
    }

    /// The midpoint rule for ∫₀¹ 4/(1+x²): `pi += dx / (1 + x²)` at `x = (i + ½)·dx`; `1 + x²`
    /// as the fused multiply-add nvcc contracts RAJAPerf's body into (the kernel is bound by
    /// double-precision throughput).
    #[kernel]
    pub fn pi_reduce(n: usize, dx: f64, mut pi: Sum<f64>) {
        for i in grid_stride(n) {
            let x = (i as f64 + 0.5) * dx;
            pi.add(dx / math::fma(x, x, 1.0));
        }
    }

    /// The trapezoid-rule sum of `1 / |(x, y) − (xp, yp)|` at `x = x0 + i·h`
    /// (`c` is `[x0, xp, y, yp, h]`).
    #[kernel]
    pub fn trap_int(n: usize, c: [f64; 5], mut sumx: Sum<f64>) {
        let [x0, xp, y, yp, h] = c;
        let dy2 = (y - yp) * (y - yp);
        for i in grid_stride(n) {
            // `x0 + i·h` and `(x − xp)² + dy²` as the fused multiply-adds nvcc contracts
            // RAJAPerf's body into: the kernel is bound by double-precision throughput, and
            // each unfused pair is one operation more of some twenty per element.
            let x = math::fma(i as f64, h, x0);
            let dx = x - xp;
            sumx.add(1.0 / math::sqrt(math::fma(dx, dx, dy2)));
        }
    }

    /// PI_REDUCE's sum, with every thread adding its term to `pi[0]` atomically.
    #[kernel]
    pub fn pi_atomic(n: usize, dx: f64, pi: Atomics<f64>) {
        let i = global_linear_id();
        if i < n {
            let x = (i as f64 + 0.5) * dx;
            pi.add(0, dx / (1.0 + x * x));
        }
    }

    /// `y[i] += a · x[i]`, atomically.
    #[kernel]
    pub fn daxpy_atomic(a: f64, x: &[f64], y: Atomics<f64>) {
        let i = global_linear_id();
        if i < x.len() {
            y.add(i, a * x[i]);
        }
    }

    /// FIRST_MIN: the smallest value and its first index, in one pass.
    #[kernel]
    pub fn first_min(x: &[f64], mut minloc: MinLoc<f64>) {
        for i in grid_stride(x.len()) {
            minloc.min_at(x[i], i);
        }
    }

    /// Six reductions at once: sum, minimum and maximum of x and of y.
    #[kernel]
    #[allow(clippy::too_many_arguments)]
    pub fn reduce_struct(
        x: &[f64],
        y: &[f64],
        mut xsum: Sum<f64>,
        mut xmin: Min<f64>,
        mut xmax: Max<f64>,
        mut ysum: Sum<f64>,
        mut ymin: Min<f64>,
        mut ymax: Max<f64>,
    ) {
        for i in grid_stride(x.len().min(y.len())) {
            xsum.add(x[i]);
            xmin.min(x[i]);
            xmax.max(x[i]);
            ysum.add(y[i]);
            ymin.min(y[i]);
            ymax.max(y[i]);
        }
    }

    /// Bins a block keeps in shared memory: runs with at most this many take the block-private
    /// kernels below.
    pub const SHARED_BINS: usize = 64;
    /// Copies of the bins per block, one per warp of a 256-thread block on NVIDIA: lanes of
    /// different warps never contend for one shared address.
    pub const REPLICAS: usize = 8;

    /// The replica of the bins this thread's warp updates.
    fn replica() -> usize {
        (thread_idx_x() as usize / 32) % REPLICAS * SHARED_BINS
    }

    /// `values[bins[i]] += data[i]`, atomically: several sums at once.
    #[kernel]
    pub fn multi_reduce(bins: &[i64], data: &[f64], values: Atomics<f64>) {
        let i = global_linear_id();
        if i < bins.len() {
            values.add(bins[i] as usize, data[i]);
        }
    }

    /// MULTI_REDUCE with block-private sums: every thread folds a grid-stride share into its
    /// warp's replica of the bins in shared memory, and each block adds each bin to the
    /// result once.
    #[kernel]
    pub fn multi_reduce_shared(
        bins: &[i64],
        data: &[f64],
        values: Atomics<f64>,
        local: SharedAtomics<f64, { SHARED_BINS * REPLICAS }>,
        block: Block,
    ) {
        let replica = replica();
        for i in grid_stride(bins.len().min(data.len())) {
            local.add(&block, replica + bins[i] as usize, data[i]);
        }
        let read = block.sync();
        let all = local.as_slice(&read);
        let mut bin = thread_idx_x() as usize;
        while bin < SHARED_BINS.min(values.len()) {
            let sum: f64 = (0..REPLICAS).map(|r| all[r * SHARED_BINS + bin]).sum();
            values.add(bin, sum);
            bin += block_dim_x() as usize;
        }
    }

    /// `counts[bins[i]] += 1`, atomically.
    #[kernel]
    pub fn histogram(bins: &[i64], counts: Atomics<u64>) {
        let i = global_linear_id();
        if i < bins.len() {
            counts.add(bins[i] as usize, 1);
        }
    }

    /// HISTOGRAM with block-private counts, as `multi_reduce_shared`.
    #[kernel]
    pub fn histogram_shared(
        bins: &[i64],
        counts: Atomics<u64>,
        local: SharedAtomics<u64, { SHARED_BINS * REPLICAS }>,
        block: Block,
    ) {
        let replica = replica();
        for i in grid_stride(bins.len()) {
            local.add(&block, replica + bins[i] as usize, 1);
        }
        let read = block.sync();
        let all = local.as_slice(&read);
        let mut bin = thread_idx_x() as usize;
        while bin < SHARED_BINS.min(counts.len()) {
            let count: u64 = (0..REPLICAS).map(|r| all[r * SHARED_BINS + bin]).sum();
            if count != 0 {
                counts.add(bin, count);
            }
            bin += block_dim_x() as usize;
        }
    }

    /// The sum, minimum and maximum of integer data.
    #[kernel]
    pub fn reduce3_int(vec: &[i32], mut vsum: Sum<i32>, mut vmin: Min<i32>, mut vmax: Max<i32>) {
        for i in grid_stride(vec.len()) {
            vsum.add(vec[i]);
            vmin.min(vec[i]);
            vmax.max(vec[i]);
        }
    }
}

pub(super) fn launch_reps(launch: Launch<'_>) -> offload::Result<()> {
    let Launch { dev, p, ins, indices, ints, outs, reps, .. } = launch;
    let n = p.size;
    let grid = Grid::threads(n).block_size(BLOCK_SIZE);
    // The reductions fold a grid-stride share per thread over a grid that fills the device
    // with the kernel's blocks (RAJAPerf's "occgs" tunings: by its registers and shared
    // memory): one block combine and one atomic update per resident block, not per 256
    // elements.
    // The result of each repetition, and how the repetitions combine (RAJAPerf's m_dot += dot;
    // the others keep the last).
    let mut result = 0.0;
    let mut fold = |value: f64, adds: bool| result = if adds { result + value } else { value };
    match p.kernel {
        KernelId::Dot => {
            buffers!(p, ins => [a, b], &mut *outs => [_dot]);
            let resident = gpu::dot::resident(dev, BLOCK_SIZE)?;
            for _ in 0..reps {
                let mut dot = 0.0;
                gpu::dot::launch(dev, resident, a, b, &mut dot)?;
                fold(dot, true);
            }
        }
        KernelId::ReduceSum => {
            buffers!(p, ins => [x], &mut *outs => [_sum]);
            let resident = gpu::reduce_sum::resident(dev, BLOCK_SIZE)?;
            for _ in 0..reps {
                let mut sum = 0.0;
                gpu::reduce_sum::launch(dev, resident, x, &mut sum)?;
                fold(sum, false);
            }
        }
        KernelId::PiReduce => {
            let dx = p.scalar("dx");
            let resident = gpu::pi_reduce::resident(dev, BLOCK_SIZE)?;
            for _ in 0..reps {
                let mut pi = 0.0;
                gpu::pi_reduce::launch(dev, resident, n, dx, &mut pi)?;
                fold(4.0 * pi, false);
            }
        }
        KernelId::TrapInt => {
            let c = ["x0", "xp", "y", "yp", "h"].map(|name| p.scalar(name));
            let resident = gpu::trap_int::resident(dev, BLOCK_SIZE)?;
            for _ in 0..reps {
                let mut sumx = 0.0;
                gpu::trap_int::launch(dev, resident, n, c, &mut sumx)?;
                fold(sumx * c[4], true);
            }
        }
        KernelId::PiAtomic => {
            let dx = p.scalar("dx");
            let mut pi = DeviceBuffer::zeroed(dev, 1)?;
            let mut host = [0.0];
            for _ in 0..reps {
                pi.copy_from(&[0.0])?;
                gpu::pi_atomic::launch(dev, grid, n, dx, &mut pi)?;
                pi.copy_to(&mut host)?;
                fold(host[0] * 4.0, false);
            }
        }
        KernelId::DaxpyAtomic => {
            buffers!(p, ins => [x], &mut *outs => [y]);
            let a = p.scalar("a");
            for _ in 0..reps {
                gpu::daxpy_atomic::launch(dev, grid, a, x, &mut *y)?;
            }
            return Ok(());
        }
        KernelId::FirstMin => {
            // RAJAPerf's m_xmin_init = x[0], m_initloc = 0 (no elements: nothing to find).
            let Some(&x0) = p.inputs[0].data.first() else { return Ok(()) };
            let init = Loc::new(x0, 0);
            buffers!(p, ins => [x], &mut *outs => [_minloc]);
            let resident = gpu::first_min::resident(dev, BLOCK_SIZE)?;
            for _ in 0..reps {
                let mut minloc = init;
                gpu::first_min::launch(dev, resident, x, &mut minloc)?;
                fold(minloc.index as f64, false);
            }
        }
        KernelId::Reduce3Int => {
            let [vec] = ints else { panic!("REDUCE3_INT takes one integer array") };
            let (mut m_vsum, mut m_vmin, mut m_vmax) = (0i32, i32::MAX, i32::MIN);
            let resident = gpu::reduce3_int::resident(dev, BLOCK_SIZE)?;
            for _ in 0..reps {
                let (mut vsum, mut vmin, mut vmax) = (0, i32::MAX, i32::MIN);
                gpu::reduce3_int::launch(dev, resident, vec, &mut vsum, &mut vmin, &mut vmax)?;
                m_vsum = m_vsum.wrapping_add(vsum);
                (m_vmin, m_vmax) = (m_vmin.min(vmin), m_vmax.max(vmax));
            }
            for (out, v) in outs.iter_mut().zip([m_vsum, m_vmin, m_vmax]) {
                out.copy_from(&[f64::from(v)])?;
            }
            return Ok(());
        }
        KernelId::ReduceStruct => {
            buffers!(p, ins => [x, y], &mut *outs => [_xcenter, _xmin, _xmax, _ycenter, _ymin, _ymax]);
            let mut last = [0.0; 6];
            let resident = gpu::reduce_struct::resident(dev, BLOCK_SIZE)?;
            for _ in 0..reps {
                let (mut xsum, mut xmin, mut xmax) = (0.0, f64::MAX, f64::MIN);
                let (mut ysum, mut ymin, mut ymax) = (0.0, f64::MAX, f64::MIN);
                gpu::reduce_struct::launch(
                    dev, resident, x, y, &mut xsum, &mut xmin, &mut xmax, &mut ysum, &mut ymin, &mut ymax,
                )?;
                last = [xsum / n as f64, xmin, xmax, ysum / n as f64, ymin, ymax];
            }
            for (out, v) in outs.iter_mut().zip(last) {
                out.copy_from(&[v])?;
            }
            return Ok(());
        }
        KernelId::MultiReduce | KernelId::Histogram => {
            let [bins] = indices else { panic!("{} takes one index list", p.kernel) };
            let num_bins = p.param("num_bins");
            let mut host = vec![0.0; num_bins];
            // Up to SHARED_BINS bins (RAJAPerf's default is 10): block-private bins over a grid
            // that fills the device; more: one global atomic per element.
            let shared = num_bins <= gpu::SHARED_BINS;
            if p.kernel == KernelId::MultiReduce {
                buffers!(p, ins => [data], &mut *outs => [values]);
                let resident = gpu::multi_reduce_shared::resident(dev, BLOCK_SIZE)?;
                for _ in 0..reps {
                    values.copy_from(&vec![0.0; num_bins])?;
                    if shared {
                        gpu::multi_reduce_shared::launch(dev, resident, bins, data, &mut *values)?;
                    } else {
                        gpu::multi_reduce::launch(dev, grid, bins, data, &mut *values)?;
                    }
                    values.copy_to(&mut host)?;
                }
            } else {
                let mut counts = DeviceBuffer::<u64>::zeroed(dev, num_bins)?;
                let mut host_counts = vec![0u64; num_bins];
                let resident = gpu::histogram_shared::resident(dev, BLOCK_SIZE)?;
                for _ in 0..reps {
                    counts.copy_from(&vec![0; num_bins])?;
                    if shared {
                        gpu::histogram_shared::launch(dev, resident, bins, &mut counts)?;
                    } else {
                        gpu::histogram::launch(dev, grid, bins, &mut counts)?;
                    }
                    counts.copy_to(&mut host_counts)?;
                }
                host = host_counts.iter().map(|&c| c as f64).collect();
            }
            return outs[0].copy_from(&host);
        }
        other => unreachable!("{other} is not a reduction kernel"),
    }
    // The scalar result lives in the kernel's one-element output.
    outs[0].copy_from(&[result])
}
