//! Stream compaction with warp operations: keep the values above a threshold, packed at the
//! front of the output. Each warp votes (`ballot`) on which lanes keep their value, one lane
//! reserves room for the whole warp with a single atomic add, `shuffle` hands the warp's
//! offset to every lane, and each keeping lane writes at the offset plus the number of
//! keeping lanes before it. The same code runs on 32-lane NVIDIA warps, 64-lane AMD
//! wavefronts and the CPU backend (`OFFLOAD_CPU_WARP_SIZE=64` to try the wide case).
//!
//! The order of the warps' blocks in the output depends on which warp reserves first, so the
//! result is checked as a set; within a warp, values keep their order.
//!
//! Usage: compact [ELEMENTS]   (default 1000003 on a GPU, 20011 on the CPU backend)

use offload::{Device, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Appends every `x[i] > threshold` to `out`, counting in `len[0]`.
    #[kernel]
    pub fn compact(w: Warp, threshold: u32, x: &[u32], out: Atomics<u32>, len: Atomics<u32>) {
        let i = global_linear_id();
        let keep = i < x.len() && x[i] > threshold;
        let votes = w.ballot(keep);
        let below = votes & ((1u64 << w.lane()) - 1);
        // The lowest active lane reserves room for the warp's kept values.
        let leader = w.active().trailing_zeros();
        let mut base = 0;
        if w.lane() == leader {
            base = len.add(0, votes.count_ones());
        }
        let base = w.shuffle(base, leader);
        if keep {
            out.exchange((base + below.count_ones()) as usize, x[i]);
        }
    }
}

fn main() -> anyhow::Result<()> {
    let dev = Device::default()?;
    // The CPU backend runs each block's threads as host threads so that lanes can meet:
    // keep its default small.
    let default = if dev.is_gpu() { 1_000_003 } else { 20_011 };
    let n: usize = std::env::args().nth(1).map_or(Ok(default), |s| s.parse())?;
    let x: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) >> 8).collect();
    let threshold = 3 << 22; // keeps about a quarter
    let mut out = vec![0u32; n];
    let mut len = [0u32];
    gpu::compact::launch(&dev, Grid::threads(n).block_size(256), threshold, &x, &mut out, &mut len)?;
    let kept = len[0] as usize;
    let mut got = out[..kept].to_vec();
    let mut want: Vec<u32> = x.iter().copied().filter(|&v| v > threshold).collect();
    got.sort_unstable();
    want.sort_unstable();
    anyhow::ensure!(
        got == want,
        "compact: the kept values differ from the host's ({kept} vs {})",
        want.len()
    );
    println!("compact: kept {kept} of {n} values with warp votes on {dev}: verified against the host");
    Ok(())
}
