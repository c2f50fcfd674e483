//! Barriers and warp operations called from the kernels module's own functions and methods,
//! not only from the kernel's body: helpers that take a `Warp` or a `Block`, helpers that call
//! such helpers, a method of a module type that holds a warp, a generic helper, and helpers
//! whose parameters are borrowing views named without their lifetime (`Region<u32>`), methods
//! of a borrowing type, and helpers with `where` clauses and pattern arguments. On the
//! CPU backend each of these returns its body's future in the module's host copy (the kernels
//! macro makes it so), with every call that waits awaited; on a GPU the code is as written.

use offload::{Device, Grid};

#[offload::kernels]
mod gpu {
    use offload::prelude::*;

    /// The sum over the warp, through a helper of a helper.
    fn warp_total(w: &Warp, v: u32) -> u32 {
        twice_halved(w, v)
    }

    fn twice_halved(w: &Warp, v: u32) -> u32 {
        w.sum(v * 2) / 2
    }

    /// The largest value in the warp, for any exchangeable type.
    fn warp_largest<T: WarpValue + AtomicElem>(w: &Warp, v: T) -> T {
        w.max(v)
    }

    /// A module type that holds a warp, with methods that wait for its lanes.
    struct Lanes {
        warp: Warp,
    }

    impl Lanes {
        fn first(&self, v: u32) -> u32 {
            self.warp.shuffle(v, 0)
        }

        fn all_even(&self, v: u32) -> bool {
            self.warp.all(v.is_multiple_of(2))
        }
    }

    /// Writes the thread's element of `out` after meeting the block: a helper that waits and
    /// takes a borrowing view without its lifetime.
    fn write_after_barrier(block: Block, mut out: Region<u32>, v: u32) -> Block {
        let read = block.sync();
        if let Some(o) = out.mine() {
            *o = v;
        }
        read.sync()
    }

    /// Thread 0's value, to every thread of the block, through a helper.
    fn from_thread_zero(block: &Block, v: u32) -> u32 {
        block.broadcast(v)
    }

    /// A borrowing module type whose methods wait: its `impl` names its lifetime `'_`, and one
    /// method returns a reference whose lifetime the signature leaves to `&self`.
    struct Window<'a> {
        xs: &'a [u32],
    }

    impl Window<'_> {
        fn sum_at(&self, w: &Warp, i: usize) -> u32 {
            w.sum(self.xs.get(i).copied().unwrap_or(0))
        }

        fn last_after_meeting(&self, w: &Warp) -> &u32 {
            let _ = w.ballot(true);
            &self.xs[self.xs.len() - 1]
        }
    }

    /// A generic helper whose bounds are in a `where` clause.
    fn smallest<T>(w: &Warp, v: T) -> T
    where
        T: WarpValue + AtomicElem,
    {
        w.min(v)
    }

    /// A helper whose argument is a pattern.
    fn pair_sum(w: &Warp, (a, b): (u32, u32)) -> u32 {
        w.sum(a) + b
    }

    #[kernel]
    pub fn view_helpers(w: Warp, x: &[u32], mut out: Region<[u32; 4]>) {
        let i = global_linear_id();
        let window = Window { xs: x };
        let sum = window.sum_at(&w, i);
        let last = *window.last_after_meeting(&w);
        let small = smallest(&w, x[i]);
        let pair = pair_sum(&w, (x[i], 7));
        if let Some(o) = out.mine() {
            *o = [sum, last, small, pair];
        }
    }

    #[kernel]
    pub fn warp_helpers(w: Warp, x: &[u32], mut out: Region<[u32; 4]>, mut largest: Region<f64>) {
        let i = global_linear_id();
        let v = x[i];
        let total = warp_total(&w, v);
        let big = warp_largest(&w, f64::from(v) + 0.25);
        let lanes = Lanes { warp: w };
        let first = lanes.first(v);
        let even = u32::from(lanes.all_even(v));
        if let (Some(o), Some(l)) = (out.mine(), largest.mine()) {
            (*o, *l) = ([total, first, even, 0], big);
        }
    }

    #[kernel]
    pub fn block_helpers(x: &[u32], out: Region<u32>, mut firsts: Region<u32>, block: Block) {
        let i = global_linear_id();
        let first = from_thread_zero(&block, x[i]);
        let block = write_after_barrier(block, out, x[i] + 1);
        let again = from_thread_zero(&block, first + 1);
        if let Some(f) = firsts.mine() {
            *f = again;
        }
    }
}

/// Threads per block: three whole 32-lane warps and a partial one.
const BLOCK: usize = 100;
const N: usize = 3 * BLOCK;

fn inputs() -> Vec<u32> {
    (0..N as u32).map(|i| i.wrapping_mul(2_654_435_761) % 1000).collect()
}

/// The values of thread `i`'s warp (of `ws` lanes; the last warp of a block may be partial).
fn warp_of(x: &[u32], i: usize, ws: usize) -> &[u32] {
    let (block, t) = (i / BLOCK, i % BLOCK);
    let first = block * BLOCK + t / ws * ws;
    &x[first..first + (BLOCK - t / ws * ws).min(ws)]
}

#[test]
fn warp_operations_in_helpers_and_methods() {
    let dev = Device::default().expect("a device");
    let x = inputs();
    let (mut out, mut largest) = (vec![[0u32; 4]; N], vec![0f64; N]);
    gpu::warp_helpers::launch(&dev, Grid::threads(N).block_size(BLOCK as u32), &x, &mut out, &mut largest)
        .expect("the launch");
    let ws = dev.properties().warp_size as usize;
    for i in 0..N {
        let warp = warp_of(&x, i, ws);
        let total: u32 = warp.iter().map(|v| v * 2).sum::<u32>() / 2;
        let even = u32::from(warp.iter().all(|v| v % 2 == 0));
        let big = f64::from(*warp.iter().max().expect("a lane")) + 0.25;
        assert_eq!(out[i], [total, warp[0], even, 0], "thread {i}");
        assert_eq!(largest[i], big, "thread {i}");
    }
}

#[test]
fn warp_operations_in_methods_of_borrowing_types_and_generic_helpers() {
    let dev = Device::default().expect("a device");
    let x = inputs();
    let mut out = vec![[0u32; 4]; N];
    gpu::view_helpers::launch(&dev, Grid::threads(N).block_size(BLOCK as u32), &x, &mut out)
        .expect("the launch");
    let ws = dev.properties().warp_size as usize;
    for (i, o) in out.iter().enumerate() {
        let warp = warp_of(&x, i, ws);
        let sum: u32 = warp.iter().sum();
        let small = *warp.iter().min().expect("a lane");
        assert_eq!(*o, [sum, x[N - 1], small, sum + 7], "thread {i}");
    }
}

#[test]
fn barriers_and_broadcasts_in_helpers() {
    let dev = Device::default().expect("a device");
    let x = inputs();
    let (mut out, mut firsts) = (vec![0u32; N], vec![0u32; N]);
    gpu::block_helpers::launch(&dev, Grid::threads(N).block_size(BLOCK as u32), &x, &mut out, &mut firsts)
        .expect("the launch");
    for i in 0..N {
        assert_eq!(out[i], x[i] + 1, "thread {i}");
        assert_eq!(firsts[i], x[i / BLOCK * BLOCK] + 1, "thread {i}");
    }
}
