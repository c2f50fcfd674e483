//! Atomics (scatter updates) and reductions (sum, min, max to one value): exact results on
//! every backend, whatever the order in which threads contribute.

use offload::{Device, DeviceBuffer, Grid, Loc};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// A histogram of `x` into `bins.len()` bins of width 1.
    #[kernel]
    pub fn histogram(n: usize, x: &[u32], bins: Atomics<u32>) {
        let i = global_linear_id();
        if i < n {
            bins.add(x[i] as usize % bins.len(), 1);
        }
    }

    /// Sum, minimum and maximum of `x`, in one pass.
    #[kernel]
    pub fn stats(n: usize, x: &[f64], mut total: Sum<f64>, mut lo: Min<f64>, mut hi: Max<f64>) {
        let i = global_linear_id();
        if i < n {
            total.add(x[i]);
            lo.min(x[i]);
            hi.max(x[i]);
        }
    }

    /// Where the smallest and largest values are (first occurrence), and the sum, fused.
    #[kernel]
    pub fn locate(x: &[f64], mut lo: MinLoc<f64>, mut hi: MaxLoc<f64>, mut total: Sum<f64>) {
        let i = global_linear_id();
        if i < x.len() {
            lo.min_at(x[i], i);
            hi.max_at(x[i], i);
            total.add(x[i]);
        }
    }

    /// The first minimum of integer data, read through a grid-stride loop.
    #[kernel]
    pub fn first_min_i32(x: &[i32], mut lo: MinLoc<i32>) {
        let mut i = global_linear_id();
        while i < x.len() {
            lo.min_at(x[i], i);
            i += global_threads();
        }
    }

    /// An integer dot product.
    #[kernel]
    pub fn dot(n: usize, a: &[i64], b: &[i64], mut total: Sum<i64>) {
        let i = global_linear_id();
        if i < n {
            total.add(a[i] * b[i]);
        }
    }

    /// A single-pass chained scan of tile sums: each block takes the next tile from a counter
    /// (tiles go out in the order blocks start, so a block only waits for one already
    /// running), sums its tile through shared memory, waits for the previous tile's inclusive
    /// prefix — published as a value and then a flag, with release ordering (or relaxed stores
    /// after a release fence), read with acquire ordering (or a relaxed load before an acquire
    /// fence) — and publishes its own. `prefix[t]` ends as the sum of tiles `0..=t`.
    #[kernel]
    pub fn chained_scan(
        x: &[u64],
        fences: bool,
        counter: Atomics<u32>,
        flags: Atomics<u32>,
        prefix: Atomics<u64>,
        slots: Shared<u64>,
        block: Block,
    ) {
        let (t, n) = (thread_idx_x() as usize, block_dim_x() as usize);
        let tile = block.broadcast(if t == 0 { counter.add(0, 1) } else { 0 }) as usize;
        slots.write(&block, x.get(tile * n + t).copied().unwrap_or(0));
        let read = block.sync();
        let sum: u64 = slots.as_slice(&read).iter().sum();
        if t == 0 && tile < prefix.len() {
            let mut before = 0;
            if tile > 0 {
                if fences {
                    // (Backing off between polls, as a look-back does on a large grid.)
                    while flags.load(tile - 1) == 0 {
                        nanosleep(200);
                    }
                    fence(core::sync::atomic::Ordering::Acquire, MemoryScope::Device);
                } else {
                    while flags.load_acquire(tile - 1, MemoryScope::Device) == 0 {}
                }
                before = prefix.load(tile - 1);
            }
            prefix.store(tile, before + sum);
            if fences {
                fence(core::sync::atomic::Ordering::Release, MemoryScope::Device);
                flags.store(tile, 1);
            } else {
                flags.store_release(tile, 1, MemoryScope::Device);
            }
        }
        let _block = read.sync();
    }

    /// Floating-point atomics at computed indices, and the other operations.
    #[kernel]
    pub fn scatter(
        n: usize,
        idx: &[u32],
        v: &[f32],
        sums: Atomics<f32>,
        maxima: Atomics<i32>,
        last: Atomics<u64>,
    ) {
        let i = global_linear_id();
        if i < n {
            let k = idx[i] as usize;
            sums.add(k, v[i]);
            maxima.max(k, i as i32);
            let _ = last.compare_exchange(k, 0, i as u64 + 1);
        }
    }
}

fn device() -> Device {
    Device::default().expect("a device")
}

#[test]
fn histogram_counts_every_element() {
    let dev = device();
    let n = 100_000;
    let x: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 7).collect();
    let mut bins = vec![0u32; 37];
    gpu::histogram::launch(&dev, n, n, &x, &mut bins).unwrap();
    let mut want = vec![0u32; 37];
    for v in &x {
        want[*v as usize % 37] += 1;
    }
    assert_eq!(bins, want);
    assert_eq!(bins.iter().sum::<u32>(), n as u32);
}

#[test]
fn sum_min_max_in_one_pass() {
    let dev = device();
    // Integers in f64: every order of additions gives the same exact sum.
    let x: Vec<f64> = (0..250_001).map(|i| ((i * 7919) % 10_007) as f64 - 5000.0).collect();
    let (mut total, mut lo, mut hi) = (0.0f64, f64::INFINITY, f64::NEG_INFINITY);
    gpu::stats::launch(&dev, x.len(), x.len(), &x, &mut total, &mut lo, &mut hi).unwrap();
    assert_eq!(total, x.iter().sum::<f64>());
    assert_eq!(lo, x.iter().copied().fold(f64::INFINITY, f64::min));
    assert_eq!(hi, x.iter().copied().fold(f64::NEG_INFINITY, f64::max));
}

#[test]
fn reductions_accumulate_into_the_initial_value_for_any_block_shape() {
    let dev = device();
    let n = 10_000usize;
    let a: Vec<i64> = (0..n as i64).collect();
    let b: Vec<i64> = (0..n as i64).map(|i| 3 - i % 5).collect();
    let want: i64 = a.iter().zip(&b).map(|(a, b)| a * b).sum();
    for block in [32u32, 100, 256, 1024] {
        let mut total = 1000i64;
        gpu::dot::launch(&dev, Grid::threads(n).block_size(block), n, &a, &b, &mut total).unwrap();
        assert_eq!(total, 1000 + want, "block size {block}");
    }
    let (da, db) = (DeviceBuffer::from_slice(&dev, &a).unwrap(), DeviceBuffer::from_slice(&dev, &b).unwrap());
    let mut total = 0i64;
    gpu::dot::launch(&dev, n, n, &da, &db, &mut total).unwrap();
    assert_eq!(total, want);
}

/// The first index of the minimum and maximum of `x`, NaNs ignored.
fn first_extrema(x: &[f64]) -> (Loc<f64>, Loc<f64>) {
    let (mut lo, mut hi) = (Loc::min_identity(), Loc::max_identity());
    for (i, &v) in x.iter().enumerate() {
        if v < lo.value {
            lo = Loc::new(v, i);
        }
        if v > hi.value {
            hi = Loc::new(v, i);
        }
    }
    (lo, hi)
}

#[test]
fn min_and_max_locations_are_the_first_occurrences() {
    let dev = device();
    // Few distinct values, so every extreme value occurs many times (and in many blocks); a
    // NaN that must be ignored; integers in f64 so that the fused sum is exact.
    let mut x: Vec<f64> =
        (0..300_007u64).map(|i| (i.wrapping_mul(2_654_435_761) % 977) as f64 - 400.0).collect();
    x[5] = f64::NAN;
    let finite: f64 = x.iter().filter(|v| !v.is_nan()).sum();
    let (want_lo, want_hi) = first_extrema(&x);
    assert!(x.iter().filter(|&&v| v == want_lo.value).count() > 100, "the test needs repeated minima");
    for block in [32u32, 100, 256, 1024] {
        let (mut lo, mut hi, mut total) = (Loc::min_identity(), Loc::max_identity(), 0.0);
        gpu::locate::launch(&dev, Grid::threads(x.len()).block_size(block), &x, &mut lo, &mut hi, &mut total)
            .unwrap();
        assert_eq!((lo.value, lo.index), (want_lo.value, want_lo.index), "minimum, block size {block}");
        assert_eq!((hi.value, hi.index), (want_hi.value, want_hi.index), "maximum, block size {block}");
        assert!(total.is_nan(), "the NaN reaches the sum");
    }
    // The initial value takes part: a start below every element stays, with its index.
    let (mut lo, mut hi, mut total) = (Loc::new(-1000.0, 7), Loc::new(f64::NEG_INFINITY, 0), 0.0);
    x[5] = 0.0;
    gpu::locate::launch(&dev, x.len(), &x, &mut lo, &mut hi, &mut total).unwrap();
    assert_eq!((lo.value, lo.index), (-1000.0, 7));
    assert_eq!((hi.value, hi.index), (want_hi.value, want_hi.index));
    assert_eq!(total, finite);
}

#[test]
fn first_minimum_of_integers_over_a_grid_stride_loop() {
    let dev = device();
    let x: Vec<i32> = (0..100_000i32).map(|i| (i * 37 % 1001) - (i % 3) * 200).collect();
    let min = *x.iter().min().unwrap();
    let first = x.iter().position(|&v| v == min).unwrap();
    let data = DeviceBuffer::from_slice(&dev, &x).unwrap();
    let mut lo = Loc::new(x[0], 0);
    gpu::first_min_i32::launch(&dev, Grid::threads(4096).block_size(128), &data, &mut lo).unwrap();
    assert_eq!((lo.value, lo.index), (min, first));
}

#[test]
fn float_atomics_max_and_compare_exchange() {
    let dev = device();
    let n = 20_000usize;
    let idx: Vec<u32> = (0..n as u32).map(|i| i % 10).collect();
    let v: Vec<f32> = (0..n).map(|i| (i % 4) as f32 * 0.5).collect();
    let (mut sums, mut maxima, mut last) = (vec![0.0f32; 10], vec![-1i32; 10], vec![0u64; 10]);
    gpu::scatter::launch(&dev, n, n, &idx, &v, &mut sums, &mut maxima, &mut last).unwrap();
    for k in 0..10 {
        let want: f32 = (0..n).filter(|i| i % 10 == k).map(|i| v[i]).sum();
        assert_eq!(sums[k], want, "sum of bin {k} (small integers and halves add exactly)");
        assert_eq!(maxima[k], (n - 10 + k) as i32, "max of bin {k}");
        // Exactly one thread of each bin won the compare-exchange from 0.
        let winner = last[k] as usize;
        assert!(winner >= 1 && (winner - 1) % 10 == k, "bin {k}: {winner}");
    }
}

#[test]
fn reductions_into_device_memory_stay_there_and_accumulate() {
    let dev = device();
    let n = 50_000usize;
    let x: Vec<f64> = (0..n).map(|i| ((i * 7919) % 10_007) as f64 - 5000.0).collect();
    let dx = DeviceBuffer::from_slice(&dev, &x).unwrap();
    // Sum, minimum and maximum, each into one element of device memory: combined with what is
    // there, launch after launch, with nothing copied back in between.
    let mut total = DeviceBuffer::from_slice(&dev, &[10.0f64]).unwrap();
    let mut extremes = DeviceBuffer::from_slice(&dev, &[f64::INFINITY, f64::NEG_INFINITY, 0.0]).unwrap();
    for _ in 0..3 {
        let (mut lo, mut rest) = extremes.split_at_mut(1);
        let (mut hi, _) = rest.split_at_mut(1);
        gpu::stats::launch(
            &dev,
            Grid::threads(n / 2).block_size(128),
            n / 2,
            &dx,
            &mut total,
            &mut lo,
            &mut hi,
        )
        .unwrap();
    }
    let half = &x[..n / 2];
    assert_eq!(total.to_vec().unwrap(), [10.0 + 3.0 * half.iter().sum::<f64>()]);
    let e = extremes.to_vec().unwrap();
    assert_eq!(e[0], half.iter().copied().fold(f64::INFINITY, f64::min));
    assert_eq!(e[1], half.iter().copied().fold(f64::NEG_INFINITY, f64::max));
    assert_eq!(e[2], 0.0, "the element after the parts is untouched");
    // The first minimum's location, into a one-element buffer of `Loc`.
    let mut at = DeviceBuffer::from_slice(&dev, &[Loc::min_identity()]).unwrap();
    let xi: Vec<i32> = (0..n as i32).map(|i| (i * 37) % 1000 - 500).collect();
    gpu::first_min_i32::launch(&dev, Grid::resident(&dev, 256).unwrap(), &xi, &mut at).unwrap();
    let got = at.to_vec().unwrap()[0];
    let want = xi.iter().enumerate().min_by_key(|&(i, v)| (*v, i)).unwrap();
    assert_eq!((got.value, got.index), (*want.1, want.0));
}

#[test]
fn a_reduction_into_more_than_one_device_element_is_an_error() {
    let dev = device();
    let x = vec![1i64; 100];
    let mut total = DeviceBuffer::<i64>::zeroed(&dev, 2).unwrap();
    let err = gpu::dot::launch(&dev, 100, 100, &x, &x, &mut total).unwrap_err().to_string();
    assert!(err.contains("a reduction into device memory takes one element"), "{err}");
    assert!(err.contains("dot"), "{err}");
}

#[test]
fn a_chained_scan_hands_prefixes_between_blocks_with_acquire_and_release() {
    let dev = device();
    let (block, tiles) = (64usize, 40usize);
    let x: Vec<u64> = (0..(block * tiles) as u64).map(|i| i * 7 % 23).collect();
    let want: Vec<u64> = x
        .chunks(block)
        .scan(0, |acc, tile| {
            *acc += tile.iter().sum::<u64>();
            Some(*acc)
        })
        .collect();
    for fences in [false, true] {
        let (mut counter, mut flags, mut prefix) = (vec![0u32; 1], vec![0u32; tiles], vec![0u64; tiles]);
        let grid = Grid::threads(block * tiles).block_size(block as u32);
        gpu::chained_scan::launch(&dev, grid, &x, fences, &mut counter, &mut flags, &mut prefix).unwrap();
        assert_eq!(counter, [tiles as u32]);
        assert!(flags.iter().all(|&f| f == 1));
        assert_eq!(prefix, want, "with fences: {fences}");
    }
}
