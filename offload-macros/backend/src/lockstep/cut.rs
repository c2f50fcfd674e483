//! What may be cut, and the cuts: the kernel body as nodes split at its waits, or `None`
//! where it cannot be cut (see the module documentation of `lockstep`).

use super::*;

/// Whether a lockstep body may use the macro: the standard library's that neither leave the
/// kernel nor bind names out of sight.
pub(super) fn known_macro(name: &str) -> bool {
    crate::uniformity::EXPR_MACROS.contains(&name)
        || crate::uniformity::QUIET_MACROS.contains(&name)
        || matches!(name, "print" | "println" | "eprint" | "eprintln" | "matches")
}

/// Whether the body leaves the kernel only at its end, and uses only the standard library's
/// macros. (`break` and `continue` are checked per loop, in [`build`].)
pub(super) fn allowed(body: &syn::Block) -> bool {
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
pub(super) fn reaches_partial(body: &syn::Block, waits: &Waits) -> bool {
    body.stmts.iter().any(|s| calls_in(s, &waits.partial))
}

/// A piece of a kernel's body, as the lockstep copy cuts it.
pub(super) enum Node<'a> {
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

pub(super) enum WaitKind<'a> {
    Let(&'a Pat),
    Assign(&'a syn::Ident),
    Discard,
}

/// Whether any call under `node` waits.
pub(super) fn has_wait<T: WaitVisit>(node: &T, waits: &Waits) -> bool {
    calls_in(node, &waits.calls)
}

/// Whether a call under `node` is one of `calls` (by address).
pub(super) fn calls_in<T: WaitVisit>(node: &T, calls: &HashSet<usize>) -> bool {
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
pub(super) trait WaitVisit {
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
pub(super) fn wait_call<'e>(e: &'e Expr, waits: &Waits) -> Option<&'e Expr> {
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
pub(super) fn build<'a>(stmts: &'a [Stmt], waits: &Waits) -> Option<Vec<Node<'a>>> {
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

pub(super) fn expr_node<'a>(e: &'a Expr, _semi: bool, waits: &Waits) -> Option<Node<'a>> {
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

pub(super) fn if_node<'a>(i: &'a syn::ExprIf, waits: &Waits) -> Option<Node<'a>> {
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
pub(super) fn has_let(e: &Expr) -> bool {
    match e {
        Expr::Let(_) => true,
        Expr::Binary(b) => has_let(&b.left) || has_let(&b.right),
        Expr::Paren(p) => has_let(&p.expr),
        _ => false,
    }
}

/// Whether a `break` or `continue` in `body` may leave the loop whose body it is.
pub(super) fn exits(body: &syn::Block, label: Option<&syn::Label>) -> bool {
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
