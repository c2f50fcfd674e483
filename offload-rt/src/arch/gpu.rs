//! Warp collectives for both GPU targets, over each vendor's lane read (`read32`) and vote.
//!
//! Every operation acts on all lanes of the calling thread's warp that exist (the last warp
//! of a block whose size is not a multiple of the warp size has fewer): the kernels macro only
//! accepts warp operations in warp-uniform control flow, so all of them make the call, and
//! `shfl.sync`/`vote.sync` over that mask wait for each other. Results are therefore the same
//! on NVIDIA (independent thread scheduling), AMD and the CPU backend.

use super::{Site, lane_id, lanes_below, match_lanes, read32, vote, warp_size};
use crate::reduce::ReduceOp;
use crate::warp::WarpValue;

/// The block's launch-sized dynamic shared memory.
#[inline(always)]
pub(crate) fn shared_base() -> *mut u8 {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u8>()
}

/// The lanes of the calling thread's warp that exist: all of them, except in a block's last,
/// partial warp.
#[inline(always)]
pub(crate) fn warp_lanes() -> u64 {
    use super::{block_dim, thread_idx};
    let (bx, by) = (block_dim::<0>(), block_dim::<1>());
    let threads = bx * by * block_dim::<2>();
    let tid = thread_idx::<0>() + bx * (thread_idx::<1>() + by * thread_idx::<2>());
    let size = warp_size();
    let first = tid & !(size - 1);
    lanes_below((threads - first).min(size))
}

/// Lane `src`'s `v` (among `mask`, which every lane of it calls with).
#[inline(always)]
pub(crate) fn read_lane<T: WarpValue>(v: T, src: u32, mask: u64) -> T {
    let bits = v.to_bits64();
    let lo = u64::from(read32(bits as u32, src, mask));
    if T::WIDE {
        let hi = u64::from(read32((bits >> 32) as u32, src, mask));
        T::from_bits64(hi << 32 | lo)
    } else {
        T::from_bits64(lo)
    }
}

/// Lane `src`'s `v`, or the caller's own `v` when there is no lane `src`.
#[inline(always)]
pub(crate) fn shuffle<T: WarpValue>(v: T, src: u32, _site: Site) -> T {
    let mask = warp_lanes();
    let got = read_lane(v, src & (warp_size() - 1), mask);
    if src < warp_size() && mask >> src & 1 == 1 { got } else { v }
}

/// The lanes of the warp whose `v` equals the caller's.
#[inline(always)]
pub(crate) fn peers(v: u32, _site: Site) -> u64 {
    match_lanes(v, warp_lanes())
}

/// One bit per lane of the warp whose `pred` is true.
#[inline(always)]
pub(crate) fn ballot(pred: bool, _site: Site) -> u64 {
    vote(pred, warp_lanes())
}

/// `v` combined with `K` over the warp's lanes.
#[inline(always)]
pub(crate) fn reduce<K: ReduceOp, T: WarpValue + crate::AtomicElem>(v: T, _site: Site) -> T {
    reduce_by(v, warp_lanes(), read_lane, K::combine)
}

/// `v` combined over the lanes of `mask` (which all make this call): a butterfly (`size / 2`,
/// …, 2, 1 apart) when every lane of the warp exists, else in lane order. `read(v, src, mask)`
/// reads another lane's value; `combine` must be associative and commutative.
#[inline(always)]
pub(crate) fn reduce_by<T: Copy>(
    v: T,
    mask: u64,
    read: impl Fn(T, u32, u64) -> T,
    combine: impl Fn(T, T) -> T,
) -> T {
    let size = warp_size();
    if mask == lanes_below(size) {
        let mut acc = v;
        let mut offset = size / 2;
        while offset > 0 {
            acc = combine(acc, read(acc, lane_id() ^ offset, mask));
            offset /= 2;
        }
        acc
    } else {
        let first = mask.trailing_zeros();
        let mut acc = read(v, first, mask);
        let mut rest = mask & !(1u64 << first);
        while rest != 0 {
            let l = rest.trailing_zeros();
            acc = combine(acc, read(v, l, mask));
            rest &= rest - 1;
        }
        acc
    }
}
