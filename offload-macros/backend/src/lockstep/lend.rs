//! Locals a lane loop uses in place in their slots, rather than taking them out at its start
//! and keeping them again at its end.
//!
//! A kept local `x` is normally restored (`let mut x = restore(&mut slot[t]);`) and kept again
//! (`slot[t] = Some(x);`): two writes of the slot's tag and a copy each way, for every local,
//! every lane and every loop. Where the loop's code cannot move `x` out, it can use `x` where
//! it lies: `let __lockstep_lent_x = lend(&mut slot[t]);` and every `x` of the loop's code
//! becomes `(*__lockstep_lent_x)`. The macro does not know types, so it decides from where each
//! `x` stands:
//! - never a move: `&x`, `&mut x`, `x[i]`, `x op= v`, `x == v` (and the other comparisons),
//!   `x as T`, and places under those (`&x.f`, `x.f += 1`);
//! - a copy or a move (`f(x)`, `x + 1`, `let y = x;`, `x.method()`, whose `self` may be taken
//!   by value): a move only if `x` is not `Copy`, and a local that is not `Copy` cannot be
//!   moved where it is still used after the loop (the kernel as written would not compile) —
//!   unless the move is on a path that never reaches the loop's end (a `panic!`, an endless
//!   `loop`), so such uses count only where `x` is live after the loop and the loop has
//!   neither;
//! - anything else keeps `x` out of place: a whole assignment `x = v` (`v` may have moved
//!   `x`), a field in a value's position (`x.f` may move part of it), a pattern that takes `x`
//!   apart, a `move` closure, a macro that names it, and any other binding of the same name in
//!   the loop (the rewrite goes by name).

use super::*;
use syn::visit_mut::VisitMut;

/// How an occurrence of a name is used.
#[derive(Clone, Copy, PartialEq)]
enum Ctx {
    /// Only a place: never moved.
    Place,
    /// Copied or moved whole.
    Whole,
    /// Part of it may be moved: never lent.
    Part,
}

/// What a lane loop's code does with the names of the locals it might lend.
pub(super) struct Check<'n> {
    names: &'n HashSet<String>,
    ctx: Ctx,
    /// Names some use of which rules lending out.
    pub(super) out: HashSet<String>,
    /// Names used whole somewhere.
    pub(super) whole: HashSet<String>,
    /// Whether some path of the code may never reach its end (`panic!`, `loop`).
    pub(super) diverges: bool,
    move_closures: usize,
}

impl<'n> Check<'n> {
    pub(super) fn new(names: &'n HashSet<String>) -> Check<'n> {
        Check {
            names,
            ctx: Ctx::Whole,
            out: HashSet::new(),
            whole: HashSet::new(),
            diverges: false,
            move_closures: 0,
        }
    }

    fn with(&mut self, ctx: Ctx, f: impl FnOnce(&mut Self)) {
        let saved = std::mem::replace(&mut self.ctx, ctx);
        f(self);
        self.ctx = saved;
    }

    fn expr_in(&mut self, ctx: Ctx, e: &Expr) {
        self.with(ctx, |c| c.visit_expr(e));
    }

    /// Rules out every name a pattern binds (a binding of the same name as a lent local).
    fn binds(&mut self, pat: &Pat) {
        let mut names = Vec::new();
        pat_names(pat, &mut names);
        for n in names {
            if self.names.contains(&n) {
                self.out.insert(n);
            }
        }
    }
}

/// The names a pattern binds.
fn pat_names(pat: &Pat, out: &mut Vec<String>) {
    struct Names<'o>(&'o mut Vec<String>);
    impl<'ast> Visit<'ast> for Names<'_> {
        fn visit_pat_ident(&mut self, i: &'ast syn::PatIdent) {
            self.0.push(i.ident.to_string());
            syn::visit::visit_pat_ident(self, i);
        }
        fn visit_expr(&mut self, _: &'ast Expr) {}
    }
    Names(out).visit_pat(pat);
}

/// How a value matched against `pat` is used: whole when the pattern binds it by value to one
/// name, a place when the pattern binds nothing by value, taken apart otherwise.
fn pat_ctx(pat: &Pat) -> Ctx {
    match pat {
        Pat::Ident(i) if i.subpat.is_none() => {
            if i.by_ref.is_some() {
                Ctx::Place
            } else {
                Ctx::Whole
            }
        }
        Pat::Type(t) => pat_ctx(&t.pat),
        Pat::Guard(g) => pat_ctx(&g.pat),
        Pat::Paren(p) => pat_ctx(&p.pat),
        Pat::Wild(_) | Pat::Lit(_) | Pat::Range(_) | Pat::Path(_) | Pat::Rest(_) => Ctx::Place,
        p => {
            struct ByValue(bool);
            impl<'ast> Visit<'ast> for ByValue {
                fn visit_pat_ident(&mut self, i: &'ast syn::PatIdent) {
                    let constant = i.subpat.is_none()
                        && i.by_ref.is_none()
                        && i.ident.to_string().starts_with(|c: char| c.is_uppercase());
                    if i.by_ref.is_none() && !constant {
                        self.0 = true;
                    }
                    syn::visit::visit_pat_ident(self, i);
                }
                fn visit_expr(&mut self, _: &'ast Expr) {}
            }
            let mut v = ByValue(false);
            v.visit_pat(p);
            if v.0 { Ctx::Part } else { Ctx::Place }
        }
    }
}

impl<'ast> Visit<'ast> for Check<'_> {
    fn visit_expr_path(&mut self, p: &'ast syn::ExprPath) {
        let Some(name) = p.path.get_ident().filter(|_| p.qself.is_none()).map(|i| i.to_string()) else {
            return;
        };
        if !self.names.contains(&name) {
            return;
        }
        match self.ctx {
            _ if self.move_closures > 0 => {
                self.out.insert(name);
            }
            Ctx::Place => {}
            Ctx::Whole => {
                self.whole.insert(name);
            }
            Ctx::Part => {
                self.out.insert(name);
            }
        }
    }

    fn visit_expr(&mut self, e: &'ast Expr) {
        match e {
            Expr::Path(p) => self.visit_expr_path(p),
            Expr::Reference(r) => self.expr_in(Ctx::Place, &r.expr),
            Expr::Index(i) => {
                self.expr_in(Ctx::Place, &i.expr);
                self.expr_in(Ctx::Whole, &i.index);
            }
            Expr::Binary(b) => {
                use syn::BinOp::*;
                let (left, right) = match b.op {
                    AddAssign(_) | SubAssign(_) | MulAssign(_) | DivAssign(_) | RemAssign(_)
                    | BitXorAssign(_) | BitAndAssign(_) | BitOrAssign(_) | ShlAssign(_) | ShrAssign(_) => {
                        (Ctx::Place, Ctx::Whole)
                    }
                    Eq(_) | Ne(_) | Lt(_) | Le(_) | Gt(_) | Ge(_) => (Ctx::Place, Ctx::Place),
                    _ => (Ctx::Whole, Ctx::Whole),
                };
                self.expr_in(left, &b.left);
                self.expr_in(right, &b.right);
            }
            Expr::Assign(a) => {
                match &*a.left {
                    Expr::Path(p) if p.qself.is_none() && p.path.get_ident().is_some() => {
                        let name = p.path.get_ident().expect("checked").to_string();
                        if self.names.contains(&name) {
                            self.out.insert(name);
                        }
                    }
                    left => self.expr_in(Ctx::Place, left),
                }
                self.expr_in(Ctx::Whole, &a.right);
            }
            Expr::Field(f) => {
                let ctx = if self.ctx == Ctx::Place { Ctx::Place } else { Ctx::Part };
                self.expr_in(ctx, &f.base);
            }
            Expr::Cast(c) => self.expr_in(Ctx::Place, &c.expr),
            Expr::Paren(p) => self.visit_expr(&p.expr),
            Expr::Group(g) => self.visit_expr(&g.expr),
            Expr::Match(m) => {
                let ctx = m.arms.iter().map(|a| pat_ctx(&a.pat)).fold(Ctx::Place, worst);
                self.expr_in(ctx, &m.expr);
                for arm in &m.arms {
                    self.binds(&arm.pat);
                    self.with(Ctx::Whole, |c| {
                        if let Pat::Guard(g) = &arm.pat {
                            c.visit_expr(&g.guard);
                        }
                        c.visit_expr(&arm.body);
                    });
                }
            }
            Expr::Let(l) => {
                self.expr_in(pat_ctx(&l.pat), &l.expr);
                self.binds(&l.pat);
            }
            Expr::Closure(c) => {
                for p in &c.inputs {
                    self.binds(p);
                }
                let moves = c.capture.is_some();
                self.move_closures += usize::from(moves);
                self.expr_in(Ctx::Whole, &c.body);
                self.move_closures -= usize::from(moves);
            }
            Expr::ForLoop(f) => {
                self.binds(&f.pat);
                self.expr_in(Ctx::Whole, &f.expr);
                self.with(Ctx::Whole, |c| c.visit_block(&f.body));
            }
            Expr::Async(a) => {
                let moves = a.capture.is_some();
                self.move_closures += usize::from(moves);
                self.with(Ctx::Whole, |c| c.visit_block(&a.block));
                self.move_closures -= usize::from(moves);
            }
            Expr::Loop(l) => {
                self.diverges = true;
                self.with(Ctx::Whole, |c| c.visit_block(&l.body));
            }
            e => self.with(Ctx::Whole, |c| syn::visit::visit_expr(c, e)),
        }
    }

    fn visit_local(&mut self, l: &'ast syn::Local) {
        if let Some(init) = &l.init {
            self.expr_in(pat_ctx(&l.pat), &init.expr);
            if let Some((_, e)) = &init.diverge {
                self.expr_in(Ctx::Whole, e);
            }
        }
        self.binds(&l.pat);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if m.path.segments.last().is_some_and(|s| {
            ["panic", "unreachable", "todo", "unimplemented"].contains(&s.ident.to_string().as_str())
        }) {
            self.diverges = true;
        }
        fn names(tokens: TokenStream, out: &mut Vec<String>) {
            for t in tokens {
                match t {
                    TokenTree::Ident(i) => out.push(i.to_string()),
                    TokenTree::Group(g) => names(g.stream(), out),
                    TokenTree::Literal(l) => out.extend(format_names(&l.to_string())),
                    TokenTree::Punct(_) => {}
                }
            }
        }
        let mut found = Vec::new();
        names(m.tokens.clone(), &mut found);
        for n in found {
            if self.names.contains(&n) {
                self.out.insert(n);
            }
        }
    }

    fn visit_item(&mut self, _: &'ast syn::Item) {}
}

fn worst(a: Ctx, b: Ctx) -> Ctx {
    match (a, b) {
        (Ctx::Part, _) | (_, Ctx::Part) => Ctx::Part,
        (Ctx::Whole, _) | (_, Ctx::Whole) => Ctx::Whole,
        _ => Ctx::Place,
    }
}

/// The name of the reference to a lent local's slot.
pub(super) fn lent_name(name: &str) -> syn::Ident {
    format_ident!("__lockstep_lent_{}", name)
}

/// Rewrites every use of a lent local's name to its slot's place (the names were checked: no
/// other binding of one of them, and none in a macro).
pub(super) struct Lend<'n>(pub(super) &'n HashSet<String>);

impl VisitMut for Lend<'_> {
    fn visit_expr_mut(&mut self, e: &mut Expr) {
        if let Expr::Path(p) = e
            && p.qself.is_none()
            && let Some(i) = p.path.get_ident()
            && self.0.contains(&i.to_string())
        {
            // (The name's span, as the code the macro keeps from the kernel has: an error in
            // the kernel points at the kernel's line as the original's does, and rustc
            // reports the two as one.)
            let span = i.span();
            let r = lent_name(&i.to_string());
            let r = syn::Ident::new(&r.to_string(), span);
            *e = syn::parse_quote_spanned!(span=> (*#r));
            return;
        }
        syn::visit_mut::visit_expr_mut(self, e);
    }

    fn visit_field_value_mut(&mut self, f: &mut syn::FieldValue) {
        // `S { x }` names `x` twice: as the field and as the value.
        if f.colon_token.is_none() {
            f.colon_token = Some(Default::default());
        }
        syn::visit_mut::visit_field_value_mut(self, f);
    }

    fn visit_item_mut(&mut self, _: &mut syn::Item) {}
}
