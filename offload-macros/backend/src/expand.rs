//! Code generation for `#[offload::kernels]`.

use crate::record::{KernelRecord, ModuleRecord, ParamRecord, SECTION, VERSION};
use crate::signature::{self, Errors, Kernel, ParamKind};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::parse::Parser;
use syn::spanned::Spanned;

/// Arguments of the attribute. Users write none; the device crate that cargo-offload
/// generates passes `__device(prefix = "…")` so that entry symbols match the host's.
#[derive(Debug, Default)]
pub struct Options {
    device_prefix: Option<String>,
}

impl Options {
    pub fn parse(attr: TokenStream) -> syn::Result<Options> {
        let mut options = Options::default();
        if attr.is_empty() {
            return Ok(options);
        }
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("__device") {
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("prefix") {
                        options.device_prefix = Some(inner.value()?.parse::<syn::LitStr>()?.value());
                        Ok(())
                    } else {
                        Err(inner.error("unknown device option"))
                    }
                })
            } else {
                Err(meta.error("`#[offload::kernels]` takes no arguments"))
            }
        });
        parser.parse2(attr)?;
        Ok(options)
    }
}

/// FNV-1a: a stable hash (unlike `DefaultHasher`) for symbol names.
fn fnv1a(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3))
}

const GPU: &str = r#"any(target_arch = "nvptx64", target_arch = "amdgpu")"#;

pub fn kernels_module(options: Options, mut module: syn::ItemMod) -> syn::Result<TokenStream> {
    let Some((brace, items)) = &mut module.content else {
        return Err(syn::Error::new(
            module.ident.span(),
            "`#[offload::kernels]` needs an inline module (`mod gpu { … }`): the module's source is what the GPU compiles",
        ));
    };
    let mut errors = Errors::default();
    crate::check::self_contained(items, &mut errors);
    let mut kernels = Vec::new();
    for item in items.iter_mut() {
        let syn::Item::Fn(f) = item else { continue };
        let before = f.attrs.len();
        f.attrs.retain(|a| !is_kernel_attr(a));
        if f.attrs.len() == before {
            continue;
        }
        if !matches!(f.vis, syn::Visibility::Public(_)) {
            errors.add(
                f.sig.ident.span(),
                "a kernel must be `pub`: host code launches it from outside the module",
            );
        }
        match signature::kernel(f) {
            Ok(k) => kernels.push(k),
            Err(e) => errors.push(e),
        }
    }
    errors.finish()?;

    let body_span = brace.span.join();
    let body_text = body_span.source_text();
    let prefix = match options.device_prefix {
        Some(p) => p,
        None => {
            let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "crate".into());
            let tokens = quote!(#(#items)*).to_string();
            format!("__offload_{krate}_{}_{:08x}", module.ident, fnv1a(&tokens) as u32)
        }
    };
    let record = module_record(&module, &prefix, &kernels, body_span, body_text);
    let record_len = record.len();
    let record_lit = syn::LitByteStr::new(&record, Span::call_site());
    let gpu: TokenStream = GPU.parse().expect("valid cfg");
    let generated = kernels.iter().map(|k| kernel_items(&module.ident, &prefix, k, &gpu));
    let (_, items) = module.content.as_mut().expect("checked above");
    let extra: syn::File = syn::parse2(quote! {
        #[cfg(not(#gpu))]
        #[doc(hidden)]
        #[unsafe(link_section = #SECTION)]
        #[used]
        pub static __OFFLOAD_MODULE_RECORD: [u8; #record_len] = *#record_lit;
        #(#generated)*
    })?;
    items.extend(extra.items);
    Ok(module.into_token_stream())
}

fn is_kernel_attr(attr: &syn::Attribute) -> bool {
    let segments: Vec<String> = attr.path().segments.iter().map(|s| s.ident.to_string()).collect();
    matches!(segments.as_slice(), [k] | [_, k] if k == "kernel")
}

fn module_record(
    module: &syn::ItemMod,
    prefix: &str,
    kernels: &[Kernel],
    body_span: Span,
    body_text: Option<String>,
) -> Vec<u8> {
    let (line, column, body) = match body_text {
        Some(text) => {
            let start = body_span.start();
            (start.line, start.column, text)
        }
        None => {
            let (_, items) = module.content.as_ref().expect("inline module");
            (0, 0, format!("{{ {} }}", quote!(#(#items)*)))
        }
    };
    let file = body_span.local_file().map(|p| p.display().to_string()).unwrap_or_else(|| body_span.file());
    ModuleRecord {
        version: VERSION,
        krate: std::env::var("CARGO_CRATE_NAME").unwrap_or_default(),
        manifest_dir: std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default(),
        file,
        module: module.ident.to_string(),
        prefix: prefix.to_owned(),
        line,
        column,
        body,
        kernels: kernels
            .iter()
            .map(|k| KernelRecord {
                name: k.name.to_string(),
                symbol: format!("{prefix}_{}", k.name),
                params: k
                    .params
                    .iter()
                    .map(|p| ParamRecord {
                        name: p.name.to_string(),
                        kind: p.kind.label().to_owned(),
                        ty: p.kind.ty().to_token_stream().to_string(),
                    })
                    .collect(),
            })
            .collect(),
    }
    .to_bytes()
}

/// The device entry point and the host launch module of one kernel.
fn kernel_items(module: &syn::Ident, prefix: &str, k: &Kernel, gpu: &TokenStream) -> TokenStream {
    let name = &k.name;
    let symbol = format!("{prefix}_{name}");
    let entry = format_ident!("{symbol}");
    let path = format!("{module}::{name}");

    let mut entry_params = Vec::new();
    let mut entry_lets = Vec::new();
    let mut launch_params = Vec::new();
    let mut launch_lets = Vec::new();
    let mut call_args = Vec::new();
    for p in &k.params {
        let n = &p.name;
        let (ptr, len) = (format_ident!("{n}__ptr"), format_ident!("{n}__len"));
        match &p.kind {
            ParamKind::Scalar(ty) => {
                entry_params.push(quote!(#n: #ty));
                launch_params.push(quote!(#n: #ty));
                launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.scalar::<#ty>(#n);));
                call_args.push(quote!(#n));
            }
            ParamKind::Slice(ty) => {
                entry_params.push(quote!(#ptr: *const #ty, #len: usize));
                entry_lets.push(quote! {
                    let #n = unsafe { ::offload::__private::slice_arg::<#ty>(#ptr, #len) };
                });
                launch_params.push(quote!(#n: impl ::offload::__private::In<'__a, #ty>));
                launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.input::<#ty>(#n)?;));
                call_args.push(quote!(#n.get()));
            }
            ParamKind::Region(ty, dims) => {
                let extent_names: Vec<_> = (0..*dims).map(|d| format_ident!("{n}__n{d}")).collect();
                entry_params.push(quote!(#ptr: *mut #ty #(, #extent_names: usize)*));
                let (host_call, view, region_ty, launch_ty) = match dims {
                    1 => (
                        quote!(in_out::<#ty>(#n)),
                        quote!(region(__thread)),
                        quote!(Region),
                        quote!(impl ::offload::__private::InOut<'__a, #ty>),
                    ),
                    2 => (
                        quote!(in_out_nd::<#ty, 2>(#n)),
                        quote!(region2(__thread)),
                        quote!(Region2),
                        quote!(impl ::offload::__private::InOutNd<'__a, #ty, 2>),
                    ),
                    _ => (
                        quote!(in_out_nd::<#ty, 3>(#n)),
                        quote!(region3(__thread)),
                        quote!(Region3),
                        quote!(impl ::offload::__private::InOutNd<'__a, #ty, 3>),
                    ),
                };
                let ctor = if *dims == 1 {
                    let len = &extent_names[0];
                    quote!(::offload::__private::Region::<#ty>::from_raw_parts(#ptr, #len, __index))
                } else {
                    quote!(::offload::__private::#region_ty::<#ty>::from_raw_parts(#ptr, [#(#extent_names),*], __at))
                };
                entry_lets.push(quote! { let #n = unsafe { #ctor }; });
                launch_params.push(quote!(#n: #launch_ty));
                launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.#host_call?;));
                call_args.push(quote!(#n.#view));
            }
        }
    }
    let doc = format!(
        "Host side of kernel [`{name}`](fn@super::{name}): `launch(&device, threads, args…)` runs it over \
         `threads` GPU threads (or a [`Grid`](::offload::Grid)), copying `&[T]` arguments to the device and \
         `Region<T>` arguments there and back."
    );
    let device_args = k.params.iter().map(|p| &p.name);
    quote! {
        #[cfg(#gpu)]
        #[doc(hidden)]
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn #entry(#(#entry_params),*) {
            let __index = ::offload::global_linear_id();
            let __at = [::offload::global_id_x(), ::offload::global_id_y(), ::offload::global_id_z()];
            let _ = (__index, __at);
            #(#entry_lets)*
            #name(#(#device_args),*)
        }

        #[cfg(not(#gpu))]
        #[doc = #doc]
        pub mod #name {
            #[allow(unused_imports)]
            use super::*;

            static KERNEL: ::offload::__private::KernelInfo = ::offload::__private::KernelInfo {
                path: #path,
                symbol: #symbol,
                record: &super::__OFFLOAD_MODULE_RECORD,
            };

            /// Runs the kernel over `grid` threads on `device` and waits for it.
            #[allow(clippy::too_many_arguments)]
            pub fn launch<'__a>(
                __device: &'__a ::offload::Device,
                __grid: impl ::core::convert::Into<::offload::Grid>,
                #(#launch_params),*
            ) -> ::offload::Result<()> {
                let mut __launch = ::offload::__private::Launch::new(__device, &KERNEL, __grid.into())?;
                #(#launch_lets)*
                __launch.run(&|__thread: &::offload::__private::ThreadToken| super::#name(#(#call_args),*))
            }
        }
    }
}
