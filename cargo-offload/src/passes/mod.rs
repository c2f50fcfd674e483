//! The three passes of `cargo offload build`.
pub mod device;
pub mod device_deps;
pub mod host_meta;
pub mod relink;
