//! The liboffload backend's foundation, and the only code that calls liboffload's C API: the
//! raw declarations ([`ffi`]), loading the library and finding GPUs ([`runtime`]), queues and
//! events ([`queue`]), memory ([`memory`]), and the CUDA driver queries liboffload 22 lacks
//! ([`cuda`]). Everything here returns `Result`s and owns its `unsafe`.
pub(crate) mod cuda;
pub(crate) mod ffi;
pub(crate) mod memory;
pub(crate) mod queue;
pub(crate) mod runtime;
pub(crate) mod trap_record;
