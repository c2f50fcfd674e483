//! Panic sites: where each trap of a device module comes from, and one trap path per function
//! that leaves the site's number for the host before it traps.
//!
//! The device crate is built with `panic = "immediate-abort"`: a failed bounds check, an
//! `unwrap` on `None`, an explicit `panic!` are each a block of `call @llvm.trap();
//! unreachable`, with no message and no call into `core::panicking` (whose arguments cost
//! registers on every path). It is also built with line tables, so each trap still carries its
//! source location, inlined frames included: the innermost frame names the panic
//! (`panic_bounds_check`, `unwrap_failed`, …), an outer one is the user's line.
//!
//! [`number_traps`] gives every trap a site number (from 1), rewrites each trap block into
//! `store i32 SITE, ptr %site; br label %__offload_trap`, and adds one block per function that
//! calls the runtime's [`RECORD_FN`] with the stored number (which records it, with the
//! block and thread, and traps). `opt` turns the stores into a `phi` and sinks them into the
//! one block, so the checks in front of a failure path still fold into one comparison and one
//! branch (as the old "one trap block per function" rewrite made them); the site numbers only
//! exist on the path that fails. The debug information is stripped afterwards (`ptxas` refuses
//! optimised code with debug information); the sites go to the image's container
//! ([`offload_wire::images::TrapSite`]).

use offload_wire::images::trap::{ANY_SITE_OF_FUNCTION, RECORD_FN, SITES_ENV};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Whether and how device panics record their place ([`SITES_ENV`]'s values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PanicSites {
    /// No record: each function's traps merged into one trap ([`merge_traps`]), as before
    /// panic sites; the device crate is built without line tables.
    Off,
    /// One failure path per function, recording the function's sites.
    Kernel,
    /// A failure path per source line, recording the exact site.
    Line,
}

impl PanicSites {
    /// The mode `OFFLOAD_PANIC_SITES` asks for (unset: [`PanicSites::Off`]).
    pub fn from_env() -> anyhow::Result<PanicSites> {
        match std::env::var(SITES_ENV).as_deref() {
            Err(_) | Ok("" | "off") => Ok(PanicSites::Off),
            Ok("kernel") => Ok(PanicSites::Kernel),
            Ok("line") => Ok(PanicSites::Line),
            Ok(other) => anyhow::bail!("{SITES_ENV}={other:?}: use `off` (the default), `kernel` or `line`"),
        }
    }

    /// The mode's name, as the variable spells it.
    pub fn name(self) -> &'static str {
        match self {
            PanicSites::Off => "off",
            PanicSites::Kernel => "kernel",
            PanicSites::Line => "line",
        }
    }
}

/// A panic site as the linker finds it (the device pass maps the device crate's module files
/// back to the user's).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// The function the trap is in.
    pub function: String,
    /// The source file: relative to `directory` unless absolute.
    pub file: String,
    /// The compilation directory of that file.
    pub directory: String,
    pub line: u32,
    pub column: u32,
    /// What failed ("index out of bounds", "explicit panic", …).
    pub kind: String,
}

/// Numbers the traps of `ir` (see the module documentation), or, where the module lacks the
/// runtime's record function (a runtime without panic sites), sends each function's traps to
/// its first trap block as before. `amd` selects AMD's private address space for the site
/// variable; `per_line` a failure path per source line (else one per function, which records
/// "any site of this function": the checks fold exactly as without sites).
pub fn number_traps(ir: &str, amd: bool, per_line: bool) -> (String, Vec<Site>) {
    if !defines(ir, RECORD_FN) {
        return (merge_traps(ir), Vec::new());
    }
    let meta = Metadata::parse(ir);
    let mut sites = Vec::new();
    let out = rewrite_functions(ir, |name, body, out| {
        rewrite_function(name, body, &meta, Layout { amd, per_line }, &mut sites, out)
    });
    (out, sites)
}

/// Makes every branch to a trap in a function go to its first trap block, so that `opt` folds
/// the bounds checks in front of one failure path into one condition and one branch: what the
/// device linker did before panic sites, and still does for a runtime without
/// [`RECORD_FN`].
///
/// A failed bounds check is a block of `call @llvm.trap(); unreachable`, one per check, and
/// LLVM does not merge them (a trap's `cold noreturn` call keeps its own block). So `c[i] =
/// a[i] + b[i]` branched twice, once per input; and on NVIDIA `ptxas` then kept the global
/// memory descriptor in ordinary registers and copied it into uniform ones before each access
/// (`R2UR`: ADD 6 of them, VOL3D 46), where the CUDA baselines have none. Blocks that only trap
/// have no successors, so no `phi` names them and redirecting the branches is all it takes.
pub fn merge_traps(ir: &str) -> String {
    rewrite_functions(ir, |_, body, out| {
        let traps = trap_blocks(body);
        let labels: Vec<&str> = traps.iter().filter_map(|t| label_of(body[t.0])).collect();
        let redirect: HashMap<&str, &str> = labels
            .split_first()
            .map(|(first, rest)| rest.iter().map(|l| (*l, *first)).collect())
            .unwrap_or_default();
        body.iter().for_each(|l| out.push_str(&redirected(l, &redirect)));
    })
}

/// `ir` with each function body (the lines between `define … {` and `}`) replaced by what
/// `rewrite(name, body, out)` writes.
fn rewrite_functions(ir: &str, mut rewrite: impl FnMut(&str, &[&str], &mut String)) -> String {
    let mut out = String::with_capacity(ir.len() + ir.len() / 16);
    let mut body: Vec<&str> = Vec::new();
    let mut function: Option<&str> = None;
    for line in ir.split_inclusive('\n') {
        if let Some(name) = function {
            if line.starts_with('}') {
                rewrite(name, &body, &mut out);
                body.clear();
                function = None;
                out.push_str(line);
            } else {
                body.push(line);
            }
            continue;
        }
        if line.starts_with("define ") && line.trim_end().ends_with('{') {
            function = Some(function_name(line).unwrap_or_default());
        }
        out.push_str(line);
    }
    out
}

/// The trap blocks of a function body: (label line, end, the trap's `!dbg`) of each block that
/// holds only `call void @llvm.trap()` and `unreachable` (debug records, comments and blank
/// lines aside).
fn trap_blocks<'b>(body: &[&'b str]) -> Vec<(usize, usize, Option<&'b str>)> {
    let mut traps = Vec::new();
    let mut i = 0;
    while i < body.len() {
        if label_of(body[i]).is_none() {
            i += 1;
            continue;
        }
        let start = i;
        let mut code = Vec::new();
        i += 1;
        while i < body.len() && label_of(body[i]).is_none() {
            let t = body[i].trim();
            if !(t.is_empty() || t.starts_with(';') || t.starts_with("#dbg_")) {
                code.push(t);
            }
            i += 1;
        }
        let is_trap = |t: &str| {
            t.trim_start_matches("tail ").trim_start_matches("notail ").starts_with("call void @llvm.trap()")
        };
        if let [call, end] = code[..]
            && is_trap(call)
            && end.starts_with("unreachable")
        {
            traps.push((start, i, dbg_of(call)));
        }
    }
    traps
}

/// Whether `ir` defines function `name`.
fn defines(ir: &str, name: &str) -> bool {
    ir.lines().any(|l| l.starts_with("define ") && function_name(l) == Some(name))
}

/// The name in a `define … @name(` line (unquoted).
fn function_name(line: &str) -> Option<&str> {
    let at = line.find(" @")? + 2;
    let rest = &line[at..];
    if let Some(quoted) = rest.strip_prefix('"') {
        return quoted.find('"').map(|q| &quoted[..q]);
    }
    rest.find('(').map(|p| &rest[..p])
}

/// A block's label, when `line` starts one.
fn label_of(line: &str) -> Option<&str> {
    let first = line.chars().next()?;
    if first.is_whitespace() || first == ';' {
        return None;
    }
    line.split(';').next().unwrap_or(line).trim_end().strip_suffix(':')
}

/// The `!dbg !N` attachment of an instruction line.
fn dbg_of(line: &str) -> Option<&str> {
    let at = line.find("!dbg !")? + "!dbg ".len();
    let rest = &line[at..];
    let end = rest[1..].find(|c: char| !c.is_ascii_digit()).map_or(rest.len(), |e| e + 1);
    Some(&rest[..end])
}

/// How [`rewrite_function`] lays out the failure paths.
#[derive(Clone, Copy)]
struct Layout {
    /// AMD's private address space for the site variable.
    amd: bool,
    /// A failure path per source line (else one per function).
    per_line: bool,
}

fn rewrite_function(
    name: &str,
    body: &[&str],
    meta: &Metadata<'_>,
    layout: Layout,
    sites: &mut Vec<Site>,
    out: &mut String,
) {
    // The record function's own trap stays a trap.
    if name == RECORD_FN {
        body.iter().for_each(|l| out.push_str(l));
        return;
    }
    let traps = trap_blocks(body);
    if traps.is_empty() {
        body.iter().for_each(|l| out.push_str(l));
        return;
    }
    let (alloca, ptr) = if layout.amd {
        ("alloca i32, align 4, addrspace(5)", "ptr addrspace(5)")
    } else {
        ("alloca i32, align 4", "ptr")
    };
    // Each trap's site number. Traps of one line (and kind) share a number, and the branches to
    // all but the first of them go to the first: `a[i] + b[i] + c[i]` keeps one failure path
    // and one folded check (the place names the line's first check's column).
    let mut numbers = Vec::with_capacity(traps.len());
    let mut first_of: HashMap<usize, &str> = HashMap::new();
    let mut redirect: HashMap<&str, &str> = HashMap::new();
    for &(start, _, dbg) in &traps {
        let number = match dbg.and_then(|d| meta.site(name, d)) {
            Some(site) => match sites.iter().position(|s: &Site| s.same_line(&site)) {
                Some(i) => i + 1,
                None => {
                    sites.push(site);
                    sites.len()
                }
            },
            None => 0,
        };
        let label = label_of(body[start]).expect("a trap block starts with its label");
        match first_of.get(&number) {
            Some(first) => {
                redirect.insert(label, first);
            }
            None => {
                first_of.insert(number, label);
            }
        }
        numbers.push(number);
    }
    if !layout.per_line {
        // One failure path for the whole function, as without sites: every branch to a trap goes
        // to the first, which records the function (any of its sites) rather than one site.
        let any = numbers.iter().copied().find(|&n| n != 0).map_or(0, |n| n | ANY_SITE_OF_FUNCTION as usize);
        let first = label_of(body[traps[0].0]).expect("a trap block starts with its label");
        for &(start, _, _) in &traps[1..] {
            redirect.insert(label_of(body[start]).expect("a trap block starts with its label"), first);
        }
        numbers.iter_mut().for_each(|n| *n = any);
    }
    let mut at = 0;
    // The site variable at the top of the entry block (after its label, if it has one).
    if let Some(first) = body.first()
        && label_of(first).is_some()
    {
        out.push_str(first);
        at = 1;
    }
    out.push_str(&format!("  %__offload_site = {alloca}\n"));
    for (&(start, end, _), number) in traps.iter().zip(numbers) {
        body[at..start].iter().for_each(|l| out.push_str(&redirected(l, &redirect)));
        out.push_str(body[start]);
        // (As a signed 32-bit constant: the flag is the sign bit.)
        let number = number as u32 as i32;
        out.push_str(&format!(
            "  store i32 {number}, {ptr} %__offload_site, align 4\n  br label %__offload_trap\n"
        ));
        at = end;
    }
    body[at..].iter().for_each(|l| out.push_str(&redirected(l, &redirect)));
    // (A call to a function with debug information needs a location in a function with it:
    // any of this function's trap locations will do, all are stripped before `llc`.)
    let dbg = traps.iter().find_map(|t| t.2).map(|d| format!(", !dbg {d}")).unwrap_or_default();
    out.push_str(&format!(
        "__offload_trap:\n  %__offload_site.v = load i32, {ptr} %__offload_site, align 4\n  \
         call void @{RECORD_FN}(i32 %__offload_site.v){dbg}\n  unreachable\n"
    ));
}

/// `line` with each `label %NAME` operand that `redirect` maps (NAME plain or quoted) naming
/// its target instead.
fn redirected<'l>(line: &'l str, redirect: &HashMap<&str, &str>) -> std::borrow::Cow<'l, str> {
    if redirect.is_empty() || label_of(line).is_some() || !line.contains("label %") {
        return line.into();
    }
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.find("label %") {
        let (before, after) = rest.split_at(at + "label %".len());
        out.push_str(before);
        let len = if let Some(quoted) = after.strip_prefix('"') {
            quoted.find('"').map_or(after.len(), |q| q + 2)
        } else {
            after.find(|c: char| !(c.is_ascii_alphanumeric() || "._-$".contains(c))).unwrap_or(after.len())
        };
        let (name, tail) = after.split_at(len);
        out.push_str(redirect.get(name).copied().unwrap_or(name));
        rest = tail;
    }
    out.push_str(rest);
    out.into()
}

impl Site {
    /// Whether `other` is a panic of the same kind on the same line of the same function.
    fn same_line(&self, other: &Site) -> bool {
        (&self.function, &self.file, &self.directory, self.line, &self.kind)
            == (&other.function, &other.file, &other.directory, other.line, &other.kind)
    }
}

/// The module's debug metadata: `!N = …` lines by number.
struct Metadata<'a> {
    nodes: HashMap<&'a str, &'a str>,
}

/// One frame of a trap's location: where, and in which function.
struct Frame<'a> {
    line: u32,
    column: u32,
    file: &'a str,
    directory: &'a str,
    function: &'a str,
    linkage: &'a str,
}

impl<'a> Metadata<'a> {
    fn parse(ir: &'a str) -> Metadata<'a> {
        let nodes = ir
            .lines()
            .filter(|l| l.starts_with('!'))
            .filter_map(|l| l.split_once(" = "))
            .map(|(k, v)| (k, v.trim_start_matches("distinct ")))
            .collect();
        Metadata { nodes }
    }

    /// Field `name` of node text `node` (`name: value`, up to the next `,` or `)`; a quoted
    /// value unquoted).
    fn field(node: &'a str, name: &str) -> Option<&'a str> {
        let key = format!("{name}: ");
        let mut search = 0;
        let at = loop {
            let at = search + node[search..].find(&key)?;
            // A whole field name: preceded by `(` or a space.
            if at == 0 || matches!(node.as_bytes()[at - 1], b'(' | b' ') {
                break at + key.len();
            }
            search = at + key.len();
        };
        let rest = &node[at..];
        if let Some(quoted) = rest.strip_prefix('"') {
            return quoted.find('"').map(|q| &quoted[..q]);
        }
        rest.find([',', ')']).map(|e| &rest[..e]).or(Some(rest))
    }

    /// The frames of location `loc`, innermost first.
    fn frames(&self, loc: &'a str) -> Vec<Frame<'a>> {
        let mut frames = Vec::new();
        let mut next = Some(loc);
        while let Some(id) = next.take() {
            let Some(node) = self.nodes.get(id).filter(|n| n.starts_with("!DILocation(")) else { break };
            let line = Self::field(node, "line").and_then(|l| l.parse().ok()).unwrap_or(0);
            let column = Self::field(node, "column").and_then(|c| c.parse().ok()).unwrap_or(0);
            // The scope's chain up to its subprogram; the file is the innermost scope's.
            let mut scope = Self::field(node, "scope").and_then(|s| self.nodes.get(s).copied());
            let file = scope.and_then(|s| Self::field(s, "file")).and_then(|f| self.nodes.get(f).copied());
            let mut guard = 0;
            while let Some(s) = scope.filter(|s| !s.starts_with("!DISubprogram(")) {
                scope = Self::field(s, "scope").and_then(|p| self.nodes.get(p).copied());
                guard += 1;
                if guard > 10_000 {
                    scope = None;
                }
            }
            frames.push(Frame {
                line,
                column,
                file: file.and_then(|f| Self::field(f, "filename")).unwrap_or(""),
                directory: file.and_then(|f| Self::field(f, "directory")).unwrap_or(""),
                function: scope.and_then(|s| Self::field(s, "name")).unwrap_or(""),
                linkage: scope.and_then(|s| Self::field(s, "linkageName")).unwrap_or(""),
            });
            next = Self::field(node, "inlinedAt");
            if frames.len() > 1_000 {
                break;
            }
        }
        frames
    }

    /// The site of a trap in `function` at location `loc`: the user's frame (the innermost in a
    /// kernels module of the device crate, else the innermost outside Rust's own library) and
    /// the panic's kind from the innermost frames.
    fn site(&self, function: &str, loc: &'a str) -> Option<Site> {
        let frames = self.frames(loc);
        let in_module = |f: &Frame<'_>| module_file(f.file);
        let in_std = |f: &Frame<'_>| {
            let path = format!("{}/{}", f.directory, f.file);
            path.contains("/library/core/") || path.contains("/library/alloc/") || path.starts_with("/rustc/")
        };
        let at =
            frames.iter().position(in_module).or_else(|| frames.iter().position(|f| !in_std(f))).unwrap_or(0);
        let user = frames.get(at)?;
        // The panic's kind: of the frames inside the user's, the outermost that names one (an
        // `unwrap` on `None` is `unwrap_failed` calling `panic_fmt`: the unwrap, not the
        // explicit panic it is made of); else the innermost anywhere.
        let kind = frames[..at]
            .iter()
            .rev()
            .find_map(|f| panic_kind(f.function, f.linkage))
            .or_else(|| frames.iter().find_map(|f| panic_kind(f.function, f.linkage)));
        Some(Site {
            function: function.to_owned(),
            file: user.file.to_owned(),
            directory: user.directory.to_owned(),
            line: user.line,
            column: user.column,
            kind: kind.unwrap_or("panic").to_owned(),
        })
    }
}

/// Whether `file` is one of the device crate's kernels-module files (`src/m<N>.rs`).
pub fn module_file(file: &str) -> bool {
    file.strip_prefix("src/m")
        .and_then(|f| f.strip_suffix(".rs"))
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// What a panic in `function` (a frame's subprogram name; `linkage` its mangled name) is, for
/// `core`'s panic entry points.
fn panic_kind(function: &str, linkage: &str) -> Option<&'static str> {
    Some(match function {
        "panic_bounds_check" => "index out of bounds",
        "slice_start_index_len_fail"
        | "slice_end_index_len_fail"
        | "slice_index_order_fail"
        | "slice_index_fail" => "slice range out of bounds",
        "unwrap_failed" if linkage.contains("6option") => "called `Option::unwrap()` on a `None` value",
        "unwrap_failed" => "called `Result::unwrap()` on an `Err` value",
        "expect_failed" => "`Option::expect` failed",
        "assert_failed" | "assert_failed_inner" => "assertion failed",
        "unreachable_display" => "entered unreachable code",
        "panic_fmt" | "panic" | "panic_str" | "panic_display" | "panic_explicit" | "begin_panic" => {
            "explicit panic"
        }
        _ => return overflow_kind(function.strip_prefix("panic_const_")?),
    })
}

/// `core`'s `panic_const_*` arithmetic panics.
fn overflow_kind(what: &str) -> Option<&'static str> {
    Some(match what {
        "add_overflow" => "attempt to add with overflow",
        "sub_overflow" => "attempt to subtract with overflow",
        "mul_overflow" => "attempt to multiply with overflow",
        "div_overflow" => "attempt to divide with overflow",
        "rem_overflow" => "attempt to calculate the remainder with overflow",
        "neg_overflow" => "attempt to negate with overflow",
        "shl_overflow" => "attempt to shift left with overflow",
        "shr_overflow" => "attempt to shift right with overflow",
        "div_by_zero" => "attempt to divide by zero",
        "rem_by_zero" => "attempt to calculate the remainder with a divisor of zero",
        _ => "arithmetic panic",
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const IR: &str = r#"define ptx_kernel void @k(i64 %i, i64 %n) #0 !dbg !14 {
  %c = icmp ult i64 %i, %n
  br i1 %c, label %ok, label %56, !dbg !220
56:                                               ; preds = %0
  tail call void @llvm.trap(), !dbg !225
  unreachable, !dbg !225
ok:
  %o = icmp ult i64 %i, 7
  br i1 %o, label %done, label %57
57:
  tail call void @llvm.trap()
  unreachable
done:
  ret void
}
define internal void @__offload_trap_at(i32 %0) #1 !dbg !300 {
  br label %2
2:
  tail call void @llvm.trap()
  unreachable
}
!14 = distinct !DISubprogram(name: "__offload_m_k", scope: !16, file: !15, line: 9, unit: !1)
!15 = !DIFile(filename: "src/m0.rs", directory: "/t/device/crate")
!214 = distinct !DILexicalBlock(scope: !216, file: !15, line: 17, column: 36)
!216 = distinct !DISubprogram(name: "saxpy", linkageName: "_RNv3gpu5saxpy", scope: !16, file: !15, line: 15, unit: !1)
!225 = !DILocation(line: 268, column: 9, scope: !226, inlinedAt: !229)
!226 = distinct !DISubprogram(name: "panic_bounds_check", linkageName: "_RNvNtCs_4core9panicking18panic_bounds_check", scope: !228, file: !227, line: 266, unit: !1)
!227 = !DIFile(filename: "src/panicking.rs", directory: "/toolchain/lib/rustlib/src/rust/library/core")
!229 = distinct !DILocation(line: 18, column: 24, scope: !214, inlinedAt: !230)
!230 = !DILocation(line: 9, column: 1, scope: !14)
!300 = distinct !DISubprogram(name: "__offload_trap_at", scope: !16, file: !15, line: 1, unit: !1)
"#;

    #[test]
    fn each_trap_gets_a_site_from_the_users_frame_and_one_recording_path() {
        let (out, sites) = number_traps(IR, false, true);
        assert_eq!(
            sites,
            [Site {
                function: "k".into(),
                file: "src/m0.rs".into(),
                directory: "/t/device/crate".into(),
                line: 18,
                column: 24,
                kind: "index out of bounds".into(),
            }]
        );
        let k = &out[..out.find("define internal").unwrap()];
        assert!(k.contains("  %__offload_site = alloca i32, align 4\n  %c = icmp"), "{k}");
        assert!(k.contains("56:  ") || k.contains("; preds = %0\n  store i32 1, ptr %__offload_site"), "{k}");
        assert!(
            k.contains("57:\n  store i32 0, ptr %__offload_site, align 4\n  br label %__offload_trap"),
            "{k}"
        );
        assert!(!k.contains("@llvm.trap"), "{k}");
        assert!(
            k.contains("call void @__offload_trap_at(i32 %__offload_site.v), !dbg !225\n  unreachable\n}"),
            "{k}"
        );
        // The record function keeps its own trap.
        assert!(out[out.find("define internal").unwrap()..].contains("tail call void @llvm.trap()"));
    }

    /// An `unwrap` on `None` under immediate-abort: `panic_fmt` inlined into `unwrap_failed`
    /// inlined into the user's line. The kind is the unwrap's, not the explicit panic's.
    #[test]
    fn the_kind_is_the_outermost_named_panic_inside_the_users_frame() {
        let ir = IR
            .replace(
                "!225 = !DILocation(line: 268, column: 9, scope: !226, inlinedAt: !229)",
                "!225 = !DILocation(line: 80, column: 5, scope: !231, inlinedAt: !232)\n\
                 !231 = distinct !DISubprogram(name: \"panic_fmt\", linkageName: \"_RNvNtCs_4core9panicking9panic_fmt\", scope: !228, file: !227, line: 70, unit: !1)\n\
                 !232 = distinct !DILocation(line: 2100, column: 5, scope: !233, inlinedAt: !229)\n\
                 !233 = distinct !DISubprogram(name: \"unwrap_failed\", linkageName: \"_RNvNtCs_4core6option13unwrap_failed\", scope: !228, file: !227, line: 2098, unit: !1)",
            );
        let (_, sites) = number_traps(&ir, false, true);
        assert_eq!(sites.len(), 1);
        assert_eq!((sites[0].line, sites[0].column), (18, 24));
        assert_eq!(sites[0].kind, "called `Option::unwrap()` on a `None` value");
    }

    #[test]
    fn by_default_a_function_keeps_one_failure_path_that_names_it() {
        let (out, sites) = number_traps(IR, false, false);
        assert_eq!(sites.len(), 1);
        let k = &out[..out.find("define internal").unwrap()];
        // Both branches go to the first trap block, which records "any site of site 1's
        // function"; the second trap block is left without branches to it.
        let any = (1 | ANY_SITE_OF_FUNCTION) as i32;
        assert!(k.contains(&format!("store i32 {any}, ptr %__offload_site")), "{k}");
        assert!(k.contains("label %done, label %56"), "{k}");
        assert!(!k.contains("label %57"), "{k}");
    }

    #[test]
    fn amd_sites_live_in_the_private_address_space() {
        let (out, _) = number_traps(IR, true, true);
        assert!(out.contains("%__offload_site = alloca i32, align 4, addrspace(5)"));
        assert!(out.contains("store i32 1, ptr addrspace(5) %__offload_site"));
    }

    #[test]
    fn without_the_record_function_traps_merge_as_before() {
        let ir = IR.split("define internal").next().unwrap();
        let (out, sites) = number_traps(ir, false, true);
        assert!(sites.is_empty());
        assert!(!out.contains("__offload_site"));
        assert!(out.contains("label %56"));
        assert!(!out.contains("label %57"), "the second trap's branch goes to the first: {out}");
    }

    #[test]
    fn kinds_of_cores_panics() {
        assert_eq!(
            panic_kind("unwrap_failed", "_RNvNtCs1_4core6option13unwrap_failed"),
            Some("called `Option::unwrap()` on a `None` value")
        );
        assert_eq!(
            panic_kind("unwrap_failed", "_RNvNtCs1_4core6result13unwrap_failed"),
            Some("called `Result::unwrap()` on an `Err` value")
        );
        assert_eq!(panic_kind("panic_const_add_overflow", ""), Some("attempt to add with overflow"));
        assert_eq!(panic_kind("panic_fmt", ""), Some("explicit panic"));
        assert_eq!(panic_kind("saxpy", ""), None);
        assert!(module_file("src/m12.rs") && !module_file("src/main.rs") && !module_file("src/m.rs"));
    }

    #[test]
    fn every_branch_to_a_trap_goes_to_the_first_trap_block() {
        let ir = r#"define ptx_kernel void @k(i64 %i, i64 %n, i64 %m) #0 {
  %c = icmp ult i64 %i, %n
  br i1 %c, label %ok, label %54
54:                                               ; preds = %0
  tail call void @llvm.trap()
  unreachable
ok:                                               ; preds = %0
  %d = icmp ult i64 %i, %m
  br i1 %d, label %done, label %"trap two"
"trap two":
  call void @llvm.trap() #3, !dbg !7
    #dbg_value(i64 %i, !8, !DIExpression(), !9)
  unreachable
540:
  switch i64 %i, label %540 [
    i64 1, label %"trap two"
    i64 2, label %5400
  ]
5400:
  tail call void @llvm.trap()
  ret void
done:
  ret void
}
define internal void @f() {
  br label %1
1:
  tail call void @llvm.trap()
  unreachable
}
"#;
        let out = merge_traps(ir);
        let lines: Vec<&str> = out.lines().collect();
        // Both traps of @k now go to the first; `%540` and `%5400` (not a trap: it returns)
        // are other labels that only start alike.
        assert!(lines.contains(&"  br i1 %d, label %done, label %54"), "{out}");
        assert!(lines.contains(&"  switch i64 %i, label %540 ["), "{out}");
        assert!(lines.contains(&"    i64 1, label %54"), "{out}");
        assert!(lines.contains(&"    i64 2, label %5400"), "{out}");
        // Nothing else changes: the blocks stay (unreachable now, for `opt` to drop), and a
        // function with one trap is as it was.
        assert_eq!(out.lines().count(), ir.lines().count());
        let unchanged = |l: &&str| !l.contains("%d, label") && !l.contains("i64 1, label");
        assert!(out.lines().filter(unchanged).eq(ir.lines().filter(unchanged)), "{out}");
        let plain = "define void @g() {\n  ret void\n}\n@x = global i32 0\n";
        assert_eq!(merge_traps(plain), plain);
    }
}
