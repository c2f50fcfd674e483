"""Kernel names from GPU symbols, and SASS instruction lines, shared by the scripts that
compare Rust and CUDA kernels."""
import re

# An instruction line of a SASS listing (cuobjdump -sass or nvdisasm), with its opcode:
#   /*0a30*/  @!P0 IMAD.WIDE.U32 R2, R3, 0x8, R4 ;  /* 0x... */
SASS_INSTRUCTION = re.compile(r"^\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)")


def kernel_identifier(symbol):
    """The kernel's own name in a symbol: the kernel part of an `#[offload::kernels]` entry
    point (`__offload_<crate>_<module>_<hash>_<kernel>`), or the last identifier of an
    Itanium-mangled nested name (`_ZN2rp…5vol3dILm256EEEv…` → `vol3d`), else the symbol."""
    m = re.search(r"__offload_\w+?_[0-9a-f]{8}_(\w+)", symbol)
    if m:
        return m.group(1)
    ids, pos = [], 3 if symbol.startswith("_ZN") else -1
    while pos > 0:  # length-prefixed identifiers
        m = re.match(r"\d+", symbol[pos:])
        if not m:
            break
        n, pos = int(m.group(0)), pos + len(m.group(0))
        ids.append(symbol[pos:pos + n])
        pos += n
    return ids[-1] if ids else symbol
