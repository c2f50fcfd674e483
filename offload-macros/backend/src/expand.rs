//! Code generation for `#[offload::kernels]`.

use crate::signature::{self, Errors, Kernel, LaunchBounds, ParamKind};
use offload_wire::record::{
    KernelRecord, LAUNCH_BOUNDS_SUFFIX, ModuleRecord, ParamRecord, SECTION, VERSION, WHOLE_WARPS_SUFFIX,
};
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use syn::parse::Parser;
use syn::spanned::Spanned;

/// Arguments of the attribute. Users write none; the device crate that cargo-offload
/// generates passes `__device(prefix = "…")` so that entry symbols match the host's.
#[derive(Debug, Default)]
pub struct Options {
    device_prefix: Option<String>,
    /// `#[offload::kernels(allow_unsafe)]`: the module may contain `unsafe` code.
    allow_unsafe: bool,
    /// `__on_use` (the runtime's own modules): the module's record stays in an executable only
    /// when the executable launches one of its kernels, so that a program that never calls
    /// `offload::algorithms` does not carry (or compile) its kernels.
    on_use: bool,
}

impl Options {
    pub fn parse(attr: TokenStream) -> syn::Result<Options> {
        let mut options = Options::default();
        if attr.is_empty() {
            return Ok(options);
        }
        let parser = syn::meta::parser(|meta| {
            if meta.path.is_ident("allow_unsafe") {
                options.allow_unsafe = true;
                Ok(())
            } else if meta.path.is_ident("__on_use") {
                options.on_use = true;
                Ok(())
            } else if meta.path.is_ident("__device") {
                meta.parse_nested_meta(|inner| {
                    if inner.path.is_ident("prefix") {
                        options.device_prefix = Some(inner.value()?.parse::<syn::LitStr>()?.value());
                        Ok(())
                    } else {
                        Err(inner.error("unknown device option"))
                    }
                })
            } else {
                Err(meta.error("`#[offload::kernels]` takes no arguments but `allow_unsafe`"))
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
    // The device compile resolves the crates itself; the host compile checks them against
    // the package's device dependencies, so that both builds accept the same modules.
    let crates =
        if options.device_prefix.is_none() { crate::check::DeviceCrates::of_this_package() } else { None };
    // The check reads the manifest: it is an input of this crate's compile from now on, so that
    // editing the list rebuilds (and rechecks) the module.
    let manifest_input = match (&crates, std::env::var("CARGO_MANIFEST_DIR")) {
        (Some(_), Ok(dir)) => {
            let path = std::path::Path::new(&dir).join("Cargo.toml").display().to_string();
            let gpu: TokenStream = GPU.parse().expect("valid cfg");
            quote!(
                #[cfg(not(#gpu))]
                const _: &[u8] = include_bytes!(#path);
            )
        }
        _ => quote!(),
    };
    let own = crate::check::own_names(items);
    crate::check::self_contained(items, &own, crates.as_ref(), &mut errors);
    crate::check::rules(items, &own, options.allow_unsafe, &mut errors);
    let waits = crate::uniformity::check(items, &mut errors);
    crate::lanes::check(items, &waits, &mut errors);
    let mut kernels = Vec::new();
    for item in items.iter_mut() {
        let syn::Item::Fn(f) = item else { continue };
        let Some(pos) = f.attrs.iter().position(is_kernel_attr) else { continue };
        let attr = f.attrs.remove(pos);
        let KernelArgs { types: instances, bounds } = match &attr.meta {
            syn::Meta::Path(_) => KernelArgs::default(),
            syn::Meta::List(list) => match list.parse_args::<KernelArgs>() {
                Ok(args) => args,
                Err(e) => {
                    errors.push(e);
                    continue;
                }
            },
            syn::Meta::NameValue(nv) => {
                errors.add(
                    nv.span(),
                    "write `#[kernel]`, `#[kernel(f32, f64)]` for a generic kernel, or `#[kernel(launch_bounds(256, 4))]`",
                );
                continue;
            }
        };
        if !matches!(f.vis, syn::Visibility::Public(_)) {
            errors.add(
                f.sig.ident.span(),
                "a kernel must be `pub`: host code launches it from outside the module",
            );
        }
        match signature::kernel(f, instances) {
            Ok(k) => {
                // On a GPU, the body goes into its entry points: a kernel that takes a `Warp`
                // has two, and with two callers LLVM kept a large body out of line — a call
                // whose arrays then went through local memory, and whose whole-warps entry
                // knew nothing constant of its warp.
                if k.takes_warp() && !f.attrs.iter().any(|a| a.path().is_ident("inline")) {
                    let gpu: TokenStream = GPU.parse().expect("valid cfg");
                    f.attrs.push(syn::parse_quote!(#[cfg_attr(#gpu, inline(always))]));
                }
                kernels.push(Kernel { bounds, ..k })
            }
            Err(e) => errors.push(e),
        }
    }
    errors.finish()?;

    let body_span = brace.span.join();
    let body_text = body_span.source_text();
    let device = options.device_prefix.is_some();
    let prefix = match options.device_prefix {
        Some(p) => p,
        None => {
            let krate = std::env::var("CARGO_CRATE_NAME").unwrap_or_else(|_| "crate".into());
            let tokens = quote!(#(#items)*).to_string();
            format!("__offload_{krate}_{}_{:08x}", module.ident, fnv1a(&tokens) as u32)
        }
    };
    let prints = crate::check::prints(items);
    let record =
        module_record(&module, &prefix, &kernels, body_span, body_text, options.allow_unsafe, prints);
    let record_len = record.len();
    let record_lit = syn::LitByteStr::new(&record, Span::call_site());
    let gpu: TokenStream = GPU.parse().expect("valid cfg");
    // The trait a generic kernel's types implement: the runtime's own modules name it
    // differently, so that rustc's "similarly named trait" notes on a user's kernel do not
    // point into the runtime.
    let instance = if options.on_use { format_ident!("RuntimeInstance") } else { format_ident!("Instance") };
    // The CPU backend's lockstep copies, from the module as written (`waits` names its calls).
    let lockstep = if device {
        std::collections::BTreeMap::new()
    } else {
        let names: Vec<String> = kernels.iter().map(|k| k.name.to_string()).collect();
        let (_, items) = module.content.as_ref().expect("checked above");
        crate::lockstep::generate(items, &names, &waits)
    };
    for k in &mut kernels {
        k.lockstep = lockstep.contains_key(&k.name.to_string());
    }
    let lockstep_fns = lockstep.into_values();
    let generated = kernels.iter().map(|k| kernel_items(&module.ident, &prefix, k, &gpu, &instance));
    let (_, items) = module.content.as_mut().expect("checked above");
    // The CPU backend's copy, once everything above has read the module as written (the
    // device compile gets it as written, too). `waits` names calls by their place in `items`,
    // which nothing above has moved.
    if !device {
        crate::lanes::transform(items, &waits);
    }
    // Kept in every executable that links the module, or (`__on_use`) only in those whose
    // launches reference it (`KernelInfo::record`).
    let used = if options.on_use { quote!() } else { quote!(#[used]) };
    let extra: syn::File = syn::parse2(quote! {
        #[cfg(not(#gpu))]
        #[doc(hidden)]
        #[unsafe(link_section = #SECTION)]
        #used
        pub static __OFFLOAD_MODULE_RECORD: [u8; #record_len] = *#record_lit;
        #manifest_input
        #(#lockstep_fns)*
        #(#generated)*
    })?;
    items.extend(extra.items);
    Ok(module.into_token_stream())
}

/// What `#[kernel(…)]` lists: the types of a generic kernel, and `launch_bounds(…)`.
#[derive(Default)]
struct KernelArgs {
    types: Vec<syn::Type>,
    bounds: Option<LaunchBounds>,
}

impl syn::parse::Parse for KernelArgs {
    fn parse(input: syn::parse::ParseStream<'_>) -> syn::Result<Self> {
        let mut args = KernelArgs::default();
        while !input.is_empty() {
            if input.peek(syn::Ident)
                && input.peek2(syn::token::Paren)
                && input.fork().parse::<syn::Ident>()? == "launch_bounds"
            {
                let name: syn::Ident = input.parse()?;
                let content;
                syn::parenthesized!(content in input);
                let values =
                    syn::punctuated::Punctuated::<syn::LitInt, syn::Token![,]>::parse_terminated(&content)?;
                let numbers =
                    values.iter().map(|v| v.base10_parse::<u32>()).collect::<syn::Result<Vec<u32>>>()?;
                let (max_threads, min_blocks) = match numbers[..] {
                    [t] => (t, 0),
                    [t, b] if b > 0 => (t, b),
                    _ => {
                        return Err(syn::Error::new(
                            values.span(),
                            "write `launch_bounds(MAX_THREADS)` or `launch_bounds(MAX_THREADS, MIN_BLOCKS)`, as CUDA's `__launch_bounds__`, with MIN_BLOCKS at least 1",
                        ));
                    }
                };
                if !(1..=1024).contains(&max_threads) {
                    return Err(syn::Error::new(
                        values[0].span(),
                        "a block holds 1 to 1024 threads: `launch_bounds`'s first number is the most a launch of this kernel may use",
                    ));
                }
                if args.bounds.replace(LaunchBounds { max_threads, min_blocks }).is_some() {
                    return Err(syn::Error::new(name.span(), "`launch_bounds` given twice"));
                }
            } else {
                args.types.push(input.parse()?);
            }
            if !input.is_empty() {
                input.parse::<syn::Token![,]>()?;
            }
        }
        Ok(args)
    }
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
    allow_unsafe: bool,
    prints: bool,
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
        allow_unsafe,
        prints,
        kernels: kernels
            .iter()
            .map(|k| KernelRecord {
                name: k.name.to_string(),
                symbols: instances(k)
                    .into_iter()
                    .flat_map(|(_, suffix)| {
                        let symbol = format!("{prefix}_{}{suffix}", k.name);
                        let whole = whole_warps_symbol(k, &symbol);
                        std::iter::once(symbol).chain((!whole.is_empty()).then_some(whole))
                    })
                    .collect(),
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

/// The instantiations of a kernel: `(type, symbol suffix)`; one `(None, "")` if not generic.
fn instances(k: &Kernel) -> Vec<(Option<syn::Type>, String)> {
    match &k.generic {
        None => vec![(None, String::new())],
        Some(g) => g
            .instances
            .iter()
            .map(|t| {
                let name: String = t
                    .to_token_stream()
                    .to_string()
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                (Some(t.clone()), format!("__{name}"))
            })
            .collect(),
    }
}

/// Replaces a generic kernel's type parameter by one of its instantiations.
struct Substitute<'a> {
    param: &'a syn::Ident,
    with: &'a syn::Type,
}

impl syn::visit_mut::VisitMut for Substitute<'_> {
    fn visit_type_mut(&mut self, ty: &mut syn::Type) {
        if let syn::Type::Path(p) = ty
            && p.qself.is_none()
            && p.path.is_ident(self.param)
        {
            *ty = self.with.clone();
            return;
        }
        syn::visit_mut::visit_type_mut(self, ty);
    }
}

/// The device entry points and the host launch module of one kernel.
fn kernel_items(
    module: &syn::Ident,
    prefix: &str,
    k: &Kernel,
    gpu: &TokenStream,
    instance: &syn::Ident,
) -> TokenStream {
    let Some(g) = &k.generic else {
        let (entries, host) = instance_parts(module, prefix, k, "", None);
        return quote! {
            #(#[cfg(#gpu)] #entries)*
            #[cfg(not(#gpu))]
            #host
        };
    };
    let entries = instances(k).into_iter().flat_map(|(ty, suffix)| {
        let ty = ty.expect("generic instances have types");
        let mut concrete = Kernel {
            name: k.name.clone(),
            params: k.params.clone(),
            generic: None,
            bounds: k.bounds,
            lockstep: k.lockstep,
        };
        for p in &mut concrete.params {
            let t = p.kind.ty_mut();
            syn::visit_mut::VisitMut::visit_type_mut(&mut Substitute { param: &g.param, with: &ty }, t);
        }
        let (entries, _) = instance_parts(module, prefix, &concrete, &suffix, Some(&ty));
        entries
    });
    let host = generic_host(module, prefix, k, g, instance);
    quote! {
        #(#[cfg(#gpu)] #entries)*
        #[cfg(not(#gpu))]
        #host
    }
}

/// The symbol of the entry point for launches of whole warps of the kernel whose entry symbol
/// is `symbol`, empty if it has none (it takes no `Warp`).
fn whole_warps_symbol(k: &Kernel, symbol: &str) -> String {
    if k.takes_warp() { format!("{symbol}{WHOLE_WARPS_SUFFIX}") } else { String::new() }
}

/// The device entry point `symbol`, with its launch bounds' static beside it: the launch's
/// indices, each parameter's view, the kernel's call and its reductions' commits. `whole`: the
/// variant for launches whose blocks are whole warps (see `WHOLE_WARPS_SUFFIX`).
fn entry_point(
    symbol: &str,
    bounds: Option<LaunchBounds>,
    whole: bool,
    pieces: &Pieces,
    call: &TokenStream,
    entry_after: &TokenStream,
) -> TokenStream {
    let Pieces { entry_params, entry_lets, device_args, .. } = pieces;
    let entry = format_ident!("{symbol}");
    let bounds = bounds.map(|LaunchBounds { max_threads, min_blocks }| {
        let name = format_ident!("{symbol}{}", LAUNCH_BOUNDS_SUFFIX);
        quote! {
            #[doc(hidden)]
            #[unsafe(no_mangle)]
            pub static #name: [u32; 2] = [#max_threads, #min_blocks];
        }
    });
    quote! {
        #[doc(hidden)]
        #[unsafe(no_mangle)]
        pub unsafe extern "gpu-kernel" fn #entry(#(#entry_params),*) {
            // (Inside the entry point, so that it exists exactly where the entry point does.)
            #bounds
            let __index = ::offload::global_linear_id();
            let __at = [::offload::global_id_x(), ::offload::global_id_y(), ::offload::global_id_z()];
            let __block_threads =
                (::offload::block_dim_x() * ::offload::block_dim_y() * ::offload::block_dim_z()) as usize;
            let __total = ::offload::global_threads();
            let __tid = (::offload::thread_idx_x()
                + ::offload::block_dim_x() * (::offload::thread_idx_y() + ::offload::block_dim_y() * ::offload::thread_idx_z()))
                as usize;
            let __whole: bool = #whole;
            let mut __shared = 0usize;
            let _ = (__index, __at, __total, __tid, __block_threads, __shared, __whole);
            #(#entry_lets)*
            #call(#(#device_args),*);
            #entry_after
        }
    }
}

/// For one concrete instantiation: the device entry points (one, and one for launches of
/// whole warps if the kernel takes a `Warp`) and the host launch module.
fn instance_parts(
    module: &syn::Ident,
    prefix: &str,
    k: &Kernel,
    suffix: &str,
    turbofish: Option<&syn::Type>,
) -> (Vec<TokenStream>, TokenStream) {
    let name = &k.name;
    let symbol = format!("{prefix}_{name}{suffix}");
    let path = format!("{module}::{name}");
    // `self::`: a parameter may have the kernel's own name, which would shadow it here.
    let call = match turbofish {
        Some(t) => quote!(self::#name::<#t>),
        None => quote!(self::#name),
    };

    let pieces = pieces(k);
    let Pieces { commits, launch_params, launch_lets, checks, shared_needs, .. } = &pieces;
    let lockstep = k.lockstep.then(|| {
        let f = crate::lockstep::fn_name(name);
        quote!(super::#f)
    });
    let cpu_body = cpu_body(&pieces, quote!(super::#name), lockstep);
    let doc = launch_doc(name);
    let entry_after = fused_commits(commits);
    let max_block_threads = k.max_block_threads();
    // A kernel that takes a `Warp` gets a second entry point for launches whose blocks are whole
    // warps, in which `__whole` is `true`: its collectives name every lane as a constant.
    let whole_symbol = whole_warps_symbol(k, &symbol);
    let entries: Vec<TokenStream> =
        std::iter::once(entry_point(&symbol, k.bounds, false, &pieces, &call, &entry_after))
            .chain(
                k.takes_warp()
                    .then(|| entry_point(&whole_symbol, k.bounds, true, &pieces, &call, &entry_after)),
            )
            .collect();
    let host = quote! {
        #[doc = #doc]
        pub mod #name {
            #[allow(unused_imports)]
            use super::*;

            static KERNEL: ::offload::__private::KernelInfo = ::offload::__private::KernelInfo {
                path: #path,
                symbol: #symbol,
                whole_warps_symbol: #whole_symbol,
                record: &super::__OFFLOAD_MODULE_RECORD,
                max_block_threads: #max_block_threads,
                cache: ::offload::__private::KernelCache::new(),
            };

            // Sizes known when compiling, checked when compiling.
            const _: () = { #(#checks;)* };

            /// A grid of blocks of `block_threads` threads that fills `device` with this kernel:
            /// as many blocks as are resident at once, by the kernel's registers (on NVIDIA,
            /// from its cubin) and shared memory — the grid for a kernel that walks its data
            /// with `grid_stride`.
            ///
            /// # Errors
            ///
            /// When no block of `block_threads` threads can run this kernel on `device`.
            pub fn resident(device: &::offload::Device, block_threads: u32) -> ::offload::Result<::offload::Grid> {
                ::offload::__private::resident_grid(device, &KERNEL, block_threads, &[#(#shared_needs),*])
            }

            /// Runs the kernel over `grid` threads on `device`.
            #[allow(clippy::too_many_arguments)]
            pub fn launch<'__a>(
                __device: &'__a ::offload::Device,
                __grid: impl ::core::convert::Into<::offload::Grid>,
                #(#launch_params),*
            ) -> ::offload::Result<()> {
                let mut __launch = ::offload::__private::Launch::new(__device, &KERNEL, __grid.into())?;
                #(#launch_lets)*
                #cpu_body
            }
        }
    };
    (entries, host)
}

/// The launch module of a generic kernel: one `launch` generic over the listed types, which
/// picks the entry point of the type it is called with.
fn generic_host(
    module: &syn::Ident,
    prefix: &str,
    k: &Kernel,
    g: &crate::signature::Generic,
    instance: &syn::Ident,
) -> TokenStream {
    let name = &k.name;
    let param = &g.param;
    let bounds = &g.bounds;
    let pieces = pieces(k);
    let Pieces { launch_params, launch_lets, checks, shared_needs, .. } = &pieces;
    let lockstep = k.lockstep.then(|| {
        let f = crate::lockstep::fn_name(name);
        quote!(super::#f::<#param>)
    });
    let cpu_body = cpu_body(&pieces, quote!(super::#name::<#param>), lockstep);
    let doc = launch_doc(name);
    let max_block_threads = k.max_block_threads();
    let impls = instances(k).into_iter().map(|(ty, suffix)| {
        let ty = ty.expect("generic instances have types");
        let symbol = format!("{prefix}_{name}{suffix}");
        let whole_symbol = whole_warps_symbol(k, &symbol);
        let path = format!("{module}::{name}::<{}>", ty.to_token_stream());
        quote! {
            impl #instance for #ty {
                fn kernel() -> &'static ::offload::__private::KernelInfo {
                    static KERNEL: ::offload::__private::KernelInfo = ::offload::__private::KernelInfo {
                        path: #path,
                        symbol: #symbol,
                        whole_warps_symbol: #whole_symbol,
                        record: &super::__OFFLOAD_MODULE_RECORD,
                        max_block_threads: #max_block_threads,
                        cache: ::offload::__private::KernelCache::new(),
                    };
                    &KERNEL
                }
            }
        }
    });
    let listed: Vec<String> = g.instances.iter().map(|t| t.to_token_stream().to_string()).collect();
    let message = format!("kernel `{name}` was not compiled for `{{Self}}`");
    let note = format!("it is compiled for: {}; add the type to `#[kernel(…)]`", listed.join(", "));
    quote! {
        #[doc = #doc]
        pub mod #name {
            #[allow(unused_imports)]
            use super::*;

            /// The types this kernel is compiled for.
            #[diagnostic::on_unimplemented(message = #message, note = #note)]
            pub trait #instance {
                #[doc(hidden)]
                fn kernel() -> &'static ::offload::__private::KernelInfo;
            }
            #(#impls)*

            /// A grid of blocks of `block_threads` threads that fills `device` with this kernel's
            /// instance for the type: as many blocks as are resident at once, by its registers
            /// (on NVIDIA, from its cubin) and shared memory.
            ///
            /// # Errors
            ///
            /// When no block of `block_threads` threads can run the kernel on `device`.
            pub fn resident<#param: #instance + ::offload::__private::KernelScalar + #bounds>(
                device: &::offload::Device,
                block_threads: u32,
            ) -> ::offload::Result<::offload::Grid> {
                ::offload::__private::resident_grid(device, #param::kernel(), block_threads, &[#(#shared_needs),*])
            }

            /// Runs the kernel over `grid` threads on `device`.
            #[allow(clippy::too_many_arguments)]
            pub fn launch<'__a, #param: #instance + ::offload::__private::KernelScalar + #bounds>(
                __device: &'__a ::offload::Device,
                __grid: impl ::core::convert::Into<::offload::Grid>,
                #(#launch_params),*
            ) -> ::offload::Result<()> {
                // (Sizes that depend on the type: checked for each type launched with.)
                const { #(#checks;)* };
                let mut __launch = ::offload::__private::Launch::new(__device, #param::kernel(), __grid.into())?;
                #(#launch_lets)*
                #cpu_body
            }
        }
    }
}

/// The launch's run on the CPU backend, calling `kernel` (a path) for each emulated thread:
/// a body that loops over the threads of a block, or — when the kernel's threads meet
/// (barriers, shared memory, warps) — its lockstep copy (`lockstep`, a path, where it has one:
/// see `crate::lockstep`) or each thread's future, the lanes of a block polled in turns (see
/// `crate::lanes`).
fn cpu_body(p: &Pieces, kernel: TokenStream, lockstep: Option<TokenStream>) -> TokenStream {
    let Pieces { call_args, cpu_range_before, cpu_range_after, lanes, lane_lets, block_lets, .. } = p;
    // (A reduction's accumulator is a lane's own local, which the lockstep copy cannot lend to
    // every lane at once: such kernels keep the futures.)
    let lockstep = lockstep.filter(|_| *lanes && cpu_range_before.is_empty() && cpu_range_after.is_empty());
    if *lanes {
        let lane = quote! {
            &|__lane: ::offload::__private::LaneThread| {
                #(#lane_lets)*
                async move {
                    #[allow(unused_imports)]
                    use ::offload::__private::{Awaitable as _, Ready as _};
                    #(#cpu_range_before)*
                    // (The token in a block of its own: the lane's future need not keep it.)
                    let __call = {
                        let __token = __lane.token();
                        let __thread = &__token;
                        #kernel(#(#call_args),*)
                    };
                    ::offload::__private::Lane::new(__call).__lane_await().await;
                    #(#cpu_range_after)*
                }
            }
        };
        // The lockstep copy where there is one (the futures with `OFFLOAD_CPU_LOCKSTEP=0`).
        return match lockstep {
            Some(lockstep) => quote! {
                __launch.run_lockstep(
                    &|__ls: &mut ::offload::__private::Lockstep<'_>| {
                        #(#block_lets)*
                        #lockstep(__ls, |__thread: &::offload::__private::ThreadToken| (#(#call_args,)*));
                    },
                    #lane,
                )
            },
            None => quote!(__launch.run_lanes(#lane)),
        };
    }
    quote! {
        __launch.run(&|__threads: &mut ::offload::__private::Threads<'_, '_>| {
            #(#block_lets)*
            #(#cpu_range_before)*
            __threads.each(|__token: ::offload::__private::ThreadToken| {
                let __thread = &__token;
                #kernel(#(#call_args),*);
            });
            #(#cpu_range_after)*
        })
    }
}

/// The tokens each parameter contributes to the entry point, the launch function and the
/// CPU backend's call.
#[derive(Default)]
struct Pieces {
    entry_params: Vec<TokenStream>,
    entry_lets: Vec<TokenStream>,
    /// Arguments of the kernel call in the entry point.
    device_args: Vec<TokenStream>,
    /// The reductions the entry point commits after the kernel returns.
    commits: Vec<Commit>,
    launch_params: Vec<TokenStream>,
    launch_lets: Vec<TokenStream>,
    /// Arguments of the kernel call on the CPU backend.
    call_args: Vec<TokenStream>,
    /// Statements before and after the CPU backend's loop over the threads of one call (a
    /// block's, or a lane's).
    cpu_range_before: Vec<TokenStream>,
    cpu_range_after: Vec<TokenStream>,
    /// Whether the kernel's threads meet (barriers, shared memory, warps), so that the CPU
    /// backend runs a block's threads as lanes.
    lanes: bool,
    /// A lane's view of the launch's arguments: a copy of each scalar, a reference to the rest.
    lane_lets: Vec<TokenStream>,
    /// The arguments as locals of a block's loop over its threads (element-wise kernels): a
    /// copy of each, so that the compiler keeps them in registers from thread to thread.
    block_lets: Vec<TokenStream>,
    /// Compile-time checks of sizes the compiler knows (`assert!` expressions).
    checks: Vec<TokenStream>,
    /// The shared memory each parameter takes per block, in launch order
    /// (`offload::__private::SharedNeed`s, for the generated `resident`).
    shared_needs: Vec<TokenStream>,
}

/// One reduction parameter's commit: its operation, accumulator type, the entry point's
/// accumulator, the result pointer and the number of result slots (`BlockCommit::publish`).
struct Commit {
    op: TokenStream,
    ty: TokenStream,
    acc: syn::Ident,
    ptr: syn::Ident,
    slots: syn::Ident,
}

/// The entry point's statements after the kernel returns: all reductions committed together
/// (see `BlockCommit`): warp values, then — unless the block is one warp — every value staged
/// in its own shared-memory slots, one barrier, and the first warp's combine of each.
fn fused_commits(commits: &[Commit]) -> TokenStream {
    if commits.is_empty() {
        return TokenStream::new();
    }
    let warp_vals: Vec<_> = (0..commits.len()).map(|i| format_ident!("__warp_value{i}")).collect();
    let offsets: Vec<_> = (0..commits.len()).map(|i| format_ident!("__reduce_offset{i}")).collect();
    let (ops, tys): (Vec<_>, Vec<_>) = commits.iter().map(|c| (&c.op, &c.ty)).unzip();
    let (accs, ptrs): (Vec<_>, Vec<_>) = commits.iter().map(|c| (&c.acc, &c.ptr)).unzip();
    let slots: Vec<_> = commits.iter().map(|c| &c.slots).collect();
    quote! {
        let __commit = unsafe { ::offload::__private::BlockCommit::new() };
        #( let #warp_vals = __commit.warp_value::<#ops, #tys>(#accs); )*
        if __commit.single_warp() {
            #( unsafe { __commit.publish::<#ops, #tys>(#warp_vals, #ptrs, #slots) }; )*
        } else {
            #(
                let #offsets = __shared;
                __shared += (__block_threads * ::core::mem::size_of::<#tys>()).next_multiple_of(16);
                unsafe { __commit.stage::<#tys>(#warp_vals, #offsets) };
            )*
            __commit.barrier();
            #( unsafe { __commit.combine::<#ops, #tys>(#offsets, #ptrs, #slots) }; )*
        }
    }
}

fn pieces(k: &Kernel) -> Pieces {
    let mut out = Pieces::default();
    // A kernel with a `SharedAtomics` parameter zeroes its whole shared memory at entry, in
    // 16-byte words, with one barrier (which the atomics' zeros need before any update): its
    // shared parameters' views are made over zeros, where each would zero its own elements.
    let zero_all = k.params.iter().any(|p| matches!(p.kind, ParamKind::SharedAtomics(..)));
    let shared_ctor = if zero_all { quote!(from_zeroed_parts) } else { quote!(from_raw_parts) };
    for p in &k.params {
        let n = &p.name;
        let (ptr, len) = (format_ident!("{n}__ptr"), format_ident!("{n}__len"));
        if matches!(
            p.kind,
            ParamKind::Slice(_)
                | ParamKind::Region(..)
                | ParamKind::Partition(..)
                | ParamKind::Atomics(_)
                | ParamKind::Scatter(_)
                | ParamKind::Reduce(..)
        ) {
            // The host never passes null (empty data gets a dangling address): saying so lets
            // LLVM drop null checks and keep loads through the pointer provably read-only.
            out.entry_lets.push(quote! { unsafe { ::core::hint::assert_unchecked(!#ptr.is_null()) }; });
        }
        if matches!(
            p.kind,
            ParamKind::Shared(_)
                | ParamKind::SharedArray(..)
                | ParamKind::SharedAtomics(..)
                | ParamKind::Warp(_)
                | ParamKind::Block(_)
        ) {
            out.lanes = true;
        }
        out.lane_lets.push(if matches!(p.kind, ParamKind::Scalar(_)) {
            quote!(let #n = #n;)
        } else {
            quote!(let #n = &#n;)
        });
        out.block_lets.push(match p.kind {
            ParamKind::Scalar(_) | ParamKind::Slice(_) => quote!(let #n = #n;),
            ParamKind::Region(..)
            | ParamKind::Partition(..)
            | ParamKind::Scatter(_)
            | ParamKind::Atomics(_)
            | ParamKind::Reduce(..) => quote!(let #n = #n.local();),
            // (Views of the block's shared memory and warps, made per lane from the launch's
            // argument: only lanes and lockstep loops have them.)
            ParamKind::Shared(_)
            | ParamKind::SharedArray(..)
            | ParamKind::SharedAtomics(..)
            | ParamKind::Warp(_)
            | ParamKind::Block(_) => quote!(let #n = &#n;),
        });
        match &p.kind {
            ParamKind::Scalar(ty) => {
                out.entry_params.push(quote!(#n: #ty));
                out.device_args.push(quote!(#n));
                out.launch_params.push(quote!(#n: #ty));
                out.checks.push(quote_spanned!(ty.span()=>
                    ::core::assert!(
                        ::core::mem::size_of::<#ty>() <= ::offload::__private::MAX_PARAM_BYTES,
                        "this parameter is larger than a kernel's parameters may be together (4096 bytes): pass it as a slice (`&[T]`) instead"
                    )
                ));
                out.launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.scalar::<#ty>(#n);));
                out.call_args.push(quote!(#n));
            }
            ParamKind::Slice(ty) => {
                out.entry_params.push(quote!(#ptr: *const #ty, #len: usize));
                out.entry_lets.push(quote! {
                    let #n = unsafe { ::offload::__private::slice_arg::<#ty>(#ptr, #len) };
                });
                out.device_args.push(quote!(#n));
                out.launch_params.push(quote!(#n: impl ::offload::__private::In<'__a, #ty>));
                out.launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.input::<#ty>(#n)?;));
                out.call_args.push(quote!(#n.get()));
            }
            ParamKind::Region(ty, dims, margin) => {
                let margin = margin.as_ref().map_or_else(|| quote!(0), |m| m.to_token_stream());
                let extent_names: Vec<_> = (0..*dims).map(|d| format_ident!("{n}__n{d}")).collect();
                out.entry_params.push(quote!(#ptr: *mut #ty #(, #extent_names: usize)*));
                let (host_call, view, region_ty, launch_ty) = match dims {
                    1 => (
                        quote!(in_out::<#ty>(#n)),
                        quote!(region(__thread)),
                        quote!(Region),
                        quote!(impl ::offload::__private::InOut<'__a, #ty>),
                    ),
                    2 => (
                        quote!(in_out_nd::<#ty, 2>(#n)),
                        quote!(region2::<{ #margin }>(__thread)),
                        quote!(Region2),
                        quote!(impl ::offload::__private::InOutNd<'__a, #ty, 2>),
                    ),
                    _ => (
                        quote!(in_out_nd::<#ty, 3>(#n)),
                        quote!(region3::<{ #margin }>(__thread)),
                        quote!(Region3),
                        quote!(impl ::offload::__private::InOutNd<'__a, #ty, 3>),
                    ),
                };
                let ctor = if *dims == 1 {
                    let len = &extent_names[0];
                    quote!(::offload::__private::Region::<#ty>::from_raw_parts(#ptr, #len, __index))
                } else {
                    quote!(::offload::__private::#region_ty::<#ty, { #margin }>::from_raw_parts(#ptr, [#(#extent_names),*], __at))
                };
                out.entry_lets.push(quote! { let #n = unsafe { #ctor }; });
                out.device_args.push(quote!(#n));
                out.launch_params.push(quote!(#n: #launch_ty));
                out.launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.#host_call?;));
                out.call_args.push(quote!(#n.#view));
            }
            ParamKind::Partition(ty, kind, size) => {
                let part = match size {
                    Some(g) => {
                        let count = count_expr(g);
                        let message = if kind == "Tiles" {
                            "a tile has at least one element per thread"
                        } else {
                            "a group has at least one thread"
                        };
                        out.checks.push(quote_spanned!(g.span()=> ::core::assert!(#count > 0, #message)));
                        quote!(::offload::__private::#kind::<#ty, #g>)
                    }
                    None => quote!(::offload::__private::#kind::<#ty>),
                };
                out.entry_params.push(quote!(#ptr: *mut #ty, #len: usize));
                out.entry_lets.push(quote! {
                    let #n = unsafe {
                        <#part as ::offload::__private::Partition<#ty>>::from_raw_parts(#ptr, #len, __index, __total)
                    };
                });
                out.device_args.push(quote!(#n));
                out.launch_params.push(quote!(#n: impl ::offload::__private::InOut<'__a, #ty>));
                out.launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.in_out::<#ty>(#n)?;));
                out.call_args.push(quote!(#n.partition::<#part>(__thread)));
            }
            ParamKind::Shared(ty) => {
                out.entry_lets.push(quote! {
                    let #n = unsafe {
                        ::offload::__private::Shared::<#ty>::#shared_ctor(
                            ::offload::__private::shared_slots::<#ty>(__shared),
                            __tid,
                            __block_threads,
                        )
                    };
                    __shared += (__block_threads * ::core::mem::size_of::<#ty>()).next_multiple_of(16);
                });
                out.device_args.push(quote!(#n));
                out.launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.shared::<#ty>()?;));
                out.shared_needs
                    .push(quote!(::offload::__private::SharedNeed::PerThread(::core::mem::size_of::<#ty>())));
                out.call_args.push(quote!(#n.view(__thread)));
            }
            ParamKind::SharedArray(ty, len) | ParamKind::SharedAtomics(ty, len) => {
                let atomic = matches!(p.kind, ParamKind::SharedAtomics(..));
                let (view_ty, what, view) = if atomic {
                    (quote!(SharedAtomics), "SharedAtomics", quote!(atomics_view))
                } else {
                    (quote!(SharedArray), "SharedArray", quote!(view))
                };
                let count = count_expr(len);
                // (With a `SharedAtomics`, every view is over zeros: see `zero_all`.)
                out.entry_lets.push(quote! {
                    let #n = unsafe {
                        ::offload::__private::#view_ty::<#ty, #len>::#shared_ctor(
                            ::offload::__private::shared_slots::<#ty>(__shared),
                            __tid,
                            __block_threads,
                        )
                    };
                    __shared += (#count * ::core::mem::size_of::<#ty>()).next_multiple_of(16);
                });
                out.device_args.push(quote!(#n));
                // A size the compiler knows is checked when compiling, at the parameter.
                let too_big =
                    format!("this `{what}` does not fit in a block's shared memory (at most 227 KiB)");
                out.checks.push(quote_spanned!(ty.span()=>
                    ::core::assert!(::offload::__private::fits_shared::<#ty>(#count), #too_big)
                ));
                if atomic {
                    out.checks.push(quote_spanned!(ty.span()=> ::core::assert!(::offload::__private::atomic_elem::<#ty>())));
                }
                out.launch_lets
                    .push(quote_spanned!(ty.span()=> let #n = __launch.shared_array::<#ty, #len>()?;));
                out.shared_needs.push(quote!(::offload::__private::SharedNeed::Bytes(
                    ::core::primitive::usize::checked_mul(#count, ::core::mem::size_of::<#ty>())
                )));
                out.call_args.push(quote!(#n.#view(__thread)));
            }
            ParamKind::Warp(ty) => {
                // SAFETY (of the generated call): the runtime launches the entry point whose
                // `__whole` is `true` only with blocks of whole warps.
                out.entry_lets
                    .push(quote! { let #n = unsafe { ::offload::__private::Warp::current_in(__whole) }; });
                out.device_args.push(quote!(#n));
                out.launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.warp();));
                out.call_args.push(quote!(#n.view(__thread)));
            }
            ParamKind::Block(ty) => {
                out.entry_lets.push(quote! {
                    let #n = unsafe {
                        ::offload::__private::Block::from_raw_parts(
                            ::offload::__private::shared_slots::<u64>(__shared),
                            __tid,
                        )
                    };
                    __shared += 16;
                });
                out.device_args.push(quote!(#n));
                out.launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.block()?;));
                out.shared_needs
                    .push(quote!(::offload::__private::SharedNeed::Bytes(::core::option::Option::Some(16))));
                out.call_args.push(quote!(#n.view(__thread)));
            }
            ParamKind::Scatter(ty) => {
                let (iptr, ilen) = (format_ident!("{n}__iptr"), format_ident!("{n}__ilen"));
                out.entry_params.push(quote!(#ptr: *mut #ty, #len: usize, #iptr: *const i64, #ilen: usize));
                out.entry_lets.push(quote! {
                    unsafe { ::core::hint::assert_unchecked(!#iptr.is_null()) };
                    let #n = unsafe { ::offload::__private::Scatter::<#ty>::from_raw_parts(#ptr, #len, #iptr, #ilen, __index) };
                });
                out.device_args.push(quote!(#n));
                out.launch_params.push(quote!(#n: impl ::offload::__private::ScatterData<'__a, #ty>));
                out.launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.scatter::<#ty>(#n)?;));
                out.call_args.push(quote!(#n.scatter(__thread)));
            }
            ParamKind::Atomics(ty) => {
                out.entry_params.push(quote!(#ptr: *mut #ty, #len: usize));
                out.entry_lets.push(quote! {
                    let #n = unsafe { ::offload::__private::Atomics::<#ty>::from_raw_parts(#ptr, #len) };
                });
                out.device_args.push(quote!(#n));
                out.launch_params.push(quote!(#n: impl ::offload::__private::InOut<'__a, #ty>));
                out.launch_lets.push(quote_spanned!(ty.span()=> let #n = __launch.atomics::<#ty>(#n)?;));
                out.call_args.push(quote!(#n.atomics()));
            }
            ParamKind::Reduce(ty, op) => {
                let acc = format_ident!("{n}__acc");
                let op_ty = format_ident!("{op}Op");
                // The accumulator: the element itself, or a value and its index.
                let val =
                    if op == "MinLoc" || op == "MaxLoc" { quote!(::offload::Loc<#ty>) } else { quote!(#ty) };
                // The length is the number of result slots (a power of two; see
                // `BlockCommit::publish`).
                out.entry_params.push(quote!(#ptr: *mut #val, #len: usize));
                let identity = quote!(<::offload::__private::#op_ty as ::offload::__private::Reduction<#val>>::identity());
                out.entry_lets.push(quote! { let mut #acc: #val = #identity; });
                out.device_args.push(quote!(::offload::__private::#op::<#ty>::new(&mut #acc)));
                out.launch_params.push(quote!(#n: impl ::offload::__private::ReduceInto<'__a, #val>));
                out.launch_lets.push(
                    quote_spanned!(ty.span()=> let #n = __launch.reduce::<#val, ::offload::__private::#op_ty>(#n)?;),
                );
                out.shared_needs.push(
                    quote!(::offload::__private::SharedNeed::PerThread(::core::mem::size_of::<#val>())),
                );
                // One accumulator for the threads of one call (a block's, or a lane's), committed
                // once after them: the reduction views only add to it.
                out.cpu_range_before.push(quote!(let mut #acc: #val = #identity;));
                out.call_args.push(quote!(::offload::__private::#op::<#ty>::new(&mut #acc)));
                out.cpu_range_after.push(quote!(#n.commit::<::offload::__private::#op_ty>(#acc);));
                out.commits.push(Commit {
                    op: quote!(::offload::__private::#op_ty),
                    ty: val,
                    acc,
                    ptr,
                    slots: len,
                });
            }
        }
    }
    if zero_all {
        // After every shared parameter's piece: `__shared` is their total.
        out.entry_lets.push(quote! {
            unsafe { ::offload::__private::zero_block_shared(__shared, __tid, __block_threads) };
        });
    }
    out
}

/// A shared array's length as an expression: `N`, or the expression inside `{ … }` (which a
/// type needs around a computed length, and an expression does not), in parentheses.
fn count_expr(len: &syn::GenericArgument) -> TokenStream {
    match len {
        syn::GenericArgument::Const(syn::Expr::Block(b)) if b.block.stmts.len() == 1 => {
            let stmt = &b.block.stmts[0];
            quote!((#stmt))
        }
        other => quote!((#other)),
    }
}

fn launch_doc(name: &syn::Ident) -> String {
    format!(
        "Host side of kernel [`{name}`](fn@super::{name}): `launch(&device, threads, args…)` runs it over \
         `threads` GPU threads (or a [`Grid`](::offload::Grid)). Host slices are copied to the device (and, \
         for `Region`s, back) and the launch waits; device buffers are used in place and the launch only queues."
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    /// The entry point's statements of the one kernel in `module`, as text without spaces.
    fn entry_of(module: syn::ItemMod) -> String {
        let out = kernels_module(Options::default(), module).unwrap().to_string().replace(' ', "");
        let start = out.find("extern\"gpu-kernel\"").expect("an entry point");
        out[start..].to_owned()
    }

    #[test]
    fn a_kernel_with_shared_atomics_zeroes_its_shared_memory_once_at_entry() {
        let entry = entry_of(parse_quote! {
            mod k {
                use offload::prelude::*;
                #[kernel]
                pub fn h(x: &[u32], a: SharedAtomics<u32, 64>, s: SharedArray<u32, 32>, v: Shared<u32>, block: Block) {}
            }
        });
        let zero = entry.find("zero_block_shared(__shared,__tid,__block_threads)").expect("one zeroing");
        assert_eq!(entry.matches("zero_block_shared").count(), 1);
        // Every shared view is made over the zeros, and the zeroing follows all of them (so
        // `__shared` is their total) and comes before the kernel runs.
        assert_eq!(entry.matches("from_zeroed_parts").count(), 3, "{entry}");
        assert!(!entry.contains("SharedAtomics::<u32,64>::from_raw_parts"));
        assert!(entry.rfind("from_zeroed_parts").unwrap() < zero);
        assert!(zero < entry.find("self::h(").expect("the kernel's call"));
    }

    #[test]
    fn a_kernel_that_takes_a_warp_gets_an_entry_for_whole_warps() {
        let out = kernels_module(
            Options::default(),
            parse_quote! {
                mod k {
                    use offload::prelude::*;
                    #[kernel]
                    pub fn w(mut y: Groups<f64, 4>, w: Warp) {}
                    #[kernel]
                    pub fn plain(mut y: Region<f64>) {}
                }
            },
        )
        .unwrap()
        .to_string()
        .replace(' ', "");
        let entries: Vec<&str> = out.split("extern\"gpu-kernel\"fn").skip(1).collect();
        // Entry symbols are `<prefix>_<kernel>[<suffix>]`.
        let named = |end: &str| {
            entries
                .iter()
                .filter(|e| e.split('(').next().unwrap().ends_with(end))
                .copied()
                .collect::<Vec<_>>()
        };
        let (general, whole) = (named("_w"), named("_w__whole_warps"));
        assert_eq!((general.len(), whole.len()), (1, 1), "{out}");
        // The same body, but the warp of one is told its launch has whole warps.
        assert!(general[0].contains("let__whole:bool=false;"), "{}", general[0]);
        assert!(whole[0].contains("let__whole:bool=true;"), "{}", whole[0]);
        assert!(whole[0].contains("Warp::current_in(__whole)"));
        // The host picks between them; a kernel without a warp has one entry and no variant.
        let whole_symbol = format!("whole_warps_symbol:\"{}\"", whole[0].split('(').next().unwrap());
        assert!(out.contains(&whole_symbol), "{out}");
        assert_eq!(named("_plain").len(), 1);
        assert_eq!(entries.len(), 3);
        assert!(out.contains("whole_warps_symbol:\"\""));
    }

    #[test]
    fn a_kernel_without_shared_atomics_zeroes_each_piece_by_its_owners() {
        let entry = entry_of(parse_quote! {
            mod k {
                use offload::prelude::*;
                #[kernel]
                pub fn t(s: SharedArray<u32, 32>, v: Shared<u32>, block: Block) {}
            }
        });
        assert!(!entry.contains("zero_block_shared"), "{entry}");
        assert!(!entry.contains("from_zeroed_parts"));
        // The array, the slots and the block's own slot.
        assert_eq!(entry.matches("from_raw_parts(::offload::__private::shared_slots").count(), 3, "{entry}");
    }
}
