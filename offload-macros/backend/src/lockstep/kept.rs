//! What may be kept from one loop to the next: values that cannot borrow another local.

use super::*;

/// Whether every binding in `kept` (and every binding their values come from) holds a value
/// that borrows no other local: the lockstep copy moves each into its slot at the end of a
/// loop, which a borrow of another local (which dies with the loop) would not allow.
pub(super) fn borrow_free(r: &Resolver, kept: &HashSet<usize>) -> bool {
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
pub(super) const VALUE_METHODS: &[&str] = &[
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
pub(super) fn value_names(e: &Expr) -> Option<Names> {
    let mut out = Names::default();
    value_into(e, &mut out).then_some(out)
}

/// What [`value_names`] finds: the names a value may carry a borrow from (`deps`), and the
/// variables whose methods it calls (`lent`), which may lend them: a parameter that is a
/// shared reference (`&[T]`) lends only what it points to, outside the kernel's locals.
#[derive(Default)]
pub(super) struct Names {
    pub(super) deps: Vec<String>,
    pub(super) lent: Vec<String>,
    /// Variables elements are read out of (`x[i]`: a copy of an element, which holds a borrow
    /// only if the elements of `x` do, whatever `x` itself is).
    pub(super) elems: Vec<String>,
}

pub(super) fn value_into(e: &Expr, out: &mut Names) -> bool {
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
pub(super) fn elems_into(e: &Expr, out: &mut Names) -> bool {
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
pub(super) fn contents_plain(e: &Expr) -> bool {
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
pub(super) fn mentioned(e: &Expr, out: &mut Vec<String>) {
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
pub(super) fn place_into(e: &Expr, out: &mut Names) -> bool {
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
pub(super) fn block_value(b: &syn::Block, out: &mut Names) -> bool {
    if b.stmts.iter().any(|s| matches!(s, Stmt::Local(_) | Stmt::Item(_))) {
        return false;
    }
    match b.stmts.last() {
        Some(Stmt::Expr(e, None)) => value_into(e, out),
        _ => true,
    }
}

/// Whether a pattern binds by reference (`ref x`, `&x` patterns being fine).
pub(super) fn binds_by_ref(p: &Pat) -> bool {
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
pub(super) fn is_place(e: &Expr) -> bool {
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
pub(super) fn plain_type(t: &syn::Type) -> bool {
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
