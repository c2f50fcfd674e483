//! Keeps a kernels module self-contained: the device compile sees only the module, so it
//! may not reach items outside it.

use crate::signature::Errors;
use syn::visit::{self, Visit};

struct SelfContained<'e> {
    errors: &'e mut Errors,
    /// How many inline modules deep inside the kernels module the visitor is.
    depth: usize,
}

const OUTSIDE: &str =
    "a kernels module is compiled for the GPU on its own, so it cannot reach items outside it";

impl SelfContained<'_> {
    /// Checks a path by its leading segments: `super` is fine while it stays inside.
    fn check_segments<'a>(&mut self, mut idents: impl Iterator<Item = &'a syn::Ident>) {
        let mut supers = 0;
        for ident in idents.by_ref() {
            if ident != "super" {
                if supers == 0 {
                    self.check_first(ident);
                }
                return;
            }
            supers += 1;
            if supers > self.depth {
                self.check_first(ident);
                return;
            }
        }
    }

    fn check_first(&mut self, ident: &syn::Ident) {
        let name = ident.to_string();
        let message = match name.as_str() {
            "super" | "crate" => format!(
                "`{name}::` reaches outside the kernels module\n  \
                 note: {OUTSIDE}\n  \
                 help: move the item into the module (it stays usable from host code as `module::item`)"
            ),
            "std" | "alloc" => format!(
                "`{name}` is not available on the GPU: kernels modules are `no_std`\n  \
                 help: use `core::` (and `offload::prelude`) instead"
            ),
            _ => return,
        };
        self.errors.add(ident.span(), message);
    }
}

impl<'ast> Visit<'ast> for SelfContained<'_> {
    fn visit_path(&mut self, path: &'ast syn::Path) {
        self.check_segments(path.segments.iter().map(|s| &s.ident));
        visit::visit_path(self, path);
    }

    fn visit_use_tree(&mut self, tree: &'ast syn::UseTree) {
        let mut idents = Vec::new();
        let mut t = tree;
        loop {
            match t {
                syn::UseTree::Path(p) => {
                    idents.push(&p.ident);
                    t = &p.tree;
                }
                syn::UseTree::Name(n) => break idents.push(&n.ident),
                syn::UseTree::Rename(r) => break idents.push(&r.ident),
                syn::UseTree::Glob(_) => break,
                syn::UseTree::Group(g) => {
                    if idents.is_empty() {
                        g.items.iter().for_each(|t| self.visit_use_tree(t));
                        return;
                    }
                    break;
                }
            }
        }
        self.check_segments(idents.into_iter());
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        // Only the first segment of a `use` path can leave the module.
        self.visit_use_tree(&item.tree);
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        if m.content.is_none() {
            self.errors.add(
                m.ident.span(),
                "modules inside a kernels module must be written inline (`mod name { … }`): the device compile sees only this file's module",
            );
        }
        self.depth += 1;
        visit::visit_item_mod(self, m);
        self.depth -= 1;
    }

    fn visit_item_extern_crate(&mut self, item: &'ast syn::ItemExternCrate) {
        self.check_first(&item.ident);
    }
}

/// Reports every item of `items` that reaches outside the module.
pub fn self_contained(items: &[syn::Item], errors: &mut Errors) {
    let mut v = SelfContained { errors, depth: 0 };
    for item in items {
        v.visit_item(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    fn problems(items: Vec<syn::Item>) -> Vec<String> {
        let mut errors = Errors::default();
        self_contained(&items, &mut errors);
        errors.finish().err().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default()
    }

    #[test]
    fn outside_paths_are_rejected_everywhere() {
        let items: Vec<syn::Item> = vec![
            parse_quote! { use super::Config; },
            parse_quote! { use {crate::a, core::mem}; },
            parse_quote! { fn f() -> u32 { super::helper() + std::u32::MAX } },
            parse_quote! { mod inner; },
            parse_quote! { mod nested { fn g() { super::super::outside() } } },
        ];
        let p = problems(items);
        assert_eq!(p.len(), 6, "{p:#?}");
        assert!(p[0].contains("`super::` reaches outside"));
        assert!(p[3].contains("no_std"));
    }

    #[test]
    fn inside_paths_are_fine() {
        let items: Vec<syn::Item> = vec![
            parse_quote! { use offload::prelude::*; },
            parse_quote! { use self::helpers::*; },
            parse_quote! { mod helpers { use super::K; pub fn h(x: f32) -> f32 { core::f32::consts::PI * x * super::K } } },
        ];
        assert!(problems(items).is_empty());
    }
}
