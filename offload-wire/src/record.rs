//! The metadata record a kernels module leaves in the host artifact for pass 1 of
//! `cargo offload build` (section [`SECTION`]), and the reader for it.

#[cfg(feature = "read")]
use serde_json::{Map, Value};

/// ELF section holding the records.
pub const SECTION: &str = ".offload_kernels";
/// Suffix of the device static `[max threads, min blocks]` that `#[kernel(launch_bounds(…))]`
/// leaves beside the kernel's entry symbol, for cargo-offload's device linker to turn into
/// the entry point's attributes (`.maxntid`, `.minnctapersm` on NVIDIA).
pub const LAUNCH_BOUNDS_SUFFIX: &str = "__launch_bounds";
/// Suffix of a kernel's second entry point, for launches whose blocks are whole warps
/// (block threads a multiple of the warp size): the kernels macro makes one for each kernel
/// that takes a `Warp`, whose collectives then name every lane of a warp as a constant.
pub const WHOLE_WARPS_SUFFIX: &str = "__whole_warps";
/// First bytes of every record, followed by a little-endian `u32` JSON length.
pub const MAGIC: &[u8; 8] = b"OFFLDMOD";
/// Record layout version.
pub const VERSION: u32 = 1;

/// Everything the device compile needs to rebuild a kernels module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModuleRecord {
    /// Layout version, [`VERSION`].
    pub version: u32,
    /// Crate the module belongs to (`CARGO_CRATE_NAME`).
    pub krate: String,
    /// Directory of the package's `Cargo.toml`.
    pub manifest_dir: String,
    /// Source file, as rustc names it (relative to the package or absolute).
    pub file: String,
    /// Module name.
    pub module: String,
    /// Prefix of every kernel entry symbol of this module.
    pub prefix: String,
    /// Line (1-based) and column (0-based) of the module body's opening brace.
    pub line: usize,
    pub column: usize,
    /// The module body, braces included, exactly as written.
    pub body: String,
    /// Whether the module opted in to `unsafe` code (`#[offload::kernels(allow_unsafe)]`).
    pub allow_unsafe: bool,
    /// Whether the module prints from kernels (`offload::println!`/`print!`), which AMD GPUs
    /// cannot (the device build says so).
    pub prints: bool,
    /// The kernels, in source order.
    pub kernels: Vec<KernelRecord>,
}

/// One kernel of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRecord {
    pub name: String,
    /// Entry-point symbols: one, or one per instantiation of a generic kernel; each followed
    /// by its whole-warps variant (`WHOLE_WARPS_SUFFIX`) for a kernel that takes a `Warp`.
    pub symbols: Vec<String>,
    pub params: Vec<ParamRecord>,
}

/// One kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamRecord {
    pub name: String,
    /// What the parameter is, as the kernels macro names it: `scalar`, `slice`, `region`,
    /// `region2`, `region3`, `partition`, `shared`, `shared_array`, `shared_atomics`, `block`,
    /// `warp`, `atomics`, `scatter` or `reduce`.
    pub kind: String,
    /// Element or scalar type, as written.
    pub ty: String,
}

// The JSON is written by hand and read through `serde_json`'s `Value` (no serde derive): the
// record is small, and the kernels macro, which only writes records, then needs neither serde
// nor serde_json (`default-features = false`): a derive would put `serde_derive` (which waits
// for `syn`) and serde_json on the critical path of every new project's first build.
impl ModuleRecord {
    /// The record as JSON text.
    fn to_json(&self) -> String {
        let mut o = JsonObject::new();
        o.number("version", self.version.into())
            .string("krate", &self.krate)
            .string("manifest_dir", &self.manifest_dir)
            .string("file", &self.file)
            .string("module", &self.module)
            .string("prefix", &self.prefix)
            .number("line", self.line as u64)
            .number("column", self.column as u64)
            .string("body", &self.body)
            .raw("allow_unsafe", if self.allow_unsafe { "true" } else { "false" })
            .raw("prints", if self.prints { "true" } else { "false" });
        let kernels = json_array(self.kernels.iter().map(|k| {
            let params = json_array(k.params.iter().map(|p| {
                JsonObject::new().string("name", &p.name).string("kind", &p.kind).string("ty", &p.ty).end()
            }));
            JsonObject::new()
                .string("name", &k.name)
                .raw("symbols", &json_array(k.symbols.iter().map(|s| json_string(s))))
                .raw("params", &params)
                .end()
        }));
        o.raw("kernels", &kernels);
        o.end()
    }

    #[cfg(feature = "read")]
    fn from_json(v: &Value) -> Result<ModuleRecord, String> {
        let o = object(v, "record")?;
        Ok(ModuleRecord {
            version: unsigned(o, "version")?,
            krate: string(o, "krate")?,
            manifest_dir: string(o, "manifest_dir")?,
            file: string(o, "file")?,
            module: string(o, "module")?,
            prefix: string(o, "prefix")?,
            line: unsigned(o, "line")?,
            column: unsigned(o, "column")?,
            body: string(o, "body")?,
            allow_unsafe: flag(o, "allow_unsafe")?,
            prints: flag(o, "prints")?,
            kernels: each(o, "kernels", |k| {
                let k = object(k, "kernel")?;
                Ok(KernelRecord {
                    name: string(k, "name")?,
                    symbols: each(k, "symbols", |s| {
                        s.as_str().map(str::to_owned).ok_or_else(|| "a symbol is not a string".to_string())
                    })?,
                    params: each(k, "params", |p| {
                        let p = object(p, "parameter")?;
                        Ok(ParamRecord {
                            name: string(p, "name")?,
                            kind: string(p, "kind")?,
                            ty: string(p, "ty")?,
                        })
                    })?,
                })
            })?,
        })
    }

    /// The record as stored in the section: magic, length, JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        let json = self.to_json().into_bytes();
        let mut out = Vec::with_capacity(json.len() + 12);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        out
    }
}

/// A JSON object being written: `"key":value` pairs in order.
struct JsonObject(String);

impl JsonObject {
    fn new() -> JsonObject {
        JsonObject(String::from("{"))
    }

    /// A member whose value is already JSON text.
    fn raw(&mut self, key: &str, value: &str) -> &mut JsonObject {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        self.0.push_str(&json_string(key));
        self.0.push(':');
        self.0.push_str(value);
        self
    }

    fn string(&mut self, key: &str, value: &str) -> &mut JsonObject {
        self.raw(key, &json_string(value))
    }

    fn number(&mut self, key: &str, value: u64) -> &mut JsonObject {
        self.raw(key, &value.to_string())
    }

    fn end(&mut self) -> String {
        self.0.push('}');
        std::mem::take(&mut self.0)
    }
}

/// A JSON array of values already written as JSON text.
fn json_array(items: impl Iterator<Item = String>) -> String {
    format!("[{}]", items.collect::<Vec<_>>().join(","))
}

/// `s` as a JSON string: quotes, backslashes and control characters escaped (RFC 8259 §7).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Reads every record in a section's bytes. The linker may pad between records, so bytes
/// that do not start a record are skipped; a record that starts but does not parse is an
/// error.
#[cfg(feature = "read")]
pub fn parse_section(mut bytes: &[u8]) -> Result<Vec<ModuleRecord>, String> {
    let mut out = Vec::new();
    while let Some(at) = find(bytes, MAGIC) {
        bytes = &bytes[at + MAGIC.len()..];
        if bytes.len() < 4 {
            return Err("truncated kernels-module record".into());
        }
        let len = u32::from_le_bytes([bytes[0], bytes[1], bytes[2], bytes[3]]) as usize;
        let json = bytes.get(4..4 + len).ok_or("truncated kernels-module record")?;
        let record = serde_json::from_slice::<Value>(json)
            .map_err(|e| e.to_string())
            .and_then(|v| ModuleRecord::from_json(&v))
            .map_err(|e| format!("unreadable kernels-module record: {e}"))?;
        if record.version != VERSION {
            return Err(format!(
                "kernels-module record version {} (this cargo-offload reads {VERSION}): use matching versions of cargo-offload and offload-rt",
                record.version
            ));
        }
        out.push(record);
        bytes = &bytes[4 + len..];
    }
    Ok(out)
}

#[cfg(feature = "read")]
fn object<'v>(v: &'v Value, what: &str) -> Result<&'v Map<String, Value>, String> {
    v.as_object().ok_or_else(|| format!("the {what} is not a JSON object"))
}

#[cfg(feature = "read")]
fn field<'v>(o: &'v Map<String, Value>, name: &str) -> Result<&'v Value, String> {
    o.get(name).ok_or_else(|| format!("missing field `{name}`"))
}

#[cfg(feature = "read")]
fn string(o: &Map<String, Value>, name: &str) -> Result<String, String> {
    field(o, name)?.as_str().map(str::to_owned).ok_or_else(|| format!("`{name}` is not a string"))
}

#[cfg(feature = "read")]
fn unsigned<T: TryFrom<u64>>(o: &Map<String, Value>, name: &str) -> Result<T, String> {
    let v = field(o, name)?.as_u64().ok_or_else(|| format!("`{name}` is not an unsigned integer"))?;
    T::try_from(v).map_err(|_| format!("`{name}` out of range"))
}

/// The boolean `name`, false when absent (a field later records added).
#[cfg(feature = "read")]
fn flag(o: &Map<String, Value>, name: &str) -> Result<bool, String> {
    match o.get(name) {
        None => Ok(false),
        Some(b) => b.as_bool().ok_or_else(|| format!("`{name}` is not a boolean")),
    }
}

/// Each element of the array `name`, read by `read`.
#[cfg(feature = "read")]
fn each<T>(
    o: &Map<String, Value>,
    name: &str,
    read: impl Fn(&Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    field(o, name)?.as_array().ok_or_else(|| format!("`{name}` is not an array"))?.iter().map(read).collect()
}

#[cfg(any(feature = "read", feature = "elf"))]
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Whether the 64-bit ELF file `elf` (an executable) carries a kernels-module record: a
/// [`SECTION`] that holds at least one [`MAGIC`].
#[cfg(feature = "elf")]
pub fn elf_has_records(elf: &[u8]) -> Result<bool, String> {
    use object::{Object, ObjectSection};
    let file = object::read::elf::ElfFile64::<object::Endianness>::parse(elf)
        .map_err(|e| format!("not a 64-bit ELF file: {e}"))?;
    let Some(section) = file.section_by_name(SECTION) else { return Ok(false) };
    let bytes = section.data().map_err(|e| format!("unreadable {SECTION} section: {e}"))?;
    Ok(find(bytes, MAGIC).is_some())
}

#[cfg(all(test, feature = "read"))]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn strings_with_quotes_backslashes_and_control_characters_survive() {
        let mut r = record("k");
        r.body = "{ let s = \"a\\b\"; /* \u{1} \t \r\n é 💡 */ }".into();
        r.file = "C:\\src\\main.rs".into();
        assert_eq!(parse_section(&r.to_bytes()).unwrap(), vec![r]);
    }

    fn record(module: &str) -> ModuleRecord {
        ModuleRecord {
            version: VERSION,
            krate: "demo".into(),
            manifest_dir: "/p".into(),
            file: "src/main.rs".into(),
            module: module.into(),
            prefix: format!("__offload_demo_{module}"),
            line: 3,
            column: 8,
            body: "{ }".into(),
            allow_unsafe: false,
            prints: false,
            kernels: vec![],
        }
    }

    #[test]
    fn records_survive_padding_between_them() {
        let mut section = record("a").to_bytes();
        section.extend_from_slice(&[0, 0, 0]);
        section.extend(record("b").to_bytes());
        let back = parse_section(&section).unwrap();
        assert_eq!(back, vec![record("a"), record("b")]);
    }

    #[test]
    fn every_field_survives_and_bad_fields_are_named() {
        let mut r = record("k");
        r.allow_unsafe = true;
        r.prints = true;
        r.kernels = vec![KernelRecord {
            name: "saxpy".into(),
            symbols: vec!["s_f32".into(), "s_f64".into()],
            params: vec![ParamRecord { name: "y".into(), kind: "region".into(), ty: "f32".into() }],
        }];
        assert_eq!(parse_section(&r.to_bytes()).unwrap(), vec![r.clone()]);
        let framed =
            |json: &str| [MAGIC.as_slice(), &(json.len() as u32).to_le_bytes(), json.as_bytes()].concat();
        let mut v: Value = serde_json::from_str(&r.to_json()).unwrap();
        v.as_object_mut().unwrap().remove("allow_unsafe");
        v.as_object_mut().unwrap().remove("prints");
        let back = parse_section(&framed(&v.to_string())).unwrap();
        assert!(!back[0].allow_unsafe, "an older record without the field reads as not allowed");
        assert!(!back[0].prints, "an older record without the field reads as not printing");
        v.as_object_mut().unwrap().remove("body");
        assert!(parse_section(&framed(&v.to_string())).unwrap_err().contains("missing field `body`"));
        v["body"] = json!(3);
        assert!(parse_section(&framed(&v.to_string())).unwrap_err().contains("`body` is not a string"));
        assert!(parse_section(&framed("[1, 2]")).unwrap_err().contains("not a JSON object"));
    }

    #[test]
    fn truncated_or_foreign_records_are_errors() {
        let bytes = record("a").to_bytes();
        assert!(parse_section(&bytes[..bytes.len() - 2]).is_err());
        let mut old = record("a");
        old.version = 99;
        assert!(parse_section(&old.to_bytes()).unwrap_err().contains("version 99"));
        assert!(parse_section(b"no records here").unwrap().is_empty());
    }

    #[test]
    #[cfg(feature = "elf")]
    #[cfg_attr(miri, ignore = "reads the test's own executable: file access is isolated under Miri")]
    fn an_executable_without_kernels_has_no_records_and_other_files_are_errors() {
        let own = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(elf_has_records(&own), Ok(false));
        assert!(elf_has_records(b"not an executable").is_err());
    }
}
