//! Host items that generated code names through `offload::__private`.
pub use super::launch::{In, InArg, InOut, InOutArg, InOutNd, KernelInfo, KernelScalar, Launch, ThreadToken};
