//! The host half of the runtime: devices, launches, errors, embedded images and the CPU
//! emulation backend.

mod buffer;
mod device;
pub(crate) mod emulate;
mod error;
pub mod images;
mod launch;
mod liboffload;
pub(crate) mod private;

pub use buffer::DeviceBuffer;
pub use device::{Device, DeviceKind};
pub use error::{Error, Result};
pub use launch::{Grid, KernelScalar};
