//! Host items that generated code names through `offload::__private`.
pub use super::args::{In, InData, InOut, InOutNd, KernelScalar, OutData, ScatterData, assert_kernel_scalar};
pub use super::launch::{KernelCache, KernelInfo, Launch};
pub use super::views::{InArg, InOutArg, ScatterArg, SharedArg, SharedArrayArg, ThreadToken, WarpArg};
