#!/usr/bin/env python3
"""Splits `cuobjdump -sass` listings into one file per kernel and prints, for each kernel
whose name contains one of the given substrings, its static instruction count by kind
(loads, stores, 64-bit integer work, branches, …), Rust and CUDA side by side.

Usage: sass-summary.py PATTERNS OUT_DIR SIDE=LISTING...
  PATTERNS: comma-separated, case-insensitive substrings of kernel names
  SIDE=LISTING: a label (rust, cuda) and a file cuobjdump wrote
"""
import collections
import re
import sys

from kernel_names import SASS_INSTRUCTION as INSTRUCTION, kernel_identifier

FUNCTION = re.compile(r"^\s*Function : (\S+)")

KINDS = [
    ("load global", lambda op: op.startswith("LDG")),
    ("store global", lambda op: op.startswith("STG")),
    ("load constant/param", lambda op: op.startswith(("LDC", "ULDC"))),
    ("fp64", lambda op: op.startswith(("DADD", "DMUL", "DFMA", "DSETP", "MUFU"))),
    ("integer/address", lambda op: op.startswith(("IMAD", "IADD", "LEA", "SHF", "LOP", "ISETP", "IABS", "SEL", "MOV", "S2R", "S2UR", "UIMAD", "UIADD", "ULEA", "USHF", "ULOP", "UISETP", "UMOV", "USEL", "R2UR", "CS2R", "PLOP"))),
    ("branch/exit", lambda op: op.startswith(("BRA", "EXIT", "BSSY", "BSYNC", "CALL", "RET", "WARPSYNC", "BPT"))),
]


def functions(path):
    """Yields (name, [opcode, …], text) for each function of a listing."""
    name, ops, text = None, [], []
    for line in open(path, errors="replace"):
        m = FUNCTION.match(line)
        if m:
            if name:
                yield name, ops, "".join(text)
            name, ops, text = m.group(1), [], [line]
            continue
        if name is None:
            continue
        text.append(line)
        i = INSTRUCTION.match(line)
        if i and i.group(1) != "NOP":
            ops.append(i.group(1))
    if name:
        yield name, ops, "".join(text)


def short(name):
    """A readable kernel name for file names and the table."""
    return kernel_identifier(name)[:48]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    patterns = [p.lower() for p in sys.argv[1].split(",") if p]
    out = sys.argv[2]
    rows = []
    for side_listing in sys.argv[3:]:
        side, listing = side_listing.split("=", 1)
        for name, ops, text in functions(listing):
            if not any(p in name.lower() for p in patterns):
                continue
            kernel = short(name)
            with open(f"{out}/{side}-{kernel}.sass", "w") as f:
                f.write(text)
            counts = collections.Counter()
            for op in ops:
                kind = next((k for k, test in KINDS if test(op)), "other")
                counts[kind] += 1
            rows.append((kernel.lower(), side, len(ops), counts))
    columns = [k for k, _ in KINDS] + ["other"]
    print(f"{'kernel':<28} {'side':<5} {'total':>6} " + " ".join(f"{c:>10.10}" for c in columns))
    for kernel, side, total, counts in sorted(rows):
        print(f"{kernel:<28} {side:<5} {total:>6} " + " ".join(f"{counts[c]:>10}" for c in columns))
    if not rows:
        sys.exit("no kernel matched " + ",".join(patterns))


if __name__ == "__main__":
    main()
