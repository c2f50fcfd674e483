//! Host items that generated code names through `offload::__private`.
pub use super::args::{
    In, InData, InOut, InOutNd, KernelScalar, OutData, ReduceInto, ReduceTarget, ScatterData,
    assert_kernel_scalar,
};
pub use super::backend::emulate::{Agree, Lockstep, Steps, WarpSteps, lend, restore, slots};
pub use super::launch::MAX_SHARED_BYTES;
pub use super::launch::cpu::{
    BlockArg, InArg, InOutArg, LaneThread, ScatterArg, SharedArg, SharedArrayArg, ThreadToken, Threads,
    WarpArg,
};
pub use super::launch::{KernelCache, KernelInfo, Launch};
pub use super::properties::{SharedNeed, resident_grid};
pub use crate::shared::BlockToken;

/// Whether the CPU backend runs kernels that have a lockstep copy in lockstep
/// (`OFFLOAD_CPU_LOCKSTEP`, on unless `0`).
#[inline]
pub fn lockstep() -> bool {
    super::config::config().cpu_lockstep
}

/// The most bytes a kernel's parameters may take together: the PTX parameter space of the
/// PTX versions rustc emits (and a portable bound for AMD's kernel arguments).
pub const MAX_PARAM_BYTES: usize = 4096;

/// Whether `n` elements of `T` fit in a block's shared memory (for the compile-time check of
/// `SharedArray` sizes).
pub const fn fits_shared<T>(n: usize) -> bool {
    match n.checked_mul(size_of::<T>()) {
        Some(bytes) => bytes <= MAX_SHARED_BYTES,
        None => false,
    }
}
