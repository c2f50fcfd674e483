//! Reductions to a scalar: kernel parameters [`Sum<T>`], [`Min<T>`] and [`Max<T>`]. Each
//! thread folds values into its own accumulator; when the kernel returns, the generated entry
//! point combines the block's accumulators with warp shuffles and shared memory and adds one
//! atomic update per block to the result (the CPU backend updates the result atomically per thread). The host
//! passes `&mut T`, which ends up combined with every contribution (start from 0 for a sum).

use crate::atomic::AtomicElem;

macro_rules! reducer {
    ($(#[$doc:meta])* $name:ident, $op:ident, $method:ident, $identity:ident, $combine:expr, $atomic:ident) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name<'a, T: AtomicElem> {
            acc: &'a mut T,
        }

        impl<'a, T: AtomicElem> $name<'a, T> {
            #[doc(hidden)]
            #[inline(always)]
            pub fn new(acc: &'a mut T) -> Self {
                $name { acc }
            }

            /// Folds `v` into this thread's contribution.
            #[inline(always)]
            pub fn $method(&mut self, v: T) {
                *self.acc = <$op as ReduceOp>::combine(*self.acc, v);
            }
        }

        #[doc(hidden)]
        #[derive(Debug)]
        pub struct $op;

        impl ReduceOp for $op {
            #[inline(always)]
            fn identity<T: AtomicElem>() -> T {
                T::$identity
            }
            #[inline(always)]
            fn combine<T: AtomicElem>(a: T, b: T) -> T {
                $combine(a, b)
            }
            #[inline(always)]
            unsafe fn atomic<T: AtomicElem>(p: *mut T, v: T) {
                // SAFETY: forwarded from the caller.
                unsafe { T::$atomic(p, v) };
            }
        }
    };
}

/// How a reduction combines values.
#[doc(hidden)]
pub trait ReduceOp {
    fn identity<T: AtomicElem>() -> T;
    fn combine<T: AtomicElem>(a: T, b: T) -> T;
    /// # Safety
    /// `p` must be valid, aligned, and accessed only atomically while others may use it.
    unsafe fn atomic<T: AtomicElem>(p: *mut T, v: T);
}

fn add_elems<T: AtomicElem>(a: T, b: T) -> T {
    a.plus(b)
}

fn smaller<T: AtomicElem>(a: T, b: T) -> T {
    if b < a { b } else { a }
}

fn larger<T: AtomicElem>(a: T, b: T) -> T {
    if b > a { b } else { a }
}

reducer!(
    /// A sum over all threads: `total.add(v)`.
    Sum, SumOp, add, ZERO, add_elems, fetch_add
);
reducer!(
    /// A minimum over all threads: `lowest.min(v)`.
    Min, MinOp, min, HIGHEST, smaller, fetch_min
);
reducer!(
    /// A maximum over all threads: `highest.max(v)`.
    Max, MaxOp, max, LOWEST, larger, fetch_max
);

/// Combines one thread's contribution into the result. On a GPU every thread of the block
/// must call it (the generated entry point does, after the kernel returns): each warp reduces
/// with shuffles, the warps' partial results meet in the launch-sized shared memory at
/// `shared_offset` bytes, the first warp combines them, and one thread per block updates `out`
/// atomically.
///
/// # Safety
///
/// `out` must be valid and aligned and only accessed atomically during the kernel; on a GPU
/// the launch must provide at least `shared_offset + block threads × size_of::<T>()` bytes of
/// dynamic shared memory, and every thread of the block must make this call.
#[doc(hidden)]
#[inline(always)]
pub unsafe fn commit<K: ReduceOp, T: AtomicElem>(acc: T, out: *mut T, shared_offset: usize) {
    #[cfg(any(target_arch = "nvptx64", target_arch = "amdgpu"))]
    {
        use crate::index::*;
        let n = (block_dim_x() * block_dim_y() * block_dim_z()) as usize;
        let tid =
            (thread_idx_x() + block_dim_x() * (thread_idx_y() + block_dim_y() * thread_idx_z())) as usize;
        let warp = crate::warp::Warp::current();
        let size = warp.size() as usize;
        // Every lane of the block is here (the kernel has returned), but lanes that diverged
        // in it need not have reconverged: `reduce_lanes` synchronises the warp's lanes first
        // and combines all of them, not just the ones that happen to run together.
        let lanes = (n - tid / size * size).min(size) as u32;
        let mine = warp.reduce_lanes::<K, T>(acc, lanes);
        let warps = n.div_ceil(size);
        if warps == 1 {
            if tid == 0 {
                // SAFETY: `out` is valid per the caller.
                unsafe { K::atomic(out, mine) };
            }
            return;
        }
        // SAFETY: the launch provides `shared_offset` plus `n` elements of shared memory (the
        // caller's contract), and `warps <= n`.
        let slots = unsafe {
            core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<u8>().add(shared_offset).cast::<T>()
        };
        if warp.lane() == 0 {
            // SAFETY: `tid / size < warps`; each warp's lane 0 writes its own slot.
            unsafe { slots.add(tid / size).write(mine) };
        }
        crate::sync::barrier();
        if tid < size {
            // SAFETY: `tid < warps` is a slot written before the barrier; nobody writes now.
            let partial = if tid < warps { unsafe { slots.add(tid).read() } } else { K::identity() };
            let total = warp.reduce_lanes::<K, T>(partial, n.min(size) as u32);
            if tid == 0 {
                // SAFETY: `out` is valid per the caller.
                unsafe { K::atomic(out, total) };
            }
        }
    }
    #[cfg(not(any(target_arch = "nvptx64", target_arch = "amdgpu")))]
    {
        let _ = shared_offset;
        // SAFETY: forwarded from the caller.
        unsafe { K::atomic(out, acc) };
    }
}
