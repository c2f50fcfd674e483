//! The walk over one function: values, control flow, calls.

use super::collect::{jumps, name_caps, struct_of, type_caps};
use super::{Function, Level, Module, Need, Summary, Val, Why, caps, divergence_message};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::rc::Rc;
use syn::spanned::Spanned;
use syn::visit::Visit;
use syn::{Expr, Pat, Stmt};

/// Thread-position functions of the prelude whose results differ between threads.
const THREAD_FNS: &[&str] = &[
    "thread_idx_x",
    "thread_idx_y",
    "thread_idx_z",
    "global_id_x",
    "global_id_y",
    "global_id_z",
    "global_linear_id",
    "grid_stride",
];

/// Warp methods: whether each is a collective (every lane must call it together) and how
/// uniform its result is.
enum WarpOp {
    Pure(Level),
    Collective(Level),
    /// `shuffle(v, src)`: as uniform over the warp as `src` is.
    Broadcast,
}

fn warp_op(method: &str) -> Option<WarpOp> {
    Some(match method {
        "size" => WarpOp::Pure(Level::Block),
        "lane" => WarpOp::Pure(Level::Thread),
        "active" => WarpOp::Pure(Level::Warp),
        "ballot" | "all" | "any" | "sum" | "min" | "max" | "reduce" => WarpOp::Collective(Level::Warp),
        "shuffle" => WarpOp::Broadcast,
        "shuffle_xor" | "shuffle_down" | "shuffle_up" | "shuffle_first" | "peers" | "peers_low_bits" => {
            WarpOp::Collective(Level::Thread)
        }
        _ => return None,
    })
}

/// Methods that read their receiver without changing it (so a call under non-uniform control
/// flow leaves the receiver as uniform as it was).
const READ_ONLY_METHODS: &[&str] = &[
    "abs",
    "abs_diff",
    "as_slice",
    "ceil",
    "checked_add",
    "checked_div",
    "checked_mul",
    "checked_sub",
    "chunks",
    "clamp",
    "cmp",
    "contains",
    "copied",
    "cloned",
    "copysign",
    "count",
    "count_ones",
    "div_ceil",
    "div_euclid",
    "ends_with",
    "enumerate",
    "eq",
    "expect",
    "first",
    "floor",
    "fold",
    "fract",
    "from",
    "from_bits",
    "ge",
    "get",
    "gt",
    "into",
    "into_iter",
    "is_empty",
    "is_err",
    "is_finite",
    "is_multiple_of",
    "is_nan",
    "is_none",
    "is_ok",
    "is_some",
    "iter",
    "last",
    "le",
    "leading_zeros",
    "len",
    "lt",
    "map",
    "max",
    "max_by",
    "midpoint",
    "min",
    "min_by",
    "mul_add",
    "ne",
    "next_multiple_of",
    "partial_cmp",
    "pow",
    "powf",
    "powi",
    "product",
    "recip",
    "rem_euclid",
    "rev",
    "round",
    "saturating_add",
    "saturating_mul",
    "saturating_sub",
    "signum",
    "skip",
    "split_at",
    "sqrt",
    "starts_with",
    "step_by",
    "sum",
    "to_be_bytes",
    "to_bits",
    "to_le_bytes",
    "trailing_zeros",
    "trunc",
    "try_from",
    "try_into",
    "unwrap",
    "unwrap_or",
    "unwrap_or_default",
    "unwrap_or_else",
    "map_or",
    "map_or_else",
    "ok_or",
    "dot",
    "to_array",
    "windows",
    "wrapping_add",
    "wrapping_mul",
    "wrapping_sub",
    "zip",
    "filter",
    "chain",
    "flat_map",
    "extents",
];

/// Methods that return a plain value made from their receiver and arguments (integers, bits),
/// never a borrow of either.
const VALUE_METHODS: &[&str] = &[
    "count_ones",
    "count_zeros",
    "leading_ones",
    "leading_zeros",
    "trailing_ones",
    "trailing_zeros",
    "is_power_of_two",
    "wrapping_add",
    "wrapping_sub",
    "wrapping_mul",
    "wrapping_neg",
    "plus",
    "to_bits",
];

/// `core` macros whose arguments are expressions evaluated in place.
pub(crate) const EXPR_MACROS: &[&str] = &[
    "assert",
    "assert_eq",
    "assert_ne",
    "debug_assert",
    "debug_assert_eq",
    "debug_assert_ne",
    "panic",
    "unreachable",
    "todo",
    "unimplemented",
    "write",
    "writeln",
    "format_args",
];

/// `core` macros that expand to a value and never to a jump (`return`, `break`, `?`): any
/// other macro that is not the module's own (whose definitions are read) may hide one.
pub(crate) const QUIET_MACROS: &[&str] = &[
    "concat",
    "stringify",
    "line",
    "column",
    "file",
    "module_path",
    "cfg",
    "env",
    "option_env",
    "include_str",
    "include_bytes",
    "compile_error",
    "format_args",
    "matches",
];

struct Var {
    name: String,
    val: Val,
    /// The module struct it holds (or refers to), when its declared type says so: its
    /// fields' own capabilities are then known (`self.data` of a struct that also holds a
    /// `Warp` is no `Warp`).
    ty: Option<String>,
    /// Whether it holds a reference (or something made of references) to other variables'
    /// data: a callee given it may write through it.
    lends: bool,
    /// Union-find parent: variables that may refer to the same data share a root.
    parent: usize,
    param: bool,
}

/// What `return`, `break` and `continue` may leave: the function (or closure body) first,
/// then the loops and labelled blocks around the current point.
struct Frame {
    label: Option<String>,
    is_loop: bool,
    /// How uniformly threads may have left it so far.
    exit: Val,
    /// The values `break` gave it (a `loop`'s or a labelled block's value), each as uniform
    /// as the control flow at its `break`.
    value: Val,
}

impl Frame {
    fn new(label: Option<String>, is_loop: bool) -> Frame {
        Frame { label, is_loop, exit: Val::uniform(), value: Val::uniform() }
    }

    /// Its value after it: what `break` gave it, and which threads left it where.
    fn result(&self) -> Val {
        self.value.join(&self.exit.clone().plain())
    }
}

struct Cx<'m, 'a> {
    module: &'m Module<'a>,
    vars: Vec<Var>,
    scopes: Vec<Vec<usize>>,
    /// The uniformity of the enclosing branches and loops.
    cf: Val,
    frames: Vec<Frame>,
    summary: Summary,
    errors: Vec<(Span, String)>,
    /// Inside a closure body: whether a `return` was seen there (its value is then not
    /// followed), and what the values it returns can do.
    closure: Option<(bool, u8)>,
    /// The calls that wait for other threads (collectives, and calls of the module's functions
    /// that reach one), by the address of their `ExprMethodCall` / `ExprCall`: the CPU backend
    /// awaits them (see `crate::lanes`).
    waits: Vec<usize>,
    /// Of `waits`, those where the control flow is not the same for the whole block (a warp
    /// operation under a branch on the warp's index, say).
    partial_waits: Vec<usize>,
    /// Inside the arguments of a macro the analysis parsed (`assert!(…)`, say): the name of
    /// the macro; what is walked there is a copy, which the CPU backend's copy cannot await.
    in_macro: Option<String>,
    /// Whether the variables being bound hold mutable borrows (see `Var::lends`).
    binding_lends: bool,
}

/// Analyses one function with the module's current summaries: its own summary and the
/// problems in it.
pub(super) fn analyse(module: &Module<'_>, f: &Function<'_>) -> Analysis {
    let mut cx = Cx {
        module,
        vars: Vec::new(),
        scopes: vec![Vec::new()],
        cf: Val::uniform(),
        frames: vec![Frame::new(None, false)],
        summary: Summary::default(),
        errors: Vec::new(),
        closure: None,
        waits: Vec::new(),
        partial_waits: Vec::new(),
        in_macro: None,
        binding_lends: false,
    };
    for (i, input) in f.sig.inputs.iter().enumerate() {
        let dep = if i < 64 { 1u64 << i } else { 0 };
        match input {
            syn::FnArg::Receiver(_) => {
                cx.summary.params.push("self".into());
                cx.summary.param_caps.push(f.self_caps);
                let val = Val { level: Level::Block, deps: dep, caps: f.self_caps, why: None };
                let v = cx.bind("self", val, &[], true);
                cx.vars[v].ty = f.self_ty.and_then(|t| struct_of(t, module));
            }
            syn::FnArg::Typed(pt) => {
                cx.summary.params.push(pt.pat.to_token_stream().to_string());
                let c = type_caps(&pt.ty, &module.types, f.self_caps);
                cx.summary.param_caps.push(c);
                let mut val = Val { level: Level::Block, deps: dep, caps: c, why: None };
                if i >= 64 {
                    // (Dependencies are bits of a `u64`: past the 64th, a parameter is taken
                    // as differing between threads, whatever its callers pass.)
                    val = Val {
                        caps: c,
                        ..Val::source(Level::Thread, pt.span(), "a parameter past the 64th".into())
                    };
                }
                cx.bind_pat(&pt.pat, &val, &[], true);
                if let Pat::Ident(id) = &*pt.pat
                    && let Some(v) = cx.lookup(&id.ident.to_string())
                {
                    cx.vars[v].ty = struct_of(&pt.ty, module);
                }
            }
        }
    }
    let tail = cx.block(f.body);
    let ret = tail.join(&cx.effective_cf().plain());
    cx.summary.ret = cx.summary.ret.join(&ret);
    Analysis { summary: cx.summary, errors: cx.errors, waits: cx.waits, partial_waits: cx.partial_waits }
}

/// What the walk over one function found.
pub(super) struct Analysis {
    pub summary: Summary,
    pub errors: Vec<(Span, String)>,
    /// See `Cx::waits`.
    pub waits: Vec<usize>,
    /// See `Cx::partial_waits`.
    pub partial_waits: Vec<usize>,
}

impl Cx<'_, '_> {
    fn find(&mut self, v: usize) -> usize {
        let mut r = v;
        while self.vars[r].parent != r {
            r = self.vars[r].parent;
        }
        self.vars[v].parent = r;
        r
    }

    fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).copied().find(|&v| self.vars[v].name == name)
    }

    fn bind(&mut self, name: &str, val: Val, aliases: &[usize], param: bool) -> usize {
        let id = self.vars.len();
        let lends = self.binding_lends;
        self.vars.push(Var { name: name.to_owned(), val, ty: None, lends, parent: id, param });
        for &a in aliases {
            let (ra, rb) = (self.find(a), self.find(id));
            if ra != rb {
                self.vars[rb].parent = ra;
            }
        }
        self.scopes.last_mut().expect("a scope").push(id);
        id
    }

    fn bind_pat(&mut self, pat: &Pat, val: &Val, aliases: &[usize], param: bool) {
        struct Idents<'p>(Vec<&'p syn::Ident>);
        impl<'p> Visit<'p> for Idents<'p> {
            fn visit_pat_ident(&mut self, p: &'p syn::PatIdent) {
                self.0.push(&p.ident);
                syn::visit::visit_pat_ident(self, p);
            }
            fn visit_expr(&mut self, _: &'p Expr) {}
        }
        let mut ids = Idents(Vec::new());
        ids.visit_pat(pat);
        let typed = match pat {
            Pat::Type(t) => type_caps(&t.ty, &self.module.types, 0),
            _ => 0,
        };
        let val = Val { caps: val.caps | typed, ..val.clone() };
        for ident in ids.0 {
            self.bind(&ident.to_string(), val.clone(), aliases, param);
        }
    }

    /// Every variable that shares data with `v` becomes at least as non-uniform as `val`.
    fn taint(&mut self, v: usize, val: &Val) {
        let root = self.find(v);
        for i in 0..self.vars.len() {
            if self.find(i) == root {
                self.vars[i].val = self.vars[i].val.join(val);
                if self.vars[i].param {
                    self.summary.writes = self.summary.writes.join(val);
                }
            }
        }
    }

    /// The control flow's uniformity here: the branches around, and the early exits of the
    /// function and of the loops around.
    fn effective_cf(&self) -> Val {
        self.frames.iter().fold(self.cf.clone(), |c, f| c.join(&f.exit))
    }

    /// The control flow's uniformity as a value written here takes it on.
    fn assigned_cf(&self, span: Span) -> Val {
        let c = self.effective_cf().plain();
        Val { why: c.why.map(|cause| Rc::new(Why::Assigned { span, cause })), ..c }
    }

    fn enter_branch(&mut self, cond: &Val, span: Span, kind: &'static str) {
        let c = cond.clone().plain();
        let why = match (&c.why, c.level > Level::Block) {
            (Some(cause), true) => Some(Rc::new(Why::Branch { span, kind, cause: cause.clone() })),
            _ => None,
        };
        self.cf = self.cf.join(&Val { why, ..c });
    }

    fn exit(&mut self, frame: usize, span: Span, kind: &'static str, extra: &Val) {
        let c = self.effective_cf().plain().join(&extra.clone().plain());
        let why = match (&c.why, c.level > Level::Block) {
            (Some(cause), true) => Some(Rc::new(Why::Exit { span, kind, cause: cause.clone() })),
            _ => None,
        };
        let f = &mut self.frames[frame];
        f.exit = f.exit.join(&Val { why, ..c });
    }

    /// A barrier or warp operation (or a call that reaches one) at `at`.
    fn need(&mut self, need: &Need, via: Option<&str>, at: Span) {
        let c = self.effective_cf();
        if c.level > need.level {
            self.errors.push((at, divergence_message(need, via, c.why.as_deref())));
        }
        if self.summary.needs.as_ref().is_none_or(|n| need.level < n.level) {
            self.summary.needs = Some(need.clone());
        }
        if c.deps != 0 {
            self.param_need(c.deps, need);
        }
    }

    fn param_need(&mut self, deps: u64, need: &Need) {
        if !self.summary.param_needs.iter().any(|(d, n)| *d == deps && n.level == need.level) {
            self.summary.param_needs.push((deps, need.clone()));
        }
    }

    fn fingerprint(&self, vars: usize) -> Vec<(Level, u64, u8)> {
        let v = self.vars[..vars].iter().map(|v| &v.val);
        let f = self.frames.iter().map(|f| &f.exit);
        v.chain(f)
            .chain([&self.summary.writes, &self.summary.ret])
            .map(|v| (v.level, v.deps, v.caps))
            .collect()
    }

    fn block(&mut self, b: &syn::Block) -> Val {
        self.scopes.push(Vec::new());
        let mut last = Val::uniform();
        for stmt in &b.stmts {
            last = self.stmt(stmt);
        }
        self.scopes.pop();
        last
    }

    fn stmt(&mut self, s: &Stmt) -> Val {
        match s {
            Stmt::Local(l) => {
                let (val, aliases) = match &l.init {
                    Some(init) => {
                        let v = self.expr(&init.expr);
                        if let Some((_, diverge)) = &init.diverge {
                            let saved = self.cf.clone();
                            self.enter_branch(&v, l.let_token.span, "`let … else`");
                            self.expr(diverge);
                            self.cf = saved;
                        }
                        (v, self.shared_roots(&init.expr))
                    }
                    None => (Val::uniform(), Vec::new()),
                };
                self.binding_lends =
                    l.init.as_ref().is_some_and(|i| borrows_mut(&i.expr) || self.moves_a_loan(&i.expr))
                        || pat_borrows_mut(&l.pat);
                self.bind_pat(&l.pat, &val, &aliases, false);
                self.binding_lends = false;
                Val::uniform()
            }
            Stmt::Item(syn::Item::Macro(m)) if m.mac.path.is_ident("macro_rules") => {
                self.local_macro(m);
                Val::uniform()
            }
            Stmt::Item(_) => Val::uniform(),
            Stmt::Expr(e, semi) => {
                let v = self.expr(e);
                if semi.is_some() { Val::uniform() } else { v }
            }
            Stmt::Macro(m) => self.mac(&m.mac),
        }
    }

    /// Variables whose data the value of `e` may share (references, moved values, method
    /// results): not those only read to compute a number.
    fn shared_roots(&self, e: &Expr) -> Vec<usize> {
        struct Roots<'c, 'm, 'a> {
            cx: &'c Cx<'m, 'a>,
            out: Vec<usize>,
        }
        impl<'e> Visit<'e> for Roots<'_, '_, '_> {
            fn visit_expr_path(&mut self, p: &'e syn::ExprPath) {
                if let Some(id) = p.path.get_ident()
                    && let Some(v) = self.cx.lookup(&id.to_string())
                {
                    self.out.push(v);
                }
            }
            fn visit_expr_binary(&mut self, b: &'e syn::ExprBinary) {
                if is_assign_op(&b.op) {
                    syn::visit::visit_expr_binary(self, b);
                }
            }
            fn visit_expr_unary(&mut self, u: &'e syn::ExprUnary) {
                if matches!(u.op, syn::UnOp::Deref(_)) {
                    syn::visit::visit_expr_unary(self, u);
                }
            }
            // A number cast shares nothing; a reference or pointer cast still borrows.
            fn visit_expr_cast(&mut self, c: &'e syn::ExprCast) {
                if matches!(&*c.ty, syn::Type::Reference(_) | syn::Type::Ptr(_)) {
                    self.visit_expr(&c.expr);
                }
            }
            // A warp operation's result, or an integer method's, is a value: it shares nothing
            // with the receiver or the arguments (`let up = w.shuffle_up(x, d)` leaves `d`
            // alone when `up` is later made non-uniform).
            fn visit_expr_method_call(&mut self, m: &'e syn::ExprMethodCall) {
                let name = m.method.to_string();
                if warp_op(&name).is_some() || VALUE_METHODS.contains(&name.as_str()) {
                    return;
                }
                syn::visit::visit_expr_method_call(self, m);
            }
            // An `if`'s condition decides which branch gives the value; the value is a branch's
            // (unless the condition binds, `if let`, which may borrow).
            fn visit_expr_if(&mut self, i: &'e syn::ExprIf) {
                if matches!(*i.cond, Expr::Let(_)) {
                    self.visit_expr(&i.cond);
                }
                self.visit_block(&i.then_branch);
                if let Some((_, e)) = &i.else_branch {
                    self.visit_expr(e);
                }
            }
        }
        let mut r = Roots { cx: self, out: Vec::new() };
        r.visit_expr(e);
        r.out
    }

    /// The variable a place expression (`a`, `a.b[i]`, `*r`) belongs to.
    fn root(&self, e: &Expr) -> Option<usize> {
        match e {
            Expr::Path(p) => p.path.get_ident().and_then(|i| self.lookup(&i.to_string())),
            Expr::Field(f) => self.root(&f.base),
            Expr::Index(i) => self.root(&i.expr),
            Expr::Paren(p) => self.root(&p.expr),
            Expr::Group(g) => self.root(&g.expr),
            Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => self.root(&u.expr),
            Expr::Reference(r) => self.root(&r.expr),
            Expr::MethodCall(m) => self.root(&m.receiver),
            _ => None,
        }
    }

    fn expr(&mut self, e: &Expr) -> Val {
        match e {
            Expr::Array(a) => a.elems.iter().fold(Val::uniform(), |acc, x| acc.join(&self.expr(x))),
            Expr::Tuple(t) => t.elems.iter().fold(Val::uniform(), |acc, x| acc.join(&self.expr(x))),
            Expr::Assign(a) => {
                let rhs = self.expr(&a.right);
                // `r = &mut x;`: `r` now shares `x`'s data, as `let r = &mut x;` would.
                if let Expr::Path(p) = &*a.left
                    && let Some(id) = p.path.get_ident()
                    && let Some(v) = self.lookup(&id.to_string())
                {
                    for other in self.lent(&a.right) {
                        let (ra, rb) = (self.find(other), self.find(v));
                        if ra != rb {
                            self.vars[rb].parent = ra;
                        }
                    }
                    if borrows_mut(&a.right) || self.moves_a_loan(&a.right) {
                        self.vars[v].lends = true;
                    }
                }
                self.assign(&a.left, &rhs, a.eq_token.span);
                Val::uniform()
            }
            Expr::Binary(b) => {
                let l = self.expr(&b.left);
                let short = matches!(b.op, syn::BinOp::And(_) | syn::BinOp::Or(_));
                let saved = self.cf.clone();
                if short {
                    self.enter_branch(&l, b.op.span(), "`&&`/`||`");
                }
                let r = self.expr(&b.right);
                self.cf = saved;
                if is_assign_op(&b.op) {
                    let v = l.join(&r);
                    self.assign(&b.left, &v, b.op.span());
                    return Val::uniform();
                }
                l.join(&r).plain()
            }
            Expr::Block(b) => match &b.label {
                Some(label) => {
                    self.frames.push(Frame::new(Some(label.name.ident.to_string()), false));
                    let v = self.block(&b.block);
                    let frame = self.frames.pop().expect("the block's frame");
                    v.join(&frame.result())
                }
                None => self.block(&b.block),
            },
            Expr::Break(b) => {
                let value = b.expr.as_ref().map(|v| self.expr(v));
                let label = b.label.as_ref().map(|l| l.ident.to_string());
                if let Some(f) = self.target(label.as_deref()) {
                    if let Some(v) = value {
                        let v = v.join(&self.effective_cf().plain());
                        self.frames[f].value = self.frames[f].value.join(&v);
                    }
                    self.exit(f, b.break_token.span, "break", &Val::uniform());
                }
                Val::uniform()
            }
            Expr::Continue(c) => {
                let label = c.label.as_ref().map(|l| l.ident.to_string());
                if let Some(f) = self.target(label.as_deref()) {
                    self.exit(f, c.continue_token.span, "continue", &Val::uniform());
                }
                Val::uniform()
            }
            Expr::Call(c) => self.call(c),
            Expr::MethodCall(m) => self.method(m),
            Expr::Cast(c) => self.expr(&c.expr).plain(),
            Expr::Closure(c) => self.closure(c),
            Expr::Const(_) | Expr::Lit(_) => Val::uniform(),
            Expr::Field(f) => {
                let base = self.expr(&f.base);
                // A named field of a variable whose module struct is known: what that field's
                // type can do, not everything the struct holds.
                if let syn::Member::Named(name) = &f.member
                    && let Expr::Path(p) = &*f.base
                    && let Some(id) = p.path.get_ident()
                    && let Some(v) = self.lookup(&id.to_string())
                    && let Some(st) = &self.vars[v].ty
                    && let Some(&c) = self.module.field_caps.get(st).and_then(|fs| fs.get(&name.to_string()))
                {
                    return Val { caps: base.caps & c, ..base };
                }
                base
            }
            Expr::ForLoop(f) => {
                let items = self.expr(&f.expr);
                // The pattern may borrow what it iterates (`for x in a.iter_mut()`): what is
                // written through it changes that (a range's numbers borrow nothing).
                let roots =
                    if matches!(&*f.expr, Expr::Range(_)) { Vec::new() } else { self.shared_roots(&f.expr) };
                let label = f.label.as_ref().map(|l| l.name.ident.to_string());
                self.looped(
                    label,
                    f.for_token.span,
                    "`for` loop",
                    |cx| {
                        cx.binding_lends =
                            borrows_mut(&f.expr) || cx.moves_a_loan(&f.expr) || pat_borrows_mut(&f.pat);
                        cx.bind_pat(&f.pat, &items, &roots, false);
                        cx.binding_lends = false;
                        items.clone()
                    },
                    &f.body,
                );
                Val::uniform()
            }
            Expr::While(w) => {
                let label = w.label.as_ref().map(|l| l.name.ident.to_string());
                self.looped(label, w.while_token.span, "`while` loop", |cx| cx.expr(&w.cond), &w.body);
                Val::uniform()
            }
            Expr::Loop(l) => {
                let label = l.label.as_ref().map(|l| l.name.ident.to_string());
                self.looped(label, l.loop_token.span, "`loop`", |_| Val::uniform(), &l.body).result()
            }
            Expr::Group(g) => self.expr(&g.expr),
            Expr::Paren(p) => self.expr(&p.expr),
            Expr::If(i) => {
                self.scopes.push(Vec::new());
                let c = self.expr(&i.cond);
                let saved = self.cf.clone();
                self.enter_branch(&c, i.if_token.span, "`if`");
                let a = self.block(&i.then_branch);
                self.scopes.pop();
                let b = match &i.else_branch {
                    Some((_, e)) => self.expr(e),
                    None => Val::uniform(),
                };
                self.cf = saved;
                c.plain().join(&a).join(&b)
            }
            Expr::Index(i) => {
                let base = self.expr(&i.expr);
                base.join(&self.expr(&i.index).plain())
            }
            Expr::Let(l) => {
                let v = self.expr(&l.expr);
                let aliases = self.shared_roots(&l.expr);
                self.binding_lends =
                    borrows_mut(&l.expr) || self.moves_a_loan(&l.expr) || pat_borrows_mut(&l.pat);
                self.bind_pat(&l.pat, &v, &aliases, false);
                self.binding_lends = false;
                v
            }
            Expr::Macro(m) => self.mac(&m.mac),
            Expr::Match(m) => {
                let s = self.expr(&m.expr);
                let aliases = self.shared_roots(&m.expr);
                let saved = self.cf.clone();
                self.enter_branch(&s, m.match_token.span, "`match`");
                let mut value = s.clone().plain();
                // Threads whose guard fails go on to the later arms: those run under every
                // earlier guard's condition too.
                let base = self.cf.clone();
                let mut earlier: Option<(Val, Span)> = None;
                for arm in &m.arms {
                    self.scopes.push(Vec::new());
                    self.cf = base.clone();
                    if let Some((g, at)) = &earlier {
                        self.enter_branch(g, *at, "match guard of an earlier arm");
                    }
                    let arm_cf = self.cf.clone();
                    // (A guard is part of the arm's pattern: `Pat::Guard`.)
                    let (pat, guard) = match &arm.pat {
                        syn::Pat::Guard(g) => (&*g.pat, Some(&g.guard)),
                        p => (p, None),
                    };
                    self.bind_pat(pat, &s, &aliases, false);
                    if let Some(guard) = guard {
                        let g = self.expr(guard);
                        self.enter_branch(&g, guard.span(), "match guard");
                        value = value.join(&g.clone().plain());
                        let all = earlier
                            .take()
                            .map_or_else(|| g.clone().plain(), |(e, _)| e.join(&g.clone().plain()));
                        earlier = Some((all, guard.span()));
                    }
                    value = value.join(&self.expr(&arm.body));
                    self.cf = arm_cf;
                    self.scopes.pop();
                }
                self.cf = saved;
                value
            }
            Expr::Path(p) => self.path(p),
            Expr::Range(r) => {
                let a = r.start.as_ref().map_or_else(Val::uniform, |s| self.expr(s));
                let b = r.end.as_ref().map_or_else(Val::uniform, |s| self.expr(s));
                a.join(&b)
            }
            Expr::RawAddr(r) => self.expr(&r.expr),
            Expr::Reference(r) => self.expr(&r.expr),
            Expr::Repeat(r) => self.expr(&r.expr),
            Expr::Return(r) => {
                let v = r.expr.as_ref().map_or_else(Val::uniform, |e| self.expr(e));
                if let Some((returned, caps)) = &mut self.closure {
                    *returned = true;
                    *caps |= v.caps;
                } else {
                    self.summary.ret = self.summary.ret.join(&v).join(&self.effective_cf().plain());
                }
                self.exit(0, r.return_token.span, "return", &Val::uniform());
                Val::uniform()
            }
            Expr::Struct(s) => {
                let mut v = s.fields.iter().fold(Val::uniform(), |acc, f| acc.join(&self.expr(&f.expr)));
                if let Some(rest) = &s.rest {
                    v = v.join(&self.expr(rest));
                }
                v
            }
            Expr::Try(t) => {
                let v = self.expr(&t.expr);
                self.exit(0, t.question_token.span, "?", &v);
                v
            }
            Expr::TryBlock(t) => self.block(&t.block),
            Expr::Unary(u) => {
                let v = self.expr(&u.expr);
                if matches!(u.op, syn::UnOp::Deref(_)) { v } else { v.plain() }
            }
            Expr::Unsafe(u) => self.block(&u.block),
            other => Val::source(
                Level::Thread,
                other.span(),
                "an expression the uniformity analysis does not follow".into(),
            ),
        }
    }

    /// The frame a `break`/`continue` with `label` leaves (without one: the innermost loop).
    fn target(&self, label: Option<&str>) -> Option<usize> {
        self.frames.iter().rposition(|f| match label {
            Some(l) => f.label.as_deref() == Some(l),
            None => f.is_loop,
        })
    }

    fn assign(&mut self, place: &Expr, value: &Val, span: Span) {
        let mut v = value.join(&self.assigned_cf(span));
        // Indices in the place decide which element changes.
        let mut p = place;
        loop {
            match p {
                Expr::Index(i) => {
                    let idx = self.expr(&i.index).plain();
                    v = v.join(&idx);
                    p = &i.expr;
                }
                Expr::Field(f) => p = &f.base,
                Expr::Paren(x) => p = &x.expr,
                Expr::Unary(u) => p = &u.expr,
                _ => break,
            }
        }
        if let Some(root) = self.root(place) {
            self.taint(root, &v);
        } else {
            // A place computed by a call or a block (`*Some(&mut x).unwrap() = v`): whatever
            // it borrows may be what is written.
            self.expr(place);
            for root in self.lent(place) {
                self.taint(root, &v);
            }
        }
    }

    fn looped(
        &mut self,
        label: Option<String>,
        span: Span,
        kind: &'static str,
        mut head: impl FnMut(&mut Self) -> Val,
        body: &syn::Block,
    ) -> Frame {
        self.frames.push(Frame::new(label, true));
        let saved = self.cf.clone();
        // Values carried from one iteration to the next can only grow less uniform: repeat
        // until nothing changes (in the variables from before the loop: each pass binds its
        // own).
        let known = self.vars.len();
        let passes = 64 + 2 * known;
        let mut settled = false;
        for _ in 0..passes {
            let before = self.fingerprint(known);
            self.scopes.push(Vec::new());
            let c = head(self);
            self.enter_branch(&c, span, kind);
            self.block(body);
            self.scopes.pop();
            self.cf = saved.clone();
            if self.fingerprint(known) == before {
                settled = true;
                break;
            }
        }
        if !settled {
            self.errors.push((
                span,
                format!("the uniformity analysis of this {kind} did not settle in {passes} passes, so the barriers and warp operations after it cannot be checked\n  help: split the loop, or carry fewer values from one iteration to the next"),
            ));
        }
        self.frames.pop().expect("the loop's frame")
    }

    fn closure(&mut self, c: &syn::ExprClosure) -> Val {
        self.closure_given(c, &Val::uniform(), &[])
    }

    /// A closure whose parameters may be given what `given` can do, sharing data with the
    /// variables `aliases` (the receiver of the method it is passed to, say: the parameters
    /// of `a.iter_mut().for_each(|x| …)` borrow `a`; those of `Some(&w).map(|x| …)` are `w`).
    fn closure_given(&mut self, c: &syn::ExprClosure, given: &Val, aliases: &[usize]) -> Val {
        let saved_cf = std::mem::replace(
            &mut self.cf,
            Val {
                level: Level::Thread,
                deps: 0,
                caps: 0,
                why: Some(Rc::new(Why::Closure { span: c.inputs_begin.span })),
            },
        );
        // The closure's own `return`s leave the closure, not the function.
        let saved_frames = std::mem::replace(&mut self.frames, vec![Frame::new(None, false)]);
        let saved_closure = self.closure.replace((false, 0));
        self.scopes.push(Vec::new());
        let param = Val { caps: given.caps, ..Val::uniform() };
        for input in &c.inputs {
            self.bind_pat(input, &param, aliases, false);
        }
        let v = self.expr(&c.body);
        self.scopes.pop();
        let (returned, returned_caps) =
            std::mem::replace(&mut self.closure, saved_closure).unwrap_or_default();
        self.frames = saved_frames;
        self.cf = saved_cf;
        // A closure that returns a `Warp` (`|| &w`) gives it to whoever calls it: the closure
        // (and so its call's value) can do what it returns.
        if returned {
            Val {
                caps: v.caps | returned_caps,
                ..Val::source(Level::Thread, c.span(), "a closure's returned value".into())
            }
        } else {
            v
        }
    }

    fn path(&mut self, p: &syn::ExprPath) -> Val {
        if let Some(id) = p.path.get_ident()
            && let Some(v) = self.lookup(&id.to_string())
        {
            return self.vars[v].val.clone();
        }
        let Some(last) = p.path.segments.last() else { return Val::uniform() };
        let ident = last.ident.to_string();
        let name = self.module.resolve(&ident);
        // A function of the module that reaches barriers, used as a value: whoever calls it
        // is out of sight.
        if let Some(s) = self.module.summaries.get(name)
            && let Some(need) = &s.needs
        {
            self.errors.push((
                p.span(),
                format!(
                    "`{}` reaches {} (line {}), so it must be called where every thread can see the call; it cannot be passed as a value",
                    last.ident,
                    need.what,
                    need.site.start().line
                ),
            ));
        }
        // A thread-position function as a value (`let f = thread_idx_x;`): what calling it
        // gives (a call of the variable joins the variable's value).
        if THREAD_FNS.contains(&name) {
            return Val::source(Level::Thread, p.span(), format!("`{ident}`"));
        }
        // A function of the module as a value: what it returns, from arguments out of sight.
        if let Some(s) = self.module.summaries.get(name)
            && (s.ret.level > Level::Block || s.ret.deps != 0)
        {
            return Val {
                caps: s.ret.caps,
                ..Val::source(Level::Thread, p.span(), format!("`{ident}`, passed as a value"))
            };
        }
        Val::uniform()
    }

    fn args<'e>(&mut self, args: impl IntoIterator<Item = &'e Expr>) -> Vec<Val> {
        args.into_iter().map(|a| self.expr(a)).collect()
    }

    /// Notes a call that waits for other threads (`call`: the address of its `ExprCall` or
    /// `ExprMethodCall`), for the CPU backend's copy of the function to await.
    fn wait_site(&mut self, call: usize, span: Span, what: &str) {
        match &self.in_macro {
            None => {
                self.waits.push(call);
                if self.effective_cf().level > Level::Block {
                    self.partial_waits.push(call);
                }
            }
            Some(name) => self.errors.push((
                span,
                format!(
                    "{what} waits for other threads, which it cannot do inside `{name}!`\n  \
                     help: call it before, and give the macro its result: `let v = …; {name}!(… v …)`"
                ),
            )),
        }
    }

    fn call(&mut self, c: &syn::ExprCall) -> Val {
        let name = match &*c.func {
            Expr::Path(p) => {
                p.path.segments.last().map(|s| self.module.resolve(&s.ident.to_string()).to_owned())
            }
            _ => None,
        };
        let local = match &*c.func {
            Expr::Path(p) => p.path.get_ident().and_then(|i| self.lookup(&i.to_string())),
            _ => None,
        };
        // A callee that is a variable, or any expression but a path (`(f)()`, `fs[0]()`,
        // `(g as fn() -> u32)()`), is a value the analysis cannot see into.
        let opaque = local.is_some() || !matches!(&*c.func, Expr::Path(_));
        let callee = if opaque { self.expr(&c.func) } else { Val::uniform() };
        let args = self.args(&c.args);
        let span = c.func.span();
        // A variable called (a closure, a function pointer) is out of sight: it may not be
        // given what waits for other threads.
        if opaque && let Some(given) = c.args.iter().zip(&args).find(|(_, v)| v.caps & caps::COLLECTIVE != 0)
        {
            let what = given.0.to_token_stream().to_string();
            self.errors.push((
                given.0.span(),
                format!(
                    "`{what}` can wait for other threads, and is given to `{}`, a closure or function value the uniformity analysis cannot follow\n  \
                     help: closures may not contain barriers or warp operations: call them in the function itself, or in a named function of the module",
                    c.func.to_token_stream()
                ),
            ));
        }
        // `Warp::sum(&w, v)`, `Block::sync(block)`: a capability's operation called through
        // its type's path is the method call it names.
        if local.is_none()
            && let Some(name) = &name
            && let Expr::Path(p) = &*c.func
        {
            let owner = match &p.qself {
                Some(q) => type_caps(&q.ty, &self.module.types, 0),
                None if p.path.segments.len() >= 2 => {
                    let seg = &p.path.segments[p.path.segments.len() - 2];
                    name_caps(self.module.resolve(&seg.ident.to_string()), &self.module.types, 0)
                }
                None => 0,
            };
            let is_op = (owner & caps::WARP != 0 && warp_op(name).is_some())
                || (owner & caps::BLOCK != 0 && (name == "sync" || name == "broadcast"));
            if is_op {
                let what = format!("`{}(…)`", p.path.to_token_stream().to_string().replace(' ', ""));
                let level = if owner & caps::WARP != 0 && warp_op(name).is_some() {
                    Level::Warp
                } else {
                    Level::Block
                };
                self.need(&Need { level, what: what.clone(), site: span }, None, span);
                self.wait_site(c as *const syn::ExprCall as usize, span, &what);
                let recv = args.first().cloned().unwrap_or_default();
                return if name == "sync" {
                    Val { caps: caps::BLOCK, ..Val::uniform() }
                } else {
                    Val::source(Level::Thread, span, what).join(&recv.plain())
                };
            }
        }
        if local.is_none()
            && let Some(name) = name
        {
            // (A thread function stays one even where the module has a function or method of
            // the same name: summaries go by name.)
            let thread_fn = THREAD_FNS
                .contains(&name.as_str())
                .then(|| Val::source(Level::Thread, span, format!("`{name}()`")));
            if let Some(s) = self.module.summaries.get(&name) {
                if s.needs.is_some() {
                    self.wait_site(c as *const syn::ExprCall as usize, span, &format!("`{name}(…)`"));
                }
                let by_ref: Vec<&Expr> = c.args.iter().collect();
                let v = self.apply(&name, s, &args, &by_ref, span, false);
                return thread_fn.map_or(v.clone(), |t| t.join(&v));
            }
            if let Some(t) = thread_fn {
                return t;
            }
        }
        let v = args.iter().fold(callee, |acc, a| acc.join(a));
        // A closure or function value writes what it likes through what it is lent.
        let written = if opaque {
            v.join(&Val::source(Level::Thread, span, "what a closure or function value writes".into()))
        } else {
            v.clone()
        };
        self.taint_refs(c.args.iter(), &written, span);
        v
    }

    /// Arguments passed by reference (`&x`, `&mut x`) may be changed by the callee.
    fn taint_refs<'e>(&mut self, args: impl Iterator<Item = &'e Expr>, written: &Val, span: Span) {
        let v = written.clone().plain().join(&self.assigned_cf(span));
        for a in args {
            for root in self.lent(a) {
                self.taint(root, &v);
            }
        }
    }

    /// Whether `e` passes on a mutable borrow some variable holds (`let s2 = r;` after
    /// `let r = &mut x;`, a struct holding one).
    fn moves_a_loan(&self, e: &Expr) -> bool {
        self.shared_roots(e).iter().any(|&v| self.vars[v].lends)
    }

    /// The variables whose data `e` may lend a callee to write: each place borrowed anywhere
    /// in it (`&mut x`, `&x` of something with interior mutability, inside a struct literal or
    /// a call), and each variable it names that holds a reference (`r` after `let r = &mut x`).
    fn lent(&self, e: &Expr) -> Vec<usize> {
        struct Lent<'c, 'm, 'a> {
            cx: &'c Cx<'m, 'a>,
            out: Vec<usize>,
        }
        impl<'e> Visit<'e> for Lent<'_, '_, '_> {
            fn visit_expr_reference(&mut self, r: &'e syn::ExprReference) {
                if let Some(root) = self.cx.root(&r.expr) {
                    self.out.push(root);
                }
                syn::visit::visit_expr_reference(self, r);
            }
            fn visit_expr_path(&mut self, p: &'e syn::ExprPath) {
                if let Some(id) = p.path.get_ident()
                    && let Some(v) = self.cx.lookup(&id.to_string())
                    && self.cx.vars[v].lends
                {
                    self.out.push(v);
                }
            }
            fn visit_expr_closure(&mut self, _: &'e syn::ExprClosure) {}
        }
        let mut l = Lent { cx: self, out: Vec::new() };
        l.visit_expr(e);
        l.out
    }

    /// A call of the module's function `name` (summary `s`), its receiver first for a method.
    /// (`own_op`: the call is a `Warp`'s or `Block`'s own operation, which a function of the
    /// module may share a name with: its receiver is not given to that function.)
    fn apply(
        &mut self,
        name: &str,
        s: &Summary,
        args: &[Val],
        exprs: &[&Expr],
        span: Span,
        own_op: bool,
    ) -> Val {
        let s = s.clone();
        // A `Warp` or `Block` given to a parameter whose type does not name one (a generic
        // `T`, `impl Trait`): inside, the analysis would not know its warp operations or
        // barriers for what they are.
        for (i, (a, e)) in args.iter().zip(exprs).enumerate().skip(usize::from(own_op)) {
            let given = a.caps & caps::COLLECTIVE;
            if given != 0 && s.param_caps.get(i).is_some_and(|&c| c & given != given) {
                let param = s.params.get(i).cloned().unwrap_or_else(|| format!("#{i}"));
                self.errors.push((
                    e.span(),
                    format!(
                        "`{}` can wait for other threads, and is given to parameter `{param}` of `{name}`, whose type does not say so (a generic or `impl` type, say): the uniformity analysis could not check its barriers and warp operations\n  \
                         help: give the parameter the type itself (`&Warp`, `&Block`, or a struct of the module that holds one)",
                        e.to_token_stream()
                    ),
                ));
            }
        }
        if let Some(need) = &s.needs {
            self.need(need, Some(name), span);
        }
        for (deps, need) in &s.param_needs {
            for (i, a) in args.iter().enumerate().take(64) {
                if deps >> i & 1 == 0 {
                    continue;
                }
                if a.level > need.level {
                    let param = s.params.get(i).cloned().unwrap_or_else(|| format!("#{i}"));
                    let why = a.why.clone().map(|cause| Why::Argument { span, param, cause });
                    self.errors.push((span, divergence_message(need, Some(name), why.as_ref())));
                }
                if a.deps != 0 {
                    self.param_need(a.deps, need);
                }
            }
        }
        let resolve = |v: &Val| {
            let own = Val { deps: 0, ..v.clone() };
            args.iter()
                .enumerate()
                .filter(|(i, _)| *i < 64 && v.deps >> i & 1 == 1)
                .fold(own, |acc, (_, a)| acc.join(a))
        };
        let ret = resolve(&s.ret);
        let written = resolve(&s.writes);
        self.taint_refs(exprs.iter().copied(), &written, span);
        ret
    }

    fn method(&mut self, m: &syn::ExprMethodCall) -> Val {
        let recv = self.expr(&m.receiver);
        let roots = self.shared_roots(&m.receiver);
        let args: Vec<Val> = m
            .args
            .iter()
            .map(|a| match a {
                Expr::Closure(c) => self.closure_given(c, &recv, &roots),
                a => self.expr(a),
            })
            .collect();
        let name = m.method.to_string();
        let span = m.method.span();
        let receiver = m.receiver.to_token_stream().to_string().replace(' ', "");
        let dots = if m.args.is_empty() { "" } else { "…" };
        let what = if receiver.len() <= 24 {
            format!("`{receiver}.{name}({dots})`")
        } else {
            format!("`….{name}({dots})`")
        };
        let mut result = None;
        if recv.caps & caps::WARP != 0
            && let Some(op) = warp_op(&name)
        {
            result = Some(match op {
                WarpOp::Pure(Level::Block) => Val::uniform(),
                WarpOp::Pure(level) => Val::source(level, span, what.clone()),
                WarpOp::Collective(level) => {
                    self.need(&Need { level: Level::Warp, what: what.clone(), site: span }, None, span);
                    self.wait_site(m as *const syn::ExprMethodCall as usize, span, &what);
                    Val::source(level, span, what.clone())
                }
                WarpOp::Broadcast => {
                    self.need(&Need { level: Level::Warp, what: what.clone(), site: span }, None, span);
                    self.wait_site(m as *const syn::ExprMethodCall as usize, span, &what);
                    let src = args.get(1).cloned().unwrap_or_default();
                    // Only lane 0 exists in every warp: a source lane that does not (past a
                    // partial warp's last) gives each lane its own value back.
                    let lane_zero = matches!(m.args.iter().nth(1), Some(Expr::Lit(syn::ExprLit { lit: syn::Lit::Int(i), .. })) if i.base10_digits() == "0");
                    if src.level <= Level::Warp && lane_zero {
                        Val::source(Level::Warp, span, what.clone())
                            .join(&Val { level: Level::Block, ..src.plain() })
                    } else {
                        Val::source(Level::Thread, span, what.clone()).join(&src.plain())
                    }
                }
            });
        }
        if recv.caps & caps::BLOCK != 0 && (name == "sync" || name == "broadcast") {
            self.need(&Need { level: Level::Block, what: what.clone(), site: span }, None, span);
            self.wait_site(m as *const syn::ExprMethodCall as usize, span, &what);
            let v = if name == "sync" { Val { caps: caps::BLOCK, ..Val::uniform() } } else { Val::uniform() };
            result = Some(result.map_or(v.clone(), |r: Val| r.join(&v)));
        }
        // What the receiver's own kind says (a `Region`'s `index`, `Atomics`' `add`, a shared
        // array's `get`), whatever function of the module shares the name.
        if result.is_none() && recv.caps & caps::SHARED != 0 {
            result = Some(match name.as_str() {
                "get" | "as_slice" | "len" | "is_empty" => {
                    args.iter().fold(Val::uniform(), |a, v| a.join(v)).plain()
                }
                "write" | "set" | "set_nth" | "set_striped" | "fill_mine" => Val::uniform(),
                _ => Val::source(Level::Thread, span, what.clone()),
            });
        }
        if result.is_none() && recv.caps & caps::PER_THREAD != 0 {
            result = Some(match name.as_str() {
                "len" | "is_empty" | "extents" => recv.clone().plain(),
                _ => Val::source(Level::Thread, span, what.clone()),
            });
        }
        let mut all = vec![recv.clone()];
        all.extend(args.iter().cloned());
        if let Some(s) = self.module.summaries.get(&name) {
            if s.needs.is_some() {
                self.wait_site(m as *const syn::ExprMethodCall as usize, span, &what);
            }
            let mut exprs: Vec<&Expr> = vec![&m.receiver];
            exprs.extend(m.args.iter());
            let v = self.apply(&name, s, &all, &exprs, span, result.is_some());
            // (The receiver is passed by reference too: `self.apply` saw it as `exprs[0]`,
            // which is not written `&x`, so taint it here.)
            if let Some(root) = self.root(&m.receiver)
                && !s.writes.same_as(&Val::uniform())
            {
                let w = s.writes.clone().plain().join(&self.assigned_cf(span));
                self.taint(root, &w);
            }
            return result.map_or(v.clone(), |r| r.join(&v));
        }
        if let Some(r) = result {
            return r;
        }
        let v = all.iter().fold(Val::uniform(), |a, x| a.join(x));
        // (A consuming method called on a mutable borrow — `(&mut it).count()`, `r.last()` with
        // `r = &mut it` — advances what is borrowed.)
        let through_loan = borrows_mut_or_lends(&m.receiver, self);
        if (!READ_ONLY_METHODS.contains(&name.as_str()) || through_loan)
            && let Some(root) = self.root(&m.receiver)
        {
            let w = v.clone().plain().join(&self.assigned_cf(span));
            self.taint(root, &w);
        }
        self.taint_refs(m.args.iter(), &v, span);
        v
    }

    fn mac(&mut self, m: &syn::Macro) -> Val {
        let name = m.path.segments.last().map(|s| s.ident.to_string()).unwrap_or_default();
        let span = m.path.span();
        if name == "matches" {
            // `matches!(e, pattern if guard)`: the value depends on `e` and on the guard.
            let parsed = m.parse_body_with(|input: syn::parse::ParseStream<'_>| {
                let e: Expr = input.parse()?;
                input.parse::<syn::Token![,]>()?;
                Pat::parse_multi_with_leading_vert(input)?;
                let guard = if input.peek(syn::Token![if]) {
                    input.parse::<syn::Token![if]>()?;
                    Some(input.parse::<Expr>()?)
                } else {
                    None
                };
                input.parse::<Option<syn::Token![,]>>()?;
                Ok((e, guard))
            });
            return match parsed {
                Ok((e, guard)) => {
                    let outer = self.in_macro.replace(name.clone());
                    let mut v = self.expr(&e).plain();
                    if let Some(g) = guard {
                        v = v.join(&self.expr(&g).plain());
                    }
                    self.in_macro = outer;
                    v
                }
                Err(_) => Val::source(Level::Thread, span, "`matches!(…)`".into()),
            };
        }
        if EXPR_MACROS.contains(&name.as_str())
            && let Ok(args) =
                m.parse_body_with(syn::punctuated::Punctuated::<Expr, syn::Token![,]>::parse_terminated)
        {
            let outer = self.in_macro.replace(name.clone());
            for a in &args {
                self.expr(a);
            }
            self.in_macro = outer;
            return Val::uniform();
        }
        // A jump among the arguments (`id!(if c { return; })`), or a macro from elsewhere that
        // may expand to one (`core::try!`): threads may leave whatever encloses it, for a
        // reason the analysis cannot see.
        // (The module's own macros, functions' included, are read where they are defined:
        // `jumping_macros`.)
        let name_here = self.module.resolve(&name);
        let local = self.module.macros.iter().any(|j| j == name_here);
        if jumps(&m.tokens) || (!local && !QUIET_MACROS.contains(&name.as_str())) {
            let why = Val::source(
                Level::Thread,
                span,
                format!("`{name}!(…)`, which may leave early for its own reasons"),
            );
            for f in 0..self.frames.len() {
                self.exit(f, span, "return", &why);
            }
        }
        if self.module.jumping_macros.iter().any(|j| j == name_here) {
            self.exit(0, span, "return", &Val::uniform());
        }
        // Out of sight: whatever it expands to. Capabilities handed to it could reach barriers.
        let mut mentioned = Vec::new();
        idents(&m.tokens, &mut mentioned);
        for ident in mentioned {
            if let Some(v) = self.lookup(&ident)
                && self.vars[v].val.caps & caps::COLLECTIVE != 0
            {
                self.errors.push((
                    span,
                    format!(
                        "`{name}!` is given `{ident}`, which can wait for other threads, and the uniformity analysis cannot see into macros\n  \
                         help: write the barrier or warp operation outside the macro"
                    ),
                ));
            }
        }
        Val::source(Level::Thread, span, format!("`{name}!(…)`, a macro the analysis does not expand"))
    }
}

impl Cx<'_, '_> {
    /// A `macro_rules!` defined inside a function: its body may name the function's
    /// variables, so an invocation with no arguments can still reach a barrier through them.
    fn local_macro(&mut self, m: &syn::ItemMacro) {
        let name = m.ident.as_ref().map(ToString::to_string).unwrap_or_default();
        let mut mentioned = Vec::new();
        idents(&m.mac.tokens, &mut mentioned);
        for ident in mentioned {
            let collective = match self.lookup(&ident) {
                Some(v) => self.vars[v].val.caps & caps::COLLECTIVE != 0,
                None => {
                    self.module.summaries.get(self.module.resolve(&ident)).is_some_and(|s| s.needs.is_some())
                }
            };
            if collective {
                self.errors.push((
                    m.mac.path.span(),
                    format!(
                        "the macro `{name}!` defined here uses `{ident}`, which can wait for other threads, and the uniformity analysis cannot see into macros\n  \
                         help: write the barrier or warp operation outside the macro"
                    ),
                ));
                return;
            }
        }
    }
}

/// Whether `e` takes a mutable borrow (`&mut x`, `x.iter_mut()`, `o.as_mut()`, …).
fn borrows_mut(e: &Expr) -> bool {
    struct Mut(bool);
    impl Visit<'_> for Mut {
        fn visit_expr_reference(&mut self, r: &syn::ExprReference) {
            self.0 |= r.mutability.is_some();
            syn::visit::visit_expr_reference(self, r);
        }
        fn visit_expr_method_call(&mut self, m: &syn::ExprMethodCall) {
            let name = m.method.to_string();
            self.0 |= name.ends_with("_mut") || name == "by_ref";
            syn::visit::visit_expr_method_call(self, m);
        }
        fn visit_expr_closure(&mut self, _: &syn::ExprClosure) {}
    }
    let mut m = Mut(false);
    m.visit_expr(e);
    m.0
}

/// Whether the receiver `e` is a mutable borrow, or a variable holding one.
fn borrows_mut_or_lends(e: &Expr, cx: &Cx<'_, '_>) -> bool {
    match e {
        Expr::Paren(p) => borrows_mut_or_lends(&p.expr, cx),
        Expr::Reference(r) => r.mutability.is_some(),
        Expr::Path(p) => {
            p.path.get_ident().and_then(|i| cx.lookup(&i.to_string())).is_some_and(|v| cx.vars[v].lends)
        }
        _ => false,
    }
}

/// Whether a pattern binds by mutable reference (`ref mut x`) or is typed `&mut T`.
fn pat_borrows_mut(p: &Pat) -> bool {
    struct Mut(bool);
    impl Visit<'_> for Mut {
        fn visit_pat_ident(&mut self, p: &syn::PatIdent) {
            self.0 |= p.by_ref.is_some() && p.mutability.is_some();
            syn::visit::visit_pat_ident(self, p);
        }
        fn visit_type_reference(&mut self, r: &syn::TypeReference) {
            self.0 |= r.mutability.is_some();
            syn::visit::visit_type_reference(self, r);
        }
        fn visit_expr(&mut self, _: &Expr) {}
    }
    let mut m = Mut(false);
    m.visit_pat(p);
    m.0
}

/// Every identifier in `tokens`, groups included.
pub(crate) fn idents(tokens: &TokenStream, out: &mut Vec<String>) {
    for t in tokens.clone() {
        match t {
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Group(g) => idents(&g.stream(), out),
            _ => {}
        }
    }
}

fn is_assign_op(op: &syn::BinOp) -> bool {
    use syn::BinOp::*;
    matches!(
        op,
        AddAssign(_)
            | SubAssign(_)
            | MulAssign(_)
            | DivAssign(_)
            | RemAssign(_)
            | BitXorAssign(_)
            | BitAndAssign(_)
            | BitOrAssign(_)
            | ShlAssign(_)
            | ShrAssign(_)
    )
}
