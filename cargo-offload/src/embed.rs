//! Writes the device-image container into a relocatable object that defines the symbol the
//! runtime looks for, and finds it again in a linked executable.

use anyhow::{Context, Result};
use object::write::{Object, StandardSection, Symbol, SymbolSection};
use object::{Architecture, BinaryFormat, Endianness, SymbolFlags, SymbolKind, SymbolScope};
use object::{Object as _, ObjectSection as _, ObjectSymbol as _};
use offload_wire::images;
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

/// The image container embedded in an executable: found through its symbol, or by its magic
/// when the symbol table was stripped.
pub fn embedded_container(path: &Path) -> Result<Option<Vec<u8>>> {
    let data = std::fs::read(path).with_context(|| format!("failed to read {}", path.display()))?;
    let file =
        object::File::parse(&*data).with_context(|| format!("{} is not an object file", path.display()))?;
    let from_section = |section: &object::Section<'_, '_>, offset: usize| -> Option<Vec<u8>> {
        let bytes = section.data().ok()?.get(offset..)?;
        let len = images::container_len(bytes)?;
        Some(bytes.get(..len)?.to_vec())
    };
    if let Some(sym) = file.symbols().find(|s| s.name() == Ok(images::SYMBOL))
        && let Some(index) = sym.section_index()
        && let Ok(section) = file.section_by_index(index)
    {
        return Ok(from_section(&section, (sym.address() - section.address()) as usize));
    }
    for section in file.sections() {
        if let Ok(bytes) = section.data()
            && let Some(at) = bytes.windows(images::MAGIC.len()).position(|w| w == images::MAGIC)
            && let Some(found) = from_section(&section, at)
        {
            return Ok(Some(found));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::ObjectSymbol;

    #[test]
    fn object_defines_the_symbol_over_the_container() {
        let bytes = object(b"OFFLDIMG-test-bytes").unwrap();
        let file = object::File::parse(&*bytes).unwrap();
        let sym = file.symbols().find(|s| s.name() == Ok(offload_wire::images::SYMBOL)).unwrap();
        assert!(sym.is_global() && sym.is_definition());
        assert_eq!(sym.size(), 19);
    }
}
