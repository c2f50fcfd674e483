//! The metadata record a kernels module leaves in the host artifact for pass 1 of
//! `cargo offload build` (section [`SECTION`]), and the reader for it.

use serde_json::{Map, Value, json};

/// ELF section holding the records.
pub const SECTION: &str = ".offload_kernels";
/// Suffix of the device static `[max threads, min blocks]` that `#[kernel(launch_bounds(…))]`
/// leaves beside the kernel's entry symbol, for cargo-offload's device linker to turn into
/// the entry point's attributes (`.maxntid`, `.minnctapersm` on NVIDIA).
pub const LAUNCH_BOUNDS_SUFFIX: &str = "__launch_bounds";
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
    /// The kernels, in source order.
    pub kernels: Vec<KernelRecord>,
}

/// One kernel of a module.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KernelRecord {
    pub name: String,
    /// Entry-point symbols: one, or one per instantiation of a generic kernel.
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

// The JSON is written and read by hand (no serde derive): the record is small, and a derive
// would put `serde_derive` (which waits for `syn`) on the critical path of every new project's
// first build, before the kernels macro that depends on this crate.
impl ModuleRecord {
    fn to_json(&self) -> Value {
        json!({
            "version": self.version,
            "krate": self.krate,
            "manifest_dir": self.manifest_dir,
            "file": self.file,
            "module": self.module,
            "prefix": self.prefix,
            "line": self.line,
            "column": self.column,
            "body": self.body,
            "allow_unsafe": self.allow_unsafe,
            "kernels": self.kernels.iter().map(|k| json!({
                "name": k.name,
                "symbols": k.symbols,
                "params": k.params.iter().map(|p| json!({"name": p.name, "kind": p.kind, "ty": p.ty})).collect::<Vec<_>>(),
            })).collect::<Vec<_>>(),
        })
    }

    fn from_json(v: &Value) -> Result<ModuleRecord, String> {
        let o = object(v, "record")?;
        Ok(ModuleRecord {
            version: u32::try_from(unsigned(o, "version")?)
                .map_err(|_| "`version` out of range".to_string())?,
            krate: string(o, "krate")?,
            manifest_dir: string(o, "manifest_dir")?,
            file: string(o, "file")?,
            module: string(o, "module")?,
            prefix: string(o, "prefix")?,
            line: usize::try_from(unsigned(o, "line")?).map_err(|_| "`line` out of range".to_string())?,
            column: usize::try_from(unsigned(o, "column")?)
                .map_err(|_| "`column` out of range".to_string())?,
            body: string(o, "body")?,
            allow_unsafe: match o.get("allow_unsafe") {
                None => false,
                Some(b) => b.as_bool().ok_or("`allow_unsafe` is not a boolean")?,
            },
            kernels: array(o, "kernels")?
                .iter()
                .map(|k| {
                    let k = object(k, "kernel")?;
                    Ok(KernelRecord {
                        name: string(k, "name")?,
                        symbols: array(k, "symbols")?
                            .iter()
                            .map(|s| {
                                s.as_str()
                                    .map(str::to_owned)
                                    .ok_or_else(|| "a symbol is not a string".to_string())
                            })
                            .collect::<Result<_, String>>()?,
                        params: array(k, "params")?
                            .iter()
                            .map(|p| {
                                let p = object(p, "parameter")?;
                                Ok(ParamRecord {
                                    name: string(p, "name")?,
                                    kind: string(p, "kind")?,
                                    ty: string(p, "ty")?,
                                })
                            })
                            .collect::<Result<_, String>>()?,
                    })
                })
                .collect::<Result<_, String>>()?,
        })
    }

    /// The record as stored in the section: magic, length, JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        let json = serde_json::to_vec(&self.to_json()).expect("records serialise");
        let mut out = Vec::with_capacity(json.len() + 12);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&(json.len() as u32).to_le_bytes());
        out.extend_from_slice(&json);
        out
    }
}

/// Reads every record in a section's bytes. The linker may pad between records, so bytes
/// that do not start a record are skipped; a record that starts but does not parse is an
/// error.
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

fn object<'v>(v: &'v Value, what: &str) -> Result<&'v Map<String, Value>, String> {
    v.as_object().ok_or_else(|| format!("the {what} is not a JSON object"))
}

fn field<'v>(o: &'v Map<String, Value>, name: &str) -> Result<&'v Value, String> {
    o.get(name).ok_or_else(|| format!("missing field `{name}`"))
}

fn string(o: &Map<String, Value>, name: &str) -> Result<String, String> {
    field(o, name)?.as_str().map(str::to_owned).ok_or_else(|| format!("`{name}` is not a string"))
}

fn unsigned(o: &Map<String, Value>, name: &str) -> Result<u64, String> {
    field(o, name)?.as_u64().ok_or_else(|| format!("`{name}` is not an unsigned integer"))
}

fn array<'v>(o: &'v Map<String, Value>, name: &str) -> Result<&'v Vec<Value>, String> {
    field(o, name)?.as_array().ok_or_else(|| format!("`{name}` is not an array"))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Whether the 64-bit ELF file `elf` (an executable) carries a kernels-module record: a
/// [`SECTION`] that holds at least one [`MAGIC`].
pub fn elf_has_records(elf: &[u8]) -> Result<bool, String> {
    use object::{Object, ObjectSection};
    let file = object::read::elf::ElfFile64::<object::Endianness>::parse(elf)
        .map_err(|e| format!("not a 64-bit ELF file: {e}"))?;
    let Some(section) = file.section_by_name(SECTION) else { return Ok(false) };
    let bytes = section.data().map_err(|e| format!("unreadable {SECTION} section: {e}"))?;
    Ok(find(bytes, MAGIC).is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

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
        r.kernels = vec![KernelRecord {
            name: "saxpy".into(),
            symbols: vec!["s_f32".into(), "s_f64".into()],
            params: vec![ParamRecord { name: "y".into(), kind: "region".into(), ty: "f32".into() }],
        }];
        assert_eq!(parse_section(&r.to_bytes()).unwrap(), vec![r.clone()]);
        let framed =
            |json: &str| [MAGIC.as_slice(), &(json.len() as u32).to_le_bytes(), json.as_bytes()].concat();
        let mut v = r.to_json();
        v.as_object_mut().unwrap().remove("allow_unsafe");
        let back = parse_section(&framed(&v.to_string())).unwrap();
        assert!(!back[0].allow_unsafe, "an older record without the field reads as not allowed");
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
    #[cfg_attr(miri, ignore = "reads the test's own executable: file access is isolated under Miri")]
    fn an_executable_without_kernels_has_no_records_and_other_files_are_errors() {
        let own = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(elf_has_records(&own), Ok(false));
        assert!(elf_has_records(b"not an executable").is_err());
    }
}
