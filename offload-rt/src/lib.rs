//! # offload — safe GPU kernels in plain Rust
//!
//! Write kernels in a `#[offload::kernels]` module, launch them from host code in the same
//! file, and build with `cargo offload build`: the executable then carries device images for
//! NVIDIA (PTX + cubin) and AMD (HSACO) GPUs and runs them through LLVM's liboffload. Built
//! with plain `cargo build`, or run where no GPU exists, the same kernels run on the CPU
//! emulation backend.
//!
//! ```
//! #[offload::kernels]
//! mod gpu {
//!     use offload::prelude::*;
//!
//!     #[kernel]
//!     pub fn saxpy(a: f32, x: &[f32], mut y: Region<f32>) {
//!         let i = y.index();
//!         if let Some(yi) = y.mine() {
//!             *yi += a * x[i];
//!         }
//!     }
//! }
//!
//! fn main() -> offload::Result<()> {
//!     let dev = offload::Device::default()?;
//!     let (x, mut y) = (vec![1.0f32; 1024], vec![2.0f32; 1024]);
//!     gpu::saxpy::launch(&dev, 1024, 2.0, &x, &mut y)?;
//!     Ok(())
//! }
//! ```
//!
//! The crate has two halves. The *device API* ([`prelude`]: thread indices, [`Region`]) is
//! `no_std` and compiles for `nvptx64-nvidia-cuda`, `amdgcn-amd-amdhsa` and the host (where
//! the CPU backend provides the indices). The *host API* ([`Device`], launches, errors) exists
//! only on the host.
#![cfg_attr(offload_gpu, no_std)]
#![cfg_attr(
    target_arch = "nvptx64",
    feature(stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics, abi_unadjusted)
)]
#![cfg_attr(offload_gpu, feature(gpu_intrinsics, gpu_launch_sized_workgroup_mem))]
#![cfg_attr(target_arch = "amdgpu", feature(stdarch_amdgpu, link_llvm_intrinsics, abi_unadjusted))]
#![cfg_attr(not(offload_gpu), feature(linkage))]
#![feature(core_intrinsics)]
#![cfg_attr(not(offload_gpu), feature(thread_local))]
#![allow(internal_features, reason = "math lowers to LLVM intrinsics through core::intrinsics")]

// The runtime's own kernels modules (`algorithms`) name it as their users do: `offload::…`.
extern crate self as offload;

pub mod algorithms;
mod arch;
mod atomic;
mod index;
pub mod lane;
mod load_order;
pub mod math;
mod partition;
#[doc(hidden)]
pub mod print;
mod reduce;
mod region;
mod scatter;
mod shared;
mod shared_array;
mod shared_atomics;
mod stencil;
mod strided;
mod vector;
mod warp;

#[cfg(not(offload_gpu))]
mod host;
#[cfg(not(offload_gpu))]
pub use host::*;

pub use atomic::{AtomicElem, Atomics, MemoryScope};
pub use index::*;
pub use load_order::{Lanes, MAX_TOGETHER, together};
pub use offload_macros::{KernelScalar, kernel, kernels};
pub use partition::{Chunks, GridStride, Groups, PerBlock, StrideIter, Tiles};
pub use reduce::{Loc, Max, MaxLoc, Min, MinLoc, Sum};
pub use region::{Near, Region, Region2, Region3};
pub use scatter::Scatter;
pub use shared::{Block, BlockRead, Shared};
pub use shared_array::SharedArray;
pub use shared_atomics::SharedAtomics;
pub use stencil::{Neighbours, Stencil};
pub use strided::Strided;
pub use vector::{f32x2, f32x4, f64x2, i32x4, u32x2, u32x4};
pub use warp::{Warp, WarpValue};

/// A memory fence among the threads of `scope`: with `Release` before and `Acquire` after, it
/// orders this thread's plain and relaxed accesses with another thread's that fences likewise
/// (C++'s fence semantics); `AcqRel` does both, `SeqCst` also joins one total order of all
/// sequentially consistent fences; `Relaxed` orders nothing.
#[inline(always)]
pub fn fence(order: core::sync::atomic::Ordering, scope: MemoryScope) {
    arch::fence(order, scope)
}

/// Suspends the calling thread for about `ns` nanoseconds: the back-off of a spin loop that
/// waits for another block (a look-back over tiles' published sums, a work queue), so that the
/// waiting threads leave the memory system and the multiprocessor to the threads they wait
/// for. A hint, not a timer: NVIDIA sleeps between 0 and 2·`ns` (at most a millisecond, sm_70
/// and later); AMD sleeps in steps of 64 clocks until `ns` have passed; the CPU backend yields
/// the host thread once. It orders no memory: the loads it separates are still only as
/// ordered as their atomics say.
#[inline(always)]
pub fn nanosleep(ns: u32) {
    arch::nanosleep(ns)
}

/// Prints a line from a kernel, with Rust's formatting: `offload::println!("i = {i}, x = {:.3}", x)`.
/// Each call's text (at most [`print::LINE_BYTES`] bytes on a GPU) arrives whole; calls of
/// different threads arrive in the order they ran. On the CPU backend the text of a launch is
/// written when it ends; on NVIDIA by the CUDA driver at the next wait for the device; on AMD
/// it is dropped (liboffload 22 offers no `printf` there). Debugging aid, not a data path: a
/// launch's output is bounded (1 MiB).
#[macro_export]
macro_rules! println {
    () => {
        $crate::print::print(::core::format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::print::print(::core::format_args!($($arg)*), true)
    };
}

/// [`println!`] without the newline.
#[macro_export]
macro_rules! print {
    ($($arg:tt)*) => {
        $crate::print::print(::core::format_args!($($arg)*), false)
    };
}

/// Everything a kernels module needs: `use offload::prelude::*;`.
pub mod prelude {
    pub use crate::atomic::{AtomicElem, Atomics, MemoryScope};
    pub use crate::fence;
    pub use crate::index::*;
    pub use crate::load_order::together;
    pub use crate::math;
    pub use crate::nanosleep;
    pub use crate::partition::{Chunks, GridStride, Groups, PerBlock, Tiles};
    pub use crate::reduce::{Loc, Max, MaxLoc, Min, MinLoc, Sum};
    pub use crate::region::{Near, Region, Region2, Region3};
    pub use crate::scatter::Scatter;
    pub use crate::shared::{Block, BlockRead, Shared};
    pub use crate::shared_array::SharedArray;
    pub use crate::shared_atomics::SharedAtomics;
    pub use crate::stencil::{Neighbours, Stencil};
    pub use crate::strided::Strided;
    pub use crate::vector::{f32x2, f32x4, f64x2, i32x4, u32x2, u32x4};
    pub use crate::warp::{Warp, WarpValue};
    pub use offload_macros::{KernelScalar, kernel};
}

/// Implementation details used by code that `#[offload::kernels]` generates. Not a public
/// API: nothing here is covered by semantic versioning.
#[doc(hidden)]
pub mod __private {
    pub use crate::atomic::{AtomicElem, Atomics};
    #[cfg(not(offload_gpu))]
    pub use crate::lane::{Awaitable, Lane, Ready};
    pub use crate::partition::{Chunks, GridStride, Groups, Partition, PerBlock, Tiles};
    #[cfg(offload_gpu)]
    pub use crate::reduce::BlockCommit;
    pub use crate::reduce::{
        Max, MaxLoc, MaxLocOp, MaxOp, Min, MinLoc, MinLocOp, MinOp, ReduceOp, Reduction, Sum, SumOp,
    };
    pub use crate::region::{Region, Region2, Region3};
    pub use crate::scatter::Scatter;
    pub use crate::shared::{Block, Shared};
    pub use crate::shared_array::SharedArray;
    pub use crate::shared_atomics::SharedAtomics;
    pub use crate::warp::Warp;

    #[cfg(not(offload_gpu))]
    pub use crate::host::private::*;

    /// Rebuilds a read-only kernel argument from the pointer and length the host passed.
    ///
    /// # Safety
    ///
    /// `ptr` must be non-null, aligned, and valid for reads of `len` elements of `T` for the
    /// whole kernel, and no thread may write those elements while the kernel runs. (The host
    /// passes a dangling, aligned pointer for empty data, so no branch on `len` is needed,
    /// which would hide from LLVM that every load goes through the read-only argument.)
    #[inline(always)]
    pub unsafe fn slice_arg<'a, T>(ptr: *const T, len: usize) -> &'a [T] {
        // SAFETY: the caller's contract.
        unsafe { core::slice::from_raw_parts(ptr, len) }
    }

    /// The piece of a `Shared`, `SharedArray` or `Block` parameter, `offset` bytes into the
    /// block's launch-sized shared memory.
    ///
    /// # Safety
    ///
    /// The launch must reserve at least `offset` bytes plus the parameter's own.
    #[inline(always)]
    pub unsafe fn shared_slots<T>(offset: usize) -> *mut T {
        // SAFETY: the caller guarantees the reservation covers `offset`.
        unsafe { crate::arch::shared_base().add(offset).cast() }
    }

    /// Zeroes the first `bytes` bytes of the block's shared memory in 16-byte words and meets
    /// the block at a barrier: what the entry point of a kernel with a `SharedAtomics`
    /// parameter does once for all of its shared parameters (made with `from_zeroed_parts`).
    ///
    /// # Safety
    ///
    /// At kernel entry, called by every thread of the block (`tid`: its index in the block of
    /// `n` threads) before any other use of shared memory or barrier; the launch reserves at
    /// least `bytes` bytes, a multiple of 16.
    #[cfg(offload_gpu)]
    #[inline(always)]
    pub unsafe fn zero_block_shared(bytes: usize, tid: usize, n: usize) {
        // SAFETY: the caller's contract.
        unsafe { crate::shared::zero_block_shared(bytes, tid, n) }
    }

    /// Compiles only for an atomic element type: checked at a `SharedAtomics` parameter, so
    /// that a wrong element type is an error there rather than at each use.
    #[inline(always)]
    pub const fn atomic_elem<T: crate::AtomicElem>() -> bool {
        true
    }

    /// Stops the kernel: the device reports the launch as failed (on the CPU backend, a
    /// panic).
    #[inline(always)]
    pub fn trap() -> ! {
        crate::arch::trap()
    }

    /// Unused by cargo-offload's device builds (`panic = "immediate-abort"` traps in place),
    /// kept for device builds with another panic strategy.
    #[cfg(offload_gpu)]
    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
        trap()
    }
}
