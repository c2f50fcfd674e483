//! The host half of the runtime: devices and their backends (the CPU emulation backend and
//! liboffload), memory, launches, vendor libraries, errors, embedded images.
//!
//! Layers, bottom up: [`liboffload`] (the only place that calls liboffload's C API),
//! [`backend`] (what a device does, once per backend), [`memory`] and [`launch`] (the public
//! types, over the backend), [`blas`]. Beside them, [`timeline`] records what all of them do.

mod alloc;
mod backend;
pub mod blas;
mod config;
mod device;
mod error;
mod grid;
pub mod images;
pub(crate) mod kernel_output;
mod launch;
mod liboffload;
pub(crate) mod memory;
pub(crate) mod private;
mod properties;
pub mod report;
pub mod timeline;

// Short paths for the modules the rest of the runtime names most.
pub(crate) use launch::params as args;
pub(crate) use memory::{buffer, pinned};

pub use args::{In, InOut, KernelScalar, Out, ReduceInto};
pub use backend::staging::set_staging;
pub use buffer::DeviceBuffer;
pub use device::{Device, DeviceKind};
pub use error::{DevicePanic, Error, PanicPlace, Result};
pub use grid::Grid;
pub use memory::buffer_part::{BufferPart, BufferPartMut};
pub use memory::preload::{Preload, PreloadMut};
pub use memory::scope::{Scope, Staged};
pub use memory::transfer::Pending;
pub use memory::unique::UniqueIndices;
pub use pinned::PinnedBuffer;
pub use properties::DeviceProperties;
pub use report::{DeviceTime, TransferReport, reset_transfer_report, set_reporting, transfer_report};
