use super::check;
use crate::signature::Errors;
use syn::parse_quote;

fn problems(module: syn::ItemMod) -> Vec<String> {
    let (_, items) = module.content.expect("inline module");
    let mut errors = Errors::default();
    check(&items, &mut errors);
    errors.finish().err().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default()
}

fn accepts(module: syn::ItemMod) {
    let p = problems(module);
    assert!(p.is_empty(), "unexpected errors:\n{}", p.join("\n---\n"));
}

/// At least one problem; the first contains every one of `needles`.
fn rejects(module: syn::ItemMod, needles: &[&str]) {
    let p = problems(module);
    assert!(!p.is_empty(), "expected an error");
    for n in needles {
        assert!(p[0].contains(n), "`{n}` not in:\n{}", p[0]);
    }
}

#[test]
fn the_common_patterns_compile() {
    accepts(parse_quote! { mod gpu {
        pub fn tiles(n: usize, a: &[f32], mut c: Region<f32>, t: Shared<f32>, block: Block) {
            let i = c.index();
            let mut block = block;
            let mut sum = 0.0;
            for k in 0..n.div_ceil(16) {
                t.write(&block, if i < a.len() { a[i] } else { 0.0 });
                let read = block.sync();
                for j in 0..16 { sum += t.get(&read, j); }
                block = read.sync();
            }
            if let Some(o) = c.mine() { *o = sum; }
        }
        pub fn warps(w: Warp, x: &[u32], mut out: Region<u32>) {
            let v = x[global_linear_id()];
            let s = w.sum(v);
            if w.all(s > 3) {
                let b = w.shuffle(v, 0);
                let m = w.max(b);
                if let Some(o) = out.mine() { *o = m; }
            }
        }
        pub fn uniform_exit(n: u32, block: Block, mut y: Region<u32>) {
            if n == 0 || block_idx_x() > 7 { return; }
            let read = block.sync();
            if let Some(o) = y.mine() { *o = n; }
            let _block = read.sync();
        }
        pub fn tiled_by_len(pos: &[f32], mut acc: Region<f32>, t: Shared<f32>, block: Block) {
            // Reading an input at a thread's index leaves the input (and its length) uniform.
            let me = pos.get(acc.index()).copied().unwrap_or_default();
            let mut block = block;
            for k in 0..pos.len().div_ceil(block_dim_x() as usize) {
                t.write(&block, pos.get(k).copied().unwrap_or(me));
                let read = block.sync();
                block = read.sync();
            }
        }
        pub fn warp_scan_doubling(w: Warp, x: &[u32], mut y: Region<u32>) {
            // A shuffle's distance doubling in a `while` loop, its result added under a
            // lane-dependent `if`: the distance stays uniform.
            let lane = w.lane();
            let mut inclusive = x[global_linear_id()];
            let mut d = 1;
            while d < w.size() {
                let up = w.shuffle_up(inclusive, d);
                if lane >= d {
                    inclusive = inclusive.wrapping_add(up);
                }
                d *= 2;
            }
            if let Some(o) = y.mine() { *o = inclusive; }
        }
        pub fn look_back(w: Warp, flags: Atomics<u32>, mut y: Region<u32>) {
            // A ballot's result ends the loop; a lane-dependent value derived beside it (and
            // accumulated with shuffles) does not make it non-uniform.
            let lane = w.lane();
            let mut before = 0u32;
            let mut end = 64usize;
            loop {
                let f = flags.load(end - 1 - lane as usize);
                let found = w.ballot(f == 2);
                let stop = found.trailing_zeros();
                let value = if lane > stop { 0 } else { f };
                let mut total = value;
                for step in 0..w.size().trailing_zeros() {
                    total = total.wrapping_add(w.shuffle_xor(total, 1 << step));
                }
                before = before.wrapping_add(total);
                if found != 0 { break; }
                end -= 32;
            }
            if let Some(o) = y.mine() { *o = before; }
        }
        pub fn counted(rounds: &[u32], block: Block) {
            let n = block.broadcast(rounds[thread_idx_x() as usize]);
            let mut block = block;
            let mut i = 0;
            loop {
                if i == n { break; }
                block = block.sync().sync();
                i += 1;
            }
        }
    }});
}

#[test]
fn a_barrier_under_a_thread_dependent_branch_is_rejected() {
    rejects(
        parse_quote! { mod gpu {
            pub fn k(block: Block) {
                let t = thread_idx_x();
                if t % 2 == 0 {
                    let _r = block.sync();
                }
            }
        }},
        &["`block.sync()` is a barrier of the whole block", "`if` at line", "`thread_idx_x()`", "help:"],
    );
}

#[test]
fn a_barrier_after_an_early_return_of_some_threads_is_rejected() {
    rejects(
        parse_quote! { mod gpu {
            pub fn k(mut y: Region<f32>, block: Block) {
                let Some(o) = y.mine() else { return };
                *o = 1.0;
                let _r = block.sync();
            }
        }},
        &["`return`", "`y.mine()`"],
    );
}

#[test]
fn a_data_dependent_number_of_barriers_is_rejected() {
    rejects(
        parse_quote! { mod gpu {
            pub fn k(counts: &[u32], block: Block) {
                let n = counts[global_linear_id()];
                let mut block = block;
                for _ in 0..n { block = block.sync().sync(); }
            }
        }},
        &["`for` loop", "`global_linear_id()`"],
    );
    rejects(
        parse_quote! { mod gpu {
            pub fn k(block: Block) {
                let mut block = block;
                let mut i = thread_idx_x();
                while i < 64 { block = block.sync().sync(); i += 32; }
            }
        }},
        &["`while` loop"],
    );
}

#[test]
fn a_thread_dependent_break_taints_the_rest_of_the_loop() {
    let module: syn::ItemMod = parse_quote! { mod gpu {
        pub fn k(block: Block, n: u32) {
            let mut block = block;
            for i in 0..n {
                block = block.sync().sync();
                if i == thread_idx_y() { break; }
            }
            // Together again after the loop.
            let _r = block.sync();
        }
    }};
    // The two barriers in the loop, not the one after it.
    assert_eq!(problems(module.clone()).len(), 2);
    rejects(module, &["`break`"]);
}

#[test]
fn warp_operations_need_the_whole_warp() {
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp, mut out: Region<u32>) {
                let n = if w.lane() % 2 == 0 { w.sum(1u32) } else { 0 };
                if let Some(o) = out.mine() { *o = n; }
            }
        }},
        &["warp operation", "`w.lane()`"],
    );
    // Peers differ between lanes: a branch on them is lane-dependent.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp, x: &[u32], mut out: Region<u32>) {
                let p = w.peers(x[global_linear_id()]);
                let n = if p.trailing_zeros() == w.lane() { w.sum(1u32) } else { 0 };
                if let Some(o) = out.mine() { *o = n; }
            }
        }},
        &["warp operation", "`w.peers"],
    );
    // So do the peers of a value's low bits; and they are a warp operation themselves.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp, x: &[u32], mut out: Region<u64>) {
                let p = w.peers_low_bits(x[global_linear_id()], 8);
                let n = if p.trailing_zeros() == w.lane() { w.peers_low_bits(1, 8) } else { 0 };
                if let Some(o) = out.mine() { *o = n; }
            }
        }},
        &["warp operation", "`w.peers_low_bits"],
    );
    // A group's first lane's value is a warp operation, and differs between groups: under a
    // branch on it, another warp operation is lane-dependent.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp, x: &[u32], mut out: Region<u32>) {
                let v = x[global_linear_id()];
                let n = if w.lane() == 0 { w.shuffle_first(v, 3) } else { 0 };
                let m = if w.shuffle_first(v, 1) > 3 { w.sum(1u32) } else { 0 };
                if let Some(o) = out.mine() { *o = n + m; }
            }
        }},
        &["warp operation", "`w.shuffle_first"],
    );
    // A warp-uniform condition is enough for warp operations, not for barriers.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp, block: Block, x: &[u32]) {
                if w.any(x[global_linear_id()] > 5) {
                    let s = w.sum(1u32);
                    let _r = block.sync();
                }
            }
        }},
        &["barrier of the whole block", "same within a warp only"],
    );
}

#[test]
fn barriers_in_closures_are_rejected() {
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp, x: &[u32]) {
                let total: u32 = x.iter().map(|v| w.sum(*v)).sum();
            }
        }},
        &["closure"],
    );
}

#[test]
fn helpers_carry_their_barriers_to_the_call_site() {
    // A helper that synchronises, called from a branch some threads skip.
    rejects(
        parse_quote! { mod gpu {
            fn step(b: Block) -> Block { b.sync().sync() }
            pub fn k(block: Block) {
                if thread_idx_x() < 5 { let _b = step(block); }
            }
        }},
        &["`step` reaches `b.sync()`"],
    );
    // A helper whose loop bound is its parameter: the argument must be uniform.
    let p = problems(parse_quote! { mod gpu {
        fn rounds(n: u32, b: Block) -> Block {
            let mut b = b;
            for _ in 0..n { b = b.sync().sync(); }
            b
        }
        pub fn good(n: u32, block: Block) { let _b = rounds(n, block); }
        pub fn bad(block: Block) { let _b = rounds(thread_idx_x(), block); }
    }});
    assert_eq!(p.len(), 1, "{p:#?}");
    assert!(p[0].contains("argument `n`") && p[0].contains("`thread_idx_x()`"), "{}", p[0]);
    // Through two helpers and a method of a type holding the warp.
    rejects(
        parse_quote! { mod gpu {
            struct Ctx<'a> { w: &'a Warp }
            impl Ctx<'_> { fn total(&self, v: u32) -> u32 { self.w.sum(v) } }
            fn via(c: &Ctx<'_>, v: u32) -> u32 { c.total(v) }
            pub fn k(w: Warp, mut y: Region<u32>) {
                let c = Ctx { w: &w };
                if let Some(o) = y.mine() { *o = via(&c, 1); }
            }
        }},
        &["`via` reaches `self.w.sum(…)`", "`y.mine()`"],
    );
}

#[test]
fn values_assigned_under_divergence_are_not_uniform() {
    rejects(
        parse_quote! { mod gpu {
            pub fn k(n: u32, block: Block) {
                let mut m = n;
                if thread_idx_x() == 0 { m = 3; }
                let mut block = block;
                for _ in 0..m { block = block.sync().sync(); }
            }
        }},
        &["assigned at line"],
    );
    // Through a reference and interior mutability.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(n: u32, block: Block) {
                let count = core::cell::Cell::new(n);
                let r = &count;
                if thread_idx_x() == 0 { r.set(3); }
                let mut block = block;
                for _ in 0..count.get() { block = block.sync().sync(); }
            }
        }},
        &["`for` loop"],
    );
    // A helper that writes a thread index through a `&mut`.
    rejects(
        parse_quote! { mod gpu {
            fn mine(out: &mut u32) { *out = thread_idx_x(); }
            pub fn k(block: Block) {
                let mut n = 1;
                mine(&mut n);
                if n == 1 { let _r = block.sync(); }
            }
        }},
        &["`if`"],
    );
}

#[test]
fn an_early_question_mark_leaves_threads_behind() {
    rejects(
        parse_quote! { mod gpu {
            fn f(w: &Warp, x: Option<u32>) -> Option<u32> {
                let v = x?;
                Some(w.sum(v))
            }
            pub fn k(w: Warp, xs: &[u32]) {
                let _ = f(&w, xs.get(global_linear_id()).copied());
            }
        }},
        &["argument `x`"],
    );
}

#[test]
fn macros_cannot_hide_barriers() {
    rejects(
        parse_quote! { mod gpu {
            macro_rules! step { ($b:ident) => { $b.sync() }; }
            pub fn k(block: Block) { let _r = step!(block); }
        }},
        &["cannot see into macros"],
    );
    // A module macro that returns early makes what follows non-uniform.
    rejects(
        parse_quote! { mod gpu {
            macro_rules! leave { () => { return }; }
            pub fn k(block: Block) {
                if thread_idx_x() == 3 { leave!(); }
                let _r = block.sync();
            }
        }},
        &["`return`"],
    );
}

#[test]
fn loops_reach_a_fixed_point() {
    // `m` becomes non-uniform only in the loop's second iteration's view.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(n: u32, block: Block) {
                let (mut a, mut b, mut m) = (n, n, n);
                let mut block = block;
                for _ in 0..4 {
                    block = block.sync().sync();
                    for _ in 0..m { block = block.sync().sync(); }
                    m = a;
                    a = b;
                    b = thread_idx_x();
                }
            }
        }},
        &["`for` loop"],
    );
}

#[test]
fn shared_atomics_results_are_per_thread_and_their_reads_uniform() {
    // What an atomic update returns differs between threads; what the read phase reads does not.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(local: SharedAtomics<u32, 16>, block: Block) {
                let old = local.add(&block, 0, 1);
                if old == 0 { let _read = block.sync(); }
            }
        }},
        &["not every thread of the block may reach it", "`local.add(…)`"],
    );
    rejects(
        parse_quote! { mod gpu {
            pub fn k(local: SharedAtomics<u32, 16>, block: Block) {
                let read = block.sync();
                let mut block = read.sync();
                for _ in 0..local.load(&block, 3) { let r = block.sync(); block = r.sync(); }
            }
        }},
        &["`local.load(…)`"],
    );
    accepts(parse_quote! { mod gpu {
        pub fn k(x: &[u32], local: SharedAtomics<u32, 16>, block: Block) {
            for i in grid_stride(x.len()) { local.add(&block, (x[i] % 16) as usize, 1); }
            let read = block.sync();
            let rounds = local.get(&read, 0);
            let mut block = read.sync();
            for _ in 0..rounds { let r = block.sync(); block = r.sync(); }
        }
    }});
}

/// Values that reach a warp operation's condition by ways the analysis must follow: a `loop`'s
/// or labelled block's `break` value, a `matches!` guard, a thread function used as a value or
/// imported under another name, `grid_stride`, writes through a `for` pattern or a closure's
/// parameter. Each is rejected; each was once accepted.
#[test]
fn values_that_reach_a_condition_by_any_way_are_followed() {
    let cases: Vec<(&str, syn::ItemMod)> = vec![
        (
            "loop break value",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let t = loop { break thread_idx_x(); }; if t < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "labelled block break",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let t: u32 = 'a: { if thread_idx_x() < 16 { break 'a 1; } 2 }; if t == 1 { w.sum(1u32); } }
            }},
        ),
        (
            "matches! guard",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let c = matches!((), _ if thread_idx_x() < 16); if c { w.sum(1u32); } }
            }},
        ),
        (
            "function as a value",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let f = thread_idx_x; if f() < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "grid_stride",
            parse_quote! { mod gpu {
                pub fn k(w: Warp, n: usize) { let mut s = 0u32; for _i in grid_stride(n) { s += w.sum(1u32); } }
            }},
        ),
        (
            "renamed thread function",
            parse_quote! { mod gpu {
                use offload::prelude::thread_idx_x as tix;
                pub fn k(w: Warp) { if tix() < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "write through a for pattern",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let mut a = [0u32; 4]; for x in a.iter_mut() { *x = thread_idx_x(); } if a[0] < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "write through a closure parameter",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let mut a = [0u32; 4]; a.iter_mut().for_each(|x| *x = thread_idx_x()); if a[0] < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "Cell set through a for pattern",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let cells = [core::cell::Cell::new(0u32)]; for c in cells.iter() { c.set(thread_idx_x()); } if cells[0].get() < 16 { w.sum(1u32); } }
            }},
        ),
    ];
    for (what, module) in cases {
        let p = problems(module);
        assert!(
            p.iter().any(|e| e.contains("a warp operation")),
            "{what}: accepted, or for another reason: {p:?}"
        );
    }
}

/// Capabilities that reach a warp operation or barrier out of the analysis's usual sight: a
/// closure's untyped parameter, a renamed type, a closure given a `Warp`, a macro defined in
/// the kernel, a chain of helpers deeper than the analysis's first rounds.
#[test]
fn capabilities_that_reach_a_collective_out_of_sight_are_rejected() {
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp) { if thread_idx_x() < 16 { let _ = Some(&w).map(|x| x.sum(1u32)); } }
        }},
        &["a warp operation"],
    );
    rejects(
        parse_quote! { mod gpu {
            use offload::prelude::Warp as W;
            fn helper(x: &W) { let _ = x.sum(1u32); }
            pub fn k(w: Warp) { if thread_idx_x() < 16 { helper(&w); } }
        }},
        &["`helper` reaches"],
    );
    rejects(
        parse_quote! { mod gpu {
            use offload::prelude::Block as B;
            fn helper(x: &B) { let _ = x.broadcast(1u32); }
            pub fn k(b: Block) { if thread_idx_x() < 16 { helper(&b); } }
        }},
        &["`helper` reaches"],
    );
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp) { let f = |x: u32| x; let g = |x| x; let _ = f(1); let _ = g(&w); }
        }},
        &["`& w` can wait for other threads"],
    );
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp) { macro_rules! total { () => { w.sum(1u32) } } if thread_idx_x() < 16 { let _ = total!(); } }
        }},
        &["the macro `total!` defined here uses `w`"],
    );
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp) { macro_rules! leave { () => { return } } if thread_idx_x() < 16 { leave!(); } w.sum(1u32); }
        }},
        &["a warp operation", "`return`"],
    );
    // A `Warp` given to a generic parameter, whose warp operations the analysis would not
    // know inside.
    rejects(
        parse_quote! { mod gpu {
            fn helper<T: core::ops::Deref<Target = Warp>>(x: T) -> u32 { x.sum(1u32) }
            pub fn k(w: Warp) { let _ = helper(&w); }
        }},
        &["`& w` can wait for other threads, and is given to parameter `x` of `helper`"],
    );
    // A closure that returns the `Warp`, its call's warp operation under a branch.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp) { let f = || &w; if thread_idx_x() < 16 { let _ = f().sum(1u32); } }
        }},
        &["a warp operation"],
    );
    // Operations called through their type's path.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp) { if thread_idx_x() < 16 { let _ = Warp::sum(&w, 1u32); } }
        }},
        &["`Warp::sum(…)` is a warp operation"],
    );
    rejects(
        parse_quote! { mod gpu {
            pub fn k(b: Block) { if thread_idx_x() < 16 { let _ = Block::sync(b); } }
        }},
        &["`Block::sync(…)` is a barrier"],
    );
    // A type alias declared inside a function means what it names.
    rejects(
        parse_quote! { mod gpu {
            pub fn k(w: Warp) {
                type W = Warp;
                fn helper(x: &W) { let _ = x.sum(1u32); }
                if thread_idx_x() < 16 { helper(&w); }
            }
        }},
        &["`helper` reaches"],
    );
    // A chain of 24 helpers, each calling the next, the last a warp operation, called under
    // a branch on the thread.
    let helpers = (0..24usize).map(|i| {
        let (me, next) = (quote::format_ident!("h{i}"), quote::format_ident!("h{}", i + 1usize));
        if i == 23 {
            quote::quote! { fn #me(w: &Warp) { let _ = w.sum(1u32); } }
        } else {
            quote::quote! { fn #me(w: &Warp) { #next(w); } }
        }
    });
    let module: syn::ItemMod = parse_quote! { mod gpu {
        #(#helpers)*
        pub fn k(w: Warp) { if thread_idx_x() < 16 { h0(&w); } }
    }};
    rejects(module, &["`h0` reaches"]);
}

/// A closure over a plain field of a struct that also holds a `Warp` is no warp operation;
/// one given the `Warp` field is.
#[test]
fn a_structs_plain_field_is_no_warp_though_the_struct_holds_one() {
    accepts(parse_quote! { mod gpu {
        pub struct Tile<'a> { w: Warp, data: &'a [f32] }
        impl Tile<'_> {
            fn total(&self) -> f32 { self.data.iter().map(|x| x.max(0.0)).sum() }
        }
        fn first(t: &Tile<'_>) -> f32 { t.data.iter().map(|x| x.min(1.0)).sum() }
        pub fn k(w: Warp, x: &[f32]) { let t = Tile { w, data: x }; let _ = t.total() + first(&t); }
    }});
    rejects(
        parse_quote! { mod gpu {
            pub struct Tile<'a> { w: Warp, data: &'a [f32] }
            impl Tile<'_> {
                fn total(&self) -> u32 { Some(&self.w).map(|x| x.sum(1u32)).unwrap_or(0) }
            }
            pub fn k(w: Warp, x: &[f32]) { let t = Tile { w, data: x }; let _ = t.total(); }
        }},
        &["a warp operation"],
    );
}

/// A loop over a block's tile that folds each element into a plain array through a helper:
/// the array, the tile's elements and the thread's own value are numbers, not barriers,
/// though the tile is read in the phase a barrier begins.
#[test]
fn values_folded_from_a_shared_tile_are_plain_numbers() {
    let p = problems(parse_quote! { mod gpu {
        pub fn acc(pos: &[f32x4], mut acc: Region<f32x4>, tile: Shared<f32x4>, block: Block) {
            let me = pos.get(0).copied().unwrap_or_default();
            let mut a = [0.0f32; 3];
            let mut block = block;
            for k in 0..4 {
                tile.write(&block, me);
                let read = block.sync();
                for &p in tile.as_slice(&read) {
                    a = pull(a, me, p);
                }
                block = read.sync();
            }
        }
        fn pull(a: [f32; 3], me: f32x4, p: f32x4) -> [f32; 3] { a }
    }});
    assert!(p.is_empty(), "{p:?}");
}

/// A second round of ways a collective was once reached unseen, one case for each: a jump
/// among a macro's arguments, a macro from elsewhere that may jump, a guard that later arms run
/// under, methods that change their receiver, writes through a reference held in a variable,
/// in a struct argument, assigned later, through a computed place or a closure, a module
/// function as a value, a module function named like a thread function, a shuffle from a lane
/// that may not exist, a parameter past the 64th, a loop whose values settle late, a
/// generic field, a trait method that reads a thread index, one alias for two names.
#[test]
fn a_second_round_of_hidden_ways_is_followed() {
    let cases: Vec<(&str, syn::ItemMod)> = vec![
        (
            "jump in a macro's arguments",
            parse_quote! { mod gpu {
                macro_rules! id { ($($t:tt)*) => { $($t)* }; }
                pub fn k(w: Warp) { id!(if thread_idx_x() < 16 { return; }); let _ = w.sum(1u32); }
            }},
        ),
        (
            "a macro from elsewhere",
            parse_quote! { mod gpu {
                fn tried(w: &Warp) -> Result<u32, u32> { core::r#try!(if thread_idx_x() < 16 { Err(0) } else { Ok(1) }); Ok(w.sum(1u32)) }
                pub fn k(w: Warp) { let _ = tried(&w); }
            }},
        ),
        (
            "a guard of an earlier arm",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let _ = match 0u32 { _ if thread_idx_x() < 16 => 0, _ => w.sum(1u32) }; }
            }},
        ),
        (
            "Option::take",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let mut o = Some(1u32); if thread_idx_x() < 16 { o.take(); } if o.is_some() { w.sum(1u32); } }
            }},
        ),
        (
            "a reference in a variable, given to a helper",
            parse_quote! { mod gpu {
                fn set_tid(p: &mut u32) { *p = thread_idx_x(); }
                pub fn k(w: Warp) { let mut x = 0u32; let r = &mut x; set_tid(r); if x < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a reference in a struct argument",
            parse_quote! { mod gpu {
                pub struct M<'a> { pub r: &'a mut u32 }
                fn write_m(m: M<'_>) { *m.r = thread_idx_x(); }
                pub fn k(w: Warp) { let mut x = 0u32; write_m(M { r: &mut x }); if x < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a reference assigned later",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let mut x = 0u32; let r: &mut u32; r = &mut x; *r = thread_idx_x(); if x < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a computed place",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let mut x = 0u32; *Some(&mut x).unwrap() = thread_idx_x(); if x < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a closure's write",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let mut x = 0u32; let f = |r: &mut u32| *r = thread_idx_x(); f(&mut x); if x < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a module function as a value",
            parse_quote! { mod gpu {
                fn my_tid() -> u32 { thread_idx_x() }
                pub fn k(w: Warp) { let f = my_tid; if f() < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a method named like a thread function",
            parse_quote! { mod gpu {
                pub struct Pos { pub v: u32 }
                impl Pos { pub fn thread_idx_x(&self) -> u32 { self.v } }
                pub fn k(w: Warp) { if thread_idx_x() < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a method named like a Region's",
            parse_quote! { mod gpu {
                pub struct Pos { pub v: usize }
                impl Pos { pub fn index(&self) -> usize { self.v } }
                pub fn k(w: Warp, y: Region<u32>) { if y.index() % 32 < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a shuffle from a lane that may not exist",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let v = w.shuffle(w.lane(), 1000); if v < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a generic field",
            parse_quote! { mod gpu {
                pub struct Hold<T> { pub x: T }
                fn lane_of(h: Hold<&Warp>) -> u32 { h.x.lane() }
                pub fn k(w: Warp) { if lane_of(Hold { x: &w }) < 16 { w.sum(1u32); } }
            }},
        ),
    ];
    let third: Vec<(&str, syn::ItemMod)> = vec![
        (
            "a closure called through parentheses",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let f = || thread_idx_x(); if (f)() < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a closure called from an array",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let fs = [|| thread_idx_x()]; if fs[0]() < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a function pointer cast",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { if (thread_idx_x as fn() -> u32)() < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a reference cast",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let mut x = 0u32; let p = &mut x as &mut u32; *p = thread_idx_x(); if x < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "a moved mutable borrow",
            parse_quote! { mod gpu {
                fn set(r: &mut u32) { *r = thread_idx_x(); }
                pub fn k(w: Warp) { let mut x = 0u32; let r = &mut x; let s2 = r; set(s2); if x < 16 { w.sum(1u32); } }
            }},
        ),
        (
            "an iterator advanced through a borrow",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let a = [0u32; 4]; let mut it = a.iter(); if thread_idx_x() < 16 { (&mut it).count(); } if it.count() == 4 { w.sum(1u32); } }
            }},
        ),
        (
            "an iterator advanced through a held borrow",
            parse_quote! { mod gpu {
                pub fn k(w: Warp) { let a = [0u32; 4]; let mut it = a.iter(); let r = &mut it; if thread_idx_x() < 16 { r.last(); } if it.count() == 4 { w.sum(1u32); } }
            }},
        ),
    ];
    for (what, module) in cases.into_iter().chain(third) {
        let p = problems(module);
        assert!(
            p.iter().any(|e| e.contains("a warp operation")),
            "{what}: accepted, or for another reason: {p:?}"
        );
    }
    rejects(
        parse_quote! { mod gpu {
            pub struct T(pub u32);
            impl core::ops::Add for T { type Output = T; fn add(self, o: T) -> T { T(self.0 + o.0 + thread_idx_x()) } }
            pub fn k(w: Warp) { if (T(0) + T(0)).0 < 16 { w.sum(1u32); } }
        }},
        &["`add` implements `core::ops::Add`"],
    );
    let p = problems(parse_quote! { mod gpu {
        pub fn k(w: Warp) { let _ = w.sum(1u32); use offload::prelude::thread_idx_x as t; let _ = t(); }
        fn other() -> u32 { use offload::prelude::block_idx_x as t; t() }
    }});
    assert!(p.iter().any(|e| e.contains("`t` names `thread_idx_x` elsewhere")), "{p:?}");
    // Past the 64th parameter, a value is taken as differing between threads.
    let params = (0..64).map(|i| quote::format_ident!("p{}", i as usize));
    let module: syn::ItemMod = parse_quote! { mod gpu {
        fn many(w: &Warp, #(#params: u32,)* t: u32) -> u32 { if t < 16 { w.sum(1u32) } else { 0 } }
    }};
    rejects(module, &["a warp operation"]);
}
