//! Data on devices: buffers and their parts, pinned host memory and asynchronous copies,
//! preloads and launch scopes, checked index lists — all over the device's backend.

pub(crate) mod buffer;
pub(crate) mod buffer_part;
pub(crate) mod pinned;
pub(crate) mod preload;
pub(crate) mod scope;
pub(crate) mod scratch;
pub(crate) mod transfer;
pub(crate) mod unique;
