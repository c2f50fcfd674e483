//! LLNL RAJAPerf's tier-1, tier-1b, tier-2 (reductions, atomics) and tier-3 (stencils, shared
//! memory, dense products) kernels in safe Rust, run through cargo-offload, with the
//! suite's data initialisation and checksums reproduced exactly, a plain-Rust CPU reference
//! for element-by-element checking, and CUDA C++ baselines (`cuda/`) run in a helper process.
//!
//! Definitions follow RAJAPerf v2024.07 (problem sizes, repetition counts, initialisation
//! order, checksum scale factors, CUDA launch shapes).

pub mod checksum;
pub mod cuda;
pub mod data;
pub mod domain;
pub mod kernels;
pub mod problem;
pub mod protocol;
pub mod reference;
pub mod report;
pub mod runner;
pub mod setup;

pub use problem::{Group, KernelId, Problem, Timing};
