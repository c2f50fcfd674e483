//! The CPU emulation backend: device memory is host memory, copies are `memcpy`, and a launch
//! runs the host-compiled kernel over the grid on host threads ([`super::emulate`]) before it
//! returns, so there is never work to wait for.

/// The CPU backend's state: none beyond the scheduler's thread count (`emulate`).
#[derive(Debug, Default)]
pub(crate) struct CpuBackend;

/// The name of the CPU backend's queue track on the timeline: synchronous, its work done
/// before each call returns (every CPU device shares it).
pub(crate) fn track_name() -> String {
    "CPU emulation backend (synchronous queue)".to_owned()
}
