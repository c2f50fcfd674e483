//! Reading a kernels module before its functions are walked: its functions (and those inside
//! them), the capabilities of its types, its structs' fields, its renames and its macros.

use super::walk::idents;
use super::{Function, Module, caps};
use proc_macro2::{Span, TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::HashMap;
use syn::Stmt;
use syn::visit::Visit;

/// Finds the module's functions, types and macros.
pub(super) fn collect(items: &[syn::Item]) -> Module<'_> {
    let mut types = HashMap::new();
    let mut fields: Vec<(String, Vec<&syn::Type>)> = Vec::new();
    let mut jumping_macros = Vec::new();
    collect_types(items, &mut fields, &mut jumping_macros);
    let mut named = Vec::new();
    named_fields(items, &mut named);
    // A type holds what its fields hold, transitively.
    for _ in 0..=fields.len() {
        let mut changed = false;
        for (name, tys) in &fields {
            let c = tys.iter().fold(0, |c, t| c | type_caps(t, &types, 0));
            let entry = types.entry(name.clone()).or_insert(0);
            if *entry | c != *entry {
                *entry |= c;
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    // Names imported under another name (`use offload::prelude::Warp as W;`, anywhere in
    // the module, function bodies included): the analysis knows functions and types by name,
    // so an alias means what its original does.
    let (renames, rename_conflicts) = collect_renames(items);
    for (alias, original) in &renames {
        let c = name_caps(original, &types, 0);
        *types.entry(alias.clone()).or_insert(0) |= c;
    }
    let mut field_caps: HashMap<String, HashMap<String, u8>> = HashMap::new();
    for (st, fs) in named {
        let entry = field_caps.entry(st).or_default();
        for (f, ty) in fs {
            let c = ty.map_or(caps::WARP | caps::BLOCK | caps::SHARED | caps::PER_THREAD, |t| {
                type_caps(t, &types, 0)
            });
            *entry.entry(f).or_insert(0) |= c;
        }
    }
    let mut functions = Vec::new();
    collect_functions(items, &types, &mut functions);
    struct Macros(Vec<String>);
    impl Visit<'_> for Macros {
        fn visit_item_macro(&mut self, m: &syn::ItemMacro) {
            if m.mac.path.is_ident("macro_rules")
                && let Some(name) = &m.ident
            {
                self.0.push(name.to_string());
            }
        }
    }
    let mut macros = Macros(Vec::new());
    for item in items {
        macros.visit_item(item);
    }
    Module {
        summaries: HashMap::new(),
        types,
        jumping_macros,
        functions,
        renames,
        rename_conflicts,
        field_caps,
        macros: macros.0,
    }
}

/// A struct's named fields and their types (`None`: a type parameter's).
type Fields<'a> = Vec<(String, Option<&'a syn::Type>)>;

/// The named fields of the module's structs (anywhere: nested modules and functions too), by
/// struct; `None` for a field whose type names one of the struct's type parameters (what it
/// holds is the user's choice: anything).
fn named_fields<'a>(items: &'a [syn::Item], out: &mut Vec<(String, Fields<'a>)>) {
    struct Structs<'a, 'o>(&'o mut Vec<(String, Fields<'a>)>);
    impl<'a> Visit<'a> for Structs<'a, '_> {
        fn visit_item_struct(&mut self, st: &'a syn::ItemStruct) {
            let params: Vec<String> = st.generics.type_params().map(|p| p.ident.to_string()).collect();
            let generic = |ty: &syn::Type| {
                let mut names = Vec::new();
                idents(&ty.to_token_stream(), &mut names);
                names.iter().any(|n| params.contains(n))
            };
            self.0.push((
                st.ident.to_string(),
                st.fields
                    .iter()
                    .filter_map(|f| Some((f.ident.as_ref()?.to_string(), (!generic(&f.ty)).then_some(&f.ty))))
                    .collect(),
            ));
        }
    }
    let mut s = Structs(out);
    for item in items {
        s.visit_item(item);
    }
}

/// The module struct a value of type `ty` is (or refers to), by name: `Tile`, `&Tile<'_>`.
pub(super) fn struct_of(ty: &syn::Type, module: &Module<'_>) -> Option<String> {
    match ty {
        syn::Type::Reference(r) => struct_of(&r.elem, module),
        syn::Type::Paren(p) => struct_of(&p.elem, module),
        syn::Type::Path(p) if p.qself.is_none() => {
            let name = p.path.segments.last()?.ident.to_string();
            let name = module.resolve(&name).to_owned();
            module.field_caps.contains_key(&name).then_some(name)
        }
        _ => None,
    }
}

/// `alias → original` for every `use … as alias` in `items` and the functions and blocks in
/// them.
fn collect_renames(items: &[syn::Item]) -> (HashMap<String, String>, Vec<(Span, String)>) {
    struct Renames(HashMap<String, String>, Vec<(Span, String)>);
    impl Visit<'_> for Renames {
        fn visit_use_rename(&mut self, r: &syn::UseRename) {
            let (alias, original) = (r.rename.to_string(), r.ident.to_string());
            match self.0.get(&alias) {
                Some(o) if *o != original => self.1.push((
                    r.rename.span(),
                    format!(
                        "`{alias}` names `{o}` elsewhere in this kernels module and `{original}` here: the uniformity analysis knows names module-wide\n  help: import them under different names"
                    ),
                )),
                _ => {
                    self.0.insert(alias, original);
                }
            }
        }
    }
    let mut r = Renames(HashMap::new(), Vec::new());
    for item in items {
        r.visit_item(item);
    }
    (r.0, r.1)
}

fn collect_types<'a>(
    items: &'a [syn::Item],
    fields: &mut Vec<(String, Vec<&'a syn::Type>)>,
    jumping: &mut Vec<String>,
) {
    // Types declared inside functions (`type W = Warp;` in a body) count as the module's.
    struct Inner<'a, 'o> {
        fields: &'o mut Vec<(String, Vec<&'a syn::Type>)>,
        jumping: &'o mut Vec<String>,
    }
    impl<'a> Visit<'a> for Inner<'a, '_> {
        fn visit_block(&mut self, b: &'a syn::Block) {
            for stmt in &b.stmts {
                if let Stmt::Item(item) = stmt {
                    collect_types(std::slice::from_ref(item), self.fields, self.jumping);
                }
            }
            syn::visit::visit_block(self, b);
        }
        // (Items in blocks are collected above, once each: not again on the way down.)
        fn visit_item(&mut self, item: &'a syn::Item) {
            if let syn::Item::Fn(f) = item {
                self.visit_block(&f.block);
            } else if let syn::Item::Impl(i) = item {
                for it in &i.items {
                    if let syn::ImplItem::Fn(f) = it {
                        self.visit_block(&f.block);
                    }
                }
            }
        }
    }
    for item in items {
        if matches!(item, syn::Item::Fn(_) | syn::Item::Impl(_)) {
            Inner { fields: &mut *fields, jumping: &mut *jumping }.visit_item(item);
        }
    }
    for item in items {
        match item {
            syn::Item::Struct(s) => {
                fields.push((s.ident.to_string(), s.fields.iter().map(|f| &f.ty).collect()))
            }
            syn::Item::Enum(e) => fields.push((
                e.ident.to_string(),
                e.variants.iter().flat_map(|v| v.fields.iter().map(|f| &f.ty)).collect(),
            )),
            syn::Item::Union(u) => {
                fields.push((u.ident.to_string(), u.fields.named.iter().map(|f| &f.ty).collect()));
            }
            syn::Item::Type(t) => fields.push((t.ident.to_string(), vec![&*t.ty])),
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect_types(inner, fields, jumping);
                }
            }
            syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                if let Some(name) = &m.ident
                    && jumps(&m.mac.tokens)
                {
                    jumping.push(name.to_string());
                }
            }
            _ => {}
        }
    }
}

/// Whether tokens contain `return`, `break`, `continue` or `?`.
pub(super) fn jumps(tokens: &TokenStream) -> bool {
    tokens.clone().into_iter().any(|t| match t {
        TokenTree::Ident(i) => i == "return" || i == "break" || i == "continue",
        TokenTree::Punct(p) => p.as_char() == '?',
        TokenTree::Group(g) => jumps(&g.stream()),
        TokenTree::Literal(_) => false,
    })
}

fn collect_functions<'a>(items: &'a [syn::Item], types: &HashMap<String, u8>, out: &mut Vec<Function<'a>>) {
    for item in items {
        match item {
            syn::Item::Fn(f) => push_function(&f.sig, &f.block, 0, types, out),
            syn::Item::Impl(i) => {
                let self_caps = type_caps(&i.self_ty, types, 0);
                let first = out.len();
                let of_trait =
                    i.trait_.as_ref().map(|(path, _)| path.to_token_stream().to_string().replace(' ', ""));
                for it in &i.items {
                    if let syn::ImplItem::Fn(f) = it {
                        push_function(&f.sig, &f.block, self_caps, types, out);
                    }
                }
                // (The impl's own methods, not the functions declared inside them.)
                let methods: Vec<*const syn::Signature> = i
                    .items
                    .iter()
                    .filter_map(|it| match it {
                        syn::ImplItem::Fn(f) => Some(&f.sig as *const _),
                        _ => None,
                    })
                    .collect();
                for f in &mut out[first..] {
                    if methods.contains(&(f.sig as *const _)) {
                        f.self_ty = Some(&i.self_ty);
                        f.of_trait.clone_from(&of_trait);
                    }
                }
            }
            syn::Item::Trait(t) => {
                for it in &t.items {
                    if let syn::TraitItem::Fn(f) = it
                        && let Some(body) = &f.default
                    {
                        push_function(&f.sig, body, 0, types, out);
                    }
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect_functions(inner, types, out);
                }
            }
            _ => {}
        }
    }
}

/// A function and the functions declared inside its body.
fn push_function<'a>(
    sig: &'a syn::Signature,
    body: &'a syn::Block,
    self_caps: u8,
    types: &HashMap<String, u8>,
    out: &mut Vec<Function<'a>>,
) {
    out.push(Function { sig, body, self_caps, self_ty: None, of_trait: None });
    struct Nested<'a, 'o> {
        types: &'o HashMap<String, u8>,
        out: &'o mut Vec<Function<'a>>,
    }
    impl<'a> Visit<'a> for Nested<'a, '_> {
        fn visit_item(&mut self, item: &'a syn::Item) {
            collect_functions(std::slice::from_ref(item), self.types, self.out);
        }
    }
    let mut nested = Nested { types, out };
    for stmt in &body.stmts {
        nested.visit_stmt(stmt);
    }
}

/// What a value of type `ty` can do, from the names in it.
pub(super) fn type_caps(ty: &syn::Type, types: &HashMap<String, u8>, self_caps: u8) -> u8 {
    struct Names<'t> {
        types: &'t HashMap<String, u8>,
        self_caps: u8,
        caps: u8,
    }
    impl Visit<'_> for Names<'_> {
        fn visit_path_segment(&mut self, seg: &syn::PathSegment) {
            self.caps |= name_caps(&seg.ident.to_string(), self.types, self.self_caps);
            syn::visit::visit_path_segment(self, seg);
        }
    }
    let mut n = Names { types, self_caps, caps: 0 };
    n.visit_type(ty);
    n.caps
}

/// What a value of the type named `name` (one path segment) can do.
pub(super) fn name_caps(name: &str, types: &HashMap<String, u8>, self_caps: u8) -> u8 {
    match name {
        "Warp" => caps::WARP,
        "Block" | "BlockRead" => caps::BLOCK,
        "Shared" | "SharedArray" | "SharedAtomics" => caps::SHARED,
        "Region" | "Region2" | "Region3" | "GridStride" | "Chunks" | "PerBlock" | "Groups" | "Tiles"
        | "Scatter" | "Atomics" | "Sum" | "Min" | "Max" | "MinLoc" | "MaxLoc" => caps::PER_THREAD,
        "Self" => self_caps,
        _ => types.get(name).copied().unwrap_or(0),
    }
}
