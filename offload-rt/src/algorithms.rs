//! Device-wide primitives on whole arrays — prefix sums, sums, selection by flags, sums by key,
//! radix sorts of keys and of key–value pairs (for `u32`, `i32`, `u64`, `i64`, `f32`, `f64`)
//! and even-bin histograms (of `u32`, `i32`, `f32`, `f64`) —
//! on device buffers (in place, nothing copied) or host slices (copied in and back), on every
//! backend.
//!
//! ```
//! # fn main() -> offload::Result<()> {
//! let dev = offload::Device::default()?;
//! let x = [3u32, 1, 4, 1, 5];
//! let mut y = [0u32; 5];
//! offload::algorithms::exclusive_sum(&dev, &x, &mut y)?;
//! assert_eq!(y, [0, 3, 4, 8, 9]);
//! offload::algorithms::inclusive_sum(&dev, &x, &mut y)?;
//! assert_eq!(y, [3, 4, 8, 9, 14]);
//! assert_eq!(offload::algorithms::sum(&dev, &x)?, 14);
//! let flags = [1u32, 0, 1, 0, 1];
//! let mut kept = [0u32; 5];
//! assert_eq!(offload::algorithms::select_flagged(&dev, &x, &flags, &mut kept)?, 3);
//! assert_eq!(kept[..3], [3, 4, 5]);
//! assert_eq!(offload::algorithms::histogram_even(&dev, &x, 3, 0, 6)?, [2, 1, 2]);
//! # Ok(()) }
//! ```
//!
//! The scans make one pass over the data (the decoupled look-back scan of Merrill and
//! Garland, as in CUB): each block of 128 threads scans a tile of 3,200 elements (loaded and
//! stored striped across the block, so that accesses are coalesced, and transposed through
//! shared memory so that each thread sums 25 consecutive elements in order), publishes the
//! tile's sum, and looks back at its predecessors' published sums — one status word per tile
//! that holds a 4-byte sum beside its flag, or flags with release stores and acquire loads for
//! 8-byte sums, a warp's width of tiles at a time, sleeping between polls on large inputs —
//! until it meets a tile that holds the whole prefix before it. It is written in the kernel language itself (this module's kernels are an
//! ordinary kernels module), and `examples/scan.rs` is its `u32` form, timed against CUB's
//! `DeviceScan::ExclusiveSum`.
//!
//! Integer sums wrap around (as the GPUs' integer atomics do). Floating-point sums are added
//! in an order that depends on the tiling and, for the scans, on which predecessor's prefix a
//! tile found first: results may differ in the last bits between runs (as CUB's do).

mod sealed {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// Sample types of [`histogram_even`]: `u32`, `i32`, `f32`, `f64`.
pub trait Sample: sealed::Sealed + Copy {
    /// The bin of `self` among `bins` even bins over `[lower, upper)`: `None` outside (and for
    /// NaN).
    #[doc(hidden)]
    fn bin(self, lower: Self, upper: Self, bins: usize) -> Option<usize>;
}

macro_rules! int_sample {
    ($($t:ty => $wide:ty),*) => {$(
        impl Sample for $t {
            #[inline(always)]
            fn bin(self, lower: Self, upper: Self, bins: usize) -> Option<usize> {
                if self < lower || self >= upper {
                    return None;
                }
                // Exact in the wider type: (x − lower) · bins / (upper − lower).
                let (offset, width) = ((self as $wide - lower as $wide) as u128, (upper as $wide - lower as $wide) as u128);
                Some((offset * bins as u128 / width) as usize)
            }
        }
    )*};
}
int_sample!(u32 => i64, i32 => i64);

macro_rules! float_sample {
    ($($t:ty),*) => {$(
        impl Sample for $t {
            #[inline(always)]
            fn bin(self, lower: Self, upper: Self, bins: usize) -> Option<usize> {
                // (NaN fails both comparisons.)
                if !(self >= lower && self < upper) {
                    return None;
                }
                // In `f64`, multiplying before dividing: exact wherever the offset times `bins`
                // and the width are (a sample on an edge, `15.0` of 22 bins over [0, 22), is in
                // bin 15, where dividing first gives 14.999…). Where the width overflows
                // (bounds near the type's extremes), the halves' difference does not, and the
                // fraction is the same.
                let (x, lo, hi, n) = (self as f64, lower as f64, upper as f64, bins as f64);
                let mut at = (x - lo) * n / (hi - lo);
                if !at.is_finite() {
                    at = (x * 0.5 - lo * 0.5) / (hi * 0.5 - lo * 0.5) * n;
                }
                // Rounding can land a value just below `upper` on `bins`.
                Some((at as usize).min(bins - 1))
            }
        }
    )*};
}
float_sample!(f32, f64);

/// Key types of [`sort_keys`]: `u32`, `i32`, `f32` (four 8-bit passes) and `u64`, `i64`,
/// `f64` (eight), in their natural order (floats by IEEE total order: −NaN < −∞ < … < −0 < +0 <
/// … < +∞ < NaN).
pub trait RadixKey: sealed_keys::Sealed + Copy {
    /// Bits of the key, a multiple of 8.
    #[doc(hidden)]
    const BITS: u32;
    /// The 8-bit digit at `shift` of the key's order-preserving unsigned form.
    #[doc(hidden)]
    fn digit(self, shift: u32) -> usize;
}

mod sealed_keys {
    pub trait Sealed {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
    impl Sealed for f32 {}
    impl Sealed for u64 {}
    impl Sealed for i64 {}
    impl Sealed for f64 {}
}

macro_rules! radix_key {
    ($($t:ty => $bits:ty, $width:expr, |$v:ident| $ordered:expr);* $(;)?) => {$(
        impl RadixKey for $t {
            const BITS: u32 = $width;
            #[inline(always)]
            fn digit(self, shift: u32) -> usize {
                let $v = self;
                let ordered: $bits = $ordered;
                ((ordered >> shift) & 0xFF) as usize
            }
        }
    )*};
}
radix_key! {
    u32 => u32, 32, |v| v;
    i32 => u32, 32, |v| (v as u32) ^ (1 << 31);
    f32 => u32, 32, |v| { let b = v.to_bits(); if b >> 31 == 1 { !b } else { b | (1 << 31) } };
    u64 => u64, 64, |v| v;
    i64 => u64, 64, |v| (v as u64) ^ (1 << 63);
    f64 => u64, 64, |v| { let b = v.to_bits(); if b >> 63 == 1 { !b } else { b | (1 << 63) } };
}

/// Value types of [`sort_pairs`]: `u32`, `i32`, `f32` (one 32-bit word each) and `u64`, `i64`,
/// `f64` (two), carried through the radix passes as their words.
pub trait PairValue: sealed_keys::Sealed + Copy {
    /// 32-bit words of a value: 1 or 2.
    #[doc(hidden)]
    const WORDS: usize;
    /// Word `j` of the value's bits (the low word first).
    #[doc(hidden)]
    fn word(self, j: usize) -> u32;
    /// The value whose low word is `lo` and, for a two-word value, whose high word is `hi`.
    #[doc(hidden)]
    fn from_words(lo: u32, hi: u32) -> Self;
}

macro_rules! pair_value {
    ($($t:ty => $words:expr, |$v:ident, $j:ident| $word:expr, |$lo:ident, $hi:ident| $from:expr);* $(;)?) => {$(
        impl PairValue for $t {
            const WORDS: usize = $words;
            #[inline(always)]
            fn word(self, j: usize) -> u32 {
                let ($v, $j) = (self, j);
                $word
            }
            #[inline(always)]
            fn from_words(lo: u32, hi: u32) -> Self {
                let ($lo, $hi) = (lo, hi);
                $from
            }
        }
    )*};
}
pair_value! {
    u32 => 1, |v, _j| v, |lo, _hi| lo;
    i32 => 1, |v, _j| v as u32, |lo, _hi| lo as i32;
    f32 => 1, |v, _j| v.to_bits(), |lo, _hi| f32::from_bits(lo);
    u64 => 2, |v, j| (v >> (32 * j)) as u32, |lo, hi| u64::from(lo) | u64::from(hi) << 32;
    i64 => 2, |v, j| ((v as u64) >> (32 * j)) as u32, |lo, hi| (u64::from(lo) | u64::from(hi) << 32) as i64;
    f64 => 2, |v, j| (v.to_bits() >> (32 * j)) as u32, |lo, hi| f64::from_bits(u64::from(lo) | u64::from(hi) << 32);
}

/// The kernels (`u32` … `f64` instances), in a kernels module of the runtime: `cargo offload
/// build` compiles it for the device with the program's own modules, in the programs that
/// call these functions (`__on_use`).
#[cfg(not(offload_gpu))]
#[crate::kernels(__on_use)]
mod kernels {
    use offload::prelude::*;

    /// Threads per block (of the kernels other than the scan's).
    pub const BLOCK: u32 = 256;
    /// Threads per block of the scan: four warps, so that few of them wait at a barrier while
    /// the first one looks back.
    pub const SCAN_BLOCK: u32 = 128;
    /// Elements per thread of the scan: a tile is `SCAN_BLOCK × ITEMS` = 3,200 elements. Many,
    /// so that the loads a multiprocessor has in flight cover the memory's latency while tiles
    /// wait for their predecessors (measured on an H200: 21–23 elements per thread take more
    /// than twice as long as 25, 9 half as long again; 25 to 31 are alike); odd, so that the
    /// threads of a warp reading their `ITEMS` consecutive elements from shared memory hit
    /// distinct banks.
    pub const ITEMS: usize = 25;
    /// Elements per tile of the scan.
    pub const TILE: usize = SCAN_BLOCK as usize * ITEMS;
    /// A tile's status (high word): its own sum is published.
    const AGGREGATE: u64 = 1 << 32;
    /// A tile's status (high word): the sum of everything up to and including the tile is
    /// published.
    const PREFIX: u64 = 2 << 32;
    /// Grids of at least this many tiles back off in the look-back (below it, a tile's wait
    /// is short, and a sleep would only add to it).
    const BACKOFF_TILES: u32 = 500;
    /// The look-back's first sleep, after the tile published its own sum: about the time the
    /// predecessors' sums take to reach the L2 cache, which polling sooner only slows down.
    const FIRST_SLEEP_NS: u32 = 1500;
    /// The sleep between two polls of predecessors that have not published yet.
    const POLL_SLEEP_NS: u32 = 500;

    /// The prefix sums of `x` into `out` (exclusive, or inclusive with `inclusive`): the
    /// decoupled look-back scan of Merrill and Garland, one tile per block.
    ///
    /// The tile is read striped (element `k·SCAN_BLOCK + t` is thread `t`'s `k`-th: a warp
    /// reads consecutive elements) into shared memory, where each thread reads its own `ITEMS`
    /// consecutive elements back and sums them in order; one scan of the threads' totals
    /// (across the warp with shuffles, across the warps through `sums`) gives each thread its
    /// offset. Each thread writes its elements' sums to its own chunk of `chunks`, from which
    /// they go out striped again.
    ///
    /// A tile's status is one `u64` word per tile: the flag in the high word and, for a 4-byte
    /// `T`, the sum in the low one, so that one relaxed load sees both; an 8-byte `T`'s sums
    /// are in `aggregates` and `prefixes`, published by the flag's `store_release` and read
    /// after its `load_acquire`.
    #[kernel(u32, i32, u64, i64, f32, f64, launch_bounds(128, 5))]
    #[allow(clippy::too_many_arguments)]
    pub fn scan<T: AtomicElem>(
        inclusive: bool,
        x: &[T],
        out: Tiles<T, ITEMS>,
        status: Atomics<u64>,
        aggregates: Atomics<T>,
        prefixes: Atomics<T>,
        loaded: SharedArray<T, TILE>,
        chunks: SharedArray<[T; ITEMS], { SCAN_BLOCK as usize }>,
        sums: Shared<T>,
        w: Warp,
        block: Block,
    ) {
        // Every tile but the last is whole: its loads need no bounds checks, and nothing keeps
        // them from all being in flight at once. (Two copies of the body, the check decided
        // once per block.)
        let atomics = (&status, &aggregates, &prefixes);
        if x.len() / TILE > block_idx_x() as usize {
            scan_tile::<T, true>(inclusive, x, out, atomics, loaded, chunks, sums, w, block)
        } else {
            scan_tile::<T, false>(inclusive, x, out, atomics, loaded, chunks, sums, w, block)
        }
    }

    /// One tile of [`scan`]; `WHOLE`: the tile lies within `x`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    #[allow(clippy::needless_range_loop, reason = "loops over `0..ITEMS` keep their count visibly uniform")]
    fn scan_tile<T: AtomicElem, const WHOLE: bool>(
        inclusive: bool,
        x: &[T],
        mut out: Tiles<T, ITEMS>,
        (status, aggregates, prefixes): (&Atomics<u64>, &Atomics<T>, &Atomics<T>),
        loaded: SharedArray<T, TILE>,
        chunks: SharedArray<[T; ITEMS], { SCAN_BLOCK as usize }>,
        sums: Shared<T>,
        w: Warp,
        block: Block,
    ) {
        let tile = block_idx_x() as usize;
        let (size, t, lane) = (w.size() as usize, thread_idx_x() as usize, w.lane());
        // (The launch's blocks have `SCAN_BLOCK` threads: `t` is below it, which the remainder
        // tells the compiler, so that a whole tile's indices need no checks.)
        let stripe = t % SCAN_BLOCK as usize;
        // Striped loads, all in flight at once; past the end, zeros.
        let xs = x.get(tile * TILE..).unwrap_or(&[]);
        let mut v = [T::ZERO; ITEMS];
        match xs.first_chunk::<TILE>() {
            Some(whole) if WHOLE => {
                for k in 0..ITEMS {
                    v[k] = whole[k * SCAN_BLOCK as usize + stripe];
                }
            }
            _ => {
                for k in 0..ITEMS {
                    if let Some(&xk) = xs.get(k * SCAN_BLOCK as usize + t) {
                        v[k] = xk;
                    }
                }
            }
        }
        // (One bounds check for all of them: one per store would keep the loads apart.)
        loaded.set_striped(&block, v);
        let read = block.sync();
        // This thread's consecutive elements, summed.
        let mut total = T::ZERO;
        for &e in &loaded.as_slice(&read)[t * ITEMS..][..ITEMS] {
            total = total.plus(e);
        }
        // The threads' totals scanned across the warp, then across the block's warps.
        let mut inc = total;
        for step in 0..w.size().trailing_zeros() {
            let up = w.shuffle_up(inc, 1 << step);
            if lane >= 1 << step {
                inc = inc.plus(up);
            }
        }
        // The lane below's inclusive value is this lane's exclusive one (no subtraction, which
        // would round floats).
        let below = w.shuffle_up(inc, 1);
        let lanes_before = if lane > 0 { below } else { T::ZERO };
        let block = read.sync();
        sums.write(&block, inc);
        let read = block.sync();
        let slots = sums.as_slice(&read);
        let (mut warps_before, mut block_total) = (T::ZERO, T::ZERO);
        for first in (0..slots.len()).step_by(size) {
            let warp_total = slots[(first + size - 1).min(slots.len() - 1)];
            if first + size <= t {
                warps_before = warps_before.plus(warp_total);
            }
            block_total = block_total.plus(warp_total);
        }

        // Publish the tile's sum, then look back for the prefix before it: the first warp
        // looks while the others wait at the next barrier.
        let first_warp = w.shuffle(t as u32, 0) == 0;
        let backoff = grid_dim_x() >= BACKOFF_TILES;
        let mut before = T::ZERO;
        if tile == 0 {
            if t == 0 {
                publish(status, prefixes, 0, PREFIX, block_total);
            }
        } else if first_warp {
            if t == 0 {
                publish(status, aggregates, tile, AGGREGATE, block_total);
            }
            if backoff {
                nanosleep(FIRST_SLEEP_NS);
            }
            let mut end = tile;
            loop {
                // Lane `l` looks at tile `end - 1 - l`; before tile 0 there is nothing.
                let j = end.checked_sub(1 + lane as usize);
                let word = loop {
                    let word = match j {
                        Some(j) if T::WIDE => status.load_acquire(j, MemoryScope::Device),
                        Some(j) => status.load(j),
                        None => PREFIX,
                    };
                    if w.all(word >> 32 != 0) {
                        break word;
                    }
                    if backoff {
                        nanosleep(POLL_SLEEP_NS);
                    }
                };
                // The nearest tile with a prefix ends the look-back: add the sums up to it.
                let found = w.ballot(word & PREFIX != 0);
                let stop = found.trailing_zeros();
                let value = match j {
                    Some(_) if lane > stop => T::ZERO,
                    // (After the flag's acquire: the sum it names is written.)
                    Some(j) if T::WIDE => {
                        if word & PREFIX != 0 {
                            prefixes.load(j)
                        } else {
                            aggregates.load(j)
                        }
                    }
                    Some(_) => T::from_bits64(word & 0xFFFF_FFFF),
                    None => T::ZERO,
                };
                before = before.plus(w.sum(value));
                if found != 0 {
                    break;
                }
                end -= size;
            }
            if t == 0 {
                publish(status, prefixes, tile, PREFIX, before.plus(block_total));
            }
        }

        // Each thread's sums, read again from its elements (nothing wrote `loaded` since; not
        // kept in registers through the look-back), without the tiles before (thread 0 passes
        // those on).
        let mut sums_out = [T::ZERO; ITEMS];
        let mut run = warps_before.plus(lanes_before);
        let mine = &loaded.as_slice(&read)[t * ITEMS..][..ITEMS];
        for j in 0..ITEMS {
            if !inclusive {
                sums_out[j] = run;
            }
            run = run.plus(mine[j]);
            if inclusive {
                sums_out[j] = run;
            }
        }
        let block = read.sync();
        chunks.set_nth(&block, 0, sums_out);
        if t == 0 {
            sums.write(&block, before);
        }
        let read = block.sync();
        let before = sums.get(&read, 0);
        let all: &[T] = chunks.as_slice(&read).as_flattened();
        match all.first_chunk::<TILE>() {
            Some(all) if WHOLE => {
                for k in 0..ITEMS {
                    if let Some(o) = out.get_mut(k) {
                        *o = before.plus(all[k * SCAN_BLOCK as usize + stripe]);
                    }
                }
            }
            _ => {
                for k in 0..ITEMS {
                    if let Some(o) = out.get_mut(k) {
                        *o = before.plus(all[k * SCAN_BLOCK as usize + t]);
                    }
                }
            }
        }
    }

    /// Publishes tile `tile`'s `sum` under `flag`: in the status word's low half for a 4-byte
    /// `T` (one relaxed store), else in `sums[tile]` before the flag's `store_release`.
    #[inline(always)]
    fn publish<T: AtomicElem>(status: &Atomics<u64>, sums: &Atomics<T>, tile: usize, flag: u64, sum: T) {
        if T::WIDE {
            sums.store(tile, sum);
            status.store_release(tile, flag, MemoryScope::Device);
        } else {
            status.store(tile, flag | (sum.to_bits64() & 0xFFFF_FFFF));
        }
    }

    /// Bins a block counts into shared memory at most (more: global atomics).
    pub const SHARED_BINS: usize = 4096;

    /// `counts[bin(x[i])] += 1` through block-private counts in shared memory.
    #[kernel(u32, i32, f32, f64)]
    pub fn histogram_shared<T: offload::algorithms::Sample>(
        x: &[T],
        lower: T,
        upper: T,
        counts: Atomics<u32>,
        local: SharedAtomics<u32, SHARED_BINS>,
        block: Block,
    ) {
        let bins = counts.len();
        for i in grid_stride(x.len()) {
            if let Some(b) = x[i].bin(lower, upper, bins) {
                local.add(&block, b, 1);
            }
        }
        let read = block.sync();
        for (b, c) in local.mine(&read) {
            if c != 0 && b < bins {
                counts.add(b, c);
            }
        }
    }

    /// `counts[bin(x[i])] += 1` with one global atomic per sample (for many bins).
    #[kernel(u32, i32, f32, f64)]
    pub fn histogram_global<T: offload::algorithms::Sample>(
        x: &[T],
        lower: T,
        upper: T,
        counts: Atomics<u32>,
    ) {
        let bins = counts.len();
        for i in grid_stride(x.len()) {
            if let Some(b) = x[i].bin(lower, upper, bins) {
                counts.add(b, 1);
            }
        }
    }

    /// `out[positions[i]] = x[i]` where `flags[i] != 0`.
    #[kernel(u32, i32, u64, i64, f32, f64)]
    pub fn scatter_flagged<T: AtomicElem>(x: &[T], flags: &[u32], positions: &[u32], out: Atomics<T>) {
        for i in grid_stride(x.len()) {
            if flags[i] != 0 {
                out.store(positions[i] as usize, x[i]);
            }
        }
    }

    /// Every element zero: a scan's tile flags and a sort's look-back words back to "not yet
    /// published", a sort's counts before they are added to.
    #[kernel(u32, u64)]
    pub fn zero<T: AtomicElem>(mut out: Region<T>) {
        if let Some(o) = out.mine() {
            *o = T::ZERO;
        }
    }

    /// `ones[i] = 1` where `flags[i] != 0`, else 0.
    #[kernel]
    pub fn ones(flags: &[u32], mut ones: Region<u32>) {
        let i = ones.index();
        if let Some(o) = ones.mine() {
            *o = u32::from(flags[i] != 0);
        }
    }

    /// Threads per block of the sort's kernels: one per digit value.
    pub const SORT_BLOCK: u32 = 256;
    /// Keys per thread of a sort's tile for 4-byte keys: a tile is `SORT_BLOCK × SORT_ITEMS`
    /// keys. (`scatter_tile` writes its rounds out, twelve and twelve more: another number
    /// fails to compile until they follow.)
    pub const SORT_ITEMS: usize = 24;
    /// Keys per thread of a sort's tile for 8-byte keys: half as many, so that a tile's keys
    /// take the same shared memory (with its values and counts, within AMD's 64 KiB).
    pub const SORT_ITEMS_WIDE: usize = 12;
    /// Warps a sort block holds at most (32-lane warps; 64-lane ones use half).
    const SORT_WARPS: usize = 8;
    /// Keys of a sort's tile, for 4-byte and 8-byte keys.
    const SORT_TILE: usize = SORT_BLOCK as usize * SORT_ITEMS;
    const SORT_TILE_WIDE: usize = SORT_BLOCK as usize * SORT_ITEMS_WIDE;
    /// `words[i]` = word `i % W` of `values[i / W]`, for values of `W` 32-bit words: what a
    /// sort of pairs carries through its passes for 4-byte values (8-byte ones travel as
    /// 64-bit words, `to_bits64`).
    #[kernel(u32, i32, u64, i64, f32, f64)]
    pub fn to_words<T: offload::algorithms::PairValue>(values: &[T], mut words: Region<u32>) {
        let i = words.index();
        if let Some(o) = words.mine() {
            *o = values[i / T::WORDS].word(i % T::WORDS);
        }
    }

    /// `values[i]` = the value of words `W i .. W i + W` (the inverse of `to_words`).
    #[kernel(u32, i32, u64, i64, f32, f64)]
    pub fn from_words<T: offload::algorithms::PairValue + AtomicElem>(words: &[u32], mut values: Region<T>) {
        let i = values.index();
        if let Some(o) = values.mine() {
            let lo = words[i * T::WORDS];
            let hi = if T::WORDS == 2 { words[i * 2 + 1] } else { 0 };
            *o = T::from_words(lo, hi);
        }
    }

    /// `bits[i]` = the bits of `values[i]` (a 4-byte value's in the low half): what a sort of
    /// pairs carries of an 8-byte value, one 64-bit word a key.
    #[kernel(u32, i32, u64, i64, f32, f64)]
    pub fn to_bits64<T: offload::algorithms::PairValue>(values: &[T], mut bits: Region<u64>) {
        let i = bits.index();
        if let Some(o) = bits.mine() {
            let v = values[i];
            let hi = if T::WORDS == 2 { v.word(1) } else { 0 };
            *o = u64::from(v.word(0)) | u64::from(hi) << 32;
        }
    }

    /// `values[i]` = the value of `bits[i]` (the inverse of `to_bits64`).
    #[kernel(u32, i32, u64, i64, f32, f64)]
    pub fn from_bits64<T: offload::algorithms::PairValue + AtomicElem>(bits: &[u64], mut values: Region<T>) {
        let i = values.index();
        if let Some(o) = values.mine() {
            let b = bits[i];
            *o = T::from_words(b as u32, (b >> 32) as u32);
        }
    }

    /// `hist[p · 256 + d]` += how many keys have digit `d` in pass `p` (at `8 · p`), for
    /// every pass at once: a grid-stride share per thread into block-private counts.
    #[kernel(u32, i32, f32, u64, i64, f64)]
    pub fn radix_histograms<T: offload::algorithms::RadixKey>(
        keys: &[T],
        hist: Atomics<u32>,
        local: SharedAtomics<u32, { 256 * 8 }>,
        block: Block,
    ) {
        for i in grid_stride(keys.len()) {
            let key = keys[i];
            for p in 0..T::BITS as usize / 8 {
                local.add(&block, p * 256 + key.digit(8 * p as u32), 1);
            }
        }
        let read = block.sync();
        for (j, c) in local.mine(&read) {
            if c != 0 {
                hist.add(j, c);
            }
        }
    }

    /// `starts[p · 256 + d]` = the keys of pass `p` with a digit below `d`: where digit `d`'s
    /// keys start in that pass's output (thread `d` of block `p` adds up the counts before it).
    #[kernel]
    pub fn digit_starts(hist: &[u32], mut starts: Region<u32>) {
        let (p, d) = (block_idx_x() as usize, thread_idx_x() as usize);
        if let Some(s) = starts.mine() {
            let mut sum = 0u32;
            for c in &hist[p * 256..p * 256 + d] {
                sum += c;
            }
            *s = sum;
        }
    }

    /// A sort's look-back word: the tile's count of the digit is published (low word), in
    /// the pass in the bits from `PASS_SHIFT` up.
    const TILE_COUNT: u64 = 1 << 32;
    /// A sort's look-back word: the count of the digit in this tile and every tile before it.
    const TILES_PREFIX: u64 = 2 << 32;
    /// Where a look-back word keeps its pass (plus one, so that a cleared word is none).
    const PASS_SHIFT: u32 = 34;
    /// Tiles a sort's look-back reads at once (independent loads in flight).
    const LOOK_BACK: usize = 4;

    /// Tile `b`'s keys to `out`, stably by their digit at `shift` (one pass of a one-sweep
    /// radix sort): key `i` of digit `d` goes to where `d` starts in the pass
    /// (`starts_of_digits`, from `radix_histograms`), plus the keys of digit `d` in the tiles
    /// before (a decoupled look-back over `status`, one word per tile and digit), plus those
    /// before it in the tile. Tile `b` is block `b`: blocks start in index order, so a block
    /// only waits for tiles that have started.
    ///
    /// Each warp takes a segment of `warp size × SORT_ITEMS` consecutive keys, one key per
    /// lane and round. First every warp counts its keys of each digit in shared memory (the
    /// early counts, as CUB's one-sweep sort does), and thread `d` publishes the tile's count
    /// of digit `d` at once, for the tiles after it to count past, and turns the warps' counts
    /// of `d` into where each warp's keys of `d` start in the sorted tile. Then each warp ranks
    /// its keys round by round: lanes with the same digit find each other
    /// (`Warp::peers_low_bits`), the first of them adds their number to where the warp's next
    /// keys of that digit go, and hands the place before back to the others
    /// (`Warp::shuffle_first`), and each key goes straight to its place in the sorted tile in
    /// shared memory. So no key's rank is kept until the whole tile is ranked (a register a
    /// key, which spilled with the ranking's own). Thread `d` then looks back for
    /// digit `d`'s keys in earlier tiles (`LOOK_BACK` tiles per round of loads), and the block
    /// writes the tile out in order: consecutive threads write consecutive positions of a
    /// digit's run.
    ///
    /// With `carry` = 1, a 32-bit word travels with each key, from `carried` to the same
    /// place of `carried_out` as the key; with `carry` = 2, a 64-bit word from `carried64` to
    /// `carried64_out`: the values of a sort of pairs (`to_words`, `to_bits64`). A 32-bit word
    /// is placed beside its key in shared memory (`sorted_carry`); for a 64-bit word, where it
    /// came from is, and the word is read from there as the tile is written out (from this
    /// tile's part of `carried64`: a gather within a few tens of kilobytes, mostly cache hits;
    /// a shared array of a tile's 64-bit values would not fit AMD's 64 KiB).
    ///
    /// This kernel sorts 4-byte keys, `SORT_ITEMS` a thread; `radix_scatter_wide` 8-byte keys,
    /// `SORT_ITEMS_WIDE` a thread. (A larger tile shares out the tile's own work, its scan
    /// and its look-back, over more keys; 8-byte keys would need twice the shared memory.)
    #[kernel(u32, i32, f32, launch_bounds(256, 2))]
    #[allow(clippy::too_many_arguments)]
    pub fn radix_scatter<T: offload::algorithms::RadixKey + AtomicElem>(
        shift: u32,
        keys: &[T],
        starts_of_digits: &[u32],
        status: Atomics<u64>,
        out: Atomics<T>,
        carry: u32,
        carried: &[u32],
        carried_out: Atomics<u32>,
        carried64: &[u64],
        carried64_out: Atomics<u64>,
        w: Warp,
        counts: SharedAtomics<u32, { SORT_WARPS * 256 }>,
        sorted: SharedAtomics<T, SORT_TILE>,
        sorted_carry: SharedAtomics<u32, SORT_TILE>,
        bases: SharedArray<u32, 256>,
        warp_totals: Shared<u32>,
        block: Block,
    ) {
        let global = (
            shift,
            keys,
            starts_of_digits,
            &status,
            &out,
            carry,
            (carried, &carried_out),
            (carried64, &carried64_out),
        );
        scatter_tile::<T, SORT_ITEMS, SORT_TILE>(
            global,
            &w,
            &counts,
            &sorted,
            &sorted_carry,
            &bases,
            &warp_totals,
            block,
        );
    }

    /// `radix_scatter` for 8-byte keys: tiles of `SORT_ITEMS_WIDE` keys a thread.
    #[kernel(u64, i64, f64, launch_bounds(256, 3))]
    #[allow(clippy::too_many_arguments)]
    pub fn radix_scatter_wide<T: offload::algorithms::RadixKey + AtomicElem>(
        shift: u32,
        keys: &[T],
        starts_of_digits: &[u32],
        status: Atomics<u64>,
        out: Atomics<T>,
        carry: u32,
        carried: &[u32],
        carried_out: Atomics<u32>,
        carried64: &[u64],
        carried64_out: Atomics<u64>,
        w: Warp,
        counts: SharedAtomics<u32, { SORT_WARPS * 256 }>,
        sorted: SharedAtomics<T, SORT_TILE_WIDE>,
        sorted_carry: SharedAtomics<u32, SORT_TILE_WIDE>,
        bases: SharedArray<u32, 256>,
        warp_totals: Shared<u32>,
        block: Block,
    ) {
        let global = (
            shift,
            keys,
            starts_of_digits,
            &status,
            &out,
            carry,
            (carried, &carried_out),
            (carried64, &carried64_out),
        );
        scatter_tile::<T, SORT_ITEMS_WIDE, SORT_TILE_WIDE>(
            global,
            &w,
            &counts,
            &sorted,
            &sorted_carry,
            &bases,
            &warp_totals,
            block,
        );
    }

    /// What `scatter_tile` reads and writes in global memory: the pass's shift, the keys,
    /// where each digit starts, the look-back words, the keys' output, what is carried (0:
    /// nothing, 1: a 32-bit word a key, 2: a 64-bit one), and the input and output of the
    /// 32-bit and of the 64-bit words (as `radix_scatter`'s parameters).
    type Global<'a, T> = (
        u32,
        &'a [T],
        &'a [u32],
        &'a Atomics<'a, u64>,
        &'a Atomics<'a, T>,
        u32,
        (&'a [u32], &'a Atomics<'a, u32>),
        (&'a [u64], &'a Atomics<'a, u64>),
    );

    /// The body of `radix_scatter` and `radix_scatter_wide`: tiles of `ITEMS` keys a thread,
    /// `TILE` in all.
    #[inline(always)]
    #[allow(clippy::too_many_arguments, clippy::needless_range_loop)]
    fn scatter_tile<T: offload::algorithms::RadixKey + AtomicElem, const ITEMS: usize, const TILE: usize>(
        (
            shift,
            keys,
            starts_of_digits,
            status,
            out,
            carry,
            (carried, carried_out),
            (carried64, carried64_out),
        ): Global<'_, T>,
        w: &Warp,
        counts: &SharedAtomics<u32, { SORT_WARPS * 256 }>,
        sorted: &SharedAtomics<T, TILE>,
        sorted_carry: &SharedAtomics<u32, TILE>,
        bases: &SharedArray<u32, 256>,
        warp_totals: &Shared<u32>,
        block: Block,
    ) {
        const { assert!(TILE == SORT_BLOCK as usize * ITEMS && (ITEMS == 12 || ITEMS == 24)) };
        let (b, t) = (block_idx_x() as usize, thread_idx_x() as usize);
        let n = keys.len();
        let size = w.size() as usize;
        let (warp, lane) = (t / size, w.lane() as usize);
        let segment = b * TILE + warp * size * ITEMS;
        // The warp's keys first, all loads in flight at once (a round's load issued after the
        // round before it had ranked would wait out the memory's latency each round), then
        // the rounds, written out: a loop of them would keep its arrays in local memory.
        let at = |r: usize| segment + r * size + lane;
        // Whether round `r`'s key is one of the keys, in 32 bits (one register for all rounds,
        // where 64-bit indices would keep two per round alive).
        let in_segment = n.saturating_sub(segment).min(ITEMS * size) as u32;
        let valid = |r: usize| ((r * size + lane) as u32) < in_segment;
        let k: [T; ITEMS] = load_segment(keys, segment, size, lane);
        // A lane past the end of the keys counts and ranks as a key of digit 255: the keys
        // past the end are the last of the tile (of the last warp's segment that has keys,
        // and every segment after it), so they come after every key and move no key's place.
        // (Digit 255's counts in the last tile include them. That moves nothing either: digit
        // 255 is the last of the tile's scan, and no tile looks back at the last one's word.)
        let digit = |r: usize| if valid(r) { k[r].digit(shift) } else { 255 };
        for r in 0..ITEMS {
            counts.add(&block, warp * 256 + digit(r), 1);
        }
        // Thread `t` takes digit `t`: the warps' counts of it, in warp order, and its total.
        let read = block.sync();
        let mut total = 0u32;
        for k in 0..SORT_WARPS {
            total += counts.as_slice(&read)[k * 256 + t];
        }
        // Publish this tile's count of digit `t` at once, so that the tiles after it can count
        // past it while this one ranks and looks back itself.
        let pass = u64::from(shift / 8 + 1) << PASS_SHIFT;
        status.store(b * 256 + t, pass | if b == 0 { TILES_PREFIX } else { TILE_COUNT } | u64::from(total));
        // Where digit `t` starts in the sorted tile: an exclusive scan of the totals, across
        // the warp with shuffles and across the warps through one slot per thread.
        let mut inclusive = total;
        for step in 0..w.size().trailing_zeros() {
            let up = w.shuffle_up(inclusive, 1 << step);
            if lane >= 1 << step {
                inclusive += up;
            }
        }
        let block = read.sync();
        warp_totals.write(&block, inclusive);
        let read = block.sync();
        let mut start = inclusive - total;
        {
            // The last slot of each warp before this one (below `t`, so always there).
            let slots = warp_totals.as_slice(&read);
            for k in 0..SORT_WARPS {
                if k < warp {
                    start += slots.get((k + 1) * size - 1).copied().unwrap_or(0);
                }
            }
        }
        // Warp `k`'s count of digit `t` becomes where its keys of `t` start (element
        // `t + 256 k`, the block is 256): what adding it to the count makes of it.
        let mut to_start = [0u32; SORT_WARPS];
        {
            let c = counts.as_slice(&read);
            let mut at_k = start;
            for k in 0..SORT_WARPS {
                let count = c[k * 256 + t];
                to_start[k] = at_k.wrapping_sub(count);
                at_k += count;
            }
        }
        let block = read.sync();
        for k in 0..SORT_WARPS {
            counts.add(&block, k * 256 + t, to_start[k]);
        }
        let block = block.sync().sync();
        // The rounds: each key to its place in the sorted tile, and beside it, in a sort of
        // pairs, its one-word value (loaded now, in flight while the first rounds rank) or
        // where its 64-bit value is.
        let words = carry as usize;
        let beside: [u32; ITEMS] = match words {
            1 => load_segment(carried, segment, size, lane),
            2 => core::array::from_fn(|r| at(r) as u32),
            _ => [0; ITEMS],
        };
        // Round `r`'s key: its digit, the key, what goes beside it.
        let key = |r: usize| (digit(r), k[r], beside[r]);
        let places = (w, counts, sorted, sorted_carry, &block, warp, words != 0);
        // (Written out, in order: a loop would index `k` at run time, in local memory. The
        // arrays' types fail to compile if the rounds do not follow the number of keys.)
        let _rounds: [(); 12] = [
            rank_and_place(key(0), places),
            rank_and_place(key(1), places),
            rank_and_place(key(2), places),
            rank_and_place(key(3), places),
            rank_and_place(key(4), places),
            rank_and_place(key(5), places),
            rank_and_place(key(6), places),
            rank_and_place(key(7), places),
            rank_and_place(key(8), places),
            rank_and_place(key(9), places),
            rank_and_place(key(10), places),
            rank_and_place(key(11), places),
        ];
        if ITEMS > 12 {
            let _more: [(); 12] = [
                rank_and_place(key(12), places),
                rank_and_place(key(13), places),
                rank_and_place(key(14), places),
                rank_and_place(key(15), places),
                rank_and_place(key(16), places),
                rank_and_place(key(17), places),
                rank_and_place(key(18), places),
                rank_and_place(key(19), places),
                rank_and_place(key(20), places),
                rank_and_place(key(21), places),
                rank_and_place(key(22), places),
                rank_and_place(key(23), places),
            ];
        }
        // The keys of digit `t` in the tiles before this one: look back until a tile whose
        // word holds its prefix (tile 0's always does), reading `LOOK_BACK` tiles at once.
        let mut before = 0u32;
        if b > 0 {
            // Where tile `j`'s word of digit `t` is, in 32 bits (a sort has fewer than 2^32
            // keys, so fewer than 2^32 / 3,072 tiles of 256 words); a round's loads clamped to
            // tile 0's rather than skipped, so that none needs a branch of its own.
            let word_of = |j: u32| (j * 256 + t as u32) as usize;
            let mut end = b as u32;
            'back: loop {
                let at: [usize; LOOK_BACK] =
                    core::array::from_fn(|k| word_of(end.saturating_sub(1 + k as u32)));
                let words: [u64; LOOK_BACK] = core::array::from_fn(|k| status.load(at[k]));
                for k in 0..LOOK_BACK {
                    if k as u32 >= end {
                        break 'back;
                    }
                    let mut word = words[k];
                    while word >> PASS_SHIFT != pass >> PASS_SHIFT {
                        word = status.load(at[k]);
                    }
                    before += word as u32;
                    if word & TILES_PREFIX != 0 {
                        break 'back;
                    }
                }
                end -= LOOK_BACK as u32;
            }
            status.store(b * 256 + t, pass | TILES_PREFIX | u64::from(before + total));
        }
        // Digit `t`'s key at place `j` of the sorted tile goes to `bases[t] + j`.
        let first = starts_of_digits[(shift / 8) as usize * 256 + t] + before;
        bases.set_nth(&block, 0, first.wrapping_sub(start));
        let read = block.sync();
        let in_tile = (n - b * TILE).min(TILE);
        let (keys_sorted, carried_sorted, base) =
            (sorted.as_slice(&read), sorted_carry.as_slice(&read), bases.as_slice(&read));
        // Place `j` of the sorted tile: its key, and where it goes.
        let place = |j: usize| {
            let k = keys_sorted[j];
            (k, base[k.digit(shift)].wrapping_add(j as u32) as usize)
        };
        // (The keys alone in a loop of their own: a test per key of the kind of carry made
        // them slower.)
        if words == 0 {
            for_each_place::<ITEMS, TILE>(t, in_tile, |j| {
                let (k, at) = place(j);
                out.store(at, k);
            });
        } else {
            for_each_place::<ITEMS, TILE>(t, in_tile, |j| {
                let (k, at) = place(j);
                out.store(at, k);
                if words == 1 {
                    carried_out.store(at, carried_sorted[j]);
                } else {
                    // From where it was in this tile's part of `carried64` (the tile's other
                    // values are read a moment before or after: mostly cache hits).
                    carried64_out.store(at, carried64[carried_sorted[j] as usize]);
                }
            });
        }
    }

    /// `write(j)` for thread `t`'s places `j` of a sorted tile of `in_tile` keys, one per
    /// `SORT_BLOCK` places. A whole tile (every tile but the last) has a key at every place:
    /// its loop tests none (a test per key, and a branch around each write, where the keys'
    /// own work is a dozen instructions).
    #[inline(always)]
    fn for_each_place<const ITEMS: usize, const TILE: usize>(
        t: usize,
        in_tile: usize,
        mut write: impl FnMut(usize),
    ) {
        if in_tile == TILE {
            for r in 0..ITEMS {
                write(r * SORT_BLOCK as usize + t);
            }
        } else {
            for r in 0..ITEMS {
                let j = r * SORT_BLOCK as usize + t;
                if j < in_tile {
                    write(j);
                }
            }
        }
    }

    /// A warp's `ITEMS` rows of `x` from `segment`, this lane's element of each (zero past
    /// the end: what a lane past the end places past the tile's last key). A whole segment
    /// (every tile but the last) is one slice: one bounds check for all its loads, where an
    /// index clamped to the last element would still need one (and a branch to a trap) per
    /// load.
    #[inline(always)]
    fn load_segment<T: AtomicElem, const ITEMS: usize>(
        x: &[T],
        segment: usize,
        size: usize,
        lane: usize,
    ) -> [T; ITEMS] {
        match x.get(segment..segment + ITEMS * size) {
            Some(whole) => {
                let mut rows = whole.chunks_exact(size);
                core::array::from_fn(|_| {
                    rows.next().and_then(|row| row.get(lane)).copied().unwrap_or(T::ZERO)
                })
            }
            None => core::array::from_fn(|r| x.get(segment + r * size + lane).copied().unwrap_or(T::ZERO)),
        }
    }

    /// What one round of `radix_scatter` places its keys with: the warp, the warps' places of
    /// each digit, the sorted tile's keys and where each came from, the block, this warp, and
    /// whether keys carry values.
    type Places<'a, T, const TILE: usize> = (
        &'a Warp,
        &'a SharedAtomics<u32, { SORT_WARPS * 256 }>,
        &'a SharedAtomics<T, TILE>,
        &'a SharedAtomics<u32, TILE>,
        &'a Block,
        usize,
        bool,
    );

    /// One round of `radix_scatter`'s ranking in warp `warp`: this lane's key, of digit `d`,
    /// to its place in the sorted tile, beside it (with carried values) `from`, where it came
    /// from. `counts[warp · 256 + d]` holds where the warp's next keys of digit `d` go; the
    /// first lane of each digit's group moves it past the group and hands the place before to
    /// the others, which count the group's lanes before them. A lane past the end of the keys
    /// (digit 255) is placed too, past the tile's last key: a place the write-out never reads.
    #[inline(always)]
    fn rank_and_place<T: AtomicElem, const TILE: usize>(
        (d, key, from): (usize, T, u32),
        (w, counts, sorted, sorted_carry, block, warp, carries): Places<'_, T, TILE>,
    ) {
        let lane = w.lane() as usize;
        // The lanes of the digit by one ballot per bit, as CUB ranks: `match.any.sync`
        // (`Warp::peers`) has a low throughput, and the rounds of ranking wait on it one
        // after another.
        let peers = w.peers_low_bits(d as u32, 8);
        let below = peers & ((1u64 << lane) - 1);
        let mut before = 0;
        if below == 0 {
            before = counts.add(block, warp * 256 + d, peers.count_ones());
        }
        // (Below the tile's size by construction; kept there by `min` rather than checked:
        // with a branch to a trap in every round, `ptxas` kept a second, divergent copy of
        // the rounds and a convergence check before each ballot and shuffle.)
        let to = ((w.shuffle_first(before, peers) + below.count_ones()) as usize).min(TILE - 1);
        sorted.store(block, to, key);
        if carries {
            sorted_carry.store(block, to, from);
        }
    }

    /// `heads[i] = 1` where a run of equal keys starts (`i = 0`, or `keys[i] != keys[i − 1]`).
    #[kernel(u32, i32, u64, i64, f32, f64)]
    pub fn run_heads<T: AtomicElem + PartialEq>(keys: &[T], mut heads: Region<u32>) {
        let i = heads.index();
        if let Some(h) = heads.mine() {
            *h = u32::from(i == 0 || keys[i] != keys[i - 1]);
        }
    }

    /// `sums[runs[i] − 1] += values[i]`: each thread adds up a contiguous chunk, one atomic
    /// per run it meets (`runs` holds each element's 1-based run, an inclusive scan of heads).
    #[kernel(u32, i32, u64, i64, f32, f64)]
    pub fn add_by_run<T: AtomicElem>(values: &[T], runs: &[u32], sums: Atomics<T>) {
        let n = values.len().min(runs.len());
        let threads = global_threads();
        let chunk = n.div_ceil(threads);
        let start = (global_linear_id() * chunk).min(n);
        let end = (start + chunk).min(n);
        if start < end {
            let mut run = runs[start];
            let mut acc = values[start];
            for i in start + 1..end {
                if runs[i] != run {
                    sums.add(run as usize - 1, acc);
                    (run, acc) = (runs[i], values[i]);
                } else {
                    acc = acc.plus(values[i]);
                }
            }
            sums.add(run as usize - 1, acc);
        }
    }

    /// `dst[i] = src[i]` for `i < count`; the rest of `dst` stays.
    #[kernel(u32, i32, u64, i64, f32, f64)]
    pub fn copy_front<T: AtomicElem>(count: usize, src: &[T], mut dst: Region<T>) {
        let i = dst.index();
        if i < count
            && let Some(d) = dst.mine()
        {
            *d = src[i];
        }
    }

    /// The sum of `x`: a grid-stride share per thread, then the reduction's block combine.
    #[kernel(u32, i32, u64, i64, f32, f64)]
    pub fn sum<T: AtomicElem>(x: &[T], mut total: Sum<T>) {
        for i in grid_stride(x.len()) {
            total.add(x[i]);
        }
    }
}

#[cfg(not(offload_gpu))]
pub use host::{
    Element, HistogramSample, SortKey, exclusive_sum, histogram_even, inclusive_sum, reduce_by_key,
    select_flagged, sort_keys, sort_pairs, sum,
};

#[cfg(not(offload_gpu))]
mod host {
    use super::kernels;
    use crate::host::args::{InData, OutData};
    use crate::host::memory::scratch::Scratch;
    use crate::{AtomicElem, Device, DeviceBuffer, Grid, In, InOut, KernelScalar, Result};

    mod sealed {
        pub trait Sealed {}
    }

    /// The element types of the primitives: `u32`, `i32`, `u64`, `i64`, `f32`, `f64`.
    #[allow(private_bounds, reason = "sealed: the kernels' instances are the runtime's business")]
    pub trait Element:
        sealed::Sealed
        + AtomicElem
        + KernelScalar
        + kernels::scan::RuntimeInstance
        + kernels::sum::RuntimeInstance
        + kernels::scatter_flagged::RuntimeInstance
        + kernels::run_heads::RuntimeInstance
        + kernels::add_by_run::RuntimeInstance
        + kernels::copy_front::RuntimeInstance
        + kernels::to_words::RuntimeInstance
        + kernels::from_words::RuntimeInstance
        + kernels::to_bits64::RuntimeInstance
        + kernels::from_bits64::RuntimeInstance
        + super::PairValue
    {
    }

    macro_rules! element {
        ($($t:ty),*) => {$(
            impl sealed::Sealed for $t {}
            impl Element for $t {}
        )*};
    }
    element!(u32, i32, u64, i64, f32, f64);

    /// The sample types of [`histogram_even`]: `u32`, `i32`, `f32`, `f64`.
    #[allow(private_bounds, reason = "sealed: the kernels' instances are the runtime's business")]
    pub trait HistogramSample:
        super::Sample
        + KernelScalar
        + kernels::histogram_shared::RuntimeInstance
        + kernels::histogram_global::RuntimeInstance
    {
    }
    impl HistogramSample for u32 {}
    impl HistogramSample for i32 {}
    impl HistogramSample for f32 {}
    impl HistogramSample for f64 {}

    /// Counts of `samples` in `bins` bins of equal width over `[lower, upper)`: sample `x`
    /// falls in bin `⌊(x − lower) · bins / (upper − lower)⌋`; samples outside the range (and
    /// NaN) are not counted. Float samples compute it in `f64`, exactly where the operands
    /// and the product are exact in `f64` (integer-valued samples and bounds, say); otherwise
    /// a sample within a rounding error of a bin's edge may be counted in the bin beside it. Up to 4,096 bins each block counts in shared memory and adds
    /// its counts once per bin; with more, every sample is one global atomic.
    ///
    /// # Errors
    ///
    /// `bins == 0` or `lower ≥ upper` (or NaN bounds), and whatever a launch can return.
    pub fn histogram_even<'a, T: HistogramSample + PartialOrd>(
        dev: &Device,
        samples: impl In<'a, T>,
        bins: usize,
        lower: T,
        upper: T,
    ) -> Result<Vec<u32>> {
        if bins == 0 || lower.partial_cmp(&upper) != Some(core::cmp::Ordering::Less) {
            return Err(crate::Error::InvalidLaunch {
                kernel: "offload::algorithms::histogram_even".into(),
                reason: "a histogram needs at least one bin and lower < upper".into(),
            });
        }
        let mut counts = DeviceBuffer::<u32>::zeroed(dev, bins)?;
        if bins <= kernels::SHARED_BINS {
            let grid = kernels::histogram_shared::resident::<T>(dev, kernels::BLOCK)?;
            kernels::histogram_shared::launch(dev, grid, samples.in_data(), lower, upper, &mut counts)?;
        } else {
            let grid = kernels::histogram_global::resident::<T>(dev, kernels::BLOCK)?;
            kernels::histogram_global::launch(dev, grid, samples.in_data(), lower, upper, &mut counts)?;
        }
        counts.to_vec()
    }

    /// Copies the elements of `input` whose `flags` are nonzero, in order, to the front of
    /// `output`, and returns how many there are; the rest of `output` is left as it was
    /// (CUB's `DeviceSelect::Flagged`). Positions come from an exclusive scan of the flags.
    ///
    /// # Errors
    ///
    /// Lengths that differ (`input`, `flags` and `output` all have one), and whatever a launch
    /// or an allocation can return.
    pub fn select_flagged<'a, T: Element>(
        dev: &Device,
        input: impl In<'a, T>,
        flags: impl In<'a, u32>,
        output: impl InOut<'a, T>,
    ) -> Result<usize> {
        let (input, flags, output) = (input.in_data(), flags.in_data(), output.out_data());
        let n = input.len();
        if flags.len() != n || output.len() != n {
            return Err(crate::Error::InvalidLaunch {
                kernel: "offload::algorithms::select_flagged".into(),
                reason: format!(
                    "the input has {n} elements, the flags {} and the output {}: they need the same length",
                    flags.len(),
                    output.len()
                ),
            });
        }
        if n == 0 {
            return Ok(0);
        }
        // Host flags go to the device once: both kernels below read them.
        let staged;
        let flags = match flags {
            InData::Host(h) => {
                staged = DeviceBuffer::from_slice(dev, h)?;
                InData::Buffer(&staged)
            }
            other => other,
        };
        let mut ones = Scratch::<u32>::new(dev, n, "a selection's 0/1 flags")?;
        kernels::ones::launch(dev, n, flags, &mut *ones)?;
        let mut positions = Scratch::<u32>::new(dev, n, "a selection's positions")?;
        exclusive_sum(dev, &*ones, &mut *positions)?;
        let grid = kernels::scatter_flagged::resident::<T>(dev, kernels::BLOCK)?;
        kernels::scatter_flagged::launch(dev, grid, input, flags, &*positions, output)?;
        // The count: the sum of the 0/1 flags (one value read back).
        let total = sum(dev, &*ones)?;
        Ok(total as usize)
    }

    /// The key types of [`sort_keys`]: `u32`, `i32`, `f32`, `u64`, `i64`, `f64`.
    #[allow(private_bounds, reason = "sealed: the kernels' instances are the runtime's business")]
    pub trait SortKey:
        super::RadixKey + Element + kernels::radix_histograms::RuntimeInstance + Scatter
    {
    }
    impl SortKey for u32 {}
    impl SortKey for i32 {}
    impl SortKey for f32 {}
    impl SortKey for u64 {}
    impl SortKey for i64 {}
    impl SortKey for f64 {}

    /// A sort pass's kernel for a key type: `radix_scatter` for 4-byte keys,
    /// `radix_scatter_wide` for 8-byte ones (tiles of half as many keys).
    trait Scatter: KernelScalar {
        /// Keys of a tile (a block's).
        const TILE: usize;
        /// One pass: `from`'s keys (and what `carry` carries) to `to` by their digit at
        /// `shift`.
        #[allow(clippy::too_many_arguments)]
        fn scatter(
            dev: &Device,
            grid: Grid,
            shift: u32,
            from: &DeviceBuffer<Self>,
            starts: &DeviceBuffer<u32>,
            status: &mut DeviceBuffer<u64>,
            to: &mut DeviceBuffer<Self>,
            carry: PassCarry<'_>,
        ) -> Result<()>;
    }

    macro_rules! scatter {
        ($kernel:ident, $items:ident: $($t:ty),*) => {$(
            impl Scatter for $t {
                const TILE: usize = kernels::SORT_BLOCK as usize * kernels::$items;
                fn scatter(
                    dev: &Device,
                    grid: Grid,
                    shift: u32,
                    from: &DeviceBuffer<Self>,
                    starts: &DeviceBuffer<u32>,
                    status: &mut DeviceBuffer<u64>,
                    to: &mut DeviceBuffer<Self>,
                    carry: PassCarry<'_>,
                ) -> Result<()> {
                    let PassCarry { kind, words: (words_from, words_to), bits: (bits_from, bits_to) } = carry;
                    kernels::$kernel::launch(
                        dev, grid, shift, from, starts, status, to, kind, words_from, words_to, bits_from, bits_to,
                    )
                }
            }
        )*};
    }
    scatter!(radix_scatter, SORT_ITEMS: u32, i32, f32);
    scatter!(radix_scatter_wide, SORT_ITEMS_WIDE: u64, i64, f64);

    /// What one pass of a sort carries with its keys: `kind` 0 (nothing), 1 (a 32-bit word a
    /// key, from `words.0` to `words.1`) or 2 (a 64-bit word a key, from `bits.0` to
    /// `bits.1`); the buffers of the other kind are empty.
    struct PassCarry<'b> {
        kind: u32,
        words: (&'b DeviceBuffer<u32>, &'b mut DeviceBuffer<u32>),
        bits: (&'b DeviceBuffer<u64>, &'b mut DeviceBuffer<u64>),
    }

    /// The values a sort of pairs moves with its keys, one a key: 32-bit words or 64-bit ones.
    enum Carried<'b> {
        Words(&'b mut DeviceBuffer<u32>),
        Bits(&'b mut DeviceBuffer<u64>),
    }

    /// Sorts `keys` in place, ascending (CUB's `DeviceRadixSort::SortKeys`): a least
    /// significant digit radix sort, 8 bits a pass (four passes for 32-bit keys, eight for
    /// 64-bit), each pass stable. Every pass's digit counts come from one read of the keys
    /// first; a pass is then one kernel (one-sweep, as CUB's): each tile of 6,144 keys (3,072
    /// for 8-byte keys) is ranked in shared memory, looks back at the tiles before it for each
    /// digit's count (decoupled look-back), and is written out in order. Floats sort by IEEE
    /// total order (−NaN first, NaN last, −0 before +0). Device buffers are sorted in place
    /// (with a scratch buffer of their size); host slices and buffer parts are copied to the
    /// device and back.
    ///
    /// ```
    /// # fn main() -> offload::Result<()> {
    /// let dev = offload::Device::default()?;
    /// let mut keys = [5u32, 3, 9, 3, 0, 7];
    /// offload::algorithms::sort_keys(&dev, &mut keys)?;
    /// assert_eq!(keys, [0, 3, 3, 5, 7, 9]);
    /// let mut floats = [1.5f32, -0.0, -2.0, 0.0, f32::NEG_INFINITY];
    /// offload::algorithms::sort_keys(&dev, &mut floats)?;
    /// assert_eq!(floats.map(f32::to_bits), [f32::NEG_INFINITY, -2.0, -0.0, 0.0, 1.5].map(f32::to_bits));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// More than `u32::MAX` keys, and whatever a launch or an allocation can return.
    pub fn sort_keys<'a, T: SortKey>(dev: &Device, keys: impl InOut<'a, T>) -> Result<()> {
        match keys.out_data() {
            short if short.len() < 2 => Ok(()),
            keys => with_keys_on_device(dev, keys, |k| sort_carrying(dev, k, None)),
        }
    }

    /// Refuses more keys than a sort's 32-bit counts and positions hold.
    fn sortable(n: usize) -> Result<()> {
        if u32::try_from(n).is_err() {
            return Err(crate::Error::InvalidLaunch {
                kernel: "offload::algorithms::sort_keys".into(),
                reason: format!("{n} keys: a sort takes at most {} (positions are 32-bit)", u32::MAX),
            });
        }
        Ok(())
    }

    /// Sorts `keys` in place; with `carry` (a word a key, key `i`'s at `i`), moves each
    /// carried word with its key (stable: equal keys keep their order).
    fn sort_carrying<T: SortKey>(
        dev: &Device,
        keys: &mut DeviceBuffer<T>,
        carry: Option<Carried<'_>>,
    ) -> Result<()> {
        let n = keys.len();
        sortable(n)?;
        if n < 2 {
            return Ok(());
        }
        // The carried words' second buffer, alternating with theirs like the keys' (and empty
        // ones to stand for the kind not carried).
        let (kind, n32, n64) = match &carry {
            None => (0, 0, 0),
            Some(Carried::Words(w)) => (1, w.len(), 0),
            Some(Carried::Bits(b)) => (2, 0, b.len()),
        };
        assert!(
            n32 == n * (kind == 1) as usize && n64 == n * (kind == 2) as usize,
            "a sort's carry: one word a key"
        );
        let mut words_other = Scratch::<u32>::new(dev, n32, "a sort's second buffer of carried values")?;
        let mut bits_other = Scratch::<u64>::new(dev, n64, "a sort's second buffer of carried values")?;
        let mut no_words = Scratch::<u32>::new(dev, 0, "a sort's carried values")?;
        let mut no_bits = Scratch::<u64>::new(dev, 0, "a sort's carried values")?;
        let (words, bits): (&mut DeviceBuffer<u32>, &mut DeviceBuffer<u64>) = match carry {
            None => (&mut no_words, &mut no_bits),
            Some(Carried::Words(w)) => (w, &mut no_bits),
            Some(Carried::Bits(b)) => (&mut no_words, b),
        };
        let tiles = n.div_ceil(T::TILE);
        let passes = T::BITS as usize / 8;
        // Every pass's digit counts in one read of the keys, and where each digit starts.
        let mut hist = Scratch::<u32>::new(dev, 256 * passes, "a sort's digit counts")?;
        kernels::zero::launch(dev, 256 * passes, &mut *hist)?;
        let grid = kernels::radix_histograms::resident::<T>(dev, kernels::SORT_BLOCK)?;
        kernels::radix_histograms::launch(dev, grid, &*keys, &mut *hist)?;
        let mut starts = Scratch::<u32>::new(dev, 256 * passes, "a sort's digit starts")?;
        kernels::digit_starts::launch(
            dev,
            Grid::threads(256 * passes).block_size(256),
            &*hist,
            &mut *starts,
        )?;
        // One look-back word per tile and digit, tagged with its pass: cleared once.
        let mut status = Scratch::<u64>::new(dev, 256 * tiles, "a sort's look-back words")?;
        kernels::zero::launch(dev, 256 * tiles, &mut *status)?;
        let mut other = Scratch::<T>::new(dev, n, "a sort's second key buffer")?;
        let grid = Grid::threads(tiles * kernels::SORT_BLOCK as usize).block_size(kernels::SORT_BLOCK);
        // Passes alternate between the two buffers; their number is even, so the last one
        // writes into `keys` (and `words` or `bits`).
        for pass in 0..T::BITS / 8 {
            let shift = pass * 8;
            let (from, to, carry) = if pass % 2 == 0 {
                let carry =
                    PassCarry { kind, words: (&*words, &mut *words_other), bits: (&*bits, &mut *bits_other) };
                (&*keys, &mut *other, carry)
            } else {
                let carry =
                    PassCarry { kind, words: (&*words_other, &mut *words), bits: (&*bits_other, &mut *bits) };
                (&*other, &mut *keys, carry)
            };
            T::scatter(dev, grid, shift, from, &starts, &mut status, to, carry)?;
        }
        Ok(())
    }

    /// Sorts `keys` in place, ascending, and `values` with them (CUB's
    /// `DeviceRadixSort::SortPairs`): stable, so pairs of equal keys keep their order. Each
    /// radix pass moves the values with their keys, as one 32-bit word each for 4-byte values
    /// and one 64-bit word for 8-byte ones (`u32` and `u64` values in a device buffer as they
    /// are, in place; others through a copy as such words). As [`sort_keys`] otherwise (device
    /// buffers, parts and host slices alike).
    ///
    /// ```
    /// # fn main() -> offload::Result<()> {
    /// let dev = offload::Device::default()?;
    /// let mut keys = [3u32, 1, 3, 0];
    /// let mut values = [30.0f64, 10.0, 31.0, 0.0];
    /// offload::algorithms::sort_pairs(&dev, &mut keys, &mut values)?;
    /// assert_eq!((keys, values), ([0, 1, 3, 3], [0.0, 10.0, 30.0, 31.0]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Keys and values of different lengths, more than `u32::MAX` keys, and whatever a launch
    /// or an allocation can return.
    pub fn sort_pairs<'a, K: SortKey, V: Element>(
        dev: &Device,
        keys: impl InOut<'a, K>,
        values: impl InOut<'a, V>,
    ) -> Result<()> {
        let (keys, mut values) = (keys.out_data(), values.out_data());
        if keys.len() != values.len() {
            return Err(crate::Error::InvalidLaunch {
                kernel: "offload::algorithms::sort_pairs".into(),
                reason: format!(
                    "{} keys and {} values: a sort of pairs needs as many of each",
                    keys.len(),
                    values.len()
                ),
            });
        }
        let n = keys.len();
        if n < 2 {
            return Ok(());
        }
        sortable(n)?;
        // `u32` and `u64` values in a device buffer are their own words: sorted where they are.
        if let OutData::Buffer(buffer) = &mut values {
            let any = &mut **buffer as &mut dyn std::any::Any;
            if let Some(words) = any.downcast_mut::<DeviceBuffer<u32>>() {
                return with_keys_on_device(dev, keys, |k| {
                    sort_carrying(dev, k, Some(Carried::Words(words)))
                });
            }
            if let Some(bits) = any.downcast_mut::<DeviceBuffer<u64>>() {
                return with_keys_on_device(dev, keys, |k| sort_carrying(dev, k, Some(Carried::Bits(bits))));
            }
        }
        // Others as words (4-byte values) or 64-bit words (8-byte ones) in a device copy,
        // turned back into values where they came from.
        if V::WORDS == 1 {
            let mut words = Scratch::<u32>::new(dev, n, "sort_pairs' values as words")?;
            kernels::to_words::launch(dev, n, reading(&values), &mut *words)?;
            with_keys_on_device(dev, keys, |k| sort_carrying(dev, k, Some(Carried::Words(&mut words))))?;
            match values {
                OutData::Host(_) | OutData::HostWriteOnly(_) => {
                    let mut sorted = Scratch::<V>::new(dev, n, "sort_pairs' sorted values")?;
                    kernels::from_words::launch(dev, n, &*words, &mut *sorted)?;
                    back(dev, &sorted, values)
                }
                device => kernels::from_words::launch(dev, n, &*words, device),
            }
        } else {
            let mut bits = Scratch::<u64>::new(dev, n, "sort_pairs' values as 64-bit words")?;
            kernels::to_bits64::launch(dev, n, reading(&values), &mut *bits)?;
            with_keys_on_device(dev, keys, |k| sort_carrying(dev, k, Some(Carried::Bits(&mut bits))))?;
            match values {
                OutData::Host(_) | OutData::HostWriteOnly(_) => {
                    let mut sorted = Scratch::<V>::new(dev, n, "sort_pairs' sorted values")?;
                    kernels::from_bits64::launch(dev, n, &*bits, &mut *sorted)?;
                    back(dev, &sorted, values)
                }
                device => kernels::from_bits64::launch(dev, n, &*bits, device),
            }
        }
    }

    /// `f` on `keys` on the device: a buffer as it is, anything else in a device copy that is
    /// written back after.
    fn with_keys_on_device<T: SortKey>(
        dev: &Device,
        keys: OutData<'_, T>,
        f: impl FnOnce(&mut DeviceBuffer<T>) -> Result<()>,
    ) -> Result<()> {
        match keys {
            OutData::Buffer(buffer) => f(buffer),
            other => {
                let mut copy = on_device(dev, &other)?;
                f(&mut copy)?;
                back(dev, &copy, other)
            }
        }
    }

    fn reading<'b, T: KernelScalar>(data: &'b OutData<'_, T>) -> InData<'b, T> {
        match data {
            OutData::Host(h) | OutData::HostWriteOnly(h) => InData::Host(h),
            OutData::Buffer(b) => InData::Buffer(b),
            OutData::Part { buffer, start, len } => InData::Part { buffer, start: *start, len: *len },
        }
    }

    /// A device copy of `data` (host memory, a buffer or a part of one; device memory is copied
    /// on the device), for a sort whose result [`back`] writes over it.
    fn on_device<T: Element>(dev: &Device, data: &OutData<'_, T>) -> Result<Scratch<T>> {
        let mut copy = Scratch::<T>::new(dev, data.len(), "a sort's copy of its input")?;
        match data {
            OutData::Host(h) | OutData::HostWriteOnly(h) => copy.copy_from(h)?,
            device => kernels::copy_front::launch(dev, data.len(), data.len(), reading(device), &mut *copy)?,
        }
        Ok(copy)
    }

    /// Writes `from` (on the device) over `to` (on the device, a kernel's copy).
    fn back<T: Element>(dev: &Device, from: &DeviceBuffer<T>, to: OutData<'_, T>) -> Result<()> {
        match to {
            OutData::Host(h) | OutData::HostWriteOnly(h) => from.copy_to(h),
            device => kernels::copy_front::launch(dev, from.len(), from.len(), from, device),
        }
    }

    /// Sums of `values` over each run of equal consecutive `keys` (CUB's
    /// `DeviceReduce::ReduceByKey` with a sum): the runs' keys, in order, go to the front of
    /// `unique_keys` and their sums to the front of `sums`; returns the number of runs. The rest
    /// of both outputs is left as it was. Keys compare with `==` (a NaN key is a run of its own).
    ///
    /// Run starts are flagged, an inclusive scan of the flags numbers each element's run, the
    /// keys are selected by the flags, and each thread adds up a contiguous chunk of values,
    /// one atomic addition per run it meets. Integer sums wrap; float sums are added in an
    /// order that depends on the chunking and may differ in the last bits between runs.
    ///
    /// ```
    /// # fn main() -> offload::Result<()> {
    /// let dev = offload::Device::default()?;
    /// let keys = [7u32, 7, 2, 2, 2, 7];
    /// let values = [1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0];
    /// let (mut unique, mut sums) = ([0u32; 6], [0.0f64; 6]);
    /// let runs = offload::algorithms::reduce_by_key(&dev, &keys, &values, &mut unique, &mut sums)?;
    /// assert_eq!((runs, &unique[..3], &sums[..3]), (3, &[7, 2, 7][..], &[3.0, 12.0, 6.0][..]));
    /// # Ok(()) }
    /// ```
    ///
    /// # Errors
    ///
    /// Lengths that differ (keys, values and both outputs all have one), and whatever a
    /// launch or an allocation can return.
    pub fn reduce_by_key<'a, K: Element + PartialEq, V: Element>(
        dev: &Device,
        keys: impl In<'a, K>,
        values: impl In<'a, V>,
        unique_keys: impl InOut<'a, K>,
        sums: impl InOut<'a, V>,
    ) -> Result<usize> {
        let (keys, values, unique_keys, sums) =
            (keys.in_data(), values.in_data(), unique_keys.out_data(), sums.out_data());
        let n = keys.len();
        if values.len() != n || unique_keys.len() != n || sums.len() != n {
            return Err(crate::Error::InvalidLaunch {
                kernel: "offload::algorithms::reduce_by_key".into(),
                reason: format!(
                    "the keys have {n} elements, the values {}, the unique keys' output {} and the sums' {}: they need the same length",
                    values.len(),
                    unique_keys.len(),
                    sums.len()
                ),
            });
        }
        if n == 0 {
            return Ok(0);
        }
        // Host keys go to the device once: two kernels below read them.
        let staged;
        let keys = match keys {
            InData::Host(h) => {
                staged = DeviceBuffer::from_slice(dev, h)?;
                InData::Buffer(&staged)
            }
            other => other,
        };
        let mut heads = Scratch::<u32>::new(dev, n, "reduce_by_key's run flags")?;
        kernels::run_heads::launch(dev, n, keys, &mut *heads)?;
        let mut runs = Scratch::<u32>::new(dev, n, "reduce_by_key's run numbers")?;
        inclusive_sum(dev, &*heads, &mut *runs)?;
        let count = select_flagged(dev, keys, &*heads, unique_keys)?;
        let mut totals = DeviceBuffer::<V>::zeroed(dev, count)?;
        let grid = kernels::add_by_run::resident::<V>(dev, kernels::BLOCK)?;
        kernels::add_by_run::launch(dev, grid, values, &*runs, &mut totals)?;
        kernels::copy_front::launch(dev, n, count, &totals, sums)?;
        Ok(count)
    }

    /// `output[i] = input[0] + … + input[i - 1]` (`output[0]` is zero).
    ///
    /// `input` is a host slice (copied to the device) or device memory (a buffer or a part of
    /// one, used in place); so is `output` (a host slice is copied back). They must have the
    /// same length.
    ///
    /// # Errors
    ///
    /// Lengths that differ, and whatever a launch or an allocation can return.
    pub fn exclusive_sum<'a, T: Element>(
        dev: &Device,
        input: impl In<'a, T>,
        output: impl InOut<'a, T>,
    ) -> Result<()> {
        scan(dev, false, input.in_data(), output.out_data())
    }

    /// `output[i] = input[0] + … + input[i]`; as [`exclusive_sum`] otherwise.
    ///
    /// # Errors
    ///
    /// As [`exclusive_sum`].
    pub fn inclusive_sum<'a, T: Element>(
        dev: &Device,
        input: impl In<'a, T>,
        output: impl InOut<'a, T>,
    ) -> Result<()> {
        scan(dev, true, input.in_data(), output.out_data())
    }

    /// The sum of `input` (a host slice or device memory).
    ///
    /// # Errors
    ///
    /// Whatever a launch can return.
    pub fn sum<'a, T: Element>(dev: &Device, input: impl In<'a, T>) -> Result<T> {
        let mut total = T::ZERO;
        let grid = kernels::sum::resident::<T>(dev, kernels::BLOCK)?;
        kernels::sum::launch(dev, grid, input.in_data(), &mut total)?;
        Ok(total)
    }

    fn scan<'a, T: Element>(
        dev: &Device,
        inclusive: bool,
        input: InData<'a, T>,
        output: OutData<'a, T>,
    ) -> Result<()> {
        let n = input.len();
        if output.len() != n {
            return Err(crate::Error::InvalidLaunch {
                kernel: "offload::algorithms::scan".into(),
                reason: format!(
                    "the input has {n} elements and the output {}: a scan needs the same length",
                    output.len()
                ),
            });
        }
        if n == 0 {
            return Ok(());
        }
        let tiles = n.div_ceil(kernels::TILE);
        // The tiles' status from the device's scratch pool (a scan in a loop allocates nothing,
        // and freeing would wait for the device); its words cleared first, its sums only read
        // after a word of this scan says they are written. (A 4-byte `T`'s sums travel in the
        // status words, and `aggregates` and `prefixes` go unused.)
        let wide = <T as crate::warp::WarpValue>::WIDE;
        let sums = if wide { tiles } else { 0 };
        let mut status = Scratch::<u64>::new(dev, tiles, "a scan's tile status")?;
        let mut aggregates = Scratch::<T>::new(dev, sums, "a scan's tile sums")?;
        let mut prefixes = Scratch::<T>::new(dev, sums, "a scan's tile prefixes")?;
        kernels::zero::launch(dev, tiles, &mut *status)?;
        let grid = Grid::threads(tiles * kernels::SCAN_BLOCK as usize).block_size(kernels::SCAN_BLOCK);
        kernels::scan::launch(
            dev,
            grid,
            inclusive,
            input,
            output,
            &mut *status,
            &mut *aggregates,
            &mut *prefixes,
        )
    }
}
