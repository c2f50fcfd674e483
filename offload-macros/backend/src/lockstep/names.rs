//! Names: which binding each name means, and what each binding is given.

use super::*;

/// How a binding gets its value.
#[derive(Clone)]
pub(super) enum Def {
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
    pub(super) fn borrowing() -> Def {
        Def::Borrowing { typed: false, contents: None }
    }
}

pub(super) struct Binding {
    pub(super) name: String,
    pub(super) defs: Vec<Def>,
    /// Each definition's source when it is the phase token's: a copy of a binding, or a
    /// barrier of one (`Some(binding)`); `None` for any other definition.
    pub(super) token_from: Vec<Option<usize>>,
}

#[derive(Default)]
pub(super) struct Resolver {
    /// The parameters that are shared references (`&[T]`, `&T`).
    pub(super) shared_refs: HashSet<usize>,
    /// For each wait `x.sync()`, the binding `x` names, by the receiver's address.
    pub(super) receivers: HashMap<usize, usize>,
    pub(super) bindings: Vec<Binding>,
    /// Names in scope, innermost last.
    pub(super) scopes: Vec<Vec<(String, usize)>>,
}

/// A [`Node`] with the bindings it uses, declares and assigns.
pub(super) enum RNode<'a> {
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

pub(super) enum RWait<'a> {
    Let(&'a Pat, Vec<usize>),
    Assign(usize),
    Discard,
}

impl Resolver {
    /// Notes that the latest definition of `id` is the phase token's, from `src`.
    pub(super) fn note_token(&mut self, id: usize, src: usize) {
        let b = &mut self.bindings[id];
        b.token_from.resize(b.defs.len() - 1, None);
        b.token_from.push(Some(src));
    }

    /// The binding a bare name expression names.
    pub(super) fn bare(&self, e: &Expr) -> Option<usize> {
        match e {
            Expr::Path(p) if p.qself.is_none() => self.lookup(&p.path.get_ident()?.to_string()),
            Expr::Paren(p) => self.bare(&p.expr),
            _ => None,
        }
    }

    /// The binding a wait's receiver names (`x` of `x.sync()`, `w` of `w.sum(v)`), noted for
    /// the wait's code; for `x.sync()`, the source of the token it gives.
    pub(super) fn sync_receiver(&mut self, call: &Expr) -> Option<usize> {
        let Expr::MethodCall(m) = call else { return None };
        let src = self.bare(&m.receiver)?;
        self.receivers.insert(addr(&*m.receiver), src);
        (m.method == "sync" && m.args.is_empty()).then_some(src)
    }

    pub(super) fn lookup(&self, name: &str) -> Option<usize> {
        self.scopes.iter().rev().flat_map(|s| s.iter().rev()).find(|(n, _)| n == name).map(|(_, id)| *id)
    }

    pub(super) fn declare(&mut self, name: String, def: Def) -> usize {
        let id = self.bindings.len();
        self.bindings.push(Binding { name: name.clone(), defs: vec![def], token_from: Vec::new() });
        self.scopes.last_mut().expect("a scope").push((name, id));
        id
    }

    /// Binds the names of `pat`, each defined by `def` (taken apart where the pattern is).
    pub(super) fn bind_pat(&mut self, pat: &Pat, def: Def) -> Option<()> {
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
    pub(super) fn nodes<'a>(&mut self, nodes: &[Node<'a>]) -> Option<Vec<RNode<'a>>> {
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
                        Stmt::Expr(e, _) => self.head(e),
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
                    let uses = self.head(cond);
                    let body = self.scoped(body)?;
                    out.push(RNode::While { cond, uses, body });
                }
                Node::For { pat, iter, body } => {
                    let uses = self.head(iter);
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
                    let uses = self.head(cond);
                    let then = self.scoped(then)?;
                    let els = match els {
                        None => None,
                        Some(e) => Some(self.scoped(e)?),
                    };
                    out.push(RNode::If { cond, uses, then, els });
                }
                Node::Block(inner) => {
                    let inner = self.scoped(inner)?;
                    out.push(RNode::Block(inner));
                }
            }
        }
        Some(out)
    }

    /// The bindings an expression names (and what it assigns): a statement, or a branch's or
    /// loop's head.
    pub(super) fn head(&mut self, e: &Expr) -> HashSet<usize> {
        let mut u = Uses::new(self);
        u.expr(e);
        let uses = u.finish();
        self.assignments(e);
        uses
    }

    /// `nodes` in a scope of their own.
    pub(super) fn scoped<'a>(&mut self, nodes: &[Node<'a>]) -> Option<Vec<RNode<'a>>> {
        self.scopes.push(Vec::new());
        let out = self.nodes(nodes);
        self.scopes.pop();
        out
    }

    /// Notes the values assigned anywhere inside `e` to bindings in scope (`x = v` in a nested
    /// block, say), for [`borrow_free`].
    pub(super) fn assignments(&mut self, e: &Expr) {
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
    pub(super) fn assigned_through(&mut self, place: &Expr, value: &Expr) {
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
    pub(super) fn def(&self, e: &Expr) -> Def {
        self.def_of(value_names(e), e)
    }

    /// A definition from what [`value_names`] found, its names resolved in the current scope:
    /// a value, where every variable it lends is a parameter that is a shared reference; else
    /// a borrow, whose contents come from the names `e` mentions if it builds no container of
    /// references ([`contents_plain`]).
    pub(super) fn def_of(&self, names: Option<Names>, e: &Expr) -> Def {
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
    pub(super) fn wait_def(&self, call: &Expr) -> Def {
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
pub(super) struct Uses<'r> {
    pub(super) r: &'r mut Resolver,
    pub(super) found: HashSet<usize>,
    /// Scopes opened inside the walk (popped as the walk leaves them).
    pub(super) depth: usize,
    /// Bindings from this one on are the walk's own (inner) ones: not uses from outside.
    pub(super) outer: usize,
}

impl<'r> Uses<'r> {
    pub(super) fn new(r: &'r mut Resolver) -> Uses<'r> {
        let outer = r.bindings.len();
        Uses { r, found: HashSet::new(), depth: 0, outer }
    }

    pub(super) fn finish(self) -> HashSet<usize> {
        debug_assert_eq!(self.depth, 0);
        self.found
    }

    pub(super) fn expr(&mut self, e: &Expr) {
        self.visit_expr(e);
    }

    pub(super) fn name(&mut self, name: &str) {
        if let Some(id) = self.r.lookup(name).filter(|id| *id < self.outer) {
            self.found.insert(id);
        }
    }

    pub(super) fn push(&mut self) {
        self.r.scopes.push(Vec::new());
        self.depth += 1;
    }

    pub(super) fn pop(&mut self) {
        self.r.scopes.pop();
        self.depth -= 1;
    }

    /// Binds a pattern inside the walk (its bindings are local to the expression).
    pub(super) fn bind(&mut self, pat: &Pat) {
        // (Inner bindings are never kept between loops: how they are defined does not matter.)
        let _ = self.r.bind_pat(pat, Def::borrowing());
    }

    /// Every name a macro's tokens could mean, and those of inline format arguments.
    pub(super) fn tokens(&mut self, tokens: TokenStream) {
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
pub(super) fn format_names(s: &str) -> Vec<String> {
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
