//! The host half of the runtime: devices, launches, errors, embedded images and the CPU
//! emulation backend.

mod alloc;
mod args;
pub mod blas;
mod buffer;
mod device;
pub(crate) mod emulate;
mod error;
mod grid;
pub mod images;
mod launch;
mod liboffload;
mod parts;
mod pinned;
mod preload;
pub(crate) mod private;
pub mod report;
mod scope;
mod staging;
mod transfer;
mod unique;
mod views;

pub use args::{KernelScalar, Out};
pub use buffer::DeviceBuffer;
pub use device::{Device, DeviceKind};
pub use error::{Error, Result};
pub use grid::Grid;
pub use parts::{BufferPart, BufferPartMut};
pub use pinned::PinnedBuffer;
pub use preload::{Preload, PreloadMut};
pub use report::{TransferReport, reset_transfer_report, set_reporting, transfer_report};
pub use scope::{Scope, Staged};
pub use staging::set_staging;
pub use transfer::Pending;
pub use unique::UniqueIndices;
