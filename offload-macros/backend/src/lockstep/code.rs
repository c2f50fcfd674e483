//! The lockstep copy's code: the loops over the lanes, what each keeps and restores.

use super::*;
use syn::visit_mut::VisitMut;

/// Live once a wait's call has its arguments: what follows needs, but what the wait gives.
pub(super) fn live_mid(kind: &RWait<'_>, after: &HashSet<usize>) -> HashSet<usize> {
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

pub(super) fn slot(id: usize) -> syn::Ident {
    format_ident!("__lockstep_slot{}", id)
}

pub(super) struct Gen<'r> {
    pub(super) r: &'r Resolver,
    pub(super) live: &'r Liveness,
    /// The kernel's parameter patterns, bound at the start of the first loop.
    pub(super) params: Vec<&'r Pat>,
    /// Bindings kept between loops (in order: the code is the same from build to build).
    pub(super) slots: BTreeSet<usize>,
    /// Each wait's per-lane steps.
    pub(super) steps: Vec<syn::Ident>,
    /// Each warp operation's per-lane parts.
    pub(super) warp_steps: Vec<syn::Ident>,
    /// Items of the body (`use`, `const`, `fn`), visible to all of it.
    pub(super) items: Vec<TokenStream>,
    /// Bindings a wait's call names, which its future owns.
    pub(super) waited: HashSet<usize>,
    /// Which bindings hold the block's phase token.
    pub(super) tokens: Vec<bool>,
    /// Which bindings hold the block's `Warp`.
    pub(super) warps: Vec<bool>,
    /// The binding each barrier's receiver names, by the receiver's address.
    pub(super) resolved: &'r HashMap<usize, usize>,
    /// The index intrinsics that lane loops give their lanes themselves, each with the `let`
    /// at the top of a loop that calls it (see `intrinsic_lets`).
    pub(super) intrinsics: Vec<(String, TokenStream)>,
}

/// A piece of a lane loop's code.
pub(super) enum Part {
    /// The macro's own (what it names of the kernel's bindings is in the loop's `opaque`).
    Code(TokenStream),
    /// A statement of the kernel's.
    Stmt(Box<Stmt>),
    /// An expression of the kernel's, in code of the macro's around it.
    Expr(Box<Expr>, Box<dyn Fn(TokenStream) -> TokenStream>),
}

/// One loop over a block's lanes being put together.
#[derive(Default)]
pub(super) struct LaneLoop {
    /// Whether the loop starts the kernel (binds its parameters).
    pub(super) first: bool,
    /// A wait whose result the loop takes first.
    pub(super) take: Option<TokenStream>,
    /// Bindings the loop's code names (restored at its start when live there).
    pub(super) uses: HashSet<usize>,
    /// Bindings the loop declares.
    pub(super) decls: HashSet<usize>,
    /// Bindings the loop assigns whole (`x = v;`).
    pub(super) assigned: HashSet<usize>,
    pub(super) body: Vec<Part>,
    /// Bindings the macro's own code names (never lent: see `super::lend`).
    pub(super) opaque: HashSet<usize>,
    /// Live at its start.
    pub(super) live_in: HashSet<usize>,
    /// Kept by the loop's own code, not at its end.
    pub(super) kept_early: HashSet<usize>,
    /// The first piece of the next round of a loop, run by the lanes whose condition holds
    /// (see [`Gen::rotated`]).
    pub(super) branch: Option<Box<Branch>>,
}

/// The first piece of a loop's body, ending with a barrier, run at the end of the lane loop
/// before it — the one that computes the loop's condition — by each lane whose condition
/// holds: `open { head } else { … }`, where `open` is `if __c` or `if let Some(p) = __next`.
pub(super) struct Branch {
    pub(super) open: TokenStream,
    pub(super) head: LaneLoop,
    /// Live after the head (the rest of the body's start); the loop's `live_out` is what is
    /// live when the condition does not hold.
    pub(super) live_then: HashSet<usize>,
}

impl LaneLoop {
    pub(super) fn at(live_in: &HashSet<usize>) -> LaneLoop {
        LaneLoop { live_in: live_in.clone(), ..LaneLoop::default() }
    }
}

impl Gen<'_> {
    /// The receiver of `call` when it is `token.sync()` on the block's phase token (a
    /// `Block` parameter, or what a barrier of one gave).
    pub(super) fn barrier<'c>(&self, call: &'c Expr) -> Option<&'c syn::Ident> {
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
    pub(super) fn warp_op<'c>(&self, call: &'c Expr) -> Option<(&'c syn::ExprMethodCall, syn::Ident)> {
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
    pub(super) fn taking(
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

    pub(super) fn body(&mut self, tree: &[RNode<'_>], params: &[usize]) -> Option<TokenStream> {
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
    pub(super) fn flush(
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
    pub(super) fn inner(&mut self, nodes: &[RNode<'_>], after: &HashSet<usize>) -> Option<TokenStream> {
        let mut out = TokenStream::new();
        let mut open = None;
        self.nodes(nodes, &mut open, &mut out)?;
        self.flush(&mut open, after, &mut out)?;
        Some(out)
    }

    pub(super) fn nodes(
        &mut self,
        nodes: &[RNode<'_>],
        open: &mut Option<LaneLoop>,
        out: &mut TokenStream,
    ) -> Option<()> {
        for n in nodes {
            let before = &self.live.before[&addr(n)];
            let after = &self.live.after[&addr(n)];
            match n {
                RNode::Plain { stmt: Stmt::Item(item), .. } => {
                    self.items.push(item.to_token_stream());
                }
                RNode::Plain { stmt, uses, decls, kills } => {
                    let l = open.get_or_insert_with(|| LaneLoop::at(before));
                    push_plain(l, stmt, uses, decls, kills);
                }
                RNode::Wait { kind, call, uses } if self.barrier(call).is_some() => {
                    // A barrier of the block's own token: the boundary between two loops, every
                    // lane having finished this one before any starts the next; the token
                    // changes in this loop.
                    let l = open.get_or_insert_with(|| LaneLoop::at(before));
                    self.push_barrier(l, kind, call, uses);
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
                    let mut parts_call = m.clone();
                    parts_call.method = parts;
                    let (span, put) = (call.span(), step.clone());
                    l.body.push(Part::Expr(
                        Box::new(Expr::MethodCall(parts_call)),
                        Box::new(move |e| quote_spanned!(span=> #put.put(__t, #e);)),
                    ));
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
                    l.opaque.extend(uses);
                    l.body.push(Part::Code(quote_spanned! {call.span()=>
                        #step.start(__t, async move {
                            (::offload::__private::Lane::new(#call).__lane_await().await, (#(#names,)*))
                        });
                    }));
                    out.extend(self.close(l, &live_mid)?);
                    out.extend(quote!(__ls.wait(&mut #step);));
                    *open = Some(self.taking(kind, &live_mid, &step, Some((&back, &names))));
                }
                RNode::Block(inner) => {
                    self.flush(open, before, out)?;
                    let code = self.inner(inner, after)?;
                    out.extend(quote!({ #code }));
                }
                RNode::While { cond, uses, body } if self.rotates(body) => {
                    let test = |l: &mut LaneLoop| {
                        l.uses.extend(uses);
                        let span = cond.span();
                        l.body.push(Part::Expr(
                            Box::new((*cond).clone()),
                            Box::new(move |e| quote_spanned!(span=> let __c = #e; __agree.lane(__c);)),
                        ));
                    };
                    let entry = open.take().unwrap_or_else(|| LaneLoop::at(before));
                    let code = self.rotated(body, entry, before, after, quote!(if __c), &[], test)?;
                    out.extend(code);
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
                    last.body.push(agree_lane(cond));
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
                RNode::For { pat, iter, it, uses, decls, body } if self.rotates(body) => {
                    // `let mut it = into_iter(iter);` in the open loop, which takes each lane's
                    // first item; the body's last loop takes the next.
                    let mut entry = open.take().unwrap_or_else(|| LaneLoop::at(before));
                    let itn = self.push_iterator(&mut entry, iter, *it, uses);
                    self.slots.insert(*it);
                    let it_slot = slot(*it);
                    let (it, span) = (*it, pat.span());
                    let test = |l: &mut LaneLoop| {
                        l.uses.insert(it);
                        l.kept_early.insert(it);
                        l.opaque.insert(it);
                        l.body.push(Part::Code(quote_spanned! {span=>
                            let __next = #itn.next();
                            __agree.lane(__next.is_some());
                            #it_slot[__t] = ::core::option::Option::Some(#itn);
                        }));
                    };
                    // Live at the head: after the loop, the iterator, and the body's start but
                    // its pattern's names.
                    let body_in =
                        body.first().map_or_else(|| after.clone(), |b| self.live.before[&addr(b)].clone());
                    let mut head_live = after.clone();
                    head_live.insert(it);
                    head_live.extend(body_in.iter().filter(|b| !decls.contains(b)));
                    let open_head = quote_spanned!(span=> if let ::core::option::Option::Some(#pat) = __next);
                    let code = self.rotated(body, entry, &head_live, after, open_head, decls, test)?;
                    out.extend(code);
                }
                RNode::For { pat, iter, it, uses, decls, body } => {
                    // `let mut it = into_iter(iter);` in the open loop, then a loop whose head
                    // takes each lane's next item.
                    let l = open.get_or_insert_with(|| LaneLoop::at(before));
                    let itn = self.push_iterator(l, iter, *it, uses);
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
                    head.opaque.insert(*it);
                    self.slots.insert(*it);
                    let it_slot = slot(*it);
                    head.body.push(Part::Code(quote_spanned! {pat.span()=>
                        let __next = #itn.next();
                        __agree.lane(__next.is_some());
                        #it_slot[__t] = ::core::option::Option::Some(#itn);
                        let ::core::option::Option::Some(#pat) = __next else { continue };
                    }));
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
    pub(super) fn condition(
        &mut self,
        cond: &Expr,
        uses: &HashSet<usize>,
        live: &HashSet<usize>,
    ) -> Option<TokenStream> {
        let mut l = LaneLoop::at(live);
        l.uses.extend(uses);
        l.body.push(agree_lane(cond));
        let lanes = self.close(l, live)?;
        Some(quote! {
            let mut __agree = ::offload::__private::Agree::default();
            #lanes
            let __agree = __agree.get();
        })
    }

    /// Which of the bindings `restored` the loop `l` (with its branch's head, if any) can use
    /// in place in their slots (see `super::lend`), given the bindings `fresh` it declares
    /// unrestored, `live_out` and what is live after the head.
    fn lendable(
        &self,
        l: &LaneLoop,
        branch: Option<&Branch>,
        restored: &[usize],
        fresh: &[usize],
        live_out: &HashSet<usize>,
    ) -> Vec<usize> {
        let name = |b: &usize| &self.r.bindings[*b].name;
        let head = branch.map(|b| &b.head);
        let parts = || std::iter::once(l).chain(head);
        let others: HashSet<&String> = parts().flat_map(|p| &p.decls).chain(fresh).map(name).collect();
        let candidates: Vec<usize> = restored
            .iter()
            .filter(|b| {
                parts().all(|p| !p.opaque.contains(b) && !p.kept_early.contains(b) && !p.assigned.contains(b))
                    && !others.contains(name(b))
            })
            .copied()
            .collect();
        let names: HashSet<String> = candidates.iter().map(|b| name(b).clone()).collect();
        let check = |body: &[Part]| {
            let mut check = Check::new(&names);
            for part in body {
                match part {
                    Part::Code(_) => {}
                    Part::Stmt(s) => check.visit_stmt(s),
                    Part::Expr(e, _) => check.visit_expr(e),
                }
            }
            check
        };
        let tail = check(&l.body);
        let head = check(head.map_or(&[][..], |h| &h.body));
        let no_then = HashSet::new();
        let live_then = branch.map_or(&no_then, |b| &b.live_then);
        candidates
            .into_iter()
            .filter(|b| {
                let n = name(b);
                // A copy in the head may be a move unless the rest of the body needs it; in the
                // code before, unless either way on needs it.
                let later = live_out.contains(b) || live_then.contains(b);
                !tail.out.contains(n)
                    && !head.out.contains(n)
                    && (!tail.whole.contains(n) || (later && !tail.diverges && !head.diverges))
                    && (!head.whole.contains(n) || (live_then.contains(b) && !head.diverges))
            })
            .collect()
    }

    /// The loop over the lanes: restore (or lend) what it names of the bindings live at its
    /// start, run its code, keep what it has of the bindings live at its end — at the end of
    /// its branch's head for the lanes that run it, else as the loop ends.
    pub(super) fn close(&mut self, mut l: LaneLoop, live_out: &HashSet<usize>) -> Option<TokenStream> {
        let branch = l.branch.take();
        let head = branch.as_ref().map(|b| &b.head);
        let parts = || std::iter::once(&l).chain(head);
        let decls: HashSet<usize> = parts().flat_map(|p| p.decls.iter().copied()).collect();
        // (What a wait gives back is the loop's own, not restored; what the head assigns is,
        // for the lanes that do not run it.)
        let named = l.uses.iter().chain(head.iter().flat_map(|h| h.uses.iter().chain(&h.assigned)));
        let mut restored: Vec<usize> =
            named.filter(|u| l.live_in.contains(u) && !decls.contains(u)).copied().collect();
        restored.sort_unstable();
        restored.dedup();
        // A binding the loop gives a value before reading it is declared here, not restored.
        let assigned: HashSet<usize> = parts().flat_map(|p| p.assigned.iter().copied()).collect();
        let mut fresh: Vec<usize> =
            assigned.iter().filter(|b| !restored.contains(b) && !decls.contains(b)).copied().collect();
        fresh.sort_unstable();
        // Those it uses in place stay in their slots.
        let lent = self.lendable(&l, branch.as_deref(), &restored, &fresh, live_out);
        let kept_early: HashSet<usize> = parts().flat_map(|p| p.kept_early.iter().copied()).collect();
        let keep = |from: &mut dyn Iterator<Item = &usize>, live: &HashSet<usize>| -> Vec<usize> {
            let mut keep: Vec<usize> = from
                .filter(|b| live.contains(b) && !kept_early.contains(b) && !lent.contains(b))
                .copied()
                .collect();
            keep.sort_unstable();
            keep.dedup();
            keep
        };
        let (keep_then, keep_else) = match &branch {
            None => (keep(&mut restored.iter().chain(&decls).chain(&fresh), live_out), Vec::new()),
            Some(b) => {
                // Past the branch, only what the code before it gave a value can be kept.
                let before_head = |f: &&usize| l.assigned.contains(f);
                if fresh.iter().any(|f| live_out.contains(f) && !before_head(&f)) {
                    return None;
                }
                (
                    keep(&mut restored.iter().chain(&decls).chain(&fresh), &b.live_then),
                    keep(
                        &mut restored.iter().chain(&l.decls).chain(fresh.iter().filter(before_head)),
                        live_out,
                    ),
                )
            }
        };
        // Names must say which binding they are: two of one name at either end cannot be, nor
        // one from before the loop that a `let` of the loop shadows by its end.
        let mut start = restored.clone();
        start.extend(&fresh);
        for set in [&start, &keep_then, &keep_else] {
            let mut names = HashSet::new();
            for b in set.iter() {
                if !names.insert(&self.r.bindings[*b].name) {
                    return None;
                }
            }
        }
        let name = |b: &usize| &self.r.bindings[*b].name;
        let shadowed = |keep: &[usize], decls: &mut dyn Iterator<Item = &usize>| {
            let declared: HashSet<&String> = decls.map(name).collect();
            keep.iter().any(|b| !decls_all(&l, head, b) && declared.contains(name(b)))
        };
        if shadowed(&keep_then, &mut decls.iter()) || shadowed(&keep_else, &mut l.decls.iter()) {
            return None;
        }
        let restores: Vec<TokenStream> = restored
            .iter()
            .map(|b| {
                self.slots.insert(*b);
                let s = slot(*b);
                if lent.contains(b) {
                    let r = lent_name(&self.r.bindings[*b].name);
                    return quote!(let #r = ::offload::__private::lend(&mut #s[__t]););
                }
                let name = format_ident!("{}", self.r.bindings[*b].name);
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
        let mut keeps = |set: &[usize]| -> Vec<TokenStream> {
            set.iter()
                .map(|b| {
                    self.slots.insert(*b);
                    let name = format_ident!("{}", self.r.bindings[*b].name);
                    let s = slot(*b);
                    quote!(#s[__t] = ::core::option::Option::Some(#name);)
                })
                .collect()
        };
        let (keep_then, keep_else) = (keeps(&keep_then), keeps(&keep_else));
        let params = if l.first {
            let pats = &self.params;
            quote!(let (#(#pats,)*) = __params(&__ls.token(__t));)
        } else {
            quote!()
        };
        let lent: HashSet<String> = lent.iter().map(|b| self.r.bindings[*b].name.clone()).collect();
        let render = |parts: Vec<Part>| -> Vec<TokenStream> {
            parts
                .into_iter()
                .map(|part| match part {
                    Part::Code(code) => code,
                    Part::Stmt(mut s) => {
                        Lend(&lent).visit_stmt_mut(&mut s);
                        s.to_token_stream()
                    }
                    Part::Expr(mut e, wrap) => {
                        Lend(&lent).visit_expr_mut(&mut e);
                        wrap(e.to_token_stream())
                    }
                })
                .collect()
        };
        let take = l.take.take();
        let body = render(std::mem::take(&mut l.body));
        let end = match branch {
            None => quote!(#(#keep_then)*),
            Some(b) => {
                let (open, head) = (b.open, render(b.head.body));
                quote!(#open { #(#head)* #(#keep_then)* } else { #(#keep_else)* })
            }
        };
        let code = quote! {
            #params
            #(#restores)*
            #(#fresh)*
            #take
            #(#body)*
            #end
        };
        let mut named = Vec::new();
        crate::uniformity::idents(&code, &mut named);
        let intrinsics =
            self.intrinsics.iter().filter(|(name, _)| named.contains(name)).map(|(_, code)| code);
        Some(quote! {
            for __t in __ls.each() {
                #(#intrinsics)*
                #code
            }
        })
    }

    /// Whether a loop's body starts with a piece that ends with a barrier of the block's token
    /// (statements, no item, then the barrier): a loop that can be [rotated](Self::rotated).
    pub(super) fn rotates(&self, body: &[RNode<'_>]) -> bool {
        for n in body {
            match n {
                RNode::Plain { stmt: Stmt::Item(_), .. } => return false,
                RNode::Plain { .. } => {}
                RNode::Wait { call, .. } => return self.barrier(call).is_some(),
                _ => return false,
            }
        }
        false
    }

    /// The first piece of `body` (which [`rotates`](Self::rotates)) as a branch's head, with
    /// `decls` (a `for` loop's pattern) declared by its opening; and the barrier's index.
    fn head(&self, body: &[RNode<'_>], decls: &[usize]) -> (LaneLoop, usize) {
        let mut l = LaneLoop::default();
        l.decls.extend(decls);
        for (k, n) in body.iter().enumerate() {
            match n {
                RNode::Plain { stmt, uses, decls, kills } => push_plain(&mut l, stmt, uses, decls, kills),
                RNode::Wait { kind, call, uses } => {
                    self.push_barrier(&mut l, kind, call, uses);
                    return (l, k);
                }
                _ => break,
            }
        }
        unreachable!("a rotated loop's body starts with a piece that ends with a barrier")
    }

    /// A loop whose body starts with a piece that ends with a barrier, rotated: the body's
    /// first piece runs at the end of the lane loop that computes the loop's condition (the
    /// loop before the loop, `entry`, then the body's last), by the lanes whose condition
    /// holds — every lane of the block or none, which `Agree` checks — so that a round costs
    /// one loop over the lanes per barrier, not one more for the condition. `test` adds the
    /// condition's code to a lane loop, `open` the branch's opening (`if __c`); `head_live`
    /// is live where the condition is computed, `after` after the loop.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn rotated(
        &mut self,
        body: &[RNode<'_>],
        mut entry: LaneLoop,
        head_live: &HashSet<usize>,
        after: &HashSet<usize>,
        open: TokenStream,
        decls: &[usize],
        test: impl Fn(&mut LaneLoop),
    ) -> Option<TokenStream> {
        let (head, k) = self.head(body, decls);
        let live_then = self.live.after[&addr(&body[k])].clone();
        test(&mut entry);
        entry.branch = Some(Box::new(Branch { open: open.clone(), head, live_then: live_then.clone() }));
        let entry = self.close(entry, after)?;
        let mut inner = TokenStream::new();
        let mut o = None;
        self.nodes(&body[k + 1..], &mut o, &mut inner)?;
        let mut last = o.unwrap_or_else(|| LaneLoop::at(head_live));
        test(&mut last);
        let (head, _) = self.head(body, decls);
        last.branch = Some(Box::new(Branch { open, head, live_then }));
        inner.extend(self.close(last, after)?);
        Some(quote!({
            let mut __agree = ::offload::__private::Agree::default();
            #entry
            let mut __again = __agree.get();
            while __again {
                let mut __agree = ::offload::__private::Agree::default();
                #inner
                __again = __agree.get();
            }
        }))
    }

    /// `let mut it = into_iter(iter);` of a `for` loop in lane loop `l`, `uses` what `iter`
    /// names; the iterator's name.
    fn push_iterator(&self, l: &mut LaneLoop, iter: &Expr, it: usize, uses: &HashSet<usize>) -> syn::Ident {
        let itn = format_ident!("{}", self.r.bindings[it].name);
        l.uses.extend(uses);
        l.decls.insert(it);
        let (span, name) = (iter.span(), itn.clone());
        l.body.push(Part::Expr(
            Box::new(iter.clone()),
            Box::new(
                move |e| quote_spanned!(span=> let mut #name = ::core::iter::IntoIterator::into_iter(#e);),
            ),
        ));
        itn
    }

    /// A barrier of the block's token in lane loop `l`: the token changes (the loop ends here).
    /// The barrier takes the old token, as the kernel's does (so the loop takes it out of its
    /// slot: a read-phase slice that borrows it cannot outlive it).
    fn push_barrier(&self, l: &mut LaneLoop, kind: &RWait<'_>, call: &Expr, uses: &HashSet<usize>) {
        let recv = self.barrier(call).expect("a barrier of the block's token");
        l.uses.extend(uses);
        let lhs = match kind {
            RWait::Let(pat, ids) => {
                l.decls.extend(ids);
                quote!(let #pat)
            }
            RWait::Assign(id) => {
                l.decls.insert(*id);
                let name = format_ident!("{}", self.r.bindings[*id].name);
                quote!(let mut #name)
            }
            RWait::Discard => quote!(let _),
        };
        let span = call.span();
        l.body.push(Part::Expr(
            Box::new(syn::parse_quote_spanned!(recv.span()=> #recv)),
            Box::new(
                move |e| quote_spanned!(span=> #lhs = ::offload::__private::BlockToken::lockstep_sync(#e);),
            ),
        ));
    }
}

/// Whether lane loop `l` or its branch's `head` declares binding `b`.
fn decls_all(l: &LaneLoop, head: Option<&LaneLoop>, b: &usize) -> bool {
    l.decls.contains(b) || head.is_some_and(|h| h.decls.contains(b))
}

/// A statement of the kernel's in lane loop `l`.
fn push_plain(l: &mut LaneLoop, stmt: &Stmt, uses: &HashSet<usize>, decls: &[usize], kills: &[usize]) {
    l.uses.extend(uses);
    l.decls.extend(decls);
    l.assigned.extend(kills);
    l.body.push(Part::Stmt(Box::new(stmt.clone())));
}

/// `__agree.lane(cond);`: a lane's value of a condition the lanes must agree on.
fn agree_lane(cond: &Expr) -> Part {
    let span = cond.span();
    Part::Expr(Box::new(cond.clone()), Box::new(move |e| quote_spanned!(span=> __agree.lane(#e);)))
}

/// Which bindings hold the block's phase token (`Block`/`BlockRead`): the `Block` parameters,
/// and bindings every definition of which is a copy or a barrier of one (the largest such
/// set).
pub(super) fn tokens(r: &Resolver, params: &HashSet<usize>) -> Vec<bool> {
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
