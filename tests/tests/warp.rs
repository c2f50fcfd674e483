//! Warp operations: lanes, shuffles, votes and reductions, with whole warps and the partial
//! last warp of a block (blocks of 100 threads), and with blocks of whole warps only (128
//! threads: on a GPU the kernels' entry points for whole warps, whose lanes are a constant). The expected values are computed here from
//! the warp size the kernel reports (32 on NVIDIA and the CPU backend by default, 64 on AMD
//! CDNA and with `OFFLOAD_CPU_WARP_SIZE=64`).

use offload::{Device, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// Each thread's lane and the warp size.
    #[kernel]
    pub fn lanes(w: Warp, mut lane: Region<u32>, mut size: Region<u32>) {
        if let (Some(l), Some(s)) = (lane.mine(), size.mine()) {
            (*l, *s) = (w.lane(), w.size());
        }
    }

    /// Every shuffle flavour on a 32-bit and a 64-bit value.
    #[kernel]
    pub fn shuffles(w: Warp, x: &[u32], mut out: Region<[u32; 4]>, mut wide: Region<f64>) {
        let i = global_linear_id();
        let v = x[i];
        let rotated = w.shuffle(v, (w.lane() + 5) % w.size());
        let (flip, down, up) = (w.shuffle_xor(v, 1), w.shuffle_down(v, 3), w.shuffle_up(v, 2));
        let far = w.shuffle_xor(f64::from(v) + 0.5, w.size() / 2);
        if let (Some(o), Some(f)) = (out.mine(), wide.mine()) {
            (*o, *f) = ([rotated, flip, down, up], far);
        }
    }

    /// Ballot, all and any of `x[i] % 3 == 0`, and the active mask.
    #[kernel]
    pub fn votes(
        w: Warp,
        x: &[u32],
        mut ballot: Region<u64>,
        mut flags: Region<[u32; 2]>,
        mut active: Region<u64>,
    ) {
        let i = global_linear_id();
        let p = x[i].is_multiple_of(3);
        let (b, all, any, a) = (w.ballot(p), w.all(p), w.any(p), w.active());
        if let (Some(bo), Some(f), Some(ao)) = (ballot.mine(), flags.mine(), active.mine()) {
            (*bo, *f, *ao) = (b, [u32::from(all), u32::from(any)], a);
        }
    }

    /// The lanes whose `x[i] % 5` equals this lane's.
    #[kernel]
    pub fn peers(w: Warp, x: &[u32], mut out: Region<u64>) {
        let m = w.peers(x[global_linear_id()] % 5);
        if let Some(o) = out.mine() {
            *o = m;
        }
    }

    /// The lanes whose `x[i]` agrees with this lane's in its low `bits` bits.
    #[kernel]
    pub fn peers_low_bits(w: Warp, bits: u32, x: &[u32], mut out: Region<u64>) {
        let m = w.peers_low_bits(x[global_linear_id()], bits);
        if let Some(o) = out.mine() {
            *o = m;
        }
    }

    /// Each lane's value from the first lane of its group of equal `x` (a warp-aggregated
    /// atomic's hand-back), and from the first lane of `mask` (any mask, lanes past the warp
    /// included).
    #[kernel]
    pub fn shuffle_first(w: Warp, mask: u64, x: &[u32], mut out: Region<[u64; 2]>) {
        let v = x[global_linear_id()];
        let group = w.shuffle_first(u64::from(v) << 20 | u64::from(w.lane()), w.peers(v % 5));
        let any = w.shuffle_first(w.lane() + 1000, mask);
        if let Some(o) = out.mine() {
            *o = [group, u64::from(any)];
        }
    }

    /// Sum, minimum and maximum over each warp, in three types.
    #[kernel]
    pub fn reductions(w: Warp, x: &[u32], mut out: Region<[f64; 3]>, mut ints: Region<[i64; 2]>) {
        let v = x[global_linear_id()];
        let s = w.sum(f64::from(v));
        let lo = w.min(v as f32);
        let hi = w.max(i32::try_from(v).unwrap_or(i32::MAX));
        let total = w.sum(i64::from(v) << 33);
        // (Through the type's path: the same operation, awaited the same on the CPU backend.)
        let lanes = Warp::sum(&w, 1u32);
        if let (Some(o), Some(n)) = (out.mine(), ints.mine()) {
            *o = [s, f64::from(lo), f64::from(hi)];
            *n = [total, i64::from(lanes)];
        }
    }
}

/// Threads per block in these tests: three whole 32-wide warps and a partial one (one whole
/// and a partial 64-wide wavefront); then four (two) whole ones.
const BLOCKS: [u32; 2] = [100, 128];

/// Threads of a launch of blocks of `block` threads: three blocks.
fn threads(block: u32) -> usize {
    3 * block as usize
}

fn device() -> Device {
    Device::default().expect("a device")
}

fn grid(block: u32) -> Grid {
    Grid::threads(threads(block)).block_size(block)
}

/// The warp size the kernels see, after checking every thread's lane.
fn warp_size(dev: &Device, block: u32) -> usize {
    let n = threads(block);
    let (mut lane, mut size) = (vec![0u32; n], vec![0u32; n]);
    gpu::lanes::launch(dev, grid(block), &mut lane, &mut size).unwrap();
    let ws = size[0] as usize;
    assert!(ws == 32 || ws == 64, "warp size {ws}");
    assert!(size.iter().all(|&s| s as usize == ws));
    for (i, &l) in lane.iter().enumerate() {
        assert_eq!(l as usize, i % block as usize % ws, "lane of thread {i}");
    }
    ws
}

/// The lanes of thread `i`'s warp in blocks of `block` threads: (first thread of the warp,
/// lanes in it).
fn warp_of(i: usize, ws: usize, block: u32) -> (usize, usize) {
    let block = block as usize;
    let (b, t) = (i / block, i % block);
    let first = b * block + t / ws * ws;
    (first, (block - t / ws * ws).min(ws))
}

fn inputs(n: usize) -> Vec<u32> {
    (0..n as u32).map(|i| i.wrapping_mul(2_654_435_761) % 1000).collect()
}

#[test]
fn lanes_follow_thread_order() {
    for block in BLOCKS {
        warp_size(&device(), block);
    }
}

#[test]
fn shuffles_read_lanes_and_fall_back_to_their_own_value() {
    let dev = device();
    for block in BLOCKS {
        let ws = warp_size(&dev, block);
        let n = threads(block);
        let x = inputs(n);
        let (mut out, mut wide) = (vec![[0u32; 4]; n], vec![0.0f64; n]);
        gpu::shuffles::launch(&dev, grid(block), &x, &mut out, &mut wide).unwrap();
        for i in 0..n {
            let (first, lanes) = warp_of(i, ws, block);
            let lane = i - first;
            let from = |src: Option<usize>| match src {
                Some(s) if s < lanes => x[first + s],
                _ => x[i],
            };
            let expected = [
                from(Some((lane + 5) % ws)),
                from(Some(lane ^ 1)),
                from(Some(lane + 3)),
                from(lane.checked_sub(2)),
            ];
            assert_eq!(out[i], expected, "thread {i} (lane {lane} of {lanes}), blocks of {block}");
            assert_eq!(
                wide[i],
                f64::from(from(Some(lane ^ (ws / 2)))) + 0.5,
                "thread {i}, blocks of {block}"
            );
        }
    }
}

#[test]
fn votes_cover_the_lanes_of_the_warp() {
    let dev = device();
    for block in BLOCKS {
        let ws = warp_size(&dev, block);
        let n = threads(block);
        let x = inputs(n);
        let (mut ballot, mut flags, mut active) = (vec![0u64; n], vec![[0u32; 2]; n], vec![0u64; n]);
        gpu::votes::launch(&dev, grid(block), &x, &mut ballot, &mut flags, &mut active).unwrap();
        for i in 0..n {
            let (first, lanes) = warp_of(i, ws, block);
            let mask = if lanes == 64 { u64::MAX } else { (1u64 << lanes) - 1 };
            let bits = (0..lanes).filter(|&l| x[first + l].is_multiple_of(3)).fold(0u64, |m, l| m | 1 << l);
            assert_eq!(active[i], mask, "thread {i}, blocks of {block}");
            assert_eq!(ballot[i], bits, "thread {i}, blocks of {block}");
            assert_eq!(
                flags[i],
                [u32::from(bits == mask), u32::from(bits != 0)],
                "thread {i}, blocks of {block}"
            );
        }
    }
}

#[test]
fn peers_are_the_lanes_of_the_warp_with_the_same_value() {
    let dev = device();
    for block in BLOCKS {
        let ws = warp_size(&dev, block);
        let n = threads(block);
        let x = inputs(n);
        let mut out = vec![0u64; n];
        gpu::peers::launch(&dev, grid(block), &x, &mut out).unwrap();
        for i in 0..n {
            let (first, lanes) = warp_of(i, ws, block);
            let bits = (0..lanes).filter(|&l| x[first + l] % 5 == x[i] % 5).fold(0u64, |m, l| m | 1 << l);
            assert_eq!(out[i], bits, "thread {i}, blocks of {block}");
            assert_ne!(bits & 1 << (i - first), 0, "thread {i} is its own peer, blocks of {block}");
        }
    }
}

#[test]
fn peers_low_bits_are_the_lanes_that_agree_in_those_bits() {
    let dev = device();
    for block in BLOCKS {
        let ws = warp_size(&dev, block);
        let n = threads(block);
        let x = inputs(n);
        let mut out = vec![0u64; n];
        for bits in [0u32, 1, 3, 9, 32, 40] {
            gpu::peers_low_bits::launch(&dev, grid(block), bits, &x, &mut out).unwrap();
            let low = |v: u32| if bits >= 32 { v } else { v & ((1 << bits) - 1) };
            for i in 0..n {
                let (first, lanes) = warp_of(i, ws, block);
                let expected =
                    (0..lanes).filter(|&l| low(x[first + l]) == low(x[i])).fold(0u64, |m, l| m | 1 << l);
                assert_eq!(out[i], expected, "thread {i}, {bits} bits, blocks of {block}");
            }
        }
    }
}

#[test]
fn shuffle_first_reads_the_first_named_lane_that_exists() {
    let dev = device();
    for block in BLOCKS {
        let ws = warp_size(&dev, block);
        let n = threads(block);
        let x = inputs(n);
        let mut out = vec![[0u64; 2]; n];
        // No lane; lane 0; a middle lane; the last lane of a 32-wide warp and of a 64-wide one
        // (past the end of a partial warp); lanes past every warp only; every lane.
        for mask in [0u64, 1, 0b1010_0000, 1 << 31, 1 << 63, u64::MAX << 40, u64::MAX] {
            gpu::shuffle_first::launch(&dev, grid(block), mask, &x, &mut out).unwrap();
            for i in 0..n {
                let (first, lanes) = warp_of(i, ws, block);
                let lane = i - first;
                let leader = (0..lanes).find(|&l| x[first + l] % 5 == x[i] % 5).unwrap();
                let group = u64::from(x[first + leader]) << 20 | leader as u64;
                let named = (0..lanes).find(|&l| mask >> l & 1 == 1).unwrap_or(lane);
                assert_eq!(
                    out[i],
                    [group, 1000 + named as u64],
                    "thread {i}, mask {mask:#x}, blocks of {block}"
                );
            }
        }
    }
}

#[test]
fn reductions_combine_exactly_the_lanes_of_the_warp() {
    let dev = device();
    for block in BLOCKS {
        let ws = warp_size(&dev, block);
        let n = threads(block);
        let x = inputs(n);
        let (mut out, mut ints) = (vec![[0.0f64; 3]; n], vec![[0i64; 2]; n]);
        gpu::reductions::launch(&dev, grid(block), &x, &mut out, &mut ints).unwrap();
        for i in 0..n {
            let (first, lanes) = warp_of(i, ws, block);
            let mine = &x[first..first + lanes];
            let sum: u32 = mine.iter().sum();
            let expected = [
                f64::from(sum),
                f64::from(*mine.iter().min().unwrap()),
                f64::from(*mine.iter().max().unwrap()),
            ];
            assert_eq!(out[i], expected, "thread {i}, blocks of {block}");
            assert_eq!(ints[i], [i64::from(sum) << 33, lanes as i64], "thread {i}, blocks of {block}");
        }
    }
}

/// Runs this file's other tests again on the CPU backend with 64-lane warps (as on AMD CDNA),
/// in a child process because the warp size is read once per process.
#[test]
fn the_same_tests_pass_with_64_lane_warps_on_the_cpu() {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env("OFFLOAD_CPU_WARP_SIZE", "64")
        .env("OFFLOAD_DEVICE", "cpu")
        .args(["--test-threads=1", "--skip", "the_same_tests_pass_with_64_lane_warps_on_the_cpu"])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("test result: ok. 7 passed"), "{text}");
}
