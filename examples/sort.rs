//! Sorting keys on the device with `offload::algorithms::sort_keys`: a least significant digit
//! radix sort, 8 bits a pass, each pass stable (per-tile digit counts, one exclusive scan of
//! them, a scatter that ranks each tile's keys with warp ballots). Checked against the host's
//! sort; on a GPU also timed, with one JSON line for `scripts/gpu check` beside CUB's
//! `DeviceRadixSort::SortKeys` in `examples/cuda/sort.cu`.
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
    println!("sort: {n} u32 keys on {dev}: verified against the host");

    if dev.is_gpu() && reps > 0 {
        // Each repetition sorts the unsorted keys again (copied in, untimed).
        let mut total = 0.0;
        for r in 0..reps + 3 {
            buf.copy_from(&keys)?;
            dev.sync()?;
            let start = Instant::now();
            offload::algorithms::sort_keys(&dev, &mut buf)?;
            dev.sync()?;
            if r >= 3 {
                total += start.elapsed().as_secs_f64();
            }
        }
        anyhow::ensure!(buf.to_vec()? == want, "sort: the timed sorts' order differs from the host's");
        let us = total * 1e6 / reps as f64;
        let keys_per_s = n as f64 / (us * 1e-6) / 1e9;
        println!(
            "{{\"bench\":\"sort\",\"side\":\"rust\",\"keys\":{n},\"reps\":{reps},\"us\":{us:.1},\"gkeys_per_s\":{keys_per_s:.2}}}"
        );
        eprintln!("sort of {n} u32 keys: {us:.1} µs ({keys_per_s:.2} G keys/s)");
    }
    Ok(())
}
