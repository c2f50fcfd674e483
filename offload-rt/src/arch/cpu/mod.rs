//! The CPU emulation backend's side of the intrinsics: each emulated GPU thread's indices live
//! in a thread-local [`ThreadCtx`] that the backend's scheduler (`host::cpu`) sets around the
//! kernel call. Kernels that use barriers, shared memory or warps run the threads of a block
//! as lanes (futures) polled in turns on one host thread ([`in_turns`]), meeting at a [`BlockSync`]
//! (barriers) and one `WarpSync` per warp (warp operations), which also check that every
//! thread takes part in the same operations in the same order, so that a launch that would be
//! undefined on a GPU fails here with a message naming the places involved.

mod block;
mod lanes;
pub(crate) mod warp;

pub(crate) use block::{BLOCK_FAILED, BlockSync};
pub(crate) use lanes::in_turns;

use super::Site;
use crate::lane::Pausing;
use crate::reduce::ReduceOp;
use crate::warp::WarpValue;
use std::cell::Cell;
use std::future::Future;

/// Indices of the emulated GPU thread running on this host thread.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ThreadCtx {
    /// The thread's indices in its block, where the block's threads run one after another
    /// (no `block_env`); lanes keep only their linear `tid` (see [`ThreadCtx::thread`]).
    pub thread: [u32; 3],
    pub block: [u32; 3],
    pub block_dim: [u32; 3],
    pub grid_dim: [u32; 3],
    /// The block's shared memory and barrier, when the kernel uses them.
    pub block_env: Option<BlockEnv>,
}

impl ThreadCtx {
    /// The thread's indices in its block: from the lane's linear `tid` (x fastest) when the
    /// block's threads run as lanes, else as set for the thread.
    #[inline(always)]
    pub fn thread(&self) -> [u32; 3] {
        [self.thread_in::<0>(), self.thread_in::<1>(), self.thread_in::<2>()]
    }

    /// `thread()[D]`, with no division where the block's shape makes it a copy or zero.
    #[inline(always)]
    fn thread_in<const D: usize>(&self) -> u32 {
        let Some(env) = self.block_env else { return self.thread[D] };
        let t = env.tid as u32;
        let [bx, by, _] = self.block_dim;
        match D {
            0 if t < bx => t,
            0 => t % bx,
            1 if by == 1 => 0,
            1 => (t / bx) % by,
            _ if t < bx * by => 0,
            _ => t / (bx * by),
        }
    }
}

/// What the threads of one emulated block share, and the thread's place in the block.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BlockEnv {
    /// The block's shared memory (zeroed, 16-byte aligned, as large as the launch reserved).
    pub shared: *mut u8,
    pub sync: *const BlockSync,
    /// Which block `sync` runs now ([`BlockSync::serial`]): a collective's wait compares it
    /// with its own before it touches `sync`.
    pub serial: u64,
    /// The thread's index in the block (`thread` linearised, x fastest).
    pub tid: usize,
}

/// The context of the emulated thread running on this host thread (null when none does): in
/// [`run_as`]'s frame, or the worker's cell of the lane being polled ([`enter`]). (A
/// `#[thread_local]` static, read with one load wherever an intrinsic inlines, where
/// `thread_local!`'s accessor is a call that inlining may leave out of a hot loop.)
#[thread_local]
static CURRENT: Cell<*const Cell<ThreadCtx>> = Cell::new(std::ptr::null());

/// Runs `body` as the emulated thread `ctx`, with the cell that holds it (where the body may
/// make another thread of the block current).
///
/// # Safety
///
/// `ctx.block_env`, if any, must point to the block's shared memory and its `BlockSync`,
/// both alive until `body` returns and used only by the block's threads.
#[inline(always)]
pub(crate) unsafe fn run_as<R>(ctx: ThreadCtx, body: impl FnOnce(&Cell<ThreadCtx>) -> R) -> R {
    struct Leave;
    impl Drop for Leave {
        fn drop(&mut self) {
            CURRENT.set(std::ptr::null());
        }
    }
    let ctx = Cell::new(ctx);
    CURRENT.set(&ctx);
    let _leave = Leave;
    body(&ctx)
}

/// Makes `ctx` the context of the emulated thread running on this host thread until the
/// guard is dropped: the lanes' scheduler sets the cell to each lane's thread before it polls
/// the lane.
///
/// # Safety
///
/// As for [`run_as`]'s context, and `ctx` must stay alive and in place while the guard lives.
#[inline(always)]
pub(crate) unsafe fn enter(ctx: &Cell<ThreadCtx>) -> Entered<'_> {
    CURRENT.set(ctx);
    Entered(std::marker::PhantomData)
}

/// See [`enter`]: when dropped (also while unwinding), no emulated thread runs on this host
/// thread any more.
pub(crate) struct Entered<'c>(std::marker::PhantomData<&'c Cell<ThreadCtx>>);

impl Drop for Entered<'_> {
    fn drop(&mut self) {
        CURRENT.set(std::ptr::null());
    }
}

/// Whether two barrier or warp operation sites are the same place: the same `Location`
/// (nearly always, and a pointer compare), or an equal one.
#[inline]
fn same_site(a: Site, b: Site) -> bool {
    std::ptr::eq(a, b) || a == b
}

/// Makes `ctx` the context of lane `tid` of its block: the scheduler's step from one lane to
/// the next, which changes only the block environment's `tid` (the thread's indices are
/// derived from it when asked for: [`ThreadCtx::thread`]).
#[inline(always)]
pub(crate) fn set_lane(ctx: &Cell<ThreadCtx>, tid: usize) {
    // SAFETY: a `Cell` lends no reference to its value (only copies, and `&mut` through an
    // exclusive borrow of the cell, which `ctx` shares), and this host thread is the only one
    // that has the cell (`Cell` is not `Sync`): nothing reads the field while it is written.
    unsafe {
        if let Some(env) = &mut (*ctx.as_ptr()).block_env {
            env.tid = tid;
        }
    }
}

/// The running emulated thread's context, if one runs on this host thread.
#[inline(always)]
fn current_cell() -> Option<&'static Cell<ThreadCtx>> {
    let ptr = CURRENT.get();
    // SAFETY: a non-null `CURRENT` points to the context in the frame of the `run_as` that
    // runs now on this host thread, or to the cell of the lane being polled (`enter`); it is
    // reset when that returns, so the cell is alive while the caller, which runs inside it,
    // uses it. (The `'static` does not escape: callers use it for the one call.)
    unsafe { ptr.as_ref() }
}

/// Whether this host thread runs an emulated GPU thread now.
pub(crate) fn in_kernel() -> bool {
    !CURRENT.get().is_null()
}

/// The indices of the emulated thread that calls this.
///
/// # Panics
///
/// Outside a kernel launch: thread indices only exist inside kernels.
#[inline]
pub(crate) fn current() -> ThreadCtx {
    current_cell().expect("offload: thread and block indices exist only inside a kernel launch").get()
}

#[inline(always)]
fn block_env() -> (BlockEnv, usize) {
    #[cold]
    #[inline(never)]
    fn none() -> ! {
        panic!("offload: barriers, shared memory and warps exist only in kernels that take them")
    }
    let Some(env) = current().block_env else { none() };
    (env, env.tid)
}

/// Whether the emulated thread running on this host thread is thread `tid` of the block whose
/// serial is `serial` (a collective's wait checks this before it touches its block: `Caller`;
/// serials are never reused, so the serial alone names the block, and its `BlockSync`).
#[inline(always)]
pub(crate) fn polled_is(serial: u64, tid: usize) -> bool {
    let Some(cell) = current_cell() else { return false };
    // SAFETY: as in `set_lane`: the cell lends no reference, and only this host thread has
    // it; the fields are read in place rather than the whole context copied out.
    let env = unsafe { &(*cell.as_ptr()).block_env };
    env.as_ref().is_some_and(|e| e.serial == serial && e.tid == tid)
}

#[inline(always)]
fn block_sync() -> (&'static BlockSync, usize) {
    let (env, tid) = block_env();
    // SAFETY: `run_as`'s and `enter`'s contracts keep the block's `BlockSync` alive while the
    // block's threads run, and this is only called from one of them: from a call of it, or
    // from a lane's future, which the block drops before its `BlockSync`. (The `'static`
    // does not escape: callers use it for the one call or the one future.)
    (unsafe { &*env.sync }, tid)
}

#[inline]
pub(crate) fn thread_idx<const D: usize>() -> u32 {
    current().thread_in::<D>()
}

#[inline]
pub(crate) fn block_idx<const D: usize>() -> u32 {
    current().block[D]
}

#[inline]
pub(crate) fn block_dim<const D: usize>() -> u32 {
    current().block_dim[D]
}

#[inline]
pub(crate) fn grid_dim<const D: usize>() -> u32 {
    current().grid_dim[D]
}

/// Waits until every thread of the block arrives at this same barrier (the launch fails if
/// one arrives at another, or returns, instead).
#[inline(always)]
pub(crate) fn barrier(site: Site) -> Pausing<impl Future<Output = ()>> {
    let (sync, tid) = block_sync();
    Pausing(sync.wait(site, tid))
}

/// The block's shared memory.
#[inline(always)]
pub(crate) fn shared_base() -> *mut u8 {
    block_env().0.shared
}

/// A spin loop's back-off: the host thread gives its core away once (to the threads running
/// the blocks it waits for).
#[inline]
pub(crate) fn nanosleep(_ns: u32) {
    std::thread::yield_now();
}

pub(crate) fn trap() -> ! {
    panic!("offload: the kernel trapped")
}

/// The block's warp size (the scheduler sets it: `OFFLOAD_CPU_WARP_SIZE`).
#[inline(always)]
pub(crate) fn warp_size() -> u32 {
    block_sync().0.warp_size()
}

#[inline(always)]
pub(crate) fn lane_id() -> u32 {
    let (sync, tid) = block_sync();
    sync.warp(tid).1
}

/// The lanes of this thread's warp that exist.
#[inline(always)]
pub(crate) fn warp_lanes() -> u64 {
    let (sync, tid) = block_sync();
    sync.warp(tid).0.mask()
}

/// A warp operation in parts: the lane's value, what the lane that completes the round does
/// with every lane's values (in place, once for the warp), and what each lane reads from them.
/// The futures meet at an exchange with them ([`WarpOp::wait`]); the lockstep copy of a kernel
/// gathers a warp's values and runs the parts itself (`host::backend::emulate::WarpSteps`).
#[derive(Debug)]
pub struct WarpOp<A, R> {
    pub(crate) value: u64,
    pub(crate) all: A,
    pub(crate) read: R,
}

/// The warp a lane's operation sees: its size, the lanes that exist and the lane's own.
#[derive(Clone, Copy, Debug)]
pub struct WarpShape {
    pub(crate) size: usize,
    /// The lanes that exist.
    pub(crate) lanes: u64,
    /// Whether all `size` exist.
    pub(crate) full: bool,
    pub(crate) lane: u32,
}

type Warp = WarpShape;

/// What the lane that completes a warp operation's round does with every lane's values.
#[doc(hidden)]
pub trait LaneAll: FnOnce(&mut [u64; 64], WarpShape) + Unpin {}
impl<F: FnOnce(&mut [u64; 64], WarpShape) + Unpin> LaneAll for F {}

/// What a lane reads of a warp operation's values.
#[doc(hidden)]
pub trait LaneRead<T>: FnOnce(&[u64; 64], WarpShape) -> T + Unpin {}
impl<T, F: FnOnce(&[u64; 64], WarpShape) -> T + Unpin> LaneRead<T> for F {}

impl<A: FnOnce(&mut [u64; 64], Warp) + Unpin, R: FnOnce(&[u64; 64], Warp) -> T + Unpin, T> WarpOp<A, R> {
    /// The operation's wait: meets the other lanes of the warp at `site`.
    #[inline(always)]
    fn wait(self, site: Site) -> Pausing<impl Future<Output = T>> {
        let WarpOp { value, all, read } = self;
        let (sync, tid) = block_sync();
        let (warp, lane) = sync.warp(tid);
        let size = sync.warp_size();
        let shape = Warp { size: size as usize, lanes: warp.mask(), full: warp.lanes() == size, lane };
        Pausing(sync.exchange_then(
            tid,
            value,
            site,
            move |values| all(values, shape),
            move |values| read(values, shape),
        ))
    }

    /// The same operation with `f` applied to what each lane reads (and the warp's shape).
    #[inline(always)]
    pub(crate) fn map<U>(self, f: impl FnOnce(T, Warp) -> U + Unpin) -> WarpOp<A, impl LaneRead<U>> {
        let WarpOp { value, all, read } = self;
        WarpOp { value, all, read: move |values: &[u64; 64], w: Warp| f(read(values, w), w) }
    }
}

/// An operation in which each lane only reads the others' values.
#[inline(always)]
fn reading<R>(
    v: u64,
    read: impl FnOnce(&[u64; 64], Warp) -> R + Unpin,
) -> WarpOp<impl LaneAll, impl LaneRead<R>> {
    WarpOp { value: v, all: |_: &mut [u64; 64], _: Warp| {}, read }
}

/// What the warp operations pass for the lanes taking part: nothing on the CPU backend, whose
/// warps know their lanes.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Lanes;

/// Every lane of a warp (see the GPU's): the CPU backend's warps know their lanes.
#[inline(always)]
pub(crate) fn whole_warp() -> Lanes {
    Lanes
}

pub(crate) fn shuffle<T: WarpValue>(
    v: T,
    src: u32,
    _: Lanes,
    site: Site,
) -> Pausing<impl Future<Output = T>> {
    shuffle_op(v, src).wait(site)
}

/// Lane `src`'s `v`, or the caller's own where that lane does not exist.
#[inline(always)]
pub(crate) fn shuffle_op<T: WarpValue>(v: T, src: u32) -> WarpOp<impl LaneAll, impl LaneRead<T>> {
    read_lane_of(v, move |_| src)
}

/// Lane `src(warp)`'s `v`, or the caller's own where that lane does not exist.
#[inline(always)]
fn read_lane_of<T: WarpValue>(
    v: T,
    src: impl FnOnce(Warp) -> u32 + Unpin,
) -> WarpOp<impl LaneAll, impl LaneRead<T>> {
    reading(v.to_bits64(), move |values, w| {
        let src = src(w);
        if (src as usize) < w.size && w.lanes >> src & 1 == 1 {
            T::from_bits64(values[src as usize])
        } else {
            v
        }
    })
}

/// Lane `lane + delta`'s `v` (the caller's own past the last lane).
#[inline(always)]
pub(crate) fn shuffle_down<T: WarpValue>(
    v: T,
    lane: u32,
    delta: u32,
    lanes: Lanes,
    site: Site,
) -> Pausing<impl Future<Output = T>> {
    shuffle(v, lane.saturating_add(delta), lanes, site)
}

/// Lane `lane - delta`'s `v` (the caller's own before lane 0).
#[inline(always)]
pub(crate) fn shuffle_up<T: WarpValue>(
    v: T,
    lane: u32,
    delta: u32,
    lanes: Lanes,
    site: Site,
) -> Pausing<impl Future<Output = T>> {
    shuffle(v, lane.checked_sub(delta).unwrap_or(u32::MAX), lanes, site)
}

/// Lane `lane ^ mask`'s `v` (the caller's own where there is no such lane).
#[inline(always)]
pub(crate) fn shuffle_xor<T: WarpValue>(
    v: T,
    lane: u32,
    mask: u32,
    lanes: Lanes,
    site: Site,
) -> Pausing<impl Future<Output = T>> {
    shuffle(v, lane ^ mask, lanes, site)
}

pub(crate) fn ballot(pred: bool, _: Lanes, site: Site) -> Pausing<impl Future<Output = u64>> {
    ballot_op(pred).wait(site)
}

/// One bit per lane whose `pred` is true.
#[inline(always)]
pub(crate) fn ballot_op(pred: bool) -> WarpOp<impl LaneAll, impl LaneRead<u64>> {
    // The mask is the same for every lane: made once, in lane 0's slot.
    let all = |values: &mut [u64; 64], w: Warp| {
        values[0] = (0..64).filter(|&l| w.lanes >> l & 1 == 1 && values[l] != 0).fold(0, |m, l| m | 1 << l);
    };
    WarpOp { value: u64::from(pred), all, read: |values: &[u64; 64], _: Warp| values[0] }
}

pub(crate) fn peers(v: u32, _: Lanes, site: Site) -> Pausing<impl Future<Output = u64>> {
    peers_op(v).wait(site)
}

/// The lanes whose `v` equals the caller's.
#[inline(always)]
pub(crate) fn peers_op(v: u32) -> WarpOp<impl LaneAll, impl LaneRead<u64>> {
    // Every lane's mask, made once by the lane that completes the round, each in its slot.
    let all = |values: &mut [u64; 64], w: Warp| {
        let mine = *values;
        let exists = |l: usize| w.lanes >> l & 1 == 1;
        for l in (0..w.size).filter(|&l| exists(l)) {
            values[l] = (0..w.size).filter(|&o| exists(o) && mine[o] == mine[l]).fold(0, |m, o| m | 1 << o);
        }
    };
    WarpOp { value: u64::from(v), all, read: |values: &[u64; 64], w: Warp| values[w.lane as usize] }
}

/// The lowest lane of `from`'s `v`, or the caller's own when `from` names no lane.
pub(crate) fn shuffle_first<T: WarpValue>(
    v: T,
    from: u64,
    _: Lanes,
    site: Site,
) -> Pausing<impl Future<Output = T>> {
    shuffle_first_op(v, from).wait(site)
}

/// See [`shuffle_first`].
#[inline(always)]
pub(crate) fn shuffle_first_op<T: WarpValue>(v: T, from: u64) -> WarpOp<impl LaneAll, impl LaneRead<T>> {
    // (No lane named: 64, past every warp.)
    read_lane_of(v, move |w| (from & w.lanes).trailing_zeros())
}

/// The lanes whose `v` agrees with the caller's in its low `bits` bits: [`peers`] of those
/// bits.
pub(crate) fn peers_low_bits(
    v: u32,
    bits: u32,
    lanes: Lanes,
    site: Site,
) -> Pausing<impl Future<Output = u64>> {
    peers(v & super::lanes_below(bits.min(32)) as u32, lanes, site)
}

/// `v` combined over the warp with the same association as on a GPU: a butterfly over a
/// whole warp, lane order over a partial one. The lane that completes the round computes
/// every lane's result for the warp ([`reduce_all`]).
pub(crate) fn reduce<K: ReduceOp, T: WarpValue + crate::AtomicElem>(
    v: T,
    _: Lanes,
    site: Site,
) -> Pausing<impl Future<Output = T>> {
    reduce_op::<K, T>(v).wait(site)
}

/// See [`reduce`].
#[inline(always)]
pub(crate) fn reduce_op<K: ReduceOp, T: WarpValue + crate::AtomicElem>(
    v: T,
) -> WarpOp<impl LaneAll, impl LaneRead<T>> {
    WarpOp {
        value: v.to_bits64(),
        all: reduce_all::<K, T>,
        read: move |values: &[u64; 64], w: Warp| {
            T::from_bits64(values[if w.full { w.lane as usize } else { 0 }])
        },
    }
}

/// Every lane's result of [`reduce`], from the lanes' values, in place: over a whole warp, the
/// butterfly as a GPU runs it (at the step of offset `o`, lane `x` combines its value with lane
/// `x ^ o`'s, `combine(x's, (x ^ o)'s)`, offsets `size/2 … 1`), each lane's in its slot; over a
/// partial one, the lanes in order, the same for each, in lane 0's slot.
fn reduce_all<K: ReduceOp, T: WarpValue + crate::AtomicElem>(values: &mut [u64; 64], w: Warp) {
    let full = w.full;
    if full && T::EXACT {
        // Every lane's butterfly gives the same result when the order cannot matter: the
        // lanes in order, once, copied to each slot.
        let lanes = &mut values[..w.size];
        let total = lanes.iter().map(|&bits| T::from_bits64(bits)).reduce(K::combine).expect("a lane exists");
        lanes.fill(total.to_bits64());
    } else if full {
        let mut acc = [T::ZERO; 64];
        for (a, &bits) in acc.iter_mut().zip(values.iter()).take(w.size) {
            *a = T::from_bits64(bits);
        }
        let mut o = w.size / 2;
        while o > 0 {
            for x in (0..w.size).filter(|x| x & o == 0) {
                let (a, b) = (acc[x], acc[x + o]);
                acc[x] = K::combine(a, b);
                acc[x + o] = K::combine(b, a);
            }
            o /= 2;
        }
        for (bits, a) in values.iter_mut().zip(acc).take(w.size) {
            *bits = a.to_bits64();
        }
    } else {
        let mut present = (0..w.size).filter(|&l| w.lanes >> l & 1 == 1).map(|l| T::from_bits64(values[l]));
        let first = present.next().expect("a lane exists");
        values[0] = present.fold(first, K::combine).to_bits64();
    }
}

/// `math::fast` on the CPU backend: each function evaluated in `f64` and rounded once to `f32`,
/// well within the bounds that `math::fast` states for the GPUs' instructions.
pub(crate) mod fast {
    #[inline(always)]
    pub(crate) fn rsqrt(x: f32) -> f32 {
        (1.0 / f64::from(x).sqrt()) as f32
    }
    #[inline(always)]
    pub(crate) fn recip(x: f32) -> f32 {
        (1.0 / f64::from(x)) as f32
    }
    #[inline(always)]
    pub(crate) fn div(a: f32, b: f32) -> f32 {
        (f64::from(a) / f64::from(b)) as f32
    }
    #[inline(always)]
    pub(crate) fn exp2(x: f32) -> f32 {
        f64::from(x).exp2() as f32
    }
    #[inline(always)]
    pub(crate) fn log2(x: f32) -> f32 {
        f64::from(x).log2() as f32
    }
    #[inline(always)]
    pub(crate) fn sin(x: f32) -> f32 {
        f64::from(x).sin() as f32
    }
    #[inline(always)]
    pub(crate) fn cos(x: f32) -> f32 {
        f64::from(x).cos() as f32
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::{BlockEnv, BlockSync, ThreadCtx};
    use crate::warp::WarpValue;
    use std::cell::Cell;

    /// Lane `lane`'s butterfly as a GPU computes it, followed on its own: the lanes it has
    /// combined with so far, `acc[j]` standing for lane `lane ^ j`.
    fn butterfly_of_lane(values: &[f32], lane: usize) -> f32 {
        let mut acc: Vec<f32> = (0..values.len()).map(|j| values[lane ^ j]).collect();
        let mut o = values.len() / 2;
        while o > 0 {
            for j in 0..o {
                acc[j] += acc[j + o];
            }
            o /= 2;
        }
        acc[0]
    }

    #[test]
    fn a_warp_sum_computed_once_gives_each_lane_its_own_butterfly() {
        for size in [32usize, 64] {
            // Magnitudes far apart, so that the order of the additions shows in the result.
            let values: Vec<f32> =
                (0..size).map(|l| ((l * 7919) % 13) as f32 * 10f32.powi((l % 9) as i32 - 4)).collect();
            let mut slots = [0u64; 64];
            for (s, v) in slots.iter_mut().zip(&values) {
                *s = v.to_bits64();
            }
            let w = super::Warp { size, lanes: super::super::lanes_below(size as u32), full: true, lane: 0 };
            super::reduce_all::<crate::reduce::SumOp, f32>(&mut slots, w);
            for (lane, &bits) in slots.iter().enumerate().take(size) {
                assert_eq!(
                    f32::from_bits64(bits).to_bits(),
                    butterfly_of_lane(&values, lane).to_bits(),
                    "lane {lane} of {size}"
                );
            }
        }
    }

    #[test]
    fn an_integer_warp_reduction_gives_every_lane_the_total() {
        use crate::reduce::{MaxOp, MinOp, SumOp};
        for size in [32usize, 64] {
            let values: Vec<i32> =
                (0..size as i32).map(|l| l.wrapping_mul(977_777_777).wrapping_sub(3)).collect();
            let run = |reduce: fn(&mut [u64; 64], super::Warp)| {
                let mut slots = [0u64; 64];
                for (s, v) in slots.iter_mut().zip(&values) {
                    *s = v.to_bits64();
                }
                let w =
                    super::Warp { size, lanes: super::super::lanes_below(size as u32), full: true, lane: 0 };
                reduce(&mut slots, w);
                slots[..size].iter().map(|&b| i32::from_bits64(b)).collect::<Vec<_>>()
            };
            let sum = values.iter().fold(0i32, |a, &b| a.wrapping_add(b));
            let (min, max) = (*values.iter().min().unwrap(), *values.iter().max().unwrap());
            assert_eq!(run(super::reduce_all::<SumOp, i32>), vec![sum; size], "sum over {size}");
            assert_eq!(run(super::reduce_all::<MinOp, i32>), vec![min; size], "min over {size}");
            assert_eq!(run(super::reduce_all::<MaxOp, i32>), vec![max; size], "max over {size}");
        }
    }

    /// Runs lanes `0..n`, lane `t` the future `lane(t)`, polled in turns as the backend polls
    /// them (each poll under `catch_unwind`, as thread `t` of `sync`'s block), failing `sync`
    /// when they stall; `finished(t, panicked)` as each returns. Their results in lane order.
    pub(crate) fn lanes_then<F: std::future::Future>(
        n: usize,
        sync: &BlockSync,
        lane: impl Fn(usize) -> F,
        finished: impl FnMut(usize, bool),
    ) -> Vec<std::thread::Result<F::Output>> {
        lanes_at(&(0..n).collect::<Vec<_>>(), sync, lane, finished)
    }

    /// As [`lanes_then`], with the block's threads `tids` as the lanes (the others never run).
    pub(crate) fn lanes_at<F: std::future::Future>(
        tids: &[usize],
        sync: &BlockSync,
        lane: impl Fn(usize) -> F,
        mut finished: impl FnMut(usize, bool),
    ) -> Vec<std::thread::Result<F::Output>> {
        use std::panic::{AssertUnwindSafe, catch_unwind};
        use std::task::{Context, Poll, Waker};
        let mut lanes: Vec<Option<std::pin::Pin<Box<F>>>> =
            tids.iter().map(|&t| Some(Box::pin(lane(t)))).collect();
        let mut out: Vec<Option<std::thread::Result<F::Output>>> = tids.iter().map(|_| None).collect();
        let mut cx = Context::from_waker(Waker::noop());
        let env = BlockEnv { shared: std::ptr::null_mut(), sync, serial: sync.serial(), tid: 0 };
        let ctx = Cell::new(ThreadCtx {
            thread: [0; 3],
            block: [0; 3],
            block_dim: [1; 3],
            grid_dim: [1; 3],
            block_env: Some(env),
        });
        // SAFETY: `ctx` points to `sync`, alive until this returns, and to no shared memory
        // (the tests' lanes use none); the guard is dropped before `ctx`.
        let _entered = unsafe { super::enter(&ctx) };
        let poll = |i: usize| {
            super::set_lane(&ctx, tids[i]);
            let f = lanes[i].as_mut().expect("a lane under way");
            let step = match catch_unwind(AssertUnwindSafe(|| f.as_mut().poll(&mut cx))) {
                Ok(Poll::Pending) => return Poll::Pending,
                Ok(Poll::Ready(v)) => Ok(v),
                Err(panic) => Err(panic),
            };
            lanes[i] = None;
            Poll::Ready(step)
        };
        super::in_turns(tids.len(), &mut Vec::new(), poll, &|| sync.stall(), |i, r| {
            finished(tids[i], r.is_err());
            out[i] = Some(r);
        });
        out.into_iter().map(|r| r.expect("every lane returned")).collect()
    }
}
