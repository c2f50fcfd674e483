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

/// Whether the loop after a barrier uses `v` (and `p`) in place in their slots when its code
/// is `stmts` (both live after it: the loop repeats, and the end reads them).
fn lent_in(stmts: proc_macro2::TokenStream) -> (bool, bool) {
    let got = lockstep(parse_quote! { mod gpu {
        pub fn k(x: &[u32], mut y: Region<u32>, tile: Shared<u32>, block: Block) {
            let mut block = block;
            let mut v = x[0];
            let mut p = (x[1], x[2]);
            let mut k = 0;
            while k < 4 {
                tile.write(&block, v);
                let read = block.sync();
                let got = tile.get(&read, 0);
                #stmts
                block = read.sync();
                k += 1;
            }
            if let Some(o) = y.mine() {
                *o = v + p.0 + p.1;
            }
        }
    }});
    let code = got.get("k").expect("a lockstep copy");
    // (The loop between the two barriers: the first ends with the first, the one after the
    // second begins after it.)
    let barrier = "BlockToken :: lockstep_sync";
    let start = code.find(barrier).expect("the first barrier");
    let end = start + 1 + code[start + 1..].find(barrier).expect("the second barrier");
    let middle = &code[start..end];
    (middle.contains("__lockstep_lent_v"), middle.contains("__lockstep_lent_p"))
}

#[test]
fn locals_that_cannot_move_are_used_where_they_are_kept() {
    use quote::quote;
    // Places, and copies of a local that is still needed after the loop.
    assert_eq!(lent_in(quote!(v += got; p.1 += v;)), (true, true));
    assert_eq!(lent_in(quote!(let w = v; v += w + got; let q = &p.0; v += *q;)), (true, true));
    assert_eq!(lent_in(quote!(v += helper(v, &p) + got;)), (true, true));
    assert_eq!(lent_in(quote!(if v > got { v -= 1; }; let f = |a: u32| a + v; p.0 = f(got);)), (true, true));
    assert_eq!(lent_in(quote!(let q = S { v, w: got }; p.1 = q.v;)), (true, true));
    // A whole assignment (its value may have moved the local), a part in a value's position
    // (it may move), a pattern that takes it apart, a macro or a `move` closure naming it.
    assert_eq!(lent_in(quote!(v = got + v; p = (p.0, got);)), (false, false));
    assert_eq!(lent_in(quote!(let a = p.0; v += a + got;)), (true, false));
    assert_eq!(lent_in(quote!(let (a, b) = p; v += a + b + got;)), (true, false));
    assert_eq!(lent_in(quote!(assert!(v < got + 1000); p.0 += 1;)), (false, true));
    assert_eq!(lent_in(quote!(let f = move || v + got; p.0 += f();)), (false, true));
    // Another binding of the same name anywhere in the loop.
    assert_eq!(lent_in(quote!(let w = { let v = got; v }; p.0 += w;)), (false, true));
    // A copy on a path that may never reach the loop's end.
    assert_eq!(lent_in(quote!(if got > 9 { let w = v; panic!("{}", w); } p.0 += 1;)), (false, true));
}

#[test]
fn a_local_shadowed_by_the_end_of_its_loop_keeps_the_futures() {
    let got = lockstep(parse_quote! { mod gpu {
        // `v` (the parameter's value) is live after the block, but at the barrier inside it
        // the name `v` is the block's own local.
        pub fn shadows(x: &[u32], mut y: Region<u32>, block: Block) {
            let v = x[0];
            let mut block = block;
            {
                let w = v + 1;
                let v = w * 2;
                let _ = v;
                let read = block.sync();
                block = read.sync();
            }
            let _ = block;
            if let Some(o) = y.mine() {
                *o = v;
            }
        }
        // The same with no shadowing: cut.
        pub fn plain(x: &[u32], mut y: Region<u32>, block: Block) {
            let v = x[0];
            let mut block = block;
            {
                let w = v + 1;
                let u = w * 2;
                let _ = u;
                let read = block.sync();
                block = read.sync();
            }
            let _ = block;
            if let Some(o) = y.mine() {
                *o = v;
            }
        }
    }});
    assert!(!got.contains_key("shadows"), "{}", got["shadows"]);
    assert!(got.contains_key("plain"));
}

/// A lane loop that calls an index intrinsic binds it to the lane's value from the block's
/// place; a module that names the intrinsic any other way (defines, imports or renames it, or
/// calls it through a path) keeps every call as it is.
#[test]
fn index_intrinsics_come_from_the_lanes_place_where_only_called_bare() {
    let got = lockstep(parse_quote! { mod gpu {
        pub fn k(mut y: Region<u32>, tile: Shared<u32>, block: Block) {
            let t = thread_idx_x();
            tile.write(&block, t);
            let read = block.sync();
            if let Some(o) = y.mine() {
                *o = tile.get(&read, 0) + global_linear_id() as u32;
            }
        }
    }});
    let code = &got["k"];
    assert!(code.contains("let thread_idx_x = { let __v = __ls . thread_idx ::< 0 > (__t) ;"), "{code}");
    assert!(code.contains("let global_linear_id = { let __v = __ls . linear_id (__t) ;"), "{code}");
    assert!(!code.contains("thread_idx_y"), "only the intrinsics the loop calls: {code}");
    assert_eq!(code.matches("let thread_idx_x =").count(), 1, "only in the loop that calls it: {code}");

    for module in [
        parse_quote! { mod gpu {
            fn thread_idx_x() -> u32 { 7 }
            pub fn k(tile: Shared<u32>, block: Block) { tile.write(&block, thread_idx_x()); let _read = block.sync(); }
        }},
        parse_quote! { mod gpu {
            use other::thread_idx_x;
            pub fn k(tile: Shared<u32>, block: Block) { tile.write(&block, thread_idx_x()); let _read = block.sync(); }
        }},
        parse_quote! { mod gpu {
            pub fn k(tile: Shared<u32>, block: Block) {
                tile.write(&block, offload::thread_idx_x() + thread_idx_x());
                let _read = block.sync();
            }
        }},
    ] {
        let got = lockstep(module);
        assert!(!got["k"].contains("let thread_idx_x ="), "{}", got["k"]);
    }
}
