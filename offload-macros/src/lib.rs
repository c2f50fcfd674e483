//! Procedural macros of cargo-offload. Thin entry points: all logic lives in
//! `offload-macros-backend`, which is unit-tested without a compiler run.
use proc_macro::TokenStream;

/// Marks a self-contained module of GPU kernels. See the `offload` crate's documentation.
#[proc_macro_attribute]
pub fn kernels(attr: TokenStream, item: TokenStream) -> TokenStream {
    offload_macros_backend::kernels(attr.into(), item.into()).unwrap_or_else(syn_error_to_tokens).into()
}

/// Marks a GPU kernel inside a `#[offload::kernels]` module.
#[proc_macro_attribute]
pub fn kernel(attr: TokenStream, item: TokenStream) -> TokenStream {
    offload_macros_backend::kernel_outside_module(attr.into(), item.into())
        .unwrap_or_else(syn_error_to_tokens)
        .into()
}

/// Lets a `#[repr(C)]` struct of plain data be a kernel parameter.
#[proc_macro_derive(KernelScalar)]
pub fn derive_kernel_scalar(item: TokenStream) -> TokenStream {
    offload_macros_backend::derive_kernel_scalar(item.into()).unwrap_or_else(syn_error_to_tokens).into()
}

fn syn_error_to_tokens(e: offload_macros_backend::Error) -> proc_macro2::TokenStream {
    e.to_compile_error()
}
