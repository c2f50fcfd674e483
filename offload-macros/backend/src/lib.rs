//! Implementation of `#[offload::kernels]` and `#[kernel]`, as an ordinary library so that
//! it can be unit-tested with `parse_quote!`.
//!
//! A kernels module expands to itself plus, for each kernel:
//! - a device entry point (`extern "gpu-kernel"`, compiled only for GPU targets) that turns
//!   raw launch arguments back into the kernel's safe parameter types;
//! - a host module `<kernel>::launch` that copies host-slice arguments in (and back) and runs the
//!   kernel on a GPU or the CPU backend;
//!
//! and, once per module, the metadata record `cargo offload build` reads to compile the
//! module for the device.

mod check;
mod expand;
mod lanes;
mod lockstep;
mod scalar;
mod signature;
mod uniformity;

use proc_macro2::TokenStream;

pub use syn::Error;

/// `#[offload::kernels]` on a module.
pub fn kernels(attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let options = expand::Options::parse(attr)?;
    let module: syn::ItemMod = syn::parse2(item)?;
    expand::kernels_module(options, module)
}

/// `#[derive(KernelScalar)]`.
pub fn derive_kernel_scalar(item: TokenStream) -> syn::Result<TokenStream> {
    scalar::derive(syn::parse2(item)?)
}

/// `#[kernel]` outside a kernels module (inside one, the module's macro consumes it).
pub fn kernel_outside_module(_attr: TokenStream, item: TokenStream) -> syn::Result<TokenStream> {
    let span = syn::parse2::<syn::ItemFn>(item.clone())
        .map(|f| f.sig.ident.span())
        .unwrap_or_else(|_| proc_macro2::Span::call_site());
    Err(syn::Error::new(
        span,
        "`#[kernel]` only works inside a `#[offload::kernels]` module\n  \
         help: put the kernel in a module marked `#[offload::kernels]`; the module is what the GPU compiles",
    ))
}
