//! The uniformity analysis: barriers (`block.sync()`, `block.broadcast(v)`) only where every
//! thread of the block gets together, warp operations (`w.sum(v)`, `w.shuffle(v, l)`, …) only
//! where every lane of the warp does — checked when the kernels module compiles, in the spirit
//! of WGSL's uniformity analysis.
//!
//! A value is *uniform* over the block when every thread of the block computes the same one:
//! literals, constants, scalar and slice parameters, block indices and sizes, a slice's length,
//! what `block.broadcast` returns, and anything computed from those alone. Thread indices, lane
//! numbers, what a `Region`, `Atomics` or reduction gives, and anything computed from those are
//! not. Warp reductions and votes (`w.sum`, `w.all`, …) are uniform over the warp only.
//!
//! Control flow is uniform at a point when every thread that entered the kernel reaches it:
//! each enclosing `if`/`match`/`while` condition and `for` range is uniform, and no thread may
//! have left early through a `return`, `break`, `continue` or `?` that depends on a non-uniform
//! value. Within a loop, a non-uniform exit affects the whole loop body (the next iterations run
//! with fewer threads); after the loop, threads are together again.
//!
//! The analysis runs over every function of the module. A helper that (directly or through
//! others) reaches a barrier or warp operation gets a summary: the uniformity its call sites
//! need, and which of its parameters must be uniform there (a loop bound passed in, say).
//! Values a variable receives under non-uniform control flow make the variable non-uniform;
//! references passed to calls and method calls with unknown effects do too. Closures may run
//! anywhere, so their bodies are treated as non-uniform control flow.
//!
//! Code outside the module (`core`, `offload`'s own functions) is trusted not to read thread
//! indices except through the functions named here.

mod collect;
mod walk;

pub(crate) use walk::{EXPR_MACROS, QUIET_MACROS, idents};

use crate::signature::Errors;
use proc_macro2::Span;
use std::collections::HashMap;
use std::fmt::Write as _;
use std::rc::Rc;

/// How widely a value (or the control flow at a point) is shared.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub(crate) enum Level {
    /// The same in every thread of the block.
    #[default]
    Block,
    /// The same in every lane of a warp, possibly different between warps.
    Warp,
    /// Possibly different in every thread.
    Thread,
}

/// What a value can do besides being a number: the analysis follows these through variables,
/// fields and calls.
pub(crate) mod caps {
    /// A `Warp`: warp operations.
    pub const WARP: u8 = 1;
    /// A `Block`/`BlockRead`: barriers.
    pub const BLOCK: u8 = 2;
    /// A `Shared`/`SharedArray`/`SharedAtomics`: reads through the block's phase.
    pub const SHARED: u8 = 4;
    /// A `Region`, partition, `Scatter`, `Atomics` or reduction: per-thread results.
    pub const PER_THREAD: u8 = 8;
    /// Barriers or warp operations: what makes a call a collective one.
    pub const COLLECTIVE: u8 = WARP | BLOCK;
}

/// Why a value or a point of the control flow is not uniform: the chain shown to the user.
#[derive(Debug)]
pub(crate) enum Why {
    /// A source of non-uniform values, e.g. `thread_idx_x()`; `level` says how far it is shared.
    Source { span: Span, what: String, level: Level },
    /// A branch or loop whose condition is `cause`.
    Branch { span: Span, kind: &'static str, cause: Rc<Why> },
    /// An early exit (`return`, `break`, …) taken under `cause`.
    Exit { span: Span, kind: &'static str, cause: Rc<Why> },
    /// A closure body, which may run anywhere.
    Closure { span: Span },
    /// A variable given a value under non-uniform control flow.
    Assigned { span: Span, cause: Rc<Why> },
    /// A parameter whose argument at a call site is not uniform.
    Argument { span: Span, param: String, cause: Rc<Why> },
}

fn line(span: Span) -> usize {
    span.start().line
}

impl Why {
    /// The chain as note lines.
    fn render(&self, out: &mut String) {
        match self {
            Why::Source { span, what, level } => {
                let how = if *level == Level::Warp {
                    "is the same within a warp only"
                } else {
                    "differs between threads"
                };
                let _ = write!(out, "\n  note: {what} (line {}) {how}", line(*span));
            }
            Why::Branch { span, kind, cause } => {
                let _ = write!(
                    out,
                    "\n  note: it is inside the {kind} at line {}, whose condition may differ between threads:",
                    line(*span)
                );
                cause.render(out);
            }
            Why::Exit { span, kind, cause } => {
                let _ = write!(
                    out,
                    "\n  note: some threads may have left through the `{kind}` at line {}:",
                    line(*span)
                );
                cause.render(out);
            }
            Why::Closure { span } => {
                let _ = write!(
                    out,
                    "\n  note: it is inside the closure at line {}, which may be called by some threads only",
                    line(*span)
                );
            }
            Why::Assigned { span, cause } => {
                let _ = write!(
                    out,
                    "\n  note: a variable it uses is assigned at line {} where not every thread may be:",
                    line(*span)
                );
                cause.render(out);
            }
            Why::Argument { span, param, cause } => {
                let _ = write!(
                    out,
                    "\n  note: argument `{param}` of the call at line {} may differ between threads:",
                    line(*span)
                );
                cause.render(out);
            }
        }
    }
}

/// A value as the analysis sees it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Val {
    /// How uniform it is, apart from the function's parameters.
    pub level: Level,
    /// Parameters (bit `i`) it is computed from: as uniform as the arguments at each call.
    pub deps: u64,
    pub caps: u8,
    pub why: Option<Rc<Why>>,
}

impl Val {
    pub fn uniform() -> Val {
        Val::default()
    }

    pub fn source(level: Level, span: Span, what: String) -> Val {
        Val { level, deps: 0, caps: 0, why: Some(Rc::new(Why::Source { span, what, level })) }
    }

    pub fn join(&self, other: &Val) -> Val {
        let why =
            if other.level > self.level || self.why.is_none() { other.why.clone() } else { self.why.clone() };
        Val {
            level: self.level.max(other.level),
            deps: self.deps | other.deps,
            caps: self.caps | other.caps,
            why,
        }
    }

    /// The same value without what it can do (a number computed from a capability, say).
    pub fn plain(mut self) -> Val {
        self.caps = 0;
        self
    }

    /// Whether `self` adds nothing to `before`.
    pub fn same_as(&self, before: &Val) -> bool {
        self.level == before.level && self.deps == before.deps && self.caps == before.caps
    }
}

/// What a barrier or warp operation needs of the control flow around it.
#[derive(Clone, Debug)]
pub(crate) struct Need {
    /// `Block` for barriers, `Warp` for warp operations.
    pub level: Level,
    /// What is called, for messages: "`block.sync()`".
    pub what: String,
    /// Where it is called.
    pub site: Span,
}

/// A function as its callers see it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Summary {
    /// The strictest barrier or warp operation it reaches: what its call sites need.
    pub needs: Option<Need>,
    /// Parameters that must be uniform at call sites (bit `i` of `deps`), for each need.
    pub param_needs: Vec<(u64, Need)>,
    /// Its result.
    pub ret: Val,
    /// What it may write through references it is given (or reach through interior
    /// mutability).
    pub writes: Val,
    /// Parameter names, for messages.
    pub params: Vec<String>,
    /// What each parameter's type says it can do (a `Warp`, a `Block`, …): an argument that
    /// can wait for other threads may only go to a parameter whose type says so, where the
    /// analysis follows it.
    pub param_caps: Vec<u8>,
}

impl Summary {
    fn merge(&mut self, other: &Summary) {
        if let Some(n) = &other.needs
            && self.needs.as_ref().is_none_or(|m| n.level < m.level)
        {
            self.needs = Some(n.clone());
        }
        for pn in &other.param_needs {
            if !self.param_needs.iter().any(|(d, n)| *d == pn.0 && n.level == pn.1.level) {
                self.param_needs.push(pn.clone());
            }
        }
        self.ret = self.ret.join(&other.ret);
        self.writes = self.writes.join(&other.writes);
        if self.params.len() < other.params.len() {
            self.params = other.params.clone();
        }
        // (Two functions of one name: a parameter takes what either's type says.)
        if self.param_caps.len() < other.param_caps.len() {
            self.param_caps.resize(other.param_caps.len(), 0);
        }
        for (c, o) in self.param_caps.iter_mut().zip(&other.param_caps) {
            *c |= o;
        }
    }

    fn same_as(&self, other: &Summary) -> bool {
        self.needs.as_ref().map(|n| n.level) == other.needs.as_ref().map(|n| n.level)
            && self.param_needs.len() == other.param_needs.len()
            && self.ret.same_as(&other.ret)
            && self.writes.same_as(&other.writes)
    }
}

/// One function of the module to analyse.
pub(crate) struct Function<'a> {
    pub sig: &'a syn::Signature,
    pub body: &'a syn::Block,
    /// The capabilities of `Self` (a method of a type holding a `Warp`, say).
    pub self_caps: u8,
    /// `Self`, for a method of an `impl` block.
    pub self_ty: Option<&'a syn::Type>,
    /// The trait, for a method of an `impl Trait for …` block.
    pub of_trait: Option<String>,
}

/// What every function's analysis shares.
pub(crate) struct Module<'a> {
    pub summaries: HashMap<String, Summary>,
    /// Capabilities of the module's own types, by name.
    pub types: HashMap<String, u8>,
    /// The module's `macro_rules!` (its functions' included) whose expansions may leave a
    /// function or loop early.
    pub jumping_macros: Vec<String>,
    pub functions: Vec<Function<'a>>,
    /// Names imported under another name: `alias → original`.
    pub renames: HashMap<String, String>,
    /// Aliases that name two different things in the module.
    pub rename_conflicts: Vec<(Span, String)>,
    /// The capabilities of each named field of the module's structs, by struct.
    pub field_caps: HashMap<String, HashMap<String, u8>>,
    /// Every `macro_rules!` of the module (its functions' included), by name: their
    /// definitions are read, where another macro's are not.
    pub macros: Vec<String>,
}

impl Module<'_> {
    /// What the name `name` stands for: the original of an alias, else itself.
    pub fn resolve<'n>(&'n self, name: &'n str) -> &'n str {
        self.renames.get(name).map_or(name, String::as_str)
    }
}

/// What the CPU backend's copy of a kernels module awaits (see `crate::lanes`).
#[derive(Debug, Default)]
pub struct Waits {
    /// The calls that wait for other threads, by the address of their `syn::ExprCall` or
    /// `syn::ExprMethodCall` in the items checked.
    pub calls: std::collections::HashSet<usize>,
    /// Of `calls`, those not reached by the whole block (a warp operation under a branch that
    /// is the same within a warp only): a kernel with one cannot run in lockstep
    /// (`crate::lockstep`).
    pub partial: std::collections::HashSet<usize>,
}

/// Checks every function of a kernels module's `items`; what waits for other threads.
pub fn check(items: &[syn::Item], errors: &mut Errors) -> Waits {
    let mut module = collect::collect(items);
    let mut waits = Vec::new();
    let mut partial = Vec::new();
    // Summaries depend on each other (helpers calling helpers): iterate until they settle.
    // They only grow, and each settles within a few rounds per function it calls through
    // (a chain of helpers takes one round per level), so this bound is never the limit in
    // practice; if it were, the module is rejected, never passed unchecked.
    let rounds = 32 + 8 * module.functions.len();
    let mut settled = false;
    for _ in 0..rounds {
        let mut next: HashMap<String, Summary> = HashMap::new();
        let mut round = Vec::new();
        waits.clear();
        partial.clear();
        for f in &module.functions {
            let found = walk::analyse(&module, f);
            // A trait's method can be called where no call is written (an operator, a `for`
            // loop, `into`, `Default`, an index): its result may not differ between threads
            // by itself, nor what it writes.
            // (One that waits is refused for that already: `lanes.rs`.)
            if let Some(t) = &f.of_trait
                && found.summary.needs.is_none()
                && (found.summary.ret.level > Level::Block || found.summary.writes.level > Level::Block)
            {
                round.push((
                    f.sig.ident.span(),
                    format!(
                        "`{}` implements `{t}` and gives or writes what differs between threads (a thread index, say); trait methods can be called where no call is written (operators, `for` loops, conversions), out of the uniformity analysis's sight\n  help: read the thread's values outside, and pass them in as arguments",
                        f.sig.ident
                    ),
                ));
            }
            next.entry(f.sig.ident.to_string()).or_default().merge(&found.summary);
            round.extend(found.errors);
            waits.extend(found.waits);
            partial.extend(found.partial_waits);
        }
        // Once the summaries settle, this round's errors are the final ones.
        settled = next.len() == module.summaries.len()
            && next.iter().all(|(k, s)| module.summaries.get(k).is_some_and(|o| o.same_as(s)));
        module.summaries = next;
        if settled {
            let mut seen = std::collections::HashSet::new();
            for (span, message) in round {
                let start = span.start();
                if seen.insert((start.line, start.column, message.clone())) {
                    errors.add(span, message);
                }
            }
            break;
        }
    }
    for (span, message) in &module.rename_conflicts {
        errors.add(*span, message.clone());
    }
    if !settled && let Some(f) = module.functions.first() {
        errors.add(
            f.sig.ident.span(),
            format!(
                "the uniformity analysis of this kernels module did not settle in {rounds} rounds, so its barriers and warp operations cannot be checked\n  \
                 help: shorten the chains of helper functions that reach barriers or warp operations"
            ),
        );
    }
    Waits { calls: waits.into_iter().collect(), partial: partial.into_iter().collect() }
}

/// The message for a barrier or warp operation (or a call reaching one) where control flow may
/// not be uniform enough.
pub(crate) fn divergence_message(need: &Need, via: Option<&str>, why: Option<&Why>) -> String {
    let (whom, subject) = match need.level {
        Level::Warp => ("every lane of the warp", "a warp operation"),
        _ => ("every thread of the block", "a barrier of the whole block"),
    };
    let mut m = match via {
        None => format!("{} is {subject}, but not {whom} may reach it here", need.what),
        Some(f) => format!(
            "`{f}` reaches {} (line {}), {subject}, but not {whom} may reach this call",
            need.what,
            line(need.site)
        ),
    };
    if let Some(why) = why {
        why.render(&mut m);
    }
    let _ = write!(
        m,
        "\n  help: call it where {whom} gets together: outside branches, loops and early exits that depend on the thread; \
         a value every thread can agree on comes from `block.broadcast(v)` (thread 0's `v`) or, within a warp, `w.shuffle(v, 0)`"
    );
    m
}

#[cfg(test)]
mod tests;
