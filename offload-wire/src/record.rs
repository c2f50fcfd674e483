//! The metadata record a kernels module leaves in the host artifact for pass 1 of
//! `cargo offload build` (section [`SECTION`]), and the reader for it.

use serde::{Deserialize, Serialize};

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
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
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
    #[serde(default)]
    pub allow_unsafe: bool,
    /// The kernels, in source order.
    pub kernels: Vec<KernelRecord>,
}

/// One kernel of a module.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct KernelRecord {
    pub name: String,
    /// Entry-point symbols: one, or one per instantiation of a generic kernel.
    pub symbols: Vec<String>,
    pub params: Vec<ParamRecord>,
}

/// One kernel parameter.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamRecord {
    pub name: String,
    /// What the parameter is, as the kernels macro names it: `scalar`, `slice`, `region`,
    /// `region2`, `region3`, `partition`, `shared`, `shared_array`, `shared_atomics`, `block`,
    /// `warp`, `atomics`, `scatter` or `reduce`.
    pub kind: String,
    /// Element or scalar type, as written.
    pub ty: String,
}

impl ModuleRecord {
    /// The record as stored in the section: magic, length, JSON.
    pub fn to_bytes(&self) -> Vec<u8> {
        let json = serde_json::to_vec(self).expect("records serialise");
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
        let record: ModuleRecord =
            serde_json::from_slice(json).map_err(|e| format!("unreadable kernels-module record: {e}"))?;
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
