//! What an NVIDIA cubin records about each kernel: the registers per thread that `ptxas`
//! allocated (attribute `EIATTR_REGCOUNT` of the `.nv.info` section), its local memory per
//! thread (`EIATTR_FRAME_SIZE`: register spills and arrays kept in local memory, what `ptxas
//! -v` calls the stack frame) and the static shared memory (the size of its
//! `.nv.shared.<kernel>` section). The runtime sizes grids that fill
//! the device from them (how many blocks fit a multiprocessor), and `cargo offload inspect`
//! shows them.
//!
//! The reader takes untrusted bytes: a malformed file is an error, never a panic.

use object::read::elf::{ElfFile64, FileHeader, SectionHeader};
use object::{Object, ObjectSection, ObjectSymbol, SymbolIndex};

/// `.nv.info` attribute: registers per thread of a function (value: symbol index, count).
const EIATTR_REGCOUNT: u8 = 0x2f;
/// `.nv.info` attribute: a function's stack frame in local memory, bytes per thread (value:
/// symbol index, size).
const EIATTR_FRAME_SIZE: u8 = 0x11;
/// `.nv.info` attribute formats: no value, a byte, a half-word, a sized value.
const EIFMT_NVAL: u8 = 0x01;
const EIFMT_BVAL: u8 = 0x02;
const EIFMT_HVAL: u8 = 0x03;
const EIFMT_SVAL: u8 = 0x04;

/// One kernel's resources, as `ptxas` allocated them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelResources {
    /// Registers per thread.
    pub registers: u32,
    /// Local memory per thread, in bytes: register spills and arrays `ptxas` could not keep in
    /// registers (0 for most kernels; every byte of it is a slow load or store).
    pub local_bytes: u32,
    /// Shared memory the kernel declares statically, in bytes: the size of its
    /// `.nv.shared.<kernel>` section, which on sm_90 is at least 1 KiB even for kernels that
    /// declare none (the launch's dynamic shared memory comes on top).
    pub static_shared_bytes: u64,
}

/// The resources of the function `symbol` in `cubin`: `Ok(None)` when the cubin has no such
/// function or records no register count for it.
///
/// # Errors
///
/// When `cubin` is not a 64-bit little-endian ELF file or its `.nv.info` section is malformed.
pub fn kernel_resources(cubin: &[u8], symbol: &str) -> Result<Option<KernelResources>, String> {
    let file = ElfFile64::<object::Endianness>::parse(cubin).map_err(|e| format!("not a cubin: {e}"))?;
    let Some(index) = file.symbols().find(|s| s.name() == Ok(symbol)).map(|s| s.index()) else {
        return Ok(None);
    };
    let Some(info) = file.section_by_name(".nv.info") else { return Ok(None) };
    let data = info.data().map_err(|e| format!("unreadable .nv.info section: {e}"))?;
    let Some(registers) = function_attribute(data, index, EIATTR_REGCOUNT)? else { return Ok(None) };
    let local_bytes = function_attribute(data, index, EIATTR_FRAME_SIZE)?.unwrap_or(0);
    // A `.nv.shared` section occupies no file bytes (NOBITS): its size is the header's.
    let endian = file.elf_header().endian().map_err(|e| format!("not a cubin: {e}"))?;
    let static_shared_bytes = file
        .section_by_name(&format!(".nv.shared.{symbol}"))
        .map_or(0, |s| s.elf_section_header().sh_size(endian));
    Ok(Some(KernelResources { registers, local_bytes, static_shared_bytes }))
}

/// The value of per-function attribute `wanted` (symbol index, value) recorded for symbol
/// `index` in the `.nv.info` bytes.
fn function_attribute(mut data: &[u8], index: SymbolIndex, wanted: u8) -> Result<Option<u32>, String> {
    let malformed = || "malformed .nv.info section".to_owned();
    while !data.is_empty() {
        let [format, attribute, rest @ ..] = data else { return Err(malformed()) };
        let (value, next): (&[u8], &[u8]) = match *format {
            EIFMT_NVAL => (&[], rest),
            EIFMT_BVAL | EIFMT_HVAL => rest.split_at_checked(2).ok_or_else(malformed)?,
            EIFMT_SVAL => {
                let [lo, hi, rest @ ..] = rest else { return Err(malformed()) };
                rest.split_at_checked(usize::from(u16::from_le_bytes([*lo, *hi]))).ok_or_else(malformed)?
            }
            _ => return Err(malformed()),
        };
        if *attribute == wanted && *format == EIFMT_SVAL {
            let word =
                |at: usize| value.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
            if let (Some(function), Some(count)) = (word(0), word(4))
                && function as usize == index.0
            {
                return Ok(Some(count));
            }
        }
        data = next;
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An `.nv.info` section of `entries` (format, attribute, value).
    fn info(entries: &[(u8, u8, Vec<u8>)]) -> Vec<u8> {
        let mut out = Vec::new();
        for (format, attribute, value) in entries {
            out.extend([*format, *attribute]);
            if *format == EIFMT_SVAL {
                out.extend((value.len() as u16).to_le_bytes());
            }
            out.extend(value);
        }
        out
    }

    fn regcount(function: u32, count: u32) -> (u8, u8, Vec<u8>) {
        (EIFMT_SVAL, EIATTR_REGCOUNT, [function.to_le_bytes(), count.to_le_bytes()].concat())
    }

    #[test]
    fn the_register_count_of_the_right_function_is_found_among_other_attributes() {
        let data = info(&[
            (EIFMT_HVAL, 0x11, vec![0, 1]),
            regcount(3, 40),
            (EIFMT_NVAL, 0x05, vec![]),
            (EIFMT_BVAL, 0x07, vec![9, 0]),
            regcount(7, 32),
        ]);
        let registers = |i| function_attribute(&data, SymbolIndex(i), EIATTR_REGCOUNT);
        assert_eq!(registers(7), Ok(Some(32)));
        assert_eq!(registers(3), Ok(Some(40)));
        assert_eq!(registers(4), Ok(None));
        // (The half-word attribute 0x11 above is not a function's frame size: no symbol.)
        assert_eq!(function_attribute(&data, SymbolIndex(7), EIATTR_FRAME_SIZE), Ok(None));
        let framed = info(&[
            regcount(7, 32),
            (EIFMT_SVAL, EIATTR_FRAME_SIZE, [7u32.to_le_bytes(), 8u32.to_le_bytes()].concat()),
        ]);
        assert_eq!(function_attribute(&framed, SymbolIndex(7), EIATTR_FRAME_SIZE), Ok(Some(8)));
    }

    #[test]
    fn malformed_sections_and_files_are_errors() {
        let mut data = info(&[regcount(1, 20)]);
        data.truncate(data.len() - 3);
        assert!(function_attribute(&data, SymbolIndex(1), EIATTR_REGCOUNT).is_err());
        assert!(function_attribute(&[0x09, 0x2f], SymbolIndex(1), EIATTR_REGCOUNT).is_err());
        assert!(function_attribute(&[EIFMT_SVAL], SymbolIndex(1), EIATTR_REGCOUNT).is_err());
        assert!(kernel_resources(b"not an ELF file", "k").is_err());
        assert!(kernel_resources(&[], "k").is_err());
    }
}
