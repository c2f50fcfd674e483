//! The liboffload backend: raw API ([`ffi`]), the loader and checked calls ([`runtime`]),
//! and the CUDA context fix ([`cuda`]).
pub(crate) mod cuda;
pub(crate) mod ffi;
pub(crate) mod runtime;
