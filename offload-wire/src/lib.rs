//! The formats that cargo-offload's pieces exchange, in one small crate that each of them
//! depends on and that depends on none of them:
//!
//! - [`record`]: the record each `#[offload::kernels]` module leaves in the host executable
//!   (written by the macros, read by `cargo offload build`);
//! - [`images`]: the container of device images `cargo offload build` links into the
//!   executable (written by cargo-offload, read by the runtime and `cargo offload inspect`);
//! - [`cubin`]: what an NVIDIA cubin records about each kernel (registers, static shared
//!   memory), read by the runtime to size grids and by `cargo offload inspect`.
//!
//! The readers take untrusted bytes (whatever a file holds) and return errors, never panic;
//! `fuzz/` holds a fuzz target for each.

#[cfg(feature = "elf")]
pub mod cubin;
pub mod images;
pub mod record;
