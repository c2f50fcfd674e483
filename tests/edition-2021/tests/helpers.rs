//! The tests of barriers and warp operations in a kernels module's helpers and methods, built in
//! a crate of the 2021 edition. On the CPU backend those functions return their bodies' futures
//! (`impl Future + use<…>`), and what such a future may borrow follows the edition: 2024 keeps
//! every lifetime in scope, 2021 only those it is told. The same file as the workspace's test.

#[path = "../../tests/helpers.rs"]
mod helpers;
