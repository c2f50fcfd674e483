//! Sorting keys on the device with `offload::algorithms::sort_keys`: a least significant digit
//! radix sort, 8 bits a pass, each pass stable (per-tile digit counts, one exclusive scan of
//! them, a scatter that ranks each tile's keys with warp ballots). Checked against the host's
//! sort; on a GPU also timed, with JSON lines for `scripts/gpu check` beside CUB's
//! `DeviceRadixSort::SortKeys` and `SortPairs` in `examples/cuda/sort.cu` (pairs: `u32` keys
//! carrying `u32` values, their original indices, with `offload::algorithms::sort_pairs`; and
//! carrying `u64` values, the index in both halves, side `rust-pairs64`).
//!
//! Usage: sort [KEYS] [REPS]   (defaults 2^26 and 20 on a GPU, 2^14 on the CPU backend)

use offload::{Device, DeviceBuffer};
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let dev = Device::default()?;
    let mut args = std::env::args().skip(1);
    let n: usize = args.next().map_or(Ok(if dev.is_gpu() { 1 << 26 } else { 1 << 14 }), |a| a.parse())?;
    let reps: usize = args.next().map_or(Ok(20), |a| a.parse())?;
    // Pseudo-random keys over the whole range (a multiplicative hash), with repeats.
    let keys: Vec<u32> = (0..n as u64)
        .map(|i| (i.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 32) as u32 ^ (i as u32 % 7))
        .collect();
    let mut want = keys.clone();
    want.sort_unstable();

    let mut buf = DeviceBuffer::from_slice(&dev, &keys)?;
    offload::algorithms::sort_keys(&dev, &mut buf)?;
    anyhow::ensure!(buf.to_vec()? == want, "sort: the device's order differs from the host's");
    // Pairs: each key carries its index; stable, so equal keys keep their indices' order.
    let index: Vec<u32> = (0..n as u32).collect();
    let mut pairs: Vec<(u32, u32)> = keys.iter().copied().zip(index.iter().copied()).collect();
    pairs.sort_by_key(|&(k, _)| k);
    let want_values: Vec<u32> = pairs.iter().map(|&(_, v)| v).collect();
    let mut values = DeviceBuffer::from_slice(&dev, &index)?;
    buf.copy_from(&keys)?;
    offload::algorithms::sort_pairs(&dev, &mut buf, &mut values)?;
    anyhow::ensure!(buf.to_vec()? == want, "sort: the pairs' keys differ from the host's order");
    anyhow::ensure!(values.to_vec()? == want_values, "sort: the pairs' values differ from a stable sort's");
    println!("sort: {n} u32 keys, and {n} key-value pairs, on {dev}: verified against the host");

    if dev.is_gpu() && reps > 0 {
        let keys_only =
            |k: &mut DeviceBuffer<u32>, _: &mut DeviceBuffer<u32>| offload::algorithms::sort_keys(&dev, k);
        let with_values = |k: &mut DeviceBuffer<u32>, v: &mut DeviceBuffer<u32>| {
            offload::algorithms::sort_pairs(&dev, k, v)
        };
        for (side, what, sort) in
            [("rust", "keys", &keys_only as &Sorter), ("rust-pairs", "key-value pairs", &with_values)]
        {
            let us = time_sorts(&dev, reps, (&keys, &index), (&mut buf, &mut values), sort)?;
            anyhow::ensure!(buf.to_vec()? == want, "sort: the timed sorts' order differs from the host's");
            report(side, what, n, reps, us);
        }
        // Eight-byte values (each the index in both halves): two words a value through the passes.
        let widen = |v: &[u32]| v.iter().map(|&i| u64::from(i) << 32 | u64::from(i)).collect::<Vec<u64>>();
        let wide = widen(&index);
        let mut wide_buf = DeviceBuffer::from_slice(&dev, &wide)?;
        let with_wide = |k: &mut DeviceBuffer<u32>, v: &mut DeviceBuffer<u64>| {
            offload::algorithms::sort_pairs(&dev, k, v)
        };
        let us = time_sorts(&dev, reps, (&keys, &wide), (&mut buf, &mut wide_buf), &with_wide)?;
        anyhow::ensure!(
            buf.to_vec()? == want && wide_buf.to_vec()? == widen(&want_values),
            "sort: the timed sorts of pairs with u64 values differ from a stable sort's"
        );
        report("rust-pairs64", "keys with u64 values", n, reps, us);
    }
    Ok(())
}

/// One timed side: a JSON line for the GPU check, and one for people.
fn report(side: &str, what: &str, n: usize, reps: usize, us: f64) {
    let keys_per_s = n as f64 / (us * 1e-6) / 1e9;
    println!(
        "{{\"bench\":\"sort\",\"side\":\"{side}\",\"keys\":{n},\"reps\":{reps},\"us\":{us:.1},\"gkeys_per_s\":{keys_per_s:.2}}}"
    );
    eprintln!("sort of {n} u32 {what}: {us:.1} µs ({keys_per_s:.2} G keys/s)");
}

/// A sort of keys (and values) on the device.
type Sorter<'a, V = u32> = dyn Fn(&mut DeviceBuffer<u32>, &mut DeviceBuffer<V>) -> offload::Result<()> + 'a;

/// µs per sort over `reps` timed sorts (after three untimed ones), each of the unsorted keys and
/// values copied in again first (untimed).
fn time_sorts<V: offload::KernelScalar>(
    dev: &Device,
    reps: usize,
    (keys, values): (&[u32], &[V]),
    (kbuf, vbuf): (&mut DeviceBuffer<u32>, &mut DeviceBuffer<V>),
    sort: &Sorter<'_, V>,
) -> anyhow::Result<f64> {
    let mut total = 0.0;
    for r in 0..reps + 3 {
        kbuf.copy_from(keys)?;
        vbuf.copy_from(values)?;
        dev.sync()?;
        let start = Instant::now();
        sort(kbuf, vbuf)?;
        dev.sync()?;
        if r >= 3 {
            total += start.elapsed().as_secs_f64();
        }
    }
    Ok(total * 1e6 / reps as f64)
}
