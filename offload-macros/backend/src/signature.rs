//! Kernel signatures: which parameter kinds a kernel may take, and what each becomes.

use syn::spanned::Spanned;
use syn::{FnArg, GenericArgument, Ident, Pat, PathArguments, Type};

/// How a parameter crosses from host to device.
#[derive(Clone, Debug)]
pub enum ParamKind {
    /// A `Copy` value, passed by value.
    Scalar(Type),
    /// `&[T]`: read-only, shared by all threads, copied host → device.
    Slice(Type),
    /// `Region<T>` (`dims == 1`), `Region2<T>`, `Region3<T>`: writable, one element per
    /// thread, copied in and back. `Region2<T, M>` and `Region3<T, M>` carry a margin `M`.
    Region(Type, u8, Option<Box<GenericArgument>>),
    /// `GridStride<T>`, `Chunks<T>`, `PerBlock<T>`, `Groups<T, G>`, `Tiles<T, V>` (the ident, and
    /// `G` or `V`): writable
    /// partitions among the launch's threads.
    Partition(Type, Ident, Option<Box<GenericArgument>>),
    /// `Shared<T>`: block-shared memory, one slot per thread; no host data.
    Shared(Type),
    /// `Atomics<T>`: writable, shared by all threads through atomic operations.
    Atomics(Type),
    /// `Scatter<T>`: writable through a checked index list, one element per thread.
    Scatter(Type),
    /// `Sum<T>`, `Min<T>`, `Max<T>`, `MinLoc<T>`, `MaxLoc<T>` (the ident): a reduction to one value.
    Reduce(Type, Ident),
    /// `Warp` (the type as written): the thread's warp; no host data.
    Warp(Type),
    /// `SharedArray<T, N>`: `N` elements of block-shared memory; no host data.
    SharedArray(Type, Box<syn::GenericArgument>),
    /// `SharedAtomics<T, N>`: `N` elements of block-shared memory for atomic updates; no host
    /// data.
    SharedAtomics(Type, Box<syn::GenericArgument>),
    /// `Block` (the type as written): the block's phase token for barriers and shared memory;
    /// no host data.
    Block(Type),
}

/// One kernel parameter.
#[derive(Clone, Debug)]
pub struct Param {
    pub name: Ident,
    pub kind: ParamKind,
}

impl ParamKind {
    pub fn label(&self) -> &'static str {
        match self {
            ParamKind::Scalar(_) => "scalar",
            ParamKind::Slice(_) => "slice",
            ParamKind::Region(_, 1, _) => "region",
            ParamKind::Region(_, 2, _) => "region2",
            ParamKind::Region(..) => "region3",
            ParamKind::Partition(..) => "partition",
            ParamKind::Shared(_) => "shared",
            ParamKind::Atomics(_) => "atomics",
            ParamKind::Scatter(_) => "scatter",
            ParamKind::Reduce(_, _) => "reduce",
            ParamKind::Warp(_) => "warp",
            ParamKind::SharedArray(_, _) => "shared_array",
            ParamKind::SharedAtomics(_, _) => "shared_atomics",
            ParamKind::Block(_) => "block",
        }
    }

    pub fn ty(&self) -> &Type {
        match self {
            ParamKind::Scalar(t)
            | ParamKind::Slice(t)
            | ParamKind::Region(t, _, _)
            | ParamKind::Partition(t, ..)
            | ParamKind::Shared(t)
            | ParamKind::Atomics(t)
            | ParamKind::Scatter(t)
            | ParamKind::Reduce(t, _)
            | ParamKind::Warp(t)
            | ParamKind::SharedArray(t, _)
            | ParamKind::SharedAtomics(t, _)
            | ParamKind::Block(t) => t,
        }
    }

    pub fn ty_mut(&mut self) -> &mut Type {
        match self {
            ParamKind::Scalar(t)
            | ParamKind::Slice(t)
            | ParamKind::Region(t, _, _)
            | ParamKind::Partition(t, ..)
            | ParamKind::Shared(t)
            | ParamKind::Atomics(t)
            | ParamKind::Scatter(t)
            | ParamKind::Reduce(t, _)
            | ParamKind::Warp(t)
            | ParamKind::SharedArray(t, _)
            | ParamKind::SharedAtomics(t, _)
            | ParamKind::Block(t) => t,
        }
    }
}

/// A checked kernel function.
#[derive(Debug)]
pub struct Kernel {
    pub name: Ident,
    pub params: Vec<Param>,
    /// For a generic kernel: its type parameter and the types to instantiate it with.
    pub generic: Option<Generic>,
    /// `#[kernel(launch_bounds(…))]`.
    pub bounds: Option<LaunchBounds>,
    /// Whether the host build has its lockstep copy (`crate::lockstep`).
    pub lockstep: bool,
}

impl Kernel {
    /// The `KernelInfo::max_block_threads` of its launches: the launch bounds' thread count, 0
    /// without launch bounds.
    pub fn max_block_threads(&self) -> u32 {
        self.bounds.map_or(0, |b| b.max_threads)
    }

    /// Whether it takes a `Warp`, and so gets an entry point for launches of whole warps.
    pub fn takes_warp(&self) -> bool {
        self.params.iter().any(|p| matches!(p.kind, ParamKind::Warp(_)))
    }
}

/// CUDA's `__launch_bounds__`: the most threads a block of this kernel may have, and the
/// fewest blocks that should fit on one multiprocessor (0: no such wish), which caps the
/// registers a thread may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LaunchBounds {
    pub max_threads: u32,
    pub min_blocks: u32,
}

/// A generic kernel's type parameter, its bounds, and the instantiations `#[kernel(…)]` lists.
#[derive(Debug)]
pub struct Generic {
    pub param: Ident,
    pub bounds: syn::punctuated::Punctuated<syn::TypeParamBound, syn::Token![+]>,
    pub instances: Vec<Type>,
}

/// Checks a `#[kernel]` function's signature and classifies its parameters. Every problem
/// is reported, each at its own token. `instances` are the types listed in `#[kernel(…)]`.
pub fn kernel(f: &syn::ItemFn, instances: Vec<Type>) -> syn::Result<Kernel> {
    let mut errors = Errors::default();
    let sig = &f.sig;
    if let Some(t) = &sig.asyncness {
        errors.add(t.span(), "a kernel cannot be `async`");
    }
    if let syn::Safety::Unsafe(t) = &sig.safety {
        errors.add(t.span(), "kernels are safe functions: remove `unsafe`");
    }
    if let Some(abi) = &sig.abi {
        errors.add(abi.span(), "a kernel takes no ABI: the entry point's ABI is generated");
    }
    let mut generic = None;
    let type_params: Vec<&syn::TypeParam> = sig.generics.type_params().collect();
    if sig.generics.params.len() != type_params.len() || type_params.len() > 1 {
        errors.add(
            sig.generics.span(),
            "a kernel may have one type parameter, and no lifetime or const parameters",
        );
    } else if let Some(tp) = type_params.first() {
        if instances.is_empty() {
            errors.add(
                tp.ident.span(),
                "a generic kernel lists the types to compile it for: `#[kernel(f32, f64)]`\n  \
                 note: the GPU image holds one entry point per listed type; launching with another type is a compile error",
            );
        }
        let mut bounds = tp.bounds.clone();
        if let Some(wc) = &sig.generics.where_clause {
            for p in &wc.predicates {
                match p {
                    syn::WherePredicate::Type(pt) if matches!(&pt.bounded_ty, Type::Path(tp2) if tp2.path.is_ident(&tp.ident)) =>
                    {
                        bounds.extend(pt.bounds.iter().cloned());
                    }
                    other => errors
                        .add(other.span(), "only bounds on the kernel's type parameter are supported here"),
                }
            }
        }
        generic = Some(Generic { param: tp.ident.clone(), bounds, instances: instances.clone() });
    } else if let Some(first) = instances.first() {
        errors.add(
            first.span(),
            "types in `#[kernel(…)]` are instantiations of a generic kernel, and this kernel is not generic",
        );
    }
    if let syn::ReturnType::Type(_, ty) = &sig.output
        && !matches!(&**ty, Type::Tuple(t) if t.elems.is_empty())
    {
        errors.add(ty.span(), "a kernel returns nothing: write results into a `Region<T>` parameter");
    }
    if let Some(v) = &sig.variadic {
        errors.add(v.span(), "a kernel cannot be variadic");
    }
    let mut params = Vec::new();
    for input in &sig.inputs {
        match input {
            FnArg::Receiver(r) => errors.add(r.span(), "a kernel is a free function, not a method"),
            FnArg::Typed(pt) => {
                let name = match &*pt.pat {
                    Pat::Ident(p) if p.by_ref.is_none() && p.subpat.is_none() => Some(p.ident.clone()),
                    other => {
                        errors.add(other.span(), "kernel parameters must be plain names (`x` or `mut x`)");
                        None
                    }
                };
                match classify(&pt.ty) {
                    Ok(kind) => {
                        if let Some(name) = name {
                            params.push(Param { name, kind });
                        }
                    }
                    Err(e) => errors.push(e),
                }
            }
        }
    }
    let blocks: Vec<&Param> = params.iter().filter(|p| matches!(p.kind, ParamKind::Block(_))).collect();
    if let Some(second) = blocks.get(1) {
        errors.add(
            second.name.span(),
            "a kernel takes one `Block`: it is the block's one barrier, which moves all of its shared memory to the next phase together",
        );
    }
    if blocks.is_empty()
        && let Some(shared) = params.iter().find(|p| {
            matches!(p.kind, ParamKind::Shared(_) | ParamKind::SharedArray(..) | ParamKind::SharedAtomics(..))
        })
    {
        let write = match shared.kind {
            ParamKind::Shared(_) => "write(&block, v)",
            ParamKind::SharedAtomics(..) => "add(&block, j, v)",
            _ => "set(&block, j, v)",
        };
        errors.add(
            shared.name.span(),
            format!(
                "shared memory is written and read through the block's phase token: add a `block: Block` parameter\n  \
                 note: `{0}.{write}` in the write phase, `let read = block.sync();` (the barrier), then `{0}.get(&read, j)`",
                shared.name
            ),
        );
    }
    errors.finish()?;
    Ok(Kernel { name: sig.ident.clone(), params, generic, bounds: None, lockstep: false })
}

fn classify(ty: &Type) -> syn::Result<ParamKind> {
    match ty {
        Type::Reference(r) => {
            let slice_elem = match &*r.elem {
                Type::Slice(s) => Some((*s.elem).clone()),
                _ => None,
            };
            match (r.mutability.is_some(), slice_elem) {
                (false, Some(elem)) => Ok(ParamKind::Slice(elem)),
                (true, Some(elem)) => Err(syn::Error::new(
                    ty.span(),
                    format!(
                        "`&mut [T]` cannot be a kernel parameter: every GPU thread would hold the same `&mut`, which breaks Rust's aliasing rules\n  \
                         help: use `Region<{}>`, which gives each thread its own element",
                        quote::ToTokens::to_token_stream(&elem)
                    ),
                )),
                (true, None) => Err(syn::Error::new(
                    ty.span(),
                    "`&mut T` cannot be a kernel parameter: all GPU threads would share one mutable reference\n  \
                     help: use `Region<T>` for per-thread outputs",
                )),
                (false, None) => Err(syn::Error::new(
                    ty.span(),
                    "references other than `&[T]` cannot be kernel parameters\n  \
                     help: pass the value itself (a `Copy` scalar) or a slice `&[T]`",
                )),
            }
        }
        Type::Path(p) if p.qself.is_none() => {
            let last = p.path.segments.last().expect("paths have a segment");
            if last.ident == "Warp" || last.ident == "Block" {
                if !last.arguments.is_empty() {
                    return Err(syn::Error::new(
                        ty.span(),
                        format!("`{}` takes no type arguments", last.ident),
                    ));
                }
                return Ok(if last.ident == "Warp" {
                    ParamKind::Warp(ty.clone())
                } else {
                    ParamKind::Block(ty.clone())
                });
            }
            if last.ident == "BlockRead" {
                return Err(syn::Error::new(
                    ty.span(),
                    "a kernel starts in the block's write phase: take `Block` (its `sync()` gives the `BlockRead`)",
                ));
            }
            if last.ident == "Groups" || last.ident == "Tiles" {
                let args: Vec<&GenericArgument> = match &last.arguments {
                    PathArguments::AngleBracketed(a) => {
                        a.args.iter().filter(|g| !matches!(g, GenericArgument::Lifetime(_))).collect()
                    }
                    _ => Vec::new(),
                };
                return match args.as_slice() {
                    [GenericArgument::Type(elem), size] => Ok(ParamKind::Partition(
                        elem.clone(),
                        last.ident.clone(),
                        Some(Box::new((*size).clone())),
                    )),
                    _ if last.ident == "Tiles" => Err(syn::Error::new(
                        ty.span(),
                        "`Tiles` takes an element type and the elements per thread of a tile, e.g. `Tiles<u32x4, 4>`",
                    )),
                    _ => Err(syn::Error::new(
                        ty.span(),
                        "`Groups` takes an element type and the threads of a group, e.g. `Groups<f64, 4>`",
                    )),
                };
            }
            if last.ident == "SharedArray" || last.ident == "SharedAtomics" {
                let args: Vec<&GenericArgument> = match &last.arguments {
                    PathArguments::AngleBracketed(a) => {
                        a.args.iter().filter(|g| !matches!(g, GenericArgument::Lifetime(_))).collect()
                    }
                    _ => Vec::new(),
                };
                return match args.as_slice() {
                    [GenericArgument::Type(elem), len] if last.ident == "SharedArray" => {
                        Ok(ParamKind::SharedArray(elem.clone(), Box::new((*len).clone())))
                    }
                    [GenericArgument::Type(elem), len] => {
                        Ok(ParamKind::SharedAtomics(elem.clone(), Box::new((*len).clone())))
                    }
                    _ => Err(syn::Error::new(
                        ty.span(),
                        format!(
                            "`{0}` takes an element type and a length, e.g. `{0}<{1}, 256>`",
                            last.ident,
                            if last.ident == "SharedArray" { "f32" } else { "u32" }
                        ),
                    )),
                };
            }
            if last.ident == "Region2" || last.ident == "Region3" {
                let dims = if last.ident == "Region2" { 2 } else { 3 };
                let args: Vec<&GenericArgument> = match &last.arguments {
                    PathArguments::AngleBracketed(a) => {
                        a.args.iter().filter(|g| !matches!(g, GenericArgument::Lifetime(_))).collect()
                    }
                    _ => Vec::new(),
                };
                return match args.as_slice() {
                    [GenericArgument::Type(elem)] => Ok(ParamKind::Region(elem.clone(), dims, None)),
                    [
                        GenericArgument::Type(elem),
                        margin @ (GenericArgument::Const(_) | GenericArgument::Type(_)),
                    ] => Ok(ParamKind::Region(elem.clone(), dims, Some(Box::new((*margin).clone())))),
                    _ => Err(syn::Error::new(
                        ty.span(),
                        format!(
                            "`{0}` takes an element type and optionally a margin, e.g. `{0}<f64>` or `{0}<f64, 1>`",
                            last.ident
                        ),
                    )),
                };
            }
            let make: Box<dyn Fn(Type) -> ParamKind> = match last.ident.to_string().as_str() {
                "Region" => Box::new(|t| ParamKind::Region(t, 1, None)),
                "Atomics" => Box::new(ParamKind::Atomics),
                "Scatter" => Box::new(ParamKind::Scatter),
                "Shared" => Box::new(ParamKind::Shared),
                "GridStride" | "Chunks" | "PerBlock" => {
                    let kind = last.ident.clone();
                    Box::new(move |t| ParamKind::Partition(t, kind.clone(), None))
                }
                "Sum" | "Min" | "Max" | "MinLoc" | "MaxLoc" => {
                    let op = last.ident.clone();
                    Box::new(move |t| ParamKind::Reduce(t, op.clone()))
                }
                _ => return Ok(ParamKind::Scalar(ty.clone())),
            };
            region_elem(&last.arguments).map(make).ok_or_else(|| {
                syn::Error::new(
                    ty.span(),
                    format!("`{}` takes one element type, e.g. `{0}<f32>`", last.ident),
                )
            })
        }
        Type::Array(_) | Type::Tuple(_) | Type::Paren(_) => Ok(ParamKind::Scalar(ty.clone())),
        Type::Ptr(_) => Err(syn::Error::new(
            ty.span(),
            "raw pointers cannot be kernel parameters: use `&[T]` to read and `Region<T>` to write",
        )),
        _ => Err(syn::Error::new(ty.span(), "this type cannot be a kernel parameter")),
    }
}

fn region_elem(args: &PathArguments) -> Option<Type> {
    let PathArguments::AngleBracketed(a) = args else { return None };
    let mut args = a.args.iter().filter(|arg| !matches!(arg, GenericArgument::Lifetime(_)));
    match (args.next(), args.next()) {
        (Some(GenericArgument::Type(t)), None) => Some(t.clone()),
        _ => None,
    }
}

/// Collects several errors into one, so that every problem is reported at once.
#[derive(Default)]
pub struct Errors(Option<syn::Error>);

impl Errors {
    pub fn add(&mut self, span: proc_macro2::Span, message: impl std::fmt::Display) {
        self.push(syn::Error::new(span, message));
    }

    pub fn push(&mut self, e: syn::Error) {
        match &mut self.0 {
            None => self.0 = Some(e),
            Some(all) => all.combine(e),
        }
    }

    pub fn finish(self) -> syn::Result<()> {
        self.0.map_or(Ok(()), Err)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn generic_kernels_need_their_instantiations() {
        let f: syn::ItemFn = parse_quote! { pub fn axpy<T: Float>(a: T, x: &[T], y: Region<T>) {} };
        assert!(kernel(&f, vec![]).unwrap_err().to_string().contains("#[kernel(f32, f64)]"));
        let k = kernel(&f, vec![parse_quote!(f32), parse_quote!(f64)]).unwrap();
        let g = k.generic.unwrap();
        assert_eq!((g.param.to_string(), g.instances.len()), ("T".to_owned(), 2));
        let plain: syn::ItemFn = parse_quote! { pub fn k(x: u32) {} };
        assert!(kernel(&plain, vec![parse_quote!(f32)]).is_err());
    }

    fn kinds(f: syn::ItemFn) -> Vec<&'static str> {
        kernel(&f, vec![]).unwrap().params.iter().map(|p| p.kind.label()).collect()
    }

    #[test]
    fn parameters_are_classified() {
        let f: syn::ItemFn = parse_quote! {
            pub fn saxpy(a: f32, x: &[f32], mut y: Region<f32>, z: Region<'_, u8>, m: Region2<f64>, v: Region3<u32>, w: Warp, t: SharedArray<f32, TILE>, h: Region3<'_, f64, 1>, g: Region2<f32, HALO>, b: Block) {}
        };
        assert_eq!(
            kinds(f),
            [
                "scalar",
                "slice",
                "region",
                "region",
                "region2",
                "region3",
                "warp",
                "shared_array",
                "region3",
                "region2",
                "block"
            ]
        );
    }

    #[test]
    fn shared_memory_comes_with_one_block_token() {
        let f: syn::ItemFn = parse_quote! { pub fn k(t: Shared<f32>) {} };
        let e = kernel(&f, vec![]).unwrap_err().to_string();
        assert!(e.contains("add a `block: Block` parameter"), "{e}");
        let f: syn::ItemFn = parse_quote! { pub fn k(a: Block, b: Block) {} };
        assert!(kernel(&f, vec![]).unwrap_err().to_string().contains("one `Block`"));
        let f: syn::ItemFn = parse_quote! { pub fn k(r: BlockRead) {} };
        assert!(kernel(&f, vec![]).unwrap_err().to_string().contains("write phase"));
    }

    #[test]
    fn per_block_and_group_outputs_are_partitions() {
        let f: syn::ItemFn =
            parse_quote! { pub fn k(a: PerBlock<f64>, b: Groups<u32, { 2 * W }>, c: Groups<'_, f32, 4>) {} };
        assert_eq!(kinds(f), ["partition", "partition", "partition"]);
        let f: syn::ItemFn = parse_quote! { pub fn k(b: Groups<u32>) {} };
        let e = kernel(&f, vec![]).unwrap_err().to_string();
        assert!(e.contains("`Groups` takes an element type and the threads of a group"), "{e}");
    }

    #[test]
    fn shared_atomics_take_an_element_type_a_length_and_the_block() {
        let f: syn::ItemFn = parse_quote! { pub fn k(h: SharedAtomics<u32, { 2 * BINS }>, b: Block) {} };
        assert_eq!(kinds(f), ["shared_atomics", "block"]);
        let f: syn::ItemFn = parse_quote! { pub fn k(h: SharedAtomics<u32>, b: Block) {} };
        let e = kernel(&f, vec![]).unwrap_err().to_string();
        assert!(
            e.contains("`SharedAtomics` takes an element type and a length, e.g. `SharedAtomics<u32, 256>`"),
            "{e}"
        );
        let f: syn::ItemFn = parse_quote! { pub fn k(h: SharedAtomics<u32, 16>) {} };
        let e = kernel(&f, vec![]).unwrap_err().to_string();
        assert!(e.contains("add a `block: Block` parameter") && e.contains("h.add(&block, j, v)"), "{e}");
    }

    #[test]
    fn mutable_slices_are_rejected_with_a_region_hint() {
        let f: syn::ItemFn = parse_quote! { fn k(y: &mut [f32]) {} };
        let e = kernel(&f, vec![]).unwrap_err().to_string();
        assert!(e.contains("aliasing"), "{e}");
        assert!(e.contains("Region<f32>"), "{e}");
    }

    #[test]
    fn every_problem_is_reported_at_once() {
        let f: syn::ItemFn = parse_quote! { async fn k<T>(p: *const f32, (a, b): (u8, u8)) -> u32 {} };
        let messages: Vec<String> =
            kernel(&f, vec![]).unwrap_err().into_iter().map(|e| e.to_string()).collect();
        assert_eq!(messages.len(), 5, "{messages:#?}");
    }
}
