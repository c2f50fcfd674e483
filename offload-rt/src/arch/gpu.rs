//! Warp collectives for both GPU targets, over each vendor's lane read (`read32`) and vote.
//!
//! Every operation acts on all lanes of the calling thread's warp that exist (the last warp
//! of a block whose size is not a multiple of the warp size has fewer): the kernels macro only
//! accepts warp operations in warp-uniform control flow, so all of them make the call, and
//! `shfl.sync`/`vote.sync` over that mask wait for each other. Results are therefore the same
//! on NVIDIA (independent thread scheduling), AMD and the CPU backend.

use super::{
    Site, lane_id, lanes_below, match_lanes, read32, read32_down, read32_up, read32_xor, vote, vote_agree,
    warp_size,
};
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

/// What the warp operations pass for the lanes taking part: their mask on a GPU.
pub(crate) type Lanes = u64;

/// Every lane of a warp: the lanes of each warp of a launch whose blocks are whole warps. A
/// constant, so that NVIDIA's `shfl.sync`/`vote.sync`/`match.sync` take it as an immediate
/// (with a mask in a register, `ptxas` wraps each in a convergence check of some five
/// instructions).
#[inline(always)]
pub(crate) fn whole_warp() -> u64 {
    lanes_below(warp_size())
}

/// The highest lane of `lanes` (lanes `0..n`, never empty): the clamp of NVIDIA's shuffles.
#[inline(always)]
fn last_lane(lanes: u64) -> u32 {
    63 - lanes.leading_zeros()
}

/// Lane `src`'s `v` (among `mask`, which every lane of it calls with).
#[inline(always)]
pub(crate) fn read_lane<T: WarpValue>(v: T, src: u32, mask: u64) -> T {
    read_halves(v, |half| read32(half, src, mask))
}

/// The two halves of `v` through `read32`-like `read`, one 32-bit read each (one for narrow
/// values).
#[inline(always)]
fn read_halves<T: WarpValue>(v: T, read: impl Fn(u32) -> u32) -> T {
    let bits = v.to_bits64();
    let lo = u64::from(read(bits as u32));
    if T::WIDE {
        let hi = u64::from(read((bits >> 32) as u32));
        T::from_bits64(hi << 32 | lo)
    } else {
        T::from_bits64(lo)
    }
}

/// Lane `src`'s `v`, or the caller's own `v` when there is no lane `src` among `lanes`.
#[inline(always)]
pub(crate) fn shuffle<T: WarpValue>(v: T, src: u32, lanes: Lanes, _site: Site) -> T {
    let got = read_lane(v, src & (warp_size() - 1), lanes);
    if src < warp_size() && lanes >> src & 1 == 1 { got } else { v }
}

/// The lowest lane of `from`'s `v` (of those among `lanes`), or the caller's own when `from`
/// names none of them.
#[inline(always)]
pub(crate) fn shuffle_first<T: WarpValue>(v: T, from: u64, lanes: Lanes, _site: Site) -> T {
    let named = from & lanes;
    // (In 32 bits where the warp is: one `brev` and `flo` rather than two of each, and one
    // test for none.)
    let (first, none) = if warp_size() <= 32 {
        let named = named as u32;
        (named.trailing_zeros(), named == 0)
    } else {
        (named.trailing_zeros(), named == 0)
    };
    let got = read_lane(v, first & (warp_size() - 1), lanes);
    if none { v } else { got }
}

/// Lane `lane + delta`'s `v`, or the caller's own past the last lane of `lanes`.
#[inline(always)]
pub(crate) fn shuffle_down<T: WarpValue>(v: T, _lane: u32, delta: u32, lanes: Lanes, _site: Site) -> T {
    if delta >= warp_size() {
        return v;
    }
    let last = last_lane(lanes);
    read_halves(v, |half| read32_down(half, delta, last, lanes))
}

/// Lane `lane - delta`'s `v`, or the caller's own before lane 0.
#[inline(always)]
pub(crate) fn shuffle_up<T: WarpValue>(v: T, _lane: u32, delta: u32, lanes: Lanes, _site: Site) -> T {
    if delta >= warp_size() {
        return v;
    }
    read_halves(v, |half| read32_up(half, delta, lanes))
}

/// Lane `lane ^ mask`'s `v`, or the caller's own when that lane is not among `lanes`.
#[inline(always)]
pub(crate) fn shuffle_xor<T: WarpValue>(v: T, _lane: u32, mask: u32, lanes: Lanes, _site: Site) -> T {
    if mask >= warp_size() {
        return v;
    }
    let last = last_lane(lanes);
    read_halves(v, |half| read32_xor(half, mask, last, lanes))
}

/// The lanes of the warp whose `v` equals the caller's.
#[inline(always)]
pub(crate) fn peers(v: u32, lanes: Lanes, _site: Site) -> u64 {
    match_lanes(v, lanes)
}

/// The lanes of the warp whose `v` agrees with the caller's in its low `bits` bits: one
/// ballot per bit, each lane keeping the lanes whose bit is the same as its own.
#[inline(always)]
pub(crate) fn peers_low_bits(v: u32, bits: u32, lanes: Lanes, _site: Site) -> u64 {
    let mut peers = lanes;
    for bit in 0..bits.min(32) {
        peers &= vote_agree(v, bit, lanes);
    }
    peers
}

/// One bit per lane of the warp whose `pred` is true.
#[inline(always)]
pub(crate) fn ballot(pred: bool, lanes: Lanes, _site: Site) -> u64 {
    vote(pred, lanes)
}

/// `v` combined with `K` over the warp's lanes.
#[inline(always)]
pub(crate) fn reduce<K: ReduceOp, T: WarpValue + crate::AtomicElem>(v: T, lanes: Lanes, _site: Site) -> T {
    reduce_by(v, lanes, read_lane, K::combine)
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
