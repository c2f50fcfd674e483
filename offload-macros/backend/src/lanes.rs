//! The CPU backend's copy of a kernels module: functions that wait for other threads become
//! `async fn`s, and each call that waits is awaited.
//!
//! On the CPU backend the threads of a block are lanes that take turns on one host thread (see
//! the runtime's `lane` module): a lane that reaches a barrier or warp operation must hand the
//! host thread to the next lane and go on later from the same place. Rust's `async` does
//! exactly that, so the host build of a kernels module is the module with an `.await` at every
//! call that waits — a barrier, a warp operation, or a call of the module's own function that
//! reaches one, as the uniformity analysis found them ([`Waits`]) — and `async` on every
//! function with such a call. The device build is the module as written.
//!
//! Each awaited call becomes `Lane::new(call).__lane_await().await`, which awaits a call's
//! future and passes a plain value through (a method of another type that shares a name with
//! one of the module's waiting functions, say), so that a call taken for a waiting one by name
//! still compiles and does what it says.

use crate::signature::Errors;
use crate::uniformity::Waits;
use proc_macro2::{Span, TokenStream};
use quote::{ToTokens, quote_spanned};
use std::collections::HashSet;
use syn::spanned::Spanned;
use syn::visit_mut::VisitMut;

/// Reports what the CPU backend's copy could not wait in — a trait's method, a `const fn` —
/// without changing anything: run on both builds, so that a module compiles for both or for
/// neither.
pub fn check(items: &mut [syn::Item], waits: &Waits, errors: &mut Errors) {
    run(items, waits, Some(errors));
}

/// Rewrites the items of a kernels module for the CPU backend (the host build), once
/// [`check`] has passed.
pub fn transform(items: &mut [syn::Item], waits: &Waits) {
    run(items, waits, None);
}

/// Checks (`errors`) or rewrites (`None`) the items.
fn run(items: &mut [syn::Item], waits: &Waits, errors: Option<&mut Errors>) {
    if waits.calls.is_empty() {
        return;
    }
    let mut with_lifetimes = RUNTIME_TYPES_WITH_LIFETIMES.iter().map(|s| (*s).to_owned()).collect();
    own_types_with_lifetimes(items, &mut with_lifetimes);
    let mut t = Transform { waits, frames: Vec::new(), trait_impl: None, with_lifetimes, errors };
    for item in items {
        t.visit_item_mut(item);
    }
}

struct Transform<'w, 'e> {
    waits: &'w Waits,
    /// For each function being rewritten (innermost last): whether a call in its body waits.
    frames: Vec<bool>,
    /// Inside an `impl Trait for …`: the trait, as written.
    trait_impl: Option<String>,
    /// Types whose first generic parameter is a lifetime (see [`elided_lifetimes`]).
    with_lifetimes: HashSet<String>,
    /// Where problems go when checking; `None` when rewriting.
    errors: Option<&'e mut Errors>,
}

/// The kernel language's types that borrow (a lifetime first among their generic parameters),
/// which kernel signatures name without it (`Region<f32>`).
const RUNTIME_TYPES_WITH_LIFETIMES: &[&str] = &[
    "Region",
    "Region2",
    "Region3",
    "Near",
    "Neighbours",
    "GridStride",
    "StrideIter",
    "Chunks",
    "PerBlock",
    "Groups",
    "Tiles",
    "Scatter",
    "Atomics",
    "Strided",
    "Sum",
    "Min",
    "Max",
    "MinLoc",
    "MaxLoc",
];

/// The module's own types whose first generic parameter is a lifetime.
fn own_types_with_lifetimes(items: &[syn::Item], out: &mut HashSet<String>) {
    for item in items {
        let (ident, generics) = match item {
            syn::Item::Struct(s) => (&s.ident, &s.generics),
            syn::Item::Enum(e) => (&e.ident, &e.generics),
            syn::Item::Union(u) => (&u.ident, &u.generics),
            syn::Item::Type(t) => (&t.ident, &t.generics),
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    own_types_with_lifetimes(inner, out);
                }
                continue;
            }
            _ => continue,
        };
        if matches!(generics.params.first(), Some(syn::GenericParam::Lifetime(_))) {
            out.insert(ident.to_string());
        }
    }
}

/// Writes the lifetimes a signature leaves out (`Region<f32>` → `Region<'_, f32>`): an
/// `async fn` may not elide them in paths.
fn elided_lifetimes(sig: &mut syn::Signature, with_lifetimes: &HashSet<String>) {
    struct Elided<'s>(&'s HashSet<String>);
    impl VisitMut for Elided<'_> {
        fn visit_path_segment_mut(&mut self, seg: &mut syn::PathSegment) {
            syn::visit_mut::visit_path_segment_mut(self, seg);
            if !self.0.contains(&seg.ident.to_string()) {
                return;
            }
            let lifetime: syn::GenericArgument = syn::parse_quote_spanned!(seg.ident.span()=> '_);
            match &mut seg.arguments {
                syn::PathArguments::None => {
                    seg.arguments = syn::PathArguments::AngleBracketed(
                        syn::parse_quote_spanned!(seg.ident.span()=> <'_>),
                    );
                }
                syn::PathArguments::AngleBracketed(a) => {
                    if !matches!(a.args.first(), Some(syn::GenericArgument::Lifetime(_))) {
                        a.args.insert(0, lifetime);
                    }
                }
                syn::PathArguments::Parenthesized(_) => {}
            }
        }
        // Expressions in types (array lengths, const arguments) name no types to change.
        fn visit_expr_mut(&mut self, _: &mut syn::Expr) {}
    }
    let mut e = Elided(with_lifetimes);
    for input in &mut sig.inputs {
        if let syn::FnArg::Typed(t) = input {
            e.visit_type_mut(&mut t.ty);
        }
    }
    if let syn::ReturnType::Type(_, ty) = &mut sig.output {
        e.visit_type_mut(ty);
    }
}

impl Transform<'_, '_> {
    /// Visits the body of a function with signature `sig` (`what_trait`: the trait it belongs
    /// to, if any), and makes it `async` when a call in it waits.
    fn function(&mut self, sig: &mut syn::Signature, what_trait: Option<&str>, body: impl FnOnce(&mut Self)) {
        self.frames.push(false);
        body(self);
        let waits = self.frames.pop().expect("a frame per function");
        if !waits {
            return;
        }
        let Some(errors) = &mut self.errors else {
            sig.asyncness = Some(syn::Token![async](sig.fn_token.span));
            elided_lifetimes(sig, &self.with_lifetimes);
            return;
        };
        if let Some(tr) = what_trait {
            errors.add(
                sig.ident.span(),
                format!(
                    "`{}` waits for other threads (a barrier or warp operation), which a method of a trait (`{tr}`) cannot do: \
                     on the CPU backend a function that waits is an `async fn`\n  \
                     help: make it a function of the module, or an inherent method (`impl Type {{ … }}`)",
                    sig.ident
                ),
            );
        } else if let Some(c) = &sig.constness {
            errors.add(c.span(), "a `const fn` cannot wait for other threads (a barrier or warp operation)");
        }
    }
}

/// `call` awaited (`span`: the call's, for messages at the user's code).
fn awaited(call: TokenStream, span: Span) -> syn::Expr {
    syn::parse2(quote_spanned! {span=>
        {
            #[allow(unused_imports)]
            use ::offload::__private::{Awaitable as _, Ready as _};
            ::offload::__private::Lane::new(#call).__lane_await()
        }
        .await
    })
    .expect("a valid expression")
}

impl VisitMut for Transform<'_, '_> {
    fn visit_expr_mut(&mut self, e: &mut syn::Expr) {
        // The call's own parts first: its arguments may wait too.
        syn::visit_mut::visit_expr_mut(self, e);
        let (key, span) = match e {
            syn::Expr::MethodCall(m) => (&*m as *const syn::ExprMethodCall as usize, m.method.span()),
            syn::Expr::Call(c) => (&*c as *const syn::ExprCall as usize, c.func.span()),
            _ => return,
        };
        if self.waits.calls.contains(&key) {
            if let Some(waits) = self.frames.last_mut() {
                *waits = true;
            }
            if self.errors.is_none() {
                *e = awaited(e.to_token_stream(), span);
            }
        }
    }

    fn visit_item_fn_mut(&mut self, f: &mut syn::ItemFn) {
        let outer = self.trait_impl.take();
        let block = &mut f.block;
        self.function(&mut f.sig, None, |t| t.visit_block_mut(block));
        self.trait_impl = outer;
    }

    fn visit_item_impl_mut(&mut self, i: &mut syn::ItemImpl) {
        let outer = std::mem::replace(
            &mut self.trait_impl,
            i.trait_.as_ref().map(|(p, _)| p.to_token_stream().to_string()),
        );
        for item in &mut i.items {
            self.visit_impl_item_mut(item);
        }
        self.trait_impl = outer;
    }

    fn visit_impl_item_fn_mut(&mut self, f: &mut syn::ImplItemFn) {
        let tr = self.trait_impl.take();
        let block = &mut f.block;
        self.function(&mut f.sig, tr.as_deref(), |t| t.visit_block_mut(block));
        self.trait_impl = tr;
    }

    fn visit_item_trait_mut(&mut self, t: &mut syn::ItemTrait) {
        let name = t.ident.to_string();
        for item in &mut t.items {
            if let syn::TraitItem::Fn(f) = item
                && let Some(body) = &mut f.default
            {
                self.function(&mut f.sig, Some(&name), |t| t.visit_block_mut(body));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::signature::Errors;
    use quote::ToTokens;
    use syn::parse_quote;

    /// The host copy of a module's items, as one string of tokens.
    fn host_copy(mut items: Vec<syn::Item>) -> String {
        let mut errors = Errors::default();
        let waits = crate::uniformity::check(&items, &mut errors);
        super::check(&mut items, &waits, &mut errors);
        assert!(errors.finish().is_ok(), "the module checks");
        super::transform(&mut items, &waits);
        items.iter().map(|i| i.to_token_stream().to_string()).collect::<Vec<_>>().join("\n")
    }

    #[test]
    fn functions_that_wait_become_async_and_their_waiting_calls_are_awaited() {
        let out = host_copy(vec![
            parse_quote! { fn plain(x: f32) -> f32 { x.min(1.0) } },
            parse_quote! { fn total(w: &Warp, v: u32) -> u32 { w.sum(v) } },
            parse_quote! { fn outer(w: &Warp, mut r: Region<u32>, v: u32) { let t = total(w, plain(v as f32) as u32); if let Some(o) = r.mine() { *o = t; } } },
            parse_quote! { pub fn k(w: Warp, r: Region<u32>) { outer(&w, r, 3) } },
        ]);
        let lines: Vec<&str> = out.lines().collect();
        assert!(lines[0].starts_with("fn plain"), "{}", lines[0]);
        assert!(lines[1].starts_with("async fn total"), "{}", lines[1]);
        // The elided lifetime written out, the helper's call awaited, the plain one not.
        assert!(
            lines[2].starts_with("async fn outer (w : & Warp , mut r : Region < '_ , u32 >"),
            "{}",
            lines[2]
        );
        assert_eq!(lines[2].matches("__lane_await").count(), 1, "{}", lines[2]);
        assert_eq!(lines[1].matches("__lane_await").count(), 1, "{}", lines[1]);
        assert!(lines[3].starts_with("pub async fn k"), "{}", lines[3]);
    }

    #[test]
    fn a_module_that_does_not_wait_is_left_as_written() {
        let items: Vec<syn::Item> = vec![
            parse_quote! { pub fn k(x: &[f32], mut y: Region<f32>) { if let Some(v) = y.mine() { *v = x[0]; } } },
        ];
        let before = items[0].to_token_stream().to_string();
        assert_eq!(host_copy(items), before);
    }
}
