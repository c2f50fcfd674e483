//! Writes the device-image container into a relocatable object that defines the symbol the
//! runtime looks for.

use anyhow::{Context, Result};
use object::write::{Object, StandardSection, Symbol, SymbolSection};
use object::{Architecture, BinaryFormat, Endianness, SymbolFlags, SymbolKind, SymbolScope};
use std::path::Path;

/// An ELF object for the host holding `container` at symbol `offload_wire::images::SYMBOL`.
pub fn object(container: &[u8]) -> Result<Vec<u8>> {
    let mut obj = Object::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
    let section = obj.section_id(StandardSection::ReadOnlyData);
    // 4096: cubins are ELF files, and loaders are happiest with page-aligned images.
    let offset = obj.append_section_data(section, container, 4096);
    obj.add_symbol(Symbol {
        name: offload_wire::images::SYMBOL.as_bytes().to_vec(),
        value: offset,
        size: container.len() as u64,
        kind: SymbolKind::Data,
        scope: SymbolScope::Linkage,
        weak: false,
        section: SymbolSection::Section(section),
        flags: SymbolFlags::None,
    });
    obj.write().context("failed to write the device-image object")
}

/// Writes [`object`] to `path`.
pub fn write_object(container: &[u8], path: &Path) -> Result<()> {
    std::fs::write(path, object(container)?).with_context(|| format!("failed to write {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::{Object as _, ObjectSymbol};

    #[test]
    fn object_defines_the_symbol_over_the_container() {
        let bytes = object(b"OFFLDIMG-test-bytes").unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let sym = file.symbols().find(|s| s.name() == Ok(offload_wire::images::SYMBOL)).unwrap();
        assert!(sym.is_global() && sym.is_definition());
        assert_eq!(sym.size(), 19);
    }
}
