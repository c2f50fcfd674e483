//! The CPU backend's lockstep copy of a kernel: a block's threads run between two barriers or
//! warp operations as one loop over the block's lanes, rather than as futures polled in turns.
//!
//! The futures (see `crate::lanes`) work for any kernel, but every barrier costs each lane a
//! suspension and a resumption of its whole state machine. Where the uniformity analysis has
//! proved that every barrier and warp operation of a kernel is reached by the whole block —
//! not merely by a warp — the block's threads all run the same sequence of them, so the kernel
//! can be cut at them: each piece of code between two of them runs as `for lane in 0..n { … }`
//! (the work-item loops of OpenCL's CPU implementations), and each local that lives from one
//! piece to a later one is kept per lane in a slot between the loops (and used there, in
//! place, by a loop that cannot move it: see `lend`). A barrier of the block's
//! own token is then just the boundary between two loops; a warp operation of the block's
//! `Warp` is done for the whole block between two loops, from every lane's value; any other
//! wait (a call of the module's own function that waits) is each lane's future, started at
//! the end of one loop and driven together (its own checks still apply), its result taken at
//! the start of the next loop. A branch or loop
//! whose body holds one runs once for the block; its condition is computed by every lane, and
//! the lanes must agree (the analysis proves they do; the CPU backend checks it). A loop whose
//! body starts with a piece that ends with a barrier is rotated: that piece runs, for the lanes
//! whose condition holds, in the lane loop that computes the condition (see
//! `Gen::rotated`), so a round of the loop is one loop over the lanes per barrier.
//!
//! The copy is made only where cutting cannot change what compiles. A kernel keeps the futures
//! when its body has a barrier or warp operation anywhere but as a statement of its own
//! (`let x = w.sum(v);`, `block = read.sync();`, `helper(&w);`) directly inside the body, a
//! `while` or `for` loop, an `if`/`else` or a block; when a barrier or warp operation is reached
//! only by a warp; when it returns early, uses `?`, or leaves such a loop with `break` or
//! `continue`; when it uses a macro other than the standard library's; or when a local that
//! lives across a barrier could borrow another local. Kept are values computed from numbers,
//! parameters, fields, arithmetic, calls of values and methods of shared-reference parameters,
//! and elements read out of anything whose contents borrow no local (`a_row[m]` of `let a_row
//! = &tile[..]`, whatever `a_row` itself borrows); not kept are references, closures, and
//! what a method of a local may lend.

mod code;
mod cut;
mod kept;
mod lend;
mod liveness;
mod names;
#[cfg(test)]
mod tests;

use code::*;
use cut::*;
use kept::*;
use lend::*;
use liveness::*;
use names::*;

use crate::uniformity::Waits;
use proc_macro2::{TokenStream, TokenTree};
use quote::{ToTokens, format_ident, quote, quote_spanned};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat, Stmt};

/// The lockstep function of each kernel of `items` that can have one, by kernel name:
/// `__lockstep_<kernel>`, to be added to the host build's module.
pub fn generate(items: &[syn::Item], kernels: &[String], waits: &Waits) -> BTreeMap<String, TokenStream> {
    let module: TokenStream = items.iter().map(ToTokens::to_token_stream).collect();
    let shadowed: Vec<&Intrinsic> =
        INTRINSICS.iter().filter(|i| only_bare_calls(module.clone(), i.name)).collect();
    let mut out = BTreeMap::new();
    for item in items {
        let syn::Item::Fn(f) = item else { continue };
        let name = f.sig.ident.to_string();
        if !kernels.contains(&name) {
            continue;
        }
        if let Some(tokens) = kernel(f, waits, &shadowed) {
            out.insert(name, tokens);
        }
    }
    out
}

/// An index intrinsic whose value a lockstep loop gives each lane itself: from the block's
/// place, where the intrinsic would read the emulated thread's context (and the compiler,
/// which cannot know that no store of the loop changed it, would read it again for each lane).
struct Intrinsic {
    name: &'static str,
    /// The lane's value: a method of `Lockstep` (`__ls`) for lane `__t`.
    value: &'static str,
}

const INTRINSICS: [Intrinsic; 7] = [
    Intrinsic { name: "global_linear_id", value: "linear_id" },
    Intrinsic { name: "thread_idx_x", value: "thread_idx::<0>" },
    Intrinsic { name: "thread_idx_y", value: "thread_idx::<1>" },
    Intrinsic { name: "thread_idx_z", value: "thread_idx::<2>" },
    Intrinsic { name: "global_id_x", value: "global_id::<0>" },
    Intrinsic { name: "global_id_y", value: "global_id::<1>" },
    Intrinsic { name: "global_id_z", value: "global_id::<2>" },
];

/// Whether every `name` in `tokens` is a bare call with no arguments (`name()`, not a path's
/// segment, a method, a function's name or a value): then a closure bound to `name` at the top
/// of a lane loop is what each of those calls means there (the prelude's intrinsic, as the
/// module imports it by its glob; a module that defines, imports or renames the name keeps
/// its calls as they are).
fn only_bare_calls(tokens: TokenStream, name: &str) -> bool {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    tokens.iter().enumerate().all(|(k, tt)| match tt {
        TokenTree::Group(g) => only_bare_calls(g.stream(), name),
        TokenTree::Ident(i) if i == name => {
            let after_path_or_dot = k > 0
                && matches!(&tokens[k - 1], TokenTree::Punct(p) if p.as_char() == ':' || p.as_char() == '.');
            let after_fn = k > 0 && matches!(&tokens[k - 1], TokenTree::Ident(f) if f == "fn");
            let empty_call = matches!(tokens.get(k + 1), Some(TokenTree::Group(g))
                if g.delimiter() == proc_macro2::Delimiter::Parenthesis && g.stream().is_empty());
            !after_path_or_dot && !after_fn && empty_call
        }
        _ => true,
    })
}

/// Each intrinsic of `shadowed` with the `let` that binds it to its lane's value, for the lane
/// loops that call it.
fn intrinsic_lets(shadowed: &[&Intrinsic]) -> Vec<(String, TokenStream)> {
    shadowed
        .iter()
        .map(|i| {
            let name = format_ident!("{}", i.name);
            let value: TokenStream = i.value.parse().expect("an intrinsic's method");
            (i.name.to_string(), quote!(let #name = { let __v = __ls.#value(__t); move || __v };))
        })
        .collect()
}

/// The name of a kernel's lockstep function.
pub fn fn_name(kernel: &syn::Ident) -> syn::Ident {
    format_ident!("__lockstep_{}", kernel)
}

fn kernel(f: &syn::ItemFn, waits: &Waits, shadowed: &[&Intrinsic]) -> Option<TokenStream> {
    if f.sig.asyncness.is_some() || f.sig.constness.is_some() || f.sig.variadic.is_some() {
        return None;
    }
    if !allowed(&f.block) || reaches_partial(&f.block, waits) {
        return None;
    }
    let nodes = build(&f.block.stmts, waits)?;
    let mut r = Resolver::default();
    let mut params = Vec::new();
    for input in &f.sig.inputs {
        let syn::FnArg::Typed(pt) = input else { return None };
        params.push(pt);
    }
    r.scopes.push(Vec::new());
    let mut param_ids = Vec::new();
    let mut param_token = HashSet::new();
    let mut param_warp = HashSet::new();
    for p in &params {
        let before = r.bindings.len();
        r.bind_pat(&p.pat, Def::Param)?;
        param_ids.extend(before..r.bindings.len());
        if matches!(&*p.ty, syn::Type::Reference(r) if r.mutability.is_none())
            && r.bindings.len() == before + 1
        {
            r.shared_refs.insert(before);
        }
        let is_block = matches!(&*p.ty, syn::Type::Path(t) if t.qself.is_none() && t.path.segments.last().is_some_and(|s| s.ident == "Block" && s.arguments.is_empty()));
        if is_block && r.bindings.len() == before + 1 {
            param_token.insert(before);
        }
        let is_warp = matches!(&*p.ty, syn::Type::Path(t) if t.qself.is_none() && t.path.segments.last().is_some_and(|s| s.ident == "Warp" && s.arguments.is_empty()));
        if is_warp && r.bindings.len() == before + 1 {
            param_warp.insert(before);
        }
    }
    let tree = r.nodes(&nodes)?;
    let live_end = HashSet::new();
    let mut l = Liveness::default();
    l.nodes(&tree, &live_end);
    let pats: Vec<&Pat> = params.iter().map(|p| &*p.pat).collect();
    let mut g = Gen {
        r: &r,
        live: &l,
        params: pats,
        slots: BTreeSet::new(),
        steps: Vec::new(),
        warp_steps: Vec::new(),
        items: Vec::new(),
        waited: HashSet::new(),
        tokens: tokens(&r, &param_token),
        warps: tokens(&r, &param_warp),
        resolved: &r.receivers,
        intrinsics: intrinsic_lets(shadowed),
    };
    let body = g.body(&tree, &param_ids)?;
    // Every local kept from one loop to another must be one whose value cannot borrow another.
    if !borrow_free(&r, &g.slots.iter().chain(&g.waited).copied().collect()) {
        return None;
    }
    let name = fn_name(&f.sig.ident);
    let mut sig = f.sig.clone();
    let lifetime: syn::Lifetime = syn::parse_quote!('__k);
    let types: Vec<syn::Type> = params
        .iter()
        .map(|p| {
            let mut t = (*p.ty).clone();
            name_lifetimes(&mut t, &lifetime);
            t
        })
        .collect();
    sig.ident = name;
    sig.generics.params.insert(0, syn::parse_quote!('__k));
    for g in sig.generics.params.iter_mut() {
        if let syn::GenericParam::Type(t) = g {
            t.bounds.push(syn::parse_quote!('__k));
        }
    }
    sig.inputs = syn::parse_quote!(
        __ls: &mut ::offload::__private::Lockstep<'_>,
        mut __params: impl FnMut(&::offload::__private::ThreadToken) -> (#(#types,)*)
    );
    sig.output = syn::ReturnType::Default;
    let slots = g.slots.iter().map(|id| {
        let s = slot(*id);
        quote!(let mut #s = ::offload::__private::slots(__n);)
    });
    let steps = g.steps.iter().map(|s| quote!(let mut #s = ::offload::__private::Steps::lanes(__n);)).chain(
        g.warp_steps.iter().map(|s| quote!(let mut #s = ::offload::__private::WarpSteps::lanes(__n);)),
    );
    let items = &g.items;
    Some(quote! {
        #[doc(hidden)]
        #[allow(unused_mut, unused_variables, unused_assignments, unused_parens, non_snake_case, clippy::all)]
        pub #sig {
            #[allow(unused_imports)]
            use ::offload::__private::{Awaitable as _, Ready as _};
            #(#items)*
            let __n = __ls.lanes();
            #(#slots)*
            #(#steps)*
            while __ls.next_block() {
                #body
            }
        }
    })
}

/// Names every lifetime a parameter's type leaves out (`&[f32]`, `Region<f32>`, `'_`) as
/// `lifetime`: the lockstep function's parameters come from a closure, whose output may not
/// elide them.
fn name_lifetimes(ty: &mut syn::Type, lifetime: &syn::Lifetime) {
    use syn::visit_mut::VisitMut;
    struct Named<'l>(&'l syn::Lifetime);
    impl VisitMut for Named<'_> {
        fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
            syn::visit_mut::visit_type_reference_mut(self, r);
            if r.lifetime.as_ref().is_none_or(|l| l.ident == "_") {
                r.lifetime = Some(self.0.clone());
            }
        }
        fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
            if l.ident == "_" {
                *l = self.0.clone();
            }
        }
        fn visit_path_segment_mut(&mut self, seg: &mut syn::PathSegment) {
            syn::visit_mut::visit_path_segment_mut(self, seg);
            if !crate::lanes::has_lifetime(&seg.ident.to_string()) {
                return;
            }
            let lifetime: syn::GenericArgument = syn::GenericArgument::Lifetime(self.0.clone());
            match &mut seg.arguments {
                syn::PathArguments::None => {
                    let l = self.0;
                    seg.arguments = syn::PathArguments::AngleBracketed(syn::parse_quote!(<#l>));
                }
                syn::PathArguments::AngleBracketed(a) => {
                    if !matches!(a.args.first(), Some(syn::GenericArgument::Lifetime(_))) {
                        a.args.insert(0, lifetime);
                    }
                }
                syn::PathArguments::Parenthesized(_) => {}
            }
        }
        fn visit_expr_mut(&mut self, _: &mut syn::Expr) {}
    }
    Named(lifetime).visit_type_mut(ty);
}
