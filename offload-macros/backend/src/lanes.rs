//! The CPU backend's copy of a kernels module: functions that wait for other threads return
//! their body's future (as `async fn`s do), and each call that waits is awaited.
//!
//! On the CPU backend the threads of a block are lanes that take turns on one host thread (see
//! the runtime's `lane` module): a lane that reaches a barrier or warp operation must hand the
//! host thread to the next lane and go on later from the same place. Rust's `async` does
//! exactly that, so the host build of a kernels module is the module with an `.await` at every
//! call that waits — a barrier, a warp operation, or a call of the module's own function that
//! reaches one, as the uniformity analysis found them ([`Waits`]) — and every function with
//! such a call made one that returns its body as an `async` block ([`waiting_fn`]). The device
//! build is the module as written.
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
    let mut t = Transform {
        waits,
        frames: Vec::new(),
        trait_impl: None,
        impl_generics: None,
        with_lifetimes,
        errors,
    };
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
    /// Inside an `impl`: its generic parameters (in scope in its methods).
    impl_generics: Option<syn::Generics>,
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

/// Whether a type of the kernel language borrows (its first generic parameter a lifetime).
pub(crate) fn has_lifetime(name: &str) -> bool {
    RUNTIME_TYPES_WITH_LIFETIMES.contains(&name)
}

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

/// Writes the lifetimes a signature leaves out (`Region<f32>` → `Region<'_, f32>`): a
/// function that waits names them ([`waiting_fn`]), and an `async fn` may not elide them in
/// paths.
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
    /// to, if any), and rewrites it when a call in it waits ([`waiting_fn`]).
    fn function(
        &mut self,
        attrs: &mut Vec<syn::Attribute>,
        sig: &mut syn::Signature,
        block: &mut syn::Block,
        what_trait: Option<&str>,
    ) {
        self.frames.push(false);
        self.visit_block_mut(block);
        let waits = self.frames.pop().expect("a frame per function");
        if !waits {
            return;
        }
        let Some(errors) = &mut self.errors else {
            if waiting_fn(sig, block, self.impl_generics.as_ref(), &self.with_lifetimes) {
                // Clippy, seeing the user's spans, would suggest the `async fn` this avoids, and
                // rustc would point at the lifetimes named here where the output elides one.
                attrs
                    .push(syn::parse_quote!(#[allow(clippy::manual_async_fn, mismatched_lifetime_syntaxes)]));
            }
            return;
        };
        if let Some(tr) = what_trait {
            errors.add(
                sig.ident.span(),
                format!(
                    "`{}` waits for other threads (a barrier or warp operation), which a method of a trait (`{tr}`) cannot do: \
                     on the CPU backend a function that waits returns a future, as an `async fn` does\n  \
                     help: make it a function of the module, or an inherent method (`impl Type {{ … }}`)",
                    sig.ident
                ),
            );
        } else if let Some(c) = &sig.constness {
            errors.add(c.span(), "a `const fn` cannot wait for other threads (a barrier or warp operation)");
        }
    }
}

/// Makes a function that waits the CPU backend's kind: one that returns its body's future,
/// `fn f<'l…>(…) -> impl Future<Output = R> + use<…> { async move { … } }`, each lifetime its
/// arguments leave out named (`'__offload_l0`, …) so that the future can say it keeps them.
///
/// That is an `async fn` but for one thing: an `async fn`'s future first moves its arguments
/// into locals of its own, while an `async` block uses what it captured where it lies. A lane
/// builds its kernel's parameters (a helper's arguments) and polls the future at once, so the
/// `async fn`'s move read back, in wide loads, what narrower stores had only just written: a
/// store-forwarding stall on x86, a quarter of a warp reduction's time on the CPU backend.
///
/// One difference shows: an argument the body never uses is dropped when the function is
/// called, not when its future ends (no kernel-language type does anything when dropped).
///
/// A signature with an argument the rewrite cannot name (`impl Trait`) stays an `async fn`.
/// Returns whether the function was rewritten (else it was made an `async fn`).
fn waiting_fn(
    sig: &mut syn::Signature,
    block: &mut syn::Block,
    outer: Option<&syn::Generics>,
    with_lifetimes: &HashSet<String>,
) -> bool {
    elided_lifetimes(sig, with_lifetimes);
    let mut named = sig.clone();
    let mut names = NameLifetimes { fresh: Vec::new(), nameable: true };
    for input in &mut named.inputs {
        match input {
            syn::FnArg::Receiver(r) => names.receiver(r),
            syn::FnArg::Typed(t) => names.visit_type_mut(&mut t.ty),
        }
    }
    if !names.nameable || named.variadic.is_some() {
        sig.asyncness = Some(syn::Token![async](sig.fn_token.span));
        return false;
    }
    let span = sig.fn_token.span;
    let fresh = names.fresh.into_iter().map(|l| syn::GenericParam::Lifetime(syn::LifetimeParam::new(l)));
    let params = std::mem::take(&mut named.generics.params);
    let (lifetimes, rest): (Vec<_>, Vec<_>) =
        params.into_iter().partition(|p| matches!(p, syn::GenericParam::Lifetime(_)));
    // (Lifetimes first, as written: syn supplies the brackets a signature had none of.)
    named.generics.params = lifetimes.into_iter().chain(fresh).chain(rest).collect();
    // Every parameter in scope, lifetimes first: what an `async fn`'s future keeps.
    let all = outer.into_iter().chain([&named.generics]).flat_map(|g| g.params.iter());
    let (lifetimes, rest): (Vec<_>, Vec<_>) = all.partition(|p| matches!(p, syn::GenericParam::Lifetime(_)));
    let captured = lifetimes.into_iter().chain(rest).map(|p| match p {
        syn::GenericParam::Lifetime(l) => l.lifetime.to_token_stream(),
        syn::GenericParam::Type(t) => t.ident.to_token_stream(),
        syn::GenericParam::Const(c) => c.ident.to_token_stream(),
    });
    let output = match &named.output {
        syn::ReturnType::Default => quote_spanned!(span=> ()),
        syn::ReturnType::Type(_, ty) => ty.to_token_stream(),
    };
    named.output = syn::parse_quote_spanned!(span=>
        -> impl ::core::future::Future<Output = #output> + use<#(#captured),*>
    );
    let body = std::mem::replace(block, syn::parse_quote!({}));
    *block = syn::parse_quote_spanned!(span=> { async move #body });
    *sig = named;
    true
}

/// Names the lifetimes that a function's argument types leave out (`&T`, `'_`), each a fresh
/// `'__offload_l{n}`; notes when an argument has what cannot be named (`impl Trait`).
struct NameLifetimes {
    fresh: Vec<syn::Lifetime>,
    nameable: bool,
}

impl NameLifetimes {
    fn fresh(&mut self, span: Span) -> syn::Lifetime {
        let l = syn::Lifetime::new(&format!("'__offload_l{}", self.fresh.len()), span);
        self.fresh.push(l.clone());
        l
    }

    /// `&self` and `&mut self` (written short, or as `self: &Self`).
    fn receiver(&mut self, r: &mut syn::Receiver) {
        match &mut r.kind {
            syn::ReceiverKind::Reference(and, lifetime @ None, _) => *lifetime = Some(self.fresh(and.span)),
            syn::ReceiverKind::Typed(_, ty) => self.visit_type_mut(ty),
            _ => {}
        }
    }
}

impl VisitMut for NameLifetimes {
    fn visit_lifetime_mut(&mut self, l: &mut syn::Lifetime) {
        if l.ident == "_" {
            *l = self.fresh(l.span());
        }
    }
    fn visit_type_reference_mut(&mut self, r: &mut syn::TypeReference) {
        if r.lifetime.is_none() {
            r.lifetime = Some(self.fresh(r.and_token.span));
        }
        syn::visit_mut::visit_type_reference_mut(self, r);
    }
    fn visit_type_impl_trait_mut(&mut self, _: &mut syn::TypeImplTrait) {
        self.nameable = false;
    }
    // Lifetimes of function types and `Fn(&T)` bounds are their own (higher-ranked).
    fn visit_type_fn_ptr_mut(&mut self, _: &mut syn::TypeFnPtr) {}
    fn visit_parenthesized_generic_arguments_mut(&mut self, _: &mut syn::ParenthesizedGenericArguments) {}
    // Expressions in types (array lengths, const arguments) name no lifetimes to change.
    fn visit_expr_mut(&mut self, _: &mut syn::Expr) {}
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
        let outer = (self.trait_impl.take(), self.impl_generics.take());
        self.function(&mut f.attrs, &mut f.sig, &mut f.block, None);
        (self.trait_impl, self.impl_generics) = outer;
    }

    fn visit_item_impl_mut(&mut self, i: &mut syn::ItemImpl) {
        let outer = (
            std::mem::replace(
                &mut self.trait_impl,
                i.trait_.as_ref().map(|(p, _)| p.to_token_stream().to_string()),
            ),
            self.impl_generics.replace(i.generics.clone()),
        );
        for item in &mut i.items {
            self.visit_impl_item_mut(item);
        }
        (self.trait_impl, self.impl_generics) = outer;
    }

    fn visit_impl_item_fn_mut(&mut self, f: &mut syn::ImplItemFn) {
        let tr = self.trait_impl.take();
        self.function(&mut f.attrs, &mut f.sig, &mut f.block, tr.as_deref());
        self.trait_impl = tr;
    }

    fn visit_item_trait_mut(&mut self, t: &mut syn::ItemTrait) {
        let name = t.ident.to_string();
        for item in &mut t.items {
            if let syn::TraitItem::Fn(f) = item
                && let Some(body) = &mut f.default
            {
                self.function(&mut f.attrs, &mut f.sig, body, Some(&name));
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
    fn functions_that_wait_return_their_bodies_futures_and_their_waiting_calls_are_awaited() {
        let out = host_copy(vec![
            parse_quote! { fn plain(x: f32) -> f32 { x.min(1.0) } },
            parse_quote! { fn total(w: &Warp, v: u32) -> u32 { w.sum(v) } },
            parse_quote! { fn outer(w: &Warp, mut r: Region<u32>, v: u32) { let t = total(w, plain(v as f32) as u32); if let Some(o) = r.mine() { *o = t; } } },
            parse_quote! { pub fn k(w: Warp, r: Region<u32>) { outer(&w, r, 3) } },
        ]);
        // Each rewritten function allows what clippy would say of it, the rest is as written.
        let allow = "# [allow (clippy :: manual_async_fn , mismatched_lifetime_syntaxes)] ";
        let lines: Vec<&str> = out.lines().map(|l| l.strip_prefix(allow).unwrap_or(l)).collect();
        assert!(lines[0].starts_with("fn plain"), "{}", lines[0]);
        assert_eq!(out.matches(allow).count(), 3, "{out}");
        let future = |output: &str, lifetimes: &str| {
            format!(
                "-> impl :: core :: future :: Future < Output = {output} > + use < {lifetimes} > {{ async move {{"
            )
        };
        assert!(
            lines[1].starts_with(&format!(
                "fn total < '__offload_l0 > (w : & '__offload_l0 Warp , v : u32) {}",
                future("u32", "'__offload_l0")
            )),
            "{}",
            lines[1]
        );
        // Every elided lifetime named and kept, the helper's call awaited, the plain one not.
        assert!(
            lines[2].starts_with(&format!(
                "fn outer < '__offload_l0 , '__offload_l1 > (w : & '__offload_l0 Warp , mut r : Region < '__offload_l1 , u32 > , v : u32) {}",
                future("()", "'__offload_l0 , '__offload_l1")
            )),
            "{}",
            lines[2]
        );
        assert_eq!(lines[2].matches("__lane_await").count(), 1, "{}", lines[2]);
        assert_eq!(lines[1].matches("__lane_await").count(), 1, "{}", lines[1]);
        assert!(lines[3].starts_with("pub fn k < '__offload_l0 >"), "{}", lines[3]);
    }

    #[test]
    fn methods_keep_their_impls_parameters_and_name_their_receivers_lifetime() {
        let out = host_copy(vec![parse_quote! {
            impl<'a, T: Copy, const N: usize> Tile<'a, T, N> {
                fn sum<U>(&self, w: &Warp, u: U) -> u32 { w.sum(1) }
            }
        }]);
        assert!(
            out.contains(
                "fn sum < '__offload_l0 , '__offload_l1 , U > (& '__offload_l0 self , w : & '__offload_l1 Warp , u : U) \
                 -> impl :: core :: future :: Future < Output = u32 > + use < 'a , '__offload_l0 , '__offload_l1 , T , N , U >"
            ),
            "{out}"
        );
    }

    #[test]
    fn a_function_with_an_impl_trait_argument_stays_an_async_fn() {
        let out =
            host_copy(vec![parse_quote! { fn f(w: &Warp, g: impl Fn(u32) -> u32) -> u32 { g(w.sum(1)) } }]);
        assert!(out.starts_with("async fn f (w : & Warp , g : impl Fn (u32) -> u32) -> u32"), "{out}");
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
