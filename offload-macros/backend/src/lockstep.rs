//! The CPU backend's lockstep copy of a kernel: a block's threads run between two barriers or
//! warp operations as one loop over the block's lanes, rather than as futures polled in turns.
//!
//! The futures (see `crate::lanes`) work for any kernel, but every barrier costs each lane a
//! suspension and a resumption of its whole state machine. Where the uniformity analysis has
//! proved that every barrier and warp operation of a kernel is reached by the whole block —
//! not merely by a warp — the block's threads all run the same sequence of them, so the kernel
//! can be cut at them: each piece of code between two of them runs as `for lane in 0..n { … }`
//! (the work-item loops of OpenCL's CPU implementations), and each local that lives from one
//! piece to a later one is kept per lane in a slot between the loops. A barrier of the block's
//! own token is then just the boundary between two loops; a warp operation of the block's
//! `Warp` is done for the whole block between two loops, from every lane's value; any other
//! wait (a call of the module's own function that waits) is each lane's future, started at
//! the end of one loop and driven together (its own checks still apply), its result taken at
//! the start of the next loop. A branch or loop
//! whose body holds one runs once for the block; its condition is computed by every lane, and
//! the lanes must agree (the analysis proves they do; the CPU backend checks it).
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
    let mut out = BTreeMap::new();
    for item in items {
        let syn::Item::Fn(f) = item else { continue };
        let name = f.sig.ident.to_string();
        if !kernels.contains(&name) {
            continue;
        }
        if let Some(tokens) = kernel(f, waits) {
            out.insert(name, tokens);
        }
    }
    out
}

/// The name of a kernel's lockstep function.
pub fn fn_name(kernel: &syn::Ident) -> syn::Ident {
    format_ident!("__lockstep_{}", kernel)
}

fn kernel(f: &syn::ItemFn, waits: &Waits) -> Option<TokenStream> {
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

// ---------------------------------------------------------------------------------------------
// What may be cut, and the cuts.

/// Whether a lockstep body may use the macro: the standard library's that neither leave the
/// kernel nor bind names out of sight.
fn known_macro(name: &str) -> bool {
    crate::uniformity::EXPR_MACROS.contains(&name)
        || crate::uniformity::QUIET_MACROS.contains(&name)
        || matches!(name, "print" | "println" | "eprint" | "eprintln" | "matches")
}

/// Whether the body leaves the kernel only at its end, and uses only the standard library's
/// macros. (`break` and `continue` are checked per loop, in [`build`].)
fn allowed(body: &syn::Block) -> bool {
    struct Check {
        ok: bool,
    }
    impl<'ast> Visit<'ast> for Check {
        fn visit_expr_return(&mut self, _: &'ast syn::ExprReturn) {
            self.ok = false;
        }
        fn visit_expr_try(&mut self, _: &'ast syn::ExprTry) {
            self.ok = false;
        }
        fn visit_expr_await(&mut self, _: &'ast syn::ExprAwait) {
            self.ok = false;
        }
        fn visit_expr_async(&mut self, _: &'ast syn::ExprAsync) {
            self.ok = false;
        }
        fn visit_macro(&mut self, m: &'ast syn::Macro) {
            let name = m.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
            if !known_macro(&name) {
                self.ok = false;
            }
        }
        // A closure's `return`s and `?`s are its own, and it cannot wait (the analysis refuses
        // that): it runs within one lane loop.
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, item: &'ast syn::Item) {
            if matches!(item, syn::Item::Macro(_)) {
                self.ok = false;
            }
        }
    }
    let mut c = Check { ok: true };
    c.visit_block(body);
    c.ok
}

/// Whether a wait in the body is reached by part of the block only.
fn reaches_partial(body: &syn::Block, waits: &Waits) -> bool {
    body.stmts.iter().any(|s| calls_in(s, &waits.partial))
}

/// A piece of a kernel's body, as the lockstep copy cuts it.
enum Node<'a> {
    /// A statement without barriers or warp operations.
    Plain(&'a Stmt),
    /// A statement that is a barrier or warp operation (or a call of the module's function
    /// that reaches one): `let PAT = call;`, `place = call;` or `call;`.
    Wait {
        kind: WaitKind<'a>,
        call: &'a Expr,
    },
    While {
        cond: &'a Expr,
        body: Vec<Node<'a>>,
    },
    For {
        pat: &'a Pat,
        iter: &'a Expr,
        body: Vec<Node<'a>>,
    },
    If {
        cond: &'a Expr,
        then: Vec<Node<'a>>,
        els: Option<Vec<Node<'a>>>,
    },
    Block(Vec<Node<'a>>),
}

enum WaitKind<'a> {
    Let(&'a Pat),
    Assign(&'a syn::Ident),
    Discard,
}

/// Whether any call under `node` waits.
fn has_wait<T: WaitVisit>(node: &T, waits: &Waits) -> bool {
    calls_in(node, &waits.calls)
}

/// Whether a call under `node` is one of `calls` (by address).
fn calls_in<T: WaitVisit>(node: &T, calls: &HashSet<usize>) -> bool {
    struct Find<'w> {
        found: bool,
        calls: &'w HashSet<usize>,
    }
    impl<'ast> Visit<'ast> for Find<'_> {
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            self.found |= self.calls.contains(&(c as *const _ as usize));
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, c: &'ast syn::ExprMethodCall) {
            self.found |= self.calls.contains(&(c as *const _ as usize));
            syn::visit::visit_expr_method_call(self, c);
        }
    }
    let mut f = Find { found: false, calls };
    node.visit_with(&mut f);
    f.found
}

/// A syntax node [`has_wait`] can look into.
trait WaitVisit {
    fn visit_with<'ast, V: Visit<'ast>>(&'ast self, v: &mut V);
}
impl WaitVisit for Expr {
    fn visit_with<'ast, V: Visit<'ast>>(&'ast self, v: &mut V) {
        v.visit_expr(self);
    }
}
impl WaitVisit for Stmt {
    fn visit_with<'ast, V: Visit<'ast>>(&'ast self, v: &mut V) {
        v.visit_stmt(self);
    }
}

/// `e` without parentheses, when it is a call that waits and nothing in its receiver or
/// arguments does.
fn wait_call<'e>(e: &'e Expr, waits: &Waits) -> Option<&'e Expr> {
    let inner = match e {
        Expr::Paren(p) => return wait_call(&p.expr, waits),
        Expr::Group(g) => return wait_call(&g.expr, waits),
        Expr::Call(c) if waits.calls.contains(&(c as *const _ as usize)) => {
            c.args.iter().all(|a| !has_wait(a, waits)) && !has_wait(&*c.func, waits)
        }
        Expr::MethodCall(c) if waits.calls.contains(&(c as *const _ as usize)) => {
            c.args.iter().all(|a| !has_wait(a, waits)) && !has_wait(&*c.receiver, waits)
        }
        _ => false,
    };
    inner.then_some(e)
}

/// The body cut at its waits, or `None` where it cannot be (see the module documentation).
fn build<'a>(stmts: &'a [Stmt], waits: &Waits) -> Option<Vec<Node<'a>>> {
    let mut out = Vec::new();
    for stmt in stmts {
        if !has_wait(stmt, waits) {
            out.push(Node::Plain(stmt));
            continue;
        }
        let node = match stmt {
            Stmt::Local(l) => {
                let init = l.init.as_ref()?;
                if init.diverge.is_some() || !l.attrs.is_empty() {
                    return None;
                }
                Node::Wait { kind: WaitKind::Let(&l.pat), call: wait_call(&init.expr, waits)? }
            }
            Stmt::Expr(e, semi) => expr_node(e, semi.is_some(), waits)?,
            _ => return None,
        };
        out.push(node);
    }
    Some(out)
}

fn expr_node<'a>(e: &'a Expr, _semi: bool, waits: &Waits) -> Option<Node<'a>> {
    Some(match e {
        Expr::Assign(a) if a.attrs.is_empty() => {
            let Expr::Path(p) = &*a.left else { return None };
            let ident = p.path.get_ident().filter(|_| p.qself.is_none())?;
            Node::Wait { kind: WaitKind::Assign(ident), call: wait_call(&a.right, waits)? }
        }
        Expr::While(w) if w.attrs.is_empty() => {
            if matches!(&*w.cond, Expr::Let(_))
                || has_wait(&*w.cond, waits)
                || exits(&w.body, w.label.as_ref())
            {
                return None;
            }
            Node::While { cond: &w.cond, body: build(&w.body.stmts, waits)? }
        }
        Expr::ForLoop(f) if f.attrs.is_empty() => {
            if has_wait(&*f.expr, waits) || exits(&f.body, f.label.as_ref()) {
                return None;
            }
            Node::For { pat: &f.pat, iter: &f.expr, body: build(&f.body.stmts, waits)? }
        }
        Expr::If(i) if i.attrs.is_empty() => if_node(i, waits)?,
        Expr::Block(b) if b.attrs.is_empty() && b.label.is_none() => {
            Node::Block(build(&b.block.stmts, waits)?)
        }
        _ => Node::Wait { kind: WaitKind::Discard, call: wait_call(e, waits)? },
    })
}

fn if_node<'a>(i: &'a syn::ExprIf, waits: &Waits) -> Option<Node<'a>> {
    if has_let(&i.cond) || has_wait(&*i.cond, waits) {
        return None;
    }
    let then = build(&i.then_branch.stmts, waits)?;
    let els = match &i.else_branch {
        None => None,
        Some((_, e)) => match &**e {
            Expr::Block(b) if b.label.is_none() => Some(build(&b.block.stmts, waits)?),
            Expr::If(inner) => Some(vec![if_node(inner, waits)?]),
            _ => return None,
        },
    };
    Some(Node::If { cond: &i.cond, then, els })
}

/// Whether a condition binds (`if let`, let chains).
fn has_let(e: &Expr) -> bool {
    match e {
        Expr::Let(_) => true,
        Expr::Binary(b) => has_let(&b.left) || has_let(&b.right),
        Expr::Paren(p) => has_let(&p.expr),
        _ => false,
    }
}

/// Whether a `break` or `continue` in `body` may leave the loop whose body it is.
fn exits(body: &syn::Block, label: Option<&syn::Label>) -> bool {
    struct Exits<'l> {
        label: Option<String>,
        depth: usize,
        found: bool,
        _l: std::marker::PhantomData<&'l ()>,
    }
    impl Exits<'_> {
        fn hits(&self, l: Option<&syn::Lifetime>) -> bool {
            match l {
                None => self.depth == 0,
                Some(l) => self.label.as_deref() == Some(&l.ident.to_string()),
            }
        }
    }
    impl<'ast> Visit<'ast> for Exits<'_> {
        fn visit_expr_break(&mut self, b: &'ast syn::ExprBreak) {
            self.found |= self.hits(b.label.as_ref());
            syn::visit::visit_expr_break(self, b);
        }
        fn visit_expr_continue(&mut self, c: &'ast syn::ExprContinue) {
            self.found |= self.hits(c.label.as_ref());
        }
        fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
            self.depth += 1;
            syn::visit::visit_expr_while(self, w);
            self.depth -= 1;
        }
        fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
            self.depth += 1;
            syn::visit::visit_expr_for_loop(self, f);
            self.depth -= 1;
        }
        fn visit_expr_loop(&mut self, l: &'ast syn::ExprLoop) {
            self.depth += 1;
            syn::visit::visit_expr_loop(self, l);
            self.depth -= 1;
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {}
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    let mut e = Exits {
        label: label.map(|l| l.name.ident.to_string()),
        depth: 0,
        found: false,
        _l: std::marker::PhantomData,
    };
    e.visit_block(body);
    e.found
}

// ---------------------------------------------------------------------------------------------
// Names: which binding each name means, and what each binding is given.

/// How a binding gets its value.
#[derive(Clone)]
enum Def {
    /// A kernel parameter.
    Param,
    /// A value computed from the bindings `deps` and from elements read out of the bindings
    /// `elems` (see [`value_names`]); `typed` when a type annotation says it holds no borrow.
    Value { deps: Vec<usize>, elems: Vec<usize>, typed: bool },
    /// Bound by reference (`ref x`), from an expression that may borrow, or in a way not
    /// followed; `typed` as above. `contents`: where what it refers to comes from, when that
    /// is known (a reference to a local array, say: then what it refers to is the array's).
    Borrowing { typed: bool, contents: Option<Vec<usize>> },
}

impl Def {
    fn borrowing() -> Def {
        Def::Borrowing { typed: false, contents: None }
    }
}

struct Binding {
    name: String,
    defs: Vec<Def>,
    /// Each definition's source when it is the phase token's: a copy of a binding, or a
    /// barrier of one (`Some(binding)`); `None` for any other definition.
    token_from: Vec<Option<usize>>,
}

#[derive(Default)]
struct Resolver {
    /// The parameters that are shared references (`&[T]`, `&T`).
    shared_refs: HashSet<usize>,
    /// For each wait `x.sync()`, the binding `x` names, by the receiver's address.
    receivers: HashMap<usize, usize>,
    bindings: Vec<Binding>,
    /// Names in scope, innermost last.
    scopes: Vec<Vec<(String, usize)>>,
}

/// A [`Node`] with the bindings it uses, declares and assigns.
enum RNode<'a> {
    Plain {
        stmt: &'a Stmt,
        uses: HashSet<usize>,
        decls: Vec<usize>,
        kills: Vec<usize>,
    },
    Wait {
        kind: RWait<'a>,
        call: &'a Expr,
        uses: HashSet<usize>,
    },
    While {
        cond: &'a Expr,
        uses: HashSet<usize>,
        body: Vec<RNode<'a>>,
    },
    For {
        pat: &'a Pat,
        iter: &'a Expr,
        it: usize,
        uses: HashSet<usize>,
        decls: Vec<usize>,
        body: Vec<RNode<'a>>,
    },
    If {
        cond: &'a Expr,
        uses: HashSet<usize>,
        then: Vec<RNode<'a>>,
        els: Option<Vec<RNode<'a>>>,
    },
    Block(Vec<RNode<'a>>),
}

enum RWait<'a> {
    Let(&'a Pat, Vec<usize>),
    Assign(usize),
    Discard,
}

impl Resolver {
    /// Notes that the latest definition of `id` is the phase token's, from `src`.
    fn note_token(&mut self, id: usize, src: usize) {
        let b = &mut self.bindings[id];
        b.token_from.resize(b.defs.len() - 1, None);
        b.token_from.push(Some(src));
    }

    /// The binding a bare name expression names.
    fn bare(&self, e: &Expr) -> Option<usize> {
        match e {
            Expr::Path(p) if p.qself.is_none() => self.lookup(&p.path.get_ident()?.to_string()),
            Expr::Paren(p) => self.bare(&p.expr),
            _ => None,
        }
    }

    /// The binding a wait's receiver names (`x` of `x.sync()`, `w` of `w.sum(v)`), noted for
    /// the wait's code; for `x.sync()`, the source of the token it gives.
    fn sync_receiver(&mut self, call: &Expr) -> Option<usize> {
        let Expr::MethodCall(m) = call else { return None };
        let src = self.bare(&m.receiver)?;
        self.receivers.insert(addr(&*m.receiver), src);
        (m.method == "sync" && m.args.is_empty()).then_some(src)
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, id)| *id)
    }

    fn declare(&mut self, name: String, def: Def) -> usize {
        let id = self.bindings.len();
        self.bindings.push(Binding { name: name.clone(), defs: vec![def], token_from: Vec::new() });
        self.scopes.last_mut().expect("a scope").push((name, id));
        id
    }

    /// Binds the names of `pat`, each defined by `def` (taken apart where the pattern is).
    fn bind_pat(&mut self, pat: &Pat, def: Def) -> Option<()> {
        match pat {
            Pat::Ident(i) => {
                let name = i.ident.to_string();
                // (`None`, `MAX`: a constant or unit variant, not a binding.)
                if i.subpat.is_none() && i.by_ref.is_none() && name.starts_with(|c: char| c.is_uppercase()) {
                    return Some(());
                }
                let d = if i.by_ref.is_some() { Def::borrowing() } else { def.clone() };
                self.declare(name, d);
                if let Some((_, sub)) = &i.subpat {
                    self.bind_pat(sub, Def::borrowing())?;
                }
            }
            Pat::Type(t) => {
                let typed = plain_type(&t.ty);
                let d = match def {
                    Def::Value { deps, elems, .. } => Def::Value { deps, elems, typed },
                    Def::Borrowing { contents, .. } => Def::Borrowing { typed, contents },
                    Def::Param => Def::Param,
                };
                self.bind_pat(&t.pat, d)?;
            }
            Pat::Tuple(t) => t.elems.iter().try_for_each(|p| self.bind_pat(p, def.clone()))?,
            Pat::TupleStruct(t) => t.elems.iter().try_for_each(|p| self.bind_pat(p, def.clone()))?,
            Pat::Struct(s) => s.fields.iter().try_for_each(|f| self.bind_pat(&f.pat, def.clone()))?,
            Pat::Slice(s) => s.elems.iter().try_for_each(|p| self.bind_pat(p, def.clone()))?,
            Pat::Paren(p) => self.bind_pat(&p.pat, def)?,
            Pat::Or(_) => return None,
            Pat::Reference(r) => self.bind_pat(&r.pat, Def::borrowing())?,
            Pat::Wild(_) | Pat::Rest(_) | Pat::Lit(_) | Pat::Range(_) | Pat::Path(_) => {}
            _ => return None,
        }
        Some(())
    }

    /// The bindings `pat` declares, in a fresh scope of the caller's.
    fn nodes<'a>(&mut self, nodes: &[Node<'a>]) -> Option<Vec<RNode<'a>>> {
        let mut out = Vec::new();
        for n in nodes {
            match n {
                Node::Plain(stmt) => {
                    let mut kills = Vec::new();
                    let mut decls = Vec::new();
                    let uses = match stmt {
                        Stmt::Local(l) => {
                            let mut u = Uses::new(self);
                            if let Some(init) = &l.init {
                                u.expr(&init.expr);
                                if let Some((_, e)) = &init.diverge {
                                    u.expr(e);
                                }
                            }
                            let uses = u.finish();
                            if let Some(init) = &l.init {
                                self.assignments(&init.expr);
                            }
                            let before = self.bindings.len();
                            let def = match &l.init {
                                Some(init) => self.def(&init.expr),
                                // (Kept uninitialised it would not compile: such a kernel keeps
                                // the futures.)
                                None => Def::borrowing(),
                            };
                            let src = l.init.as_ref().and_then(|i| self.bare(&i.expr));
                            self.bind_pat(&l.pat, def)?;
                            if let Some(src) = src
                                && self.bindings.len() == before + 1
                            {
                                self.note_token(before, src);
                            }
                            decls.extend(before..self.bindings.len());
                            uses
                        }
                        Stmt::Expr(Expr::Assign(a), _) => {
                            let mut u = Uses::new(self);
                            u.expr(&a.right);
                            let whole = match &*a.left {
                                Expr::Path(p) if p.qself.is_none() => p.path.get_ident(),
                                _ => None,
                            };
                            if whole.is_none() {
                                u.expr(&a.left);
                            }
                            let uses = u.finish();
                            self.assignments(&a.right);
                            match whole {
                                Some(i) => {
                                    if let Some(id) = self.lookup(&i.to_string()) {
                                        kills.push(id);
                                        let d = self.def(&a.right);
                                        self.bindings[id].defs.push(d);
                                        if let Some(src) = self.bare(&a.right) {
                                            self.note_token(id, src);
                                        }
                                    }
                                }
                                None => {
                                    self.assignments(&a.left);
                                    self.assigned_through(&a.left, &a.right);
                                }
                            }
                            uses
                        }
                        Stmt::Item(_) => HashSet::new(),
                        Stmt::Expr(e, _) => {
                            let mut u = Uses::new(self);
                            u.expr(e);
                            let uses = u.finish();
                            self.assignments(e);
                            uses
                        }
                        Stmt::Macro(m) => {
                            let mut u = Uses::new(self);
                            u.tokens(m.mac.tokens.clone());
                            u.finish()
                        }
                    };
                    out.push(RNode::Plain { stmt, uses, decls, kills });
                }
                Node::Wait { kind, call } => {
                    let mut u = Uses::new(self);
                    u.expr(call);
                    let uses = u.finish();
                    let kind = match kind {
                        WaitKind::Let(p) => {
                            let before = self.bindings.len();
                            let d = self.wait_def(call);
                            let src = self.sync_receiver(call);
                            self.bind_pat(p, d)?;
                            if let Some(src) = src
                                && self.bindings.len() == before + 1
                            {
                                self.note_token(before, src);
                            }
                            RWait::Let(p, (before..self.bindings.len()).collect())
                        }
                        WaitKind::Assign(ident) => {
                            let id = self.lookup(&ident.to_string())?;
                            let d = self.wait_def(call);
                            let src = self.sync_receiver(call);
                            self.bindings[id].defs.push(d);
                            if let Some(src) = src {
                                self.note_token(id, src);
                            }
                            RWait::Assign(id)
                        }
                        WaitKind::Discard => {
                            self.sync_receiver(call);
                            RWait::Discard
                        }
                    };
                    out.push(RNode::Wait { kind, call, uses });
                }
                Node::While { cond, body } => {
                    let mut u = Uses::new(self);
                    u.expr(cond);
                    let uses = u.finish();
                    self.assignments(cond);
                    self.scopes.push(Vec::new());
                    let body = self.nodes(body)?;
                    self.scopes.pop();
                    out.push(RNode::While { cond, uses, body });
                }
                Node::For { pat, iter, body } => {
                    let mut u = Uses::new(self);
                    u.expr(iter);
                    let uses = u.finish();
                    self.assignments(iter);
                    let d = self.def(iter);
                    let it = self.declare(format!("__lockstep_iter{}", self.bindings.len()), d.clone());
                    self.scopes.push(Vec::new());
                    let before = self.bindings.len();
                    self.bind_pat(pat, d)?;
                    let decls = (before..self.bindings.len()).collect();
                    let body = self.nodes(body)?;
                    self.scopes.pop();
                    out.push(RNode::For { pat, iter, it, uses, decls, body });
                }
                Node::If { cond, then, els } => {
                    let mut u = Uses::new(self);
                    u.expr(cond);
                    let uses = u.finish();
                    self.assignments(cond);
                    self.scopes.push(Vec::new());
                    let then = self.nodes(then)?;
                    self.scopes.pop();
                    let els = match els {
                        None => None,
                        Some(e) => {
                            self.scopes.push(Vec::new());
                            let e = self.nodes(e)?;
                            self.scopes.pop();
                            Some(e)
                        }
                    };
                    out.push(RNode::If { cond, uses, then, els });
                }
                Node::Block(inner) => {
                    self.scopes.push(Vec::new());
                    let inner = self.nodes(inner)?;
                    self.scopes.pop();
                    out.push(RNode::Block(inner));
                }
            }
        }
        Some(out)
    }

    /// Notes the values assigned anywhere inside `e` to bindings in scope (`x = v` in a nested
    /// block, say), for [`borrow_free`].
    fn assignments(&mut self, e: &Expr) {
        struct Assigns<'r> {
            r: &'r mut Resolver,
        }
        impl<'ast> Visit<'ast> for Assigns<'_> {
            fn visit_expr_assign(&mut self, a: &'ast syn::ExprAssign) {
                if let Expr::Path(p) = &*a.left
                    && let Some(i) = p.path.get_ident()
                    && let Some(id) = self.r.lookup(&i.to_string())
                {
                    let d = self.r.def(&a.right);
                    self.r.bindings[id].defs.push(d);
                } else {
                    self.r.assigned_through(&a.left, &a.right);
                }
                syn::visit::visit_expr_assign(self, a);
            }
            fn visit_item(&mut self, _: &'ast syn::Item) {}
        }
        Assigns { r: self }.visit_expr(e);
    }

    /// `place = value` where `place` is a field or element of a binding: the binding holds
    /// `value` too.
    fn assigned_through(&mut self, place: &Expr, value: &Expr) {
        let mut root = place;
        loop {
            root = match root {
                Expr::Field(f) => &f.base,
                Expr::Index(i) => &i.expr,
                Expr::Paren(p) => &p.expr,
                _ => break,
            };
        }
        if let Expr::Path(p) = root
            && let Some(i) = p.path.get_ident()
            && let Some(id) = self.lookup(&i.to_string())
        {
            let d = self.def(value);
            self.bindings[id].defs.push(d);
        }
    }

    /// How an expression defines a binding, its names resolved in the current scope.
    fn def(&self, e: &Expr) -> Def {
        self.def_of(value_names(e), e)
    }

    /// A definition from what [`value_names`] found, its names resolved in the current scope:
    /// a value, where every variable it lends is a parameter that is a shared reference; else
    /// a borrow, whose contents come from the names `e` mentions if it builds no container of
    /// references ([`contents_plain`]).
    fn def_of(&self, names: Option<Names>, e: &Expr) -> Def {
        let ids = |ns: &[String]| ns.iter().filter_map(|d| self.lookup(d)).collect::<Vec<usize>>();
        match names {
            Some(n)
                if n.lent.iter().all(|l| self.lookup(l).is_some_and(|id| self.shared_refs.contains(&id))) =>
            {
                Def::Value { deps: ids(&n.deps), elems: ids(&n.elems), typed: false }
            }
            _ => Def::Borrowing {
                typed: false,
                contents: contents_plain(e).then(|| {
                    let mut all = Vec::new();
                    mentioned(e, &mut all);
                    ids(&all)
                }),
            },
        }
    }

    /// How the result of a wait defines a binding: the runtime's barriers and warp operations
    /// give values and tokens (a `&token` argument is lent for the call only); the module's
    /// own functions are calls like any other.
    fn wait_def(&self, call: &Expr) -> Def {
        let names = match call {
            Expr::MethodCall(m) => {
                let mut names = value_names(&m.receiver);
                for a in &m.args {
                    match (names.as_mut(), a) {
                        (Some(_), Expr::Reference(r)) if r.mutability.is_none() => {}
                        (Some(n), a) => match value_names(a) {
                            Some(more) => {
                                n.deps.extend(more.deps);
                                n.lent.extend(more.lent);
                            }
                            None => names = None,
                        },
                        (None, _) => {}
                    }
                }
                names
            }
            e => value_names(e),
        };
        self.def_of(names, call)
    }
}

/// The bindings an expression or statement names, with the scopes it opens itself.
struct Uses<'r> {
    r: &'r mut Resolver,
    found: HashSet<usize>,
    /// Scopes opened inside the walk (popped as the walk leaves them).
    depth: usize,
    /// Bindings from this one on are the walk's own (inner) ones: not uses from outside.
    outer: usize,
}

impl<'r> Uses<'r> {
    fn new(r: &'r mut Resolver) -> Uses<'r> {
        let outer = r.bindings.len();
        Uses { r, found: HashSet::new(), depth: 0, outer }
    }

    fn finish(self) -> HashSet<usize> {
        debug_assert_eq!(self.depth, 0);
        self.found
    }

    fn expr(&mut self, e: &Expr) {
        self.visit_expr(e);
    }

    fn name(&mut self, name: &str) {
        if let Some(id) = self.r.lookup(name).filter(|id| *id < self.outer) {
            self.found.insert(id);
        }
    }

    fn push(&mut self) {
        self.r.scopes.push(Vec::new());
        self.depth += 1;
    }

    fn pop(&mut self) {
        self.r.scopes.pop();
        self.depth -= 1;
    }

    /// Binds a pattern inside the walk (its bindings are local to the expression).
    fn bind(&mut self, pat: &Pat) {
        // (Inner bindings are never kept between loops: how they are defined does not matter.)
        let _ = self.r.bind_pat(pat, Def::borrowing());
    }

    /// Every name a macro's tokens could mean, and those of inline format arguments.
    fn tokens(&mut self, tokens: TokenStream) {
        for t in tokens {
            match t {
                TokenTree::Ident(i) => self.name(&i.to_string()),
                TokenTree::Group(g) => self.tokens(g.stream()),
                TokenTree::Literal(l) => {
                    let s = l.to_string();
                    if s.starts_with('"') || s.starts_with('r') {
                        for name in format_names(&s) {
                            self.name(&name);
                        }
                    }
                }
                TokenTree::Punct(_) => {}
            }
        }
    }
}

/// The names a format string's `{name}` / `{name:…}` arguments use.
fn format_names(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'{' {
            if b.get(i + 1) == Some(&b'{') {
                i += 2;
                continue;
            }
            let start = i + 1;
            let mut j = start;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j > start && !b[start].is_ascii_digit() {
                out.push(s[start..j].to_owned());
            }
            i = j;
        } else {
            i += 1;
        }
    }
    out
}

impl<'ast> Visit<'ast> for Uses<'_> {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        if p.qself.is_none()
            && let Some(i) = p.path.get_ident()
        {
            self.name(&i.to_string());
        }
        syn::visit::visit_expr_path(self, p);
    }
    fn visit_block(&mut self, b: &'ast syn::Block) {
        self.push();
        for s in &b.stmts {
            self.visit_stmt(s);
        }
        self.pop();
    }
    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let Some(init) = &l.init {
            self.visit_expr(&init.expr);
            if let Some((_, e)) = &init.diverge {
                self.visit_expr(e);
            }
        }
        self.bind(&l.pat);
    }
    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        self.push();
        for p in &c.inputs {
            self.bind(p);
        }
        self.visit_expr(&c.body);
        self.pop();
    }
    fn visit_expr_for_loop(&mut self, f: &'ast syn::ExprForLoop) {
        self.visit_expr(&f.expr);
        self.push();
        self.bind(&f.pat);
        self.visit_block(&f.body);
        self.pop();
    }
    fn visit_expr_if(&mut self, i: &'ast syn::ExprIf) {
        self.push();
        self.visit_expr(&i.cond);
        self.visit_block(&i.then_branch);
        self.pop();
        if let Some((_, e)) = &i.else_branch {
            self.visit_expr(e);
        }
    }
    fn visit_expr_while(&mut self, w: &'ast syn::ExprWhile) {
        self.push();
        self.visit_expr(&w.cond);
        self.visit_block(&w.body);
        self.pop();
    }
    fn visit_expr_let(&mut self, l: &'ast syn::ExprLet) {
        // (In a condition: its bindings scope over the rest of the condition and the body,
        // which the caller's scope covers.)
        self.visit_expr(&l.expr);
        self.bind(&l.pat);
    }
    fn visit_arm(&mut self, a: &'ast syn::Arm) {
        self.push();
        // (A guard is part of the arm's pattern: `Pat::Guard`.)
        match &a.pat {
            Pat::Guard(g) => {
                self.bind(&g.pat);
                self.visit_expr(&g.guard);
            }
            p => self.bind(p),
        }
        self.visit_expr(&a.body);
        self.pop();
    }
    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.tokens(m.tokens.clone());
    }
    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

// ---------------------------------------------------------------------------------------------
// Liveness: which bindings a later part of the body may still read.

#[derive(Default)]
struct Liveness {
    /// Bindings live before each node, by the node's address.
    before: HashMap<usize, HashSet<usize>>,
    /// Bindings live after each node.
    after: HashMap<usize, HashSet<usize>>,
}

fn addr<T>(n: &T) -> usize {
    n as *const T as usize
}

impl Liveness {
    /// Live before `nodes`, given what is live after them.
    fn nodes(&mut self, nodes: &[RNode<'_>], after: &HashSet<usize>) -> HashSet<usize> {
        let mut live = after.clone();
        for n in nodes.iter().rev() {
            self.after.insert(addr(n), live.clone());
            live = self.node(n, &live);
            self.before.insert(addr(n), live.clone());
        }
        live
    }

    fn node(&mut self, n: &RNode<'_>, after: &HashSet<usize>) -> HashSet<usize> {
        match n {
            RNode::Plain { uses, decls, kills, .. } => {
                let mut live = after.clone();
                for d in decls.iter().chain(kills) {
                    live.remove(d);
                }
                live.extend(uses);
                live
            }
            RNode::Wait { kind, uses, .. } => {
                let mut live = live_mid(kind, after);
                live.extend(uses);
                live
            }
            RNode::While { uses, body, .. } => {
                // The head: what the condition reads, what follows the loop, and what the body
                // reads (its end leads back to the head): to a fixed point.
                let mut head: HashSet<usize> = after.union(uses).copied().collect();
                loop {
                    let body_in = self.nodes(body, &head);
                    let next: HashSet<usize> = head.union(&body_in).copied().collect();
                    if next == head {
                        break;
                    }
                    head = next;
                }
                head
            }
            RNode::For { it, uses, decls, body, .. } => {
                let mut head: HashSet<usize> = after.clone();
                head.insert(*it);
                loop {
                    let mut body_in = self.nodes(body, &head);
                    for d in decls {
                        body_in.remove(d);
                    }
                    let next: HashSet<usize> = head.union(&body_in).copied().collect();
                    if next == head {
                        break;
                    }
                    head = next;
                }
                let mut live = head;
                live.remove(it);
                live.extend(uses);
                live
            }
            RNode::Block(inner) => self.nodes(inner, after),
            RNode::If { uses, then, els, .. } => {
                let mut live = self.nodes(then, after);
                match els {
                    Some(e) => live.extend(self.nodes(e, after)),
                    None => live.extend(after),
                }
                live.extend(uses);
                live
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Code.

/// Live once a wait's call has its arguments: what follows needs, but what the wait gives.
fn live_mid(kind: &RWait<'_>, after: &HashSet<usize>) -> HashSet<usize> {
    let mut live = after.clone();
    match kind {
        RWait::Let(_, ids) => ids.iter().for_each(|d| {
            live.remove(d);
        }),
        RWait::Assign(id) => {
            live.remove(id);
        }
        RWait::Discard => {}
    }
    live
}

fn slot(id: usize) -> syn::Ident {
    format_ident!("__lockstep_slot{}", id)
}

struct Gen<'r> {
    r: &'r Resolver,
    live: &'r Liveness,
    /// The kernel's parameter patterns, bound at the start of the first loop.
    params: Vec<&'r Pat>,
    /// Bindings kept between loops (in order: the code is the same from build to build).
    slots: BTreeSet<usize>,
    /// Each wait's per-lane steps.
    steps: Vec<syn::Ident>,
    /// Each warp operation's per-lane parts.
    warp_steps: Vec<syn::Ident>,
    /// Items of the body (`use`, `const`, `fn`), visible to all of it.
    items: Vec<TokenStream>,
    /// Bindings a wait's call names, which its future owns.
    waited: HashSet<usize>,
    /// Which bindings hold the block's phase token.
    tokens: Vec<bool>,
    /// Which bindings hold the block's `Warp`.
    warps: Vec<bool>,
    /// The binding each barrier's receiver names, by the receiver's address.
    resolved: &'r HashMap<usize, usize>,
}

/// One loop over a block's lanes being put together.
#[derive(Default)]
struct LaneLoop {
    /// Whether the loop starts the kernel (binds its parameters).
    first: bool,
    /// A wait whose result the loop takes first.
    take: Option<TokenStream>,
    /// Bindings the loop's code names (restored at its start when live there).
    uses: HashSet<usize>,
    /// Bindings the loop declares.
    decls: HashSet<usize>,
    /// Bindings the loop assigns whole (`x = v;`).
    assigned: HashSet<usize>,
    body: Vec<TokenStream>,
    /// Live at its start.
    live_in: HashSet<usize>,
    /// Kept by the loop's own code, not at its end.
    kept_early: HashSet<usize>,
}

impl LaneLoop {
    fn at(live_in: &HashSet<usize>) -> LaneLoop {
        LaneLoop { live_in: live_in.clone(), ..LaneLoop::default() }
    }
}

impl Gen<'_> {
    /// The receiver of `call` when it is `token.sync()` on the block's phase token (a
    /// `Block` parameter, or what a barrier of one gave).
    fn barrier<'c>(&self, call: &'c Expr) -> Option<&'c syn::Ident> {
        let Expr::MethodCall(m) = call else { return None };
        if m.method != "sync" || !m.args.is_empty() || m.turbofish.is_some() {
            return None;
        }
        let Expr::Path(p) = &*m.receiver else { return None };
        let ident = p.path.get_ident().filter(|_| p.qself.is_none())?;
        let id = self.resolved.get(&addr(&*m.receiver))?;
        self.tokens[*id].then_some(ident)
    }

    /// `w.op(args)` on the block's `Warp`, for an operation that has parts
    /// (`Warp::__lockstep_<op>`): the receiver and the parts' method.
    fn warp_op<'c>(&self, call: &'c Expr) -> Option<(&'c syn::ExprMethodCall, syn::Ident)> {
        const OPS: &[&str] = &[
            "ballot",
            "all",
            "any",
            "peers",
            "peers_low_bits",
            "shuffle",
            "shuffle_first",
            "shuffle_xor",
            "shuffle_down",
            "shuffle_up",
            "sum",
            "min",
            "max",
            "reduce",
        ];
        let Expr::MethodCall(m) = call else { return None };
        if !OPS.contains(&m.method.to_string().as_str()) {
            return None;
        }
        let id = self.resolved.get(&addr(&*m.receiver))?;
        self.warps[*id].then(|| (m, format_ident!("__lockstep_{}", m.method, span = m.method.span())))
    }

    /// The lane loop after a wait: it takes each lane's result from `step` first, with the
    /// bindings `back`, named `names`, where the wait owned what its call named (`owned`: its
    /// result a pair of the call's and those).
    fn taking(
        &self,
        kind: &RWait<'_>,
        live: &HashSet<usize>,
        step: &syn::Ident,
        owned: Option<(&[usize], &[syn::Ident])>,
    ) -> LaneLoop {
        let (back, names) = owned.unwrap_or_default();
        let mut next = LaneLoop::at(live);
        next.decls.extend(back);

        let (pat, ids): (TokenStream, &[usize]) = match kind {
            RWait::Let(pat, ids) => (pat.to_token_stream(), ids),
            RWait::Assign(id) => {
                let name = format_ident!("{}", self.r.bindings[*id].name);
                (quote!(mut #name), std::slice::from_ref(id))
            }
            RWait::Discard => (quote!(_), &[]),
        };
        next.decls.extend(ids);
        next.take = Some(if owned.is_none() {
            quote!(let #pat = #step.take(__t);)
        } else {
            quote!(let (#pat, (#(mut #names,)*)) = #step.take(__t);)
        });
        next
    }

    fn body(&mut self, tree: &[RNode<'_>], params: &[usize]) -> Option<TokenStream> {
        let mut out = TokenStream::new();
        let mut first = LaneLoop { first: true, ..LaneLoop::default() };
        first.decls.extend(params);
        let mut open = Some(first);
        self.nodes(tree, &mut open, &mut out)?;
        if let Some(l) = open.take() {
            out.extend(self.close(l, &HashSet::new())?);
        }
        Some(out)
    }

    /// Closes the open lane loop, if any, with `live` live after it.
    fn flush(
        &mut self,
        open: &mut Option<LaneLoop>,
        live: &HashSet<usize>,
        out: &mut TokenStream,
    ) -> Option<()> {
        if let Some(l) = open.take() {
            out.extend(self.close(l, live)?);
        }
        Some(())
    }

    /// The code of `nodes` in a block of its own, its last lane loop closed with `after` live.
    fn inner(&mut self, nodes: &[RNode<'_>], after: &HashSet<usize>) -> Option<TokenStream> {
        let mut out = TokenStream::new();
        let mut open = None;
        self.nodes(nodes, &mut open, &mut out)?;
        self.flush(&mut open, after, &mut out)?;
        Some(out)
    }

    fn nodes(
        &mut self,
        nodes: &[RNode<'_>],
        open: &mut Option<LaneLoop>,
        out: &mut TokenStream,
    ) -> Option<()> {
        for n in nodes {
            let before = &self.live.before[&addr(n)];
            let after = &self.live.after[&addr(n)];
            match n {
                RNode::Plain { stmt, uses, decls, kills } => {
                    if let Stmt::Item(item) = stmt {
                        self.items.push(item.to_token_stream());
                        continue;
                    }
                    let l = open.get_or_insert_with(|| LaneLoop::at(before));
                    l.uses.extend(uses);
                    l.decls.extend(decls);
                    l.assigned.extend(kills);
                    l.body.push(stmt.to_token_stream());
                }
                RNode::Wait { kind, call, uses } if self.barrier(call).is_some() => {
                    // A barrier of the block's own token: the boundary between two loops, every
                    // lane having finished this one before any starts the next; the token
                    // changes in this loop.
                    let recv = self.barrier(call).expect("checked");
                    let l = open.get_or_insert_with(|| LaneLoop::at(before));
                    l.uses.extend(uses);
                    let value =
                        quote_spanned!(call.span()=> ::offload::__private::BlockToken::lockstep_sync(#recv));
                    l.body.push(match kind {
                        RWait::Let(pat, ids) => {
                            l.decls.extend(ids);
                            quote!(let #pat = #value;)
                        }
                        RWait::Assign(id) => {
                            l.decls.insert(*id);
                            let name = format_ident!("{}", self.r.bindings[*id].name);
                            quote!(let mut #name = #value;)
                        }
                        RWait::Discard => quote!(let _ = #value;),
                    });
                    self.flush(open, after, out)?;
                }
                RNode::Wait { kind, call, uses } if self.warp_op(call).is_some() => {
                    // A warp operation in parts: each lane's put in this loop, each warp's
                    // round after it, each lane's result taken in the next.
                    let (m, parts) = self.warp_op(call).expect("checked");
                    let step = format_ident!("__lockstep_warp{}", self.warp_steps.len());
                    self.warp_steps.push(step.clone());
                    let mut l = open.take().unwrap_or_else(|| LaneLoop::at(before));
                    l.uses.extend(uses);
                    let (recv, turbofish, args) = (&m.receiver, &m.turbofish, &m.args);
                    l.body.push(quote_spanned! {call.span()=>
                        #step.put(__t, #recv.#parts #turbofish (#args));
                    });
                    let live_mid = live_mid(kind, after);
                    out.extend(self.close(l, &live_mid)?);
                    out.extend(quote!(__ls.warp(&mut #step);));
                    *open = Some(self.taking(kind, &live_mid, &step, None));
                }
                RNode::Wait { kind, call, uses } => {
                    let step = format_ident!("__lockstep_step{}", self.steps.len());
                    self.steps.push(step.clone());
                    // Live once the call has its arguments: what follows needs, but what the
                    // wait gives.
                    let live_mid = live_mid(kind, after);
                    // The wait owns what its call names (a future may borrow its receiver and
                    // arguments), and gives back what is still needed after it.
                    let mut back: Vec<usize> =
                        uses.iter().filter(|u| live_mid.contains(u)).copied().collect();
                    back.sort_unstable();
                    self.waited.extend(uses);
                    let names: Vec<syn::Ident> =
                        back.iter().map(|b| format_ident!("{}", self.r.bindings[*b].name)).collect();
                    let mut l = open.take().unwrap_or_else(|| LaneLoop::at(before));
                    l.uses.extend(uses);
                    l.kept_early.extend(uses);
                    l.body.push(quote_spanned! {call.span()=>
                        #step.start(__t, async move {
                            (::offload::__private::Lane::new(#call).__lane_await().await, (#(#names,)*))
                        });
                    });
                    out.extend(self.close(l, &live_mid)?);
                    out.extend(quote!(__ls.wait(&mut #step);));
                    *open = Some(self.taking(kind, &live_mid, &step, Some((&back, &names))));
                }
                RNode::Block(inner) => {
                    self.flush(open, before, out)?;
                    let code = self.inner(inner, after)?;
                    out.extend(quote!({ #code }));
                }
                RNode::While { cond, uses, body } => {
                    // The condition once before the loop, then at the end of the body's last
                    // lane loop (one loop over the lanes fewer per iteration).
                    self.flush(open, before, out)?;
                    let first = self.condition(cond, uses, before)?;
                    let mut inner = TokenStream::new();
                    let mut o = None;
                    self.nodes(body, &mut o, &mut inner)?;
                    let mut last = o.unwrap_or_else(|| LaneLoop::at(before));
                    last.uses.extend(uses);
                    last.body.push(quote_spanned! {cond.span()=> __agree.lane(#cond);});
                    inner.extend(self.close(last, before)?);
                    out.extend(quote!({
                        #first
                        let mut __again = __agree;
                        while __again {
                            let mut __agree = ::offload::__private::Agree::default();
                            #inner
                            __again = __agree.get();
                        }
                    }));
                }
                RNode::For { pat, iter, it, uses, decls, body } => {
                    // `let mut it = into_iter(iter);` in the open loop, then a loop whose head
                    // takes each lane's next item.
                    let itn = format_ident!("{}", self.r.bindings[*it].name);
                    let l = open.get_or_insert_with(|| LaneLoop::at(before));
                    l.uses.extend(uses);
                    l.decls.insert(*it);
                    l.body.push(quote_spanned! {iter.span()=>
                        let mut #itn = ::core::iter::IntoIterator::into_iter(#iter);
                    });
                    // Live at the head: after the loop, the iterator, and the body's start but
                    // its pattern's names.
                    let body_in =
                        body.first().map_or_else(|| after.clone(), |b| self.live.before[&addr(b)].clone());
                    let mut head_live = after.clone();
                    head_live.insert(*it);
                    head_live.extend(body_in.iter().filter(|b| !decls.contains(b)));
                    self.flush(open, &head_live, out)?;
                    let mut head = LaneLoop::at(&head_live);
                    head.uses.insert(*it);
                    head.decls.extend(decls);
                    head.kept_early.insert(*it);
                    self.slots.insert(*it);
                    let it_slot = slot(*it);
                    head.body.push(quote_spanned! {pat.span()=>
                        let __next = #itn.next();
                        __agree.lane(__next.is_some());
                        #it_slot[__t] = ::core::option::Option::Some(#itn);
                        let ::core::option::Option::Some(#pat) = __next else { continue };
                    });
                    let head_loop = self.close(head, &body_in)?;
                    let inner = self.inner(body, &head_live)?;
                    out.extend(quote!(loop {
                        let mut __agree = ::offload::__private::Agree::default();
                        #head_loop
                        if !__agree.get() { break; }
                        #inner
                    }));
                }
                RNode::If { cond, uses, then, els } => {
                    self.flush(open, before, out)?;
                    let agree = self.condition(cond, uses, before)?;
                    let t = self.inner(then, after)?;
                    let e = match els {
                        Some(els) => self.inner(els, after)?,
                        None => TokenStream::new(),
                    };
                    out.extend(quote!({ #agree if __agree { #t } else { #e } }));
                }
            }
        }
        Some(())
    }

    /// A lane loop that computes `cond` in every lane; `__agree` is their common value after.
    fn condition(
        &mut self,
        cond: &Expr,
        uses: &HashSet<usize>,
        live: &HashSet<usize>,
    ) -> Option<TokenStream> {
        let mut l = LaneLoop::at(live);
        l.uses.extend(uses);
        l.body.push(quote_spanned! {cond.span()=> __agree.lane(#cond);});
        let lanes = self.close(l, live)?;
        Some(quote! {
            let mut __agree = ::offload::__private::Agree::default();
            #lanes
            let __agree = __agree.get();
        })
    }

    /// The loop over the lanes: restore what it names of the bindings live at its start, run
    /// its code, keep what it has of the bindings live at its end.
    fn close(&mut self, l: LaneLoop, live_out: &HashSet<usize>) -> Option<TokenStream> {
        // (What a wait gives back is the loop's own, not restored.)
        let mut restored: Vec<usize> =
            l.uses.iter().filter(|u| l.live_in.contains(u) && !l.decls.contains(u)).copied().collect();
        restored.sort_unstable();
        // A binding the loop gives a value before reading it is declared here, not restored.
        let mut fresh: Vec<usize> =
            l.assigned.iter().filter(|b| !restored.contains(b) && !l.decls.contains(b)).copied().collect();
        fresh.sort_unstable();
        let mut keep: Vec<usize> = restored
            .iter()
            .chain(l.decls.iter())
            .chain(fresh.iter())
            .filter(|b| live_out.contains(b) && !l.kept_early.contains(b))
            .copied()
            .collect();
        keep.sort_unstable();
        keep.dedup();
        // Names must say which binding they are: two of one name at either end cannot be.
        let mut start = restored.clone();
        start.extend(&fresh);
        for set in [&start, &keep] {
            let mut names = HashSet::new();
            for b in set.iter() {
                if !names.insert(&self.r.bindings[*b].name) {
                    return None;
                }
            }
        }
        let restores: Vec<TokenStream> = restored
            .iter()
            .map(|b| {
                self.slots.insert(*b);
                let name = format_ident!("{}", self.r.bindings[*b].name);
                let s = slot(*b);
                quote!(let mut #name = ::offload::__private::restore(&mut #s[__t]);)
            })
            .collect();
        let fresh: Vec<TokenStream> = fresh
            .iter()
            .map(|b| {
                let name = format_ident!("{}", self.r.bindings[*b].name);
                quote!(let mut #name;)
            })
            .collect();
        let keeps: Vec<TokenStream> = keep
            .iter()
            .map(|b| {
                self.slots.insert(*b);
                let name = format_ident!("{}", self.r.bindings[*b].name);
                let s = slot(*b);
                quote!(#s[__t] = ::core::option::Option::Some(#name);)
            })
            .collect();
        let params = if l.first {
            let pats = &self.params;
            quote!(let (#(#pats,)*) = __params(&__ls.token());)
        } else {
            quote!()
        };
        let take = &l.take;
        let body = &l.body;
        Some(quote! {
            for __t in 0..__n {
                __ls.enter(__t);
                #params
                #(#restores)*
                #(#fresh)*
                #take
                #(#body)*
                #(#keeps)*
            }
        })
    }
}

/// Which bindings hold the block's phase token (`Block`/`BlockRead`): the `Block` parameters,
/// and bindings every definition of which is a copy or a barrier of one (the largest such
/// set).
fn tokens(r: &Resolver, params: &HashSet<usize>) -> Vec<bool> {
    let mut token: Vec<bool> =
        (0..r.bindings.len()).map(|b| params.contains(&b) || !r.bindings[b].defs.is_empty()).collect();
    loop {
        let mut changed = false;
        for (id, b) in r.bindings.iter().enumerate() {
            if !token[id] || params.contains(&id) {
                continue;
            }
            let ok = b.token_from.len() == b.defs.len()
                && b.token_from.iter().all(|s| s.is_some_and(|s| token[s]));
            if !ok {
                token[id] = false;
                changed = true;
            }
        }
        if !changed {
            return token;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// What may be kept: values that cannot borrow another local.

/// Whether every binding in `kept` (and every binding their values come from) holds a value
/// that borrows no other local: the lockstep copy moves each into its slot at the end of a
/// loop, which a borrow of another local (which dies with the loop) would not allow.
fn borrow_free(r: &Resolver, kept: &HashSet<usize>) -> bool {
    // What bindings refer to, or hold as elements, borrows no local (`contents`), and which
    // bindings hold no borrow of a local themselves (`free`): the largest sets closed under the
    // definitions (start from all, drop what a definition does not allow, until none drops).
    let n = r.bindings.len();
    let mut contents = vec![true; n];
    loop {
        let mut changed = false;
        for (id, b) in r.bindings.iter().enumerate() {
            let ok = b.defs.iter().all(|d| match d {
                Def::Param | Def::Value { typed: true, .. } | Def::Borrowing { typed: true, .. } => true,
                Def::Value { deps, elems, .. } => deps.iter().chain(elems).all(|d| contents[*d]),
                Def::Borrowing { contents: Some(from), .. } => from.iter().all(|d| contents[*d]),
                Def::Borrowing { contents: None, .. } => false,
            });
            if contents[id] && !ok {
                contents[id] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    let mut free = contents.clone();
    loop {
        let mut changed = false;
        for (id, b) in r.bindings.iter().enumerate() {
            let ok = b.defs.iter().all(|d| match d {
                Def::Param | Def::Value { typed: true, .. } | Def::Borrowing { typed: true, .. } => true,
                Def::Value { deps, elems, .. } => {
                    deps.iter().all(|d| free[*d]) && elems.iter().all(|d| contents[*d])
                }
                Def::Borrowing { .. } => false,
            });
            if free[id] && !ok {
                free[id] = false;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    kept.iter().all(|id| free[*id])
}

/// Methods that give a plain value whatever they are called on.
const VALUE_METHODS: &[&str] = &[
    "len",
    "is_empty",
    "min",
    "max",
    "abs",
    "clamp",
    "pow",
    "powi",
    "powf",
    "sqrt",
    "exp",
    "exp2",
    "ln",
    "log2",
    "log10",
    "sin",
    "cos",
    "tan",
    "floor",
    "ceil",
    "round",
    "trunc",
    "fract",
    "mul_add",
    "signum",
    "recip",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "wrapping_neg",
    "wrapping_shl",
    "wrapping_shr",
    "saturating_add",
    "saturating_sub",
    "saturating_mul",
    "count_ones",
    "count_zeros",
    "leading_zeros",
    "trailing_zeros",
    "rotate_left",
    "rotate_right",
    "swap_bytes",
    "reverse_bits",
    "to_bits",
    "is_nan",
    "is_finite",
    "is_power_of_two",
    "next_power_of_two",
    "div_ceil",
    "rem_euclid",
    "div_euclid",
    "hypot",
    "atan2",
    "lane",
    "size",
    "index",
    "indices",
    "is_some",
    "is_none",
    "to_le",
    "to_be",
    "unsigned_abs",
];

/// The names an expression's value may carry a borrow from, when it can carry none but
/// theirs: numbers, names, arithmetic, casts, indexing and fields (copies), tuples, arrays,
/// struct literals, ranges, calls of functions on such values, methods of temporaries, methods
/// that give plain values ([`VALUE_METHODS`]), and branches whose results are such (without
/// `let`s of their own). `None` for anything else (a reference, a closure, a macro, a method
/// of a variable, which may lend it).
fn value_names(e: &Expr) -> Option<Names> {
    let mut out = Names::default();
    value_into(e, &mut out).then_some(out)
}

/// What [`value_names`] finds: the names a value may carry a borrow from (`deps`), and the
/// variables whose methods it calls (`lent`), which may lend them: a parameter that is a
/// shared reference (`&[T]`) lends only what it points to, outside the kernel's locals.
#[derive(Default)]
struct Names {
    deps: Vec<String>,
    lent: Vec<String>,
    /// Variables elements are read out of (`x[i]`: a copy of an element, which holds a borrow
    /// only if the elements of `x` do, whatever `x` itself is).
    elems: Vec<String>,
}

fn value_into(e: &Expr, out: &mut Names) -> bool {
    let mut v = |e: &Expr| value_into(e, out);
    match e {
        Expr::Lit(_) => true,
        Expr::Path(p) => {
            if let Some(i) = p.path.get_ident().filter(|_| p.qself.is_none()) {
                out.deps.push(i.to_string());
            }
            true
        }
        Expr::Binary(b) => v(&b.left) && v(&b.right),
        Expr::Unary(u) => v(&u.expr),
        Expr::Cast(c) => v(&c.expr),
        Expr::Paren(p) => v(&p.expr),
        Expr::Group(g) => v(&g.expr),
        Expr::Tuple(t) => t.elems.iter().all(v),
        Expr::Array(a) => a.elems.iter().all(v),
        Expr::Repeat(a) => v(&a.expr),
        Expr::Range(rg) => rg.start.as_deref().is_none_or(&mut v) && rg.end.as_deref().is_none_or(v),
        Expr::Struct(s) => {
            s.fields.iter().all(|f| value_into(&f.expr, out))
                && s.rest.as_deref().is_none_or(|r| value_into(r, out))
        }
        Expr::Index(i) => elems_into(&i.expr, out) && value_into(&i.index, out),
        Expr::Field(f) => v(&f.base),
        Expr::Let(l) => v(&l.expr),
        Expr::If(i) => {
            v(&i.cond)
                && block_value(&i.then_branch, out)
                && i.else_branch.as_ref().is_none_or(|(_, e)| value_into(e, out))
        }
        Expr::Block(b) => b.label.is_none() && block_value(&b.block, out),
        Expr::Match(m) => {
            v(&m.expr) && m.arms.iter().all(|a| !binds_by_ref(&a.pat) && value_into(&a.body, out))
        }
        Expr::Call(c) => matches!(&*c.func, Expr::Path(_)) && c.args.iter().all(v),
        Expr::MethodCall(m) => {
            let name = m.method.to_string();
            // `shared.get(&read, i)`: an element of block-shared memory, by value.
            if VALUE_METHODS.contains(&name.as_str()) || name == "get" && m.args.len() == 2 {
                return true;
            }
            // A method of a temporary cannot lend it (it dies with the statement); one of a
            // variable (or its element or field) may.
            let receiver = if is_place(&m.receiver) { place_into(&m.receiver, out) } else { v(&m.receiver) };
            receiver && m.args.iter().all(|a| value_into(a, out))
        }
        _ => false,
    }
}

/// The container an element is read out of: a variable (or its field or element) whose
/// elements are what matters, or any value.
fn elems_into(e: &Expr, out: &mut Names) -> bool {
    match e {
        Expr::Path(p) => {
            if let Some(i) = p.path.get_ident().filter(|_| p.qself.is_none()) {
                out.elems.push(i.to_string());
            }
            true
        }
        Expr::Field(f) => elems_into(&f.base, out),
        Expr::Index(i) => elems_into(&i.expr, out) && value_into(&i.index, out),
        Expr::Paren(p) => elems_into(&p.expr, out),
        e => value_into(e, out),
    }
}

/// Whether an expression that may borrow puts no reference or closure inside a container it
/// builds (an array, tuple or struct of `&local`s): what its result refers to is then what the
/// names it mentions hold.
fn contents_plain(e: &Expr) -> bool {
    struct Check(bool);
    impl<'ast> Visit<'ast> for Check {
        fn visit_expr_array(&mut self, a: &'ast syn::ExprArray) {
            self.0 &= a.elems.iter().all(|e| !matches!(e, Expr::Reference(_) | Expr::Closure(_)));
            syn::visit::visit_expr_array(self, a);
        }
        fn visit_expr_tuple(&mut self, t: &'ast syn::ExprTuple) {
            self.0 &= t.elems.iter().all(|e| !matches!(e, Expr::Reference(_) | Expr::Closure(_)));
            syn::visit::visit_expr_tuple(self, t);
        }
        fn visit_expr_struct(&mut self, s: &'ast syn::ExprStruct) {
            self.0 &= s.fields.iter().all(|f| !matches!(f.expr, Expr::Reference(_) | Expr::Closure(_)));
            syn::visit::visit_expr_struct(self, s);
        }
        fn visit_expr_closure(&mut self, _: &'ast syn::ExprClosure) {
            self.0 = false;
        }
        fn visit_expr_macro(&mut self, _: &'ast syn::ExprMacro) {
            self.0 = false;
        }
        fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
            // (`Some(&x)`: a container too.)
            self.0 &= c.args.iter().all(|e| !matches!(e, Expr::Reference(_) | Expr::Closure(_)));
            syn::visit::visit_expr_call(self, c);
        }
    }
    let mut c = Check(true);
    c.visit_expr(e);
    c.0
}

/// Every plain name an expression mentions.
fn mentioned(e: &Expr, out: &mut Vec<String>) {
    struct Names<'o>(&'o mut Vec<String>);
    impl<'ast> Visit<'ast> for Names<'_> {
        fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
            if let Some(i) = p.path.get_ident().filter(|_| p.qself.is_none()) {
                self.0.push(i.to_string());
            }
        }
        fn visit_item(&mut self, _: &'ast syn::Item) {}
    }
    Names(out).visit_expr(e);
}

/// A place a method is called on: its variable is lent, its indices are values.
fn place_into(e: &Expr, out: &mut Names) -> bool {
    match e {
        Expr::Path(p) => match p.path.get_ident().filter(|_| p.qself.is_none()) {
            Some(i) => {
                out.lent.push(i.to_string());
                out.deps.push(i.to_string());
                true
            }
            None => true,
        },
        Expr::Field(f) => place_into(&f.base, out),
        Expr::Index(i) => place_into(&i.expr, out) && value_into(&i.index, out),
        Expr::Paren(p) => place_into(&p.expr, out),
        _ => false,
    }
}

/// A block's value (its tail), when the block binds nothing of its own.
fn block_value(b: &syn::Block, out: &mut Names) -> bool {
    if b.stmts.iter().any(|s| matches!(s, Stmt::Local(_) | Stmt::Item(_))) {
        return false;
    }
    match b.stmts.last() {
        Some(Stmt::Expr(e, None)) => value_into(e, out),
        _ => true,
    }
}

/// Whether a pattern binds by reference (`ref x`, `&x` patterns being fine).
fn binds_by_ref(p: &Pat) -> bool {
    struct Refs(bool);
    impl<'ast> Visit<'ast> for Refs {
        fn visit_pat_ident(&mut self, i: &'ast syn::PatIdent) {
            self.0 |= i.by_ref.is_some();
            syn::visit::visit_pat_ident(self, i);
        }
    }
    let mut r = Refs(false);
    r.visit_pat(p);
    r.0
}

/// Whether `e` names a place (a variable, its field or element), which a method may borrow.
fn is_place(e: &Expr) -> bool {
    match e {
        Expr::Path(_) => true,
        Expr::Field(f) => is_place(&f.base),
        Expr::Index(i) => is_place(&i.expr),
        Expr::Paren(p) => is_place(&p.expr),
        Expr::Unary(u) => matches!(u.op, syn::UnOp::Deref(_)),
        _ => false,
    }
}

/// Whether a type annotation says the value holds no borrow: numbers, `bool`, `char`, and
/// arrays and tuples of them.
fn plain_type(t: &syn::Type) -> bool {
    match t {
        syn::Type::Path(p) if p.qself.is_none() => p.path.get_ident().is_some_and(|i| {
            matches!(
                i.to_string().as_str(),
                "u8" | "u16"
                    | "u32"
                    | "u64"
                    | "u128"
                    | "usize"
                    | "i8"
                    | "i16"
                    | "i32"
                    | "i64"
                    | "i128"
                    | "isize"
                    | "f32"
                    | "f64"
                    | "bool"
                    | "char"
            )
        }),
        syn::Type::Array(a) => plain_type(&a.elem),
        syn::Type::Tuple(t) => t.elems.iter().all(plain_type),
        syn::Type::Paren(p) => plain_type(&p.elem),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::signature::Errors;
    use syn::parse_quote;

    /// The kernels of `module` (every function of it) that get a lockstep copy, by name, and
    /// each copy's code.
    fn lockstep(module: syn::ItemMod) -> std::collections::HashMap<String, String> {
        let (_, items) = module.content.expect("inline module");
        let mut errors = Errors::default();
        let waits = crate::uniformity::check(&items, &mut errors);
        if let Err(e) = errors.finish() {
            panic!(
                "the module is a valid one: {}",
                e.into_iter().map(|e| e.to_string()).collect::<Vec<_>>().join("\n")
            );
        }
        let names: Vec<String> = items
            .iter()
            .filter_map(|i| match i {
                syn::Item::Fn(f) => Some(f.sig.ident.to_string()),
                _ => None,
            })
            .collect();
        super::generate(&items, &names, &waits).into_iter().map(|(k, v)| (k, v.to_string())).collect()
    }

    #[test]
    fn barriers_in_uniform_loops_and_branches_are_cut() {
        let got = lockstep(parse_quote! { mod gpu {
            pub fn sum(x: &[f32], mut sums: PerBlock<f32>, tile: Shared<f32>, block: Block) {
                let t = thread_idx_x() as usize;
                let mut block = block;
                let mut v = x[t];
                let mut half = tile.len() / 2;
                while half > 0 {
                    tile.write(&block, v);
                    let read = block.sync();
                    if t < half {
                        v += tile.get(&read, t + half);
                    }
                    block = read.sync();
                    half /= 2;
                }
                if let Some(s) = sums.mine() {
                    *s = v;
                }
            }
            pub fn tiles(n: usize, a: &[f32], mut c: Region<f32>, ta: Shared<f32>, block: Block) {
                let mut block = block;
                let mut acc = 0.0;
                for k in 0..n.div_ceil(16) {
                    ta.write(&block, a[k]);
                    let read = block.sync();
                    if n > 4 {
                        acc += ta.get(&read, 0);
                    } else {
                        acc -= ta.get(&read, 1);
                    }
                    block = read.sync();
                }
                if let Some(ci) = c.mine() {
                    *ci = acc;
                }
            }
            pub fn warps(w: Warp, x: &[u32], mut out: Region<u32>) {
                let v = x[global_linear_id()];
                let s = w.sum(v);
                let m = w.max(v);
                if let Some(o) = out.mine() {
                    *o = s + m;
                }
            }
        }});
        for k in ["sum", "tiles", "warps"] {
            assert!(got.contains_key(k), "{k} has no lockstep copy");
        }
        // A barrier of the block's token is a loop boundary, not a wait.
        assert!(got["sum"].contains("lockstep_sync"), "{}", got["sum"]);
        assert!(!got["sum"].contains("Steps"), "{}", got["sum"]);
        // A warp operation of the block's `Warp` is done in parts for the whole block.
        assert!(got["warps"].contains("WarpSteps :: lanes"), "{}", got["warps"]);
        assert!(got["tiles"].contains("IntoIterator :: into_iter"), "{}", got["tiles"]);
    }

    #[test]
    fn methods_of_shared_reference_parameters_may_be_kept() {
        let got = lockstep(parse_quote! { mod gpu {
            // `x.get(i)…` lends only what `x` points to; `local.iter()…` would lend a local.
            pub fn reads(x: &[u32], mut y: Region<u32>, tile: Shared<u32>, block: Block) {
                let i = global_linear_id();
                let mine = x.get(i).copied().unwrap_or(0);
                let rows = x.chunks(4);
                tile.write(&block, mine);
                let read = block.sync();
                if let Some(o) = y.mine() {
                    *o = mine + rows.len() as u32 + tile.get(&read, 0);
                }
            }
            pub fn lends(x: &[u32], mut y: Region<u32>, tile: Shared<u32>, block: Block) {
                let local = [x[0], x[1]];
                let first = local.iter().copied().next().unwrap_or(0);
                let it = local.iter();
                tile.write(&block, first);
                let read = block.sync();
                if let Some(o) = y.mine() {
                    *o = it.count() as u32 + tile.get(&read, 0);
                }
            }
        }});
        assert!(got.contains_key("reads"));
        assert!(!got.contains_key("lends"), "{}", got["lends"]);
    }

    #[test]
    fn what_cannot_be_cut_keeps_the_futures() {
        let got = lockstep(parse_quote! { mod gpu {
            // A warp operation reached by some warps only.
            pub fn some_warps(w: Warp, x: &[u32], mut out: Region<u32>) {
                let v = w.sum(x[global_linear_id()]);
                if v > 5 {
                    let s = w.max(v);
                    if let Some(o) = out.mine() {
                        *o = s;
                    }
                }
            }
            // An early return.
            pub fn early(n: u32, block: Block, mut y: Region<u32>) {
                if n == 0 {
                    return;
                }
                let read = block.sync();
                if let Some(v) = y.mine() {
                    *v = n;
                }
            }
            // A reference to a local that lives across a barrier.
            pub fn lends(x: &[f32], mut y: Region<f32>, block: Block) {
                let local = [x[0], x[1]];
                let r = &local;
                let read = block.sync();
                if let Some(v) = y.mine() {
                    *v = r[0];
                }
            }
            // A barrier inside an expression.
            pub fn nested(w: Warp, x: &[u32], mut out: Region<u32>) {
                let s = 1 + w.sum(x[0]);
                if let Some(o) = out.mine() {
                    *o = s;
                }
            }
            // A loop left by `break` around a barrier.
            pub fn leaves(n: u32, block: Block, mut y: Region<u32>) {
                let mut block = block;
                let mut k = 0;
                while k < 10 {
                    let read = block.sync();
                    if n == k {
                        break;
                    }
                    block = read.sync();
                    k += 1;
                }
                if let Some(v) = y.mine() {
                    *v = k;
                }
            }
            // An outer local, live after the block, shadowed by a local of the block across a
            // barrier: both would need keeping under one name.
            pub fn shadows(x: &[u32], mut y: Region<u32>, block: Block) {
                let v = x[0];
                let mut block = block;
                {
                    let v = v * 2;
                    let read = block.sync();
                    block = read.sync();
                    if let Some(o) = y.mine() {
                        *o = v;
                    }
                }
                let read = block.sync();
                let _ = v;
            }
        }});
        for k in ["some_warps", "early", "lends", "nested", "leaves", "shadows"] {
            assert!(!got.contains_key(k), "{k} got a lockstep copy:\n{}", got[k]);
        }
    }

    #[test]
    fn format_strings_name_their_arguments() {
        assert_eq!(super::format_names("\"{a} {b:?} {{c}} {0} {d_1:>4}\""), ["a", "b", "d_1"]);
    }
}
