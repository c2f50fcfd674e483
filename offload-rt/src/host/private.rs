//! Host items that generated code names through `offload::__private`.
pub use super::launch::{
    In, InArg, InData, InOut, InOutArg, InOutNd, KernelInfo, KernelScalar, Launch, OutData, SharedArg,
    ThreadToken, assert_kernel_scalar,
};
