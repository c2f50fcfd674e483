//! Keeps a kernels module self-contained: the device compile sees only the module, so it
//! may not reach items outside it.

use crate::signature::Errors;
use quote::ToTokens;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};

struct SelfContained<'e> {
    errors: &'e mut Errors,
    /// How many inline modules deep inside the kernels module the visitor is.
    depth: usize,
    /// The crates besides `core` and `offload` that the device compile links (`None`: not
    /// checked here), and every name the module itself defines or imports.
    crates: Option<&'e DeviceCrates>,
    own: &'e std::collections::HashSet<String>,
}

/// The crates a kernels module may use besides `core` and `offload`: its package's
/// `[package.metadata.offload] device-dependencies`, by crate name.
#[derive(Debug, Default)]
pub struct DeviceCrates {
    /// `num_traits` for `num-traits`.
    pub names: std::collections::BTreeSet<String>,
}

impl DeviceCrates {
    /// The device dependencies of the package being compiled, from its `Cargo.toml`
    /// (`CARGO_MANIFEST_DIR`); `None` when it cannot be read, and then nothing is checked
    /// here (the device compile still is).
    pub fn of_this_package() -> Option<DeviceCrates> {
        let dir = std::env::var_os("CARGO_MANIFEST_DIR")?;
        let text = std::fs::read_to_string(std::path::Path::new(&dir).join("Cargo.toml")).ok()?;
        Self::from_manifest(&text).ok()
    }

    /// The list in a manifest's text (an empty one when it has none).
    pub fn from_manifest(text: &str) -> Result<DeviceCrates, String> {
        let doc: toml::Table = text.parse().map_err(|e: toml::de::Error| e.to_string())?;
        let list = doc
            .get("package")
            .and_then(|p| p.get("metadata"))
            .and_then(|m| m.get("offload"))
            .and_then(|o| o.get("device-dependencies"));
        let mut names = std::collections::BTreeSet::new();
        if let Some(list) = list {
            let items = list.as_array().ok_or("device-dependencies is not a list")?;
            for item in items {
                let name = item.as_str().ok_or("device-dependencies holds a non-string")?;
                names.insert(name.replace('-', "_"));
            }
        }
        Ok(DeviceCrates { names })
    }
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

    /// The first segment of a `use` path, or an `extern crate`'s: a crate unless the module
    /// defines or imports the name itself.
    fn check_crate(&mut self, ident: &syn::Ident) {
        let name = ident.to_string();
        let Some(crates) = self.crates else { return };
        if matches!(name.as_str(), "core" | "offload" | "self" | "super" | "crate" | "std" | "alloc")
            || self.own.contains(&name)
            || crates.names.contains(&name)
        {
            return;
        }
        self.errors.add(
            ident.span(),
            format!(
                "`{name}` is not a device dependency of this package: the GPU build of a kernels module links `core`, `offload` and the crates its package lists for the device\n  \
                 help: add it to `Cargo.toml`: `[package.metadata.offload] device-dependencies = [\"{name}\"]` (dashes or underscores alike); it must build for `no_std` GPU targets"
            ),
        );
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
        if let Some(first) = idents.first() {
            self.check_crate(first);
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
        self.check_crate(&item.ident);
    }
}

/// Whether a `use` in `items` (at any depth) starts at a crate other than `core` and
/// `offload`: a name the module neither defines nor imports.
fn uses_other_crates(items: &[syn::Item], own: &std::collections::HashSet<String>) -> bool {
    struct Uses<'o>(&'o std::collections::HashSet<String>, bool);
    impl<'ast> Visit<'ast> for Uses<'_> {
        fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
            let mut tree = &u.tree;
            while let syn::UseTree::Group(g) = tree {
                match g.items.first() {
                    Some(t) => tree = t,
                    None => return,
                }
            }
            let first = match tree {
                syn::UseTree::Path(p) => &p.ident,
                syn::UseTree::Name(n) => &n.ident,
                syn::UseTree::Rename(r) => &r.ident,
                _ => return,
            };
            let name = first.to_string();
            if !matches!(name.as_str(), "core" | "offload" | "self" | "super" | "crate" | "std" | "alloc")
                && !self.0.contains(&name)
            {
                self.1 = true;
            }
        }
    }
    let mut v = Uses(own, false);
    for item in items {
        v.visit_item(item);
    }
    v.1
}

/// Every name an item of `items` (at any depth) defines or imports — items, functions and
/// methods, `use`d names: what the module's rules take as its own (a `Vec` of its own is fine)
/// and its `use`s may start from.
pub fn own_names(items: &[syn::Item]) -> std::collections::HashSet<String> {
    struct Names(std::collections::HashSet<String>);
    impl<'ast> Visit<'ast> for Names {
        fn visit_item(&mut self, i: &'ast syn::Item) {
            let ident = match i {
                syn::Item::Const(x) => Some(&x.ident),
                syn::Item::Enum(x) => Some(&x.ident),
                syn::Item::Fn(x) => Some(&x.sig.ident),
                syn::Item::Mod(x) => Some(&x.ident),
                syn::Item::Static(x) => Some(&x.ident),
                syn::Item::Struct(x) => Some(&x.ident),
                syn::Item::Trait(x) => Some(&x.ident),
                syn::Item::Type(x) => Some(&x.ident),
                syn::Item::Union(x) => Some(&x.ident),
                syn::Item::Macro(x) => x.ident.as_ref(),
                _ => None,
            };
            if let Some(ident) = ident {
                self.0.insert(ident.to_string());
            }
            visit::visit_item(self, i);
        }
        fn visit_signature(&mut self, s: &'ast syn::Signature) {
            self.0.insert(s.ident.to_string());
        }
        fn visit_use_name(&mut self, n: &'ast syn::UseName) {
            self.0.insert(n.ident.to_string());
        }
        fn visit_use_rename(&mut self, r: &'ast syn::UseRename) {
            self.0.insert(r.rename.to_string());
        }
    }
    let mut names = Names(Default::default());
    for item in items {
        names.visit_item(item);
    }
    names.0
}

/// Reports every item of `items` that reaches outside the module, and, when `crates` is
/// given, every crate a `use` names that the device compile does not link (`own`: the names
/// the module defines or imports, [`own_names`]).
pub fn self_contained(
    items: &[syn::Item],
    own: &std::collections::HashSet<String>,
    crates: Option<&DeviceCrates>,
    errors: &mut Errors,
) {
    let mut v = SelfContained { errors, depth: 0, crates, own };
    for item in items {
        v.visit_item(item);
    }
}

/// Names of the host's standard prelude and macros that need a heap (or an operating
/// system): they compile for the host and the CPU backend, and fail only in the device compile.
const HEAP_TYPES: &[&str] = &[
    "Vec",
    "Box",
    "String",
    "Rc",
    "Arc",
    "HashMap",
    "HashSet",
    "BTreeMap",
    "BTreeSet",
    "VecDeque",
    "BinaryHeap",
    "LinkedList",
    "ToString",
    "ToOwned",
    "Cow",
];
const HOST_MACROS: &[&str] =
    &["vec", "format", "println", "print", "eprintln", "eprint", "dbg", "thread_local"];
const HEAP_METHODS: &[&str] = &["to_string", "to_vec", "to_owned", "into_boxed_slice", "into_vec"];
/// Float methods of the host's standard library that `core` lacks: they compile for the host
/// and the CPU backend, and fail only in the device compile. Each with what to write instead.
const STD_FLOAT_METHODS: &[(&str, &str)] = &[
    ("sqrt", "math::sqrt(x)"),
    ("floor", "math::floor(x)"),
    ("ceil", "math::ceil(x)"),
    ("trunc", "math::trunc(x)"),
    ("round", "math::round(x)"),
    ("exp", "math::exp(x)"),
    ("exp2", "math::exp2(x)"),
    ("ln", "math::ln(x)"),
    ("log2", "math::log2(x)"),
    ("log10", "math::log10(x)"),
    ("sin", "math::sin(x)"),
    ("cos", "math::cos(x)"),
    ("tan", "math::tan(x)"),
    ("asin", "math::asin(x)"),
    ("acos", "math::acos(x)"),
    ("atan", "math::atan(x)"),
    ("atan2", "math::atan2(y, x)"),
    ("sinh", "math::sinh(x)"),
    ("cosh", "math::cosh(x)"),
    ("tanh", "math::tanh(x)"),
    ("cbrt", "math::cbrt(x)"),
    ("hypot", "math::hypot(x, y)"),
    ("mul_add", "math::fma(a, b, c)"),
    ("powf", "math::pow(x, e)"),
    ("powi", "math::pow(x, f64::from(n))"),
    ("sin_cos", "(math::sin(x), math::cos(x))"),
    ("exp_m1", "math::exp(x) - 1.0"),
    ("ln_1p", "math::ln(1.0 + x)"),
    ("log", "math::ln(x) / math::ln(base)"),
    ("fract", "x - math::trunc(x)"),
    ("round_ties_even", "math::round(x) (which rounds halves away from zero)"),
    ("asinh", "math::ln(x + math::sqrt(x * x + 1.0))"),
    ("acosh", "math::ln(x + math::sqrt(x * x - 1.0))"),
    ("atanh", "0.5 * math::ln((1.0 + x) / (1.0 - x))"),
];

/// The rules of a kernels module beyond its signatures, each reported at its token: no
/// `static` (it would be one object on the CPU backend and another in each device image), no
/// heap types or host macros, no `unsafe` unless the module opts in, and nothing from
/// `offload::__private`.
struct Rules<'e> {
    errors: &'e mut Errors,
    allow_unsafe: bool,
    /// Names the module defines itself (a `Vec` of its own is fine).
    own: std::collections::HashSet<String>,
}

const UNSAFE_HELP: &str = "help: kernels modules are safe Rust: the runtime's types make every access sound, and `unsafe` would let a kernel break that for every thread; if you must, opt in with `#[offload::kernels(allow_unsafe)]` (`cargo offload inspect` lists modules that do)";

impl Rules<'_> {
    fn deny_unsafe(&mut self, span: proc_macro2::Span, what: &str) {
        if !self.allow_unsafe {
            self.errors.add(span, format!("{what} in a kernels module\n  {UNSAFE_HELP}"));
        }
    }

    fn check_attrs(&mut self, attrs: &[syn::Attribute]) {
        for a in attrs {
            let path = a.path();
            let unsafe_attr = path.is_ident("unsafe")
                || ["no_mangle", "export_name", "link_section", "link_name", "naked", "used"]
                    .iter()
                    .any(|n| path.is_ident(n));
            if unsafe_attr {
                self.deny_unsafe(path.span(), &format!("`#[{}]`", path.to_token_stream()));
            }
        }
    }
}

impl<'ast> Visit<'ast> for Rules<'_> {
    fn visit_item_static(&mut self, s: &'ast syn::ItemStatic) {
        self.errors.add(
            s.static_token.span,
            "a `static` in a kernels module would be one object on the CPU backend and another in each GPU image\n  \
             help: use a `const` for a value, or pass it to the kernel as a parameter (an `Atomics` parameter for a counter)",
        );
        visit::visit_item_static(self, s);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if let Some(first) = p.segments.first() {
            let name = first.ident.to_string();
            if HEAP_TYPES.contains(&name.as_str()) && !self.own.contains(&name) {
                self.errors.add(
                    first.ident.span(),
                    format!(
                        "`{name}` needs a heap, which kernels do not have: it would build for the host and fail in the GPU compile\n  \
                         help: use arrays, slices (`&[T]` parameters) and `Region`s; results go to kernel parameters"
                    ),
                );
            }
        }
        if p.segments.iter().any(|s| s.ident == "__private") {
            self.errors.add(
                p.span(),
                "`offload::__private` is for the code `#[offload::kernels]` generates, not for kernels",
            );
        }
        visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        if let Some(last) = m.path.segments.last() {
            let name = last.ident.to_string();
            // `offload::println!` and `offload::print!` are the kernels' own.
            let offloads = m.path.segments.len() == 2 && m.path.segments[0].ident == "offload";
            if HOST_MACROS.contains(&name.as_str()) && !self.own.contains(&name) && !offloads {
                let help = if matches!(name.as_str(), "println" | "print" | "eprintln" | "eprint" | "dbg") {
                    "help: `offload::println!` prints from a kernel (each call's text whole, written at the next wait)"
                } else {
                    "help: a kernel's results go to its parameters; `core::write!` into a fixed buffer formats without a heap"
                };
                self.errors.add(
                    last.ident.span(),
                    format!(
                        "`{name}!` needs the host's standard library (a heap, or standard output), which kernels do not have\n  {help}"
                    ),
                );
            }
        }
        visit::visit_macro(self, m);
    }

    fn visit_expr_method_call(&mut self, m: &'ast syn::ExprMethodCall) {
        let name = m.method.to_string();
        if HEAP_METHODS.contains(&name.as_str()) && !self.own.contains(&name) {
            self.errors.add(
                m.method.span(),
                format!("`.{name}()` allocates on the heap, which kernels do not have"),
            );
        }
        if let Some((_, instead)) = STD_FLOAT_METHODS.iter().find(|(n, _)| *n == name)
            && !self.own.contains(&name)
        {
            self.errors.add(
                m.method.span(),
                format!(
                    "`.{name}()` is a float method of the host's standard library, which the GPU does not have \
                     (kernels are `no_std`): this would build for the host and the CPU backend and fail in the device compile\n  \
                     help: write `{instead}` (`offload::math`, the same result on every backend)"
                ),
            );
        }
        visit::visit_expr_method_call(self, m);
    }

    fn visit_expr_unsafe(&mut self, u: &'ast syn::ExprUnsafe) {
        self.deny_unsafe(u.unsafe_token.span, "an `unsafe` block");
        visit::visit_expr_unsafe(self, u);
    }

    fn visit_signature(&mut self, s: &'ast syn::Signature) {
        if let syn::Safety::Unsafe(t) = &s.safety {
            self.deny_unsafe(t.span, "an `unsafe fn`");
        }
        visit::visit_signature(self, s);
    }

    fn visit_item_impl(&mut self, i: &'ast syn::ItemImpl) {
        if let Some(t) = &i.unsafety {
            self.deny_unsafe(t.span, "an `unsafe impl`");
        }
        visit::visit_item_impl(self, i);
    }

    fn visit_item_trait(&mut self, t: &'ast syn::ItemTrait) {
        if let Some(u) = &t.unsafety {
            self.deny_unsafe(u.span, "an `unsafe trait`");
        }
        visit::visit_item_trait(self, t);
    }

    fn visit_item_foreign_mod(&mut self, f: &'ast syn::ItemForeignMod) {
        self.deny_unsafe(f.abi.extern_token.span, "an `extern` block");
        visit::visit_item_foreign_mod(self, f);
    }

    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        self.check_attrs(std::slice::from_ref(a));
    }
}

/// Checks the rules of a kernels module's `items` (see [`Rules`]).
pub fn rules(
    items: &[syn::Item],
    own: &std::collections::HashSet<String>,
    allow_unsafe: bool,
    errors: &mut Errors,
) {
    let mut own = own.clone();
    // A module that imports from another crate (a device dependency) may call float methods
    // of that crate's traits (`num_traits::Float::sqrt`): the device compile decides those.
    if uses_other_crates(items, &own) {
        own.extend(STD_FLOAT_METHODS.iter().map(|(n, _)| (*n).to_owned()));
    }
    let mut r = Rules { errors, allow_unsafe, own };
    for item in items {
        r.visit_item(item);
    }
}

/// Whether the module prints from kernels: calls `println!` or `print!` (`std`'s are errors of
/// [`rules`], so these are `offload`'s).
pub fn prints(items: &[syn::Item]) -> bool {
    struct Prints(bool);
    impl Visit<'_> for Prints {
        fn visit_macro(&mut self, m: &syn::Macro) {
            if m.path.segments.last().is_some_and(|s| s.ident == "println" || s.ident == "print") {
                self.0 = true;
            }
        }
    }
    let mut p = Prints(false);
    for item in items {
        p.visit_item(item);
    }
    p.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use syn::parse_quote;

    #[test]
    fn a_module_that_calls_println_prints() {
        let printing: Vec<syn::Item> = vec![
            parse_quote! { pub fn k(x: &[f32]) { if x.len() > 3 { offload::println!("x = {}", x[0]); } } },
        ];
        let quiet: Vec<syn::Item> = vec![parse_quote! { pub fn k(x: &[f32]) { let _ = x; } }];
        assert!(prints(&printing));
        assert!(!prints(&quiet));
    }

    fn crate_problems(items: Vec<syn::Item>, manifest: &str) -> Vec<String> {
        let crates = DeviceCrates::from_manifest(manifest).expect("a manifest");
        let mut errors = Errors::default();
        self_contained(&items, &own_names(&items), Some(&crates), &mut errors);
        errors.finish().err().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default()
    }

    #[test]
    fn crates_a_use_names_must_be_device_dependencies() {
        let manifest = "[package]\nname = \"p\"\n[package.metadata.offload]\ndevice-dependencies = [\"num-traits\", \"my_math\"]\n";
        let ok = crate_problems(
            vec![
                parse_quote! { use num_traits::Float; },
                parse_quote! { use my_math::{lerp, clamp as c}; },
                parse_quote! { use ::core::f32::consts::PI; },
                parse_quote! { mod helpers { pub fn h() {} } },
                parse_quote! { use helpers::h; },
                parse_quote! { enum E { A } },
                parse_quote! { use E::A; },
                parse_quote! { use offload::prelude::*; },
            ],
            manifest,
        );
        assert!(ok.is_empty(), "{ok:?}");
        let bad = crate_problems(
            vec![parse_quote! { use half::f16; }, parse_quote! { extern crate glam; }],
            manifest,
        );
        assert_eq!(bad.len(), 2, "{bad:?}");
        assert!(
            bad[0].contains("`half` is not a device dependency")
                && bad[0].contains("device-dependencies = [\"half\"]")
        );
        assert!(bad[1].contains("`glam`"));
        assert!(
            DeviceCrates::from_manifest("[package.metadata.offload]\ndevice-dependencies = \"x\"").is_err()
        );
        assert!(DeviceCrates::from_manifest("[package]\nname = \"p\"").expect("no list").names.is_empty());
    }

    fn problems(items: Vec<syn::Item>) -> Vec<String> {
        let mut errors = Errors::default();
        self_contained(&items, &own_names(&items), None, &mut errors);
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

    fn rule_problems(items: Vec<syn::Item>, allow_unsafe: bool) -> Vec<String> {
        let mut errors = Errors::default();
        rules(&items, &own_names(&items), allow_unsafe, &mut errors);
        errors.finish().err().map(|e| e.into_iter().map(|e| e.to_string()).collect()).unwrap_or_default()
    }

    #[test]
    fn statics_heap_types_host_macros_and_private_paths_are_rejected() {
        let items: Vec<syn::Item> = vec![
            parse_quote! { static COUNTER: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(0); },
            parse_quote! { fn f(x: &[u32]) -> u32 { let v: Vec<u32> = x.to_vec(); println!("{}", v.len()); 0 } },
            parse_quote! { fn g() { let _ = offload::__private::trap(); } },
        ];
        let p = rule_problems(items, false);
        assert_eq!(p.len(), 5, "{p:#?}");
        assert!(p[0].contains("`static`") && p[0].contains("`const`"), "{}", p[0]);
        assert!(p[1].contains("`Vec` needs a heap"), "{}", p[1]);
        assert!(p[2].contains("`.to_vec()`"), "{}", p[2]);
        assert!(p[3].contains("`println!`") && p[3].contains("offload::println!"), "{}", p[3]);
        assert!(p[4].contains("__private"), "{}", p[4]);
    }

    #[test]
    fn the_kernels_own_print_macros_are_accepted() {
        let items: Vec<syn::Item> = vec![parse_quote! {
            fn f(x: u32) { offload::println!("x = {x}"); offload::print!("{}", x); }
        }];
        assert!(rule_problems(items, false).is_empty());
    }

    #[test]
    fn unsafe_needs_the_opt_in() {
        let items: Vec<syn::Item> = vec![
            parse_quote! { unsafe fn raw(p: *const u32) -> u32 { unsafe { *p } } },
            parse_quote! { #[unsafe(no_mangle)] pub fn exported() {} },
            parse_quote! { unsafe impl Send for S {} },
            parse_quote! { struct S; },
        ];
        let p = rule_problems(items.clone(), false);
        assert_eq!(p.len(), 4, "{p:#?}");
        assert!(p.iter().all(|m| m.contains("allow_unsafe")), "{p:#?}");
        assert!(rule_problems(items, true).is_empty());
    }

    #[test]
    fn names_the_module_defines_are_its_own() {
        let items: Vec<syn::Item> = vec![
            parse_quote! { struct Vec { x: [f32; 3] } },
            parse_quote! { fn to_vec(v: &Vec) -> Vec { Vec { x: v.x } } },
            parse_quote! { fn h(v: &Vec) -> f32 { let w = to_vec(v); core::write!(Sink, "{}", 1).ok(); w.x[0] } },
        ];
        assert!(rule_problems(items, false).is_empty());
    }
}
