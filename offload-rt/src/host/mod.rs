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
pub mod report;

pub use buffer::DeviceBuffer;
pub use device::{Device, DeviceKind};
pub use error::{Error, Result};
pub use launch::{Grid, KernelScalar};
pub use report::{TransferReport, reset_transfer_report, set_reporting, transfer_report};
