//! Host items that generated code names through `offload::__private`.
pub use super::args::KernelScalar;
pub use super::args::{In, InData, InOut, InOutNd, OutData, assert_kernel_scalar};
pub use super::launch::{KernelInfo, Launch};
pub use super::views::{InArg, InOutArg, SharedArg, ThreadToken};
