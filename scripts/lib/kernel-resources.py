#!/usr/bin/env python3
"""Registers and PTX instruction counts of the rajaperf-rs kernels, Rust and CUDA side by
side, without a GPU: `ptxas -v` on the PTX that `cargo offload build` made and on nvcc's PTX
of the CUDA baselines. ptxas reports the same register counts as the GPU does at run time
(checked against Nsight Compute on an H200), so register pressure can be compared before a
GPU run.

With `nvdisasm` (the CUDA toolkit, or pip's nvidia-cuda-nvdisasm) it also counts each kernel's
SASS instructions and the position of its first global load: how many instructions a thread
issues before its first memory request, the latency a short kernel cannot hide when its data
sits in L2. And two signs of loads that wait for other memory (static counts, in program
order; loops and rare paths count too):
  ld>st  global loads after the first global store: a checked read after a write waits for
         the write, which waits for its own load (COPY8 before it read first: 7)
  ld>fp  global loads after the first floating-point instruction: arithmetic between loads
         waits for the earlier loads before the later ones can go (DEL_DOT_VEC_2D: 8)
And one sign of control flow that ptxas handles worse:
  R2UR   copies from ordinary into uniform registers; with two or more branches to traps,
         ptxas kept the memory descriptor in ordinary registers and copied it before each
         access (VOL3D: 48; none in the CUDA baselines)

Usage: scripts/gpu resources [--arch sm_90] [--no-build | --ptx FILE] [PATTERN]
  PATTERN: a case-insensitive substring of the kernel names to list (default: all)

Needs `ptxas` (the one `cargo offload build` uses: OFFLOAD_PTXAS, PATH, the CUDA toolkit, or
pip's nvidia-cuda-nvcc) and, for the CUDA column, `nvcc` beside it.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

from kernel_names import SASS_INSTRUCTION, kernel_identifier

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def find_tool(name):
    """The CUDA tool `name`, looked up as cargo-offload looks up ptxas."""
    if name == "ptxas" and os.environ.get("OFFLOAD_PTXAS"):
        return os.environ["OFFLOAD_PTXAS"]
    found = shutil.which(name)
    if found:
        return found
    for home in filter(None, [os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"]):
        path = os.path.join(home, "bin", name)
        if os.path.isfile(path):
            return path
    try:
        out = subprocess.run(
            [sys.executable, "-c", "import nvidia; print('\\n'.join(nvidia.__path__))"],
            capture_output=True, text=True, check=False,
        ).stdout
    except OSError:
        return None
    for base in out.split():
        for sub in ("cu13/bin", "cuda_nvcc/bin"):
            path = os.path.join(base, sub, name)
            if os.path.isfile(path):
                return path
    return None


def kernel_name(symbol):
    """A comparable name: the offload symbol's kernel part or the CUDA kernel's identifier,
    lower-case, without underscores and RAJAPerf's `poly_` prefix."""
    name = kernel_identifier(symbol)
    name = name.lower().replace("_", "")
    return name[4:] if name.startswith("poly") else name


def ptx_instructions(ptx):
    """Instructions per entry point of a PTX file (labels, comments and declarations left out)."""
    counts = {}
    for m in re.finditer(r"\.entry (\S+)\((.*?)\n\{(.*?)\n\}", ptx, re.S):
        lines = [line.strip() for line in m.group(3).splitlines()]
        counts[m.group(1)] = sum(
            1 for line in lines
            if line and not line.startswith(("//", ".reg", "$L", "{", "}", ".local", ".shared"))
        )
    return counts


FP_OPS = re.compile(r"^(DADD|DMUL|DFMA|FADD|FMUL|FFMA|MUFU|HADD2|HMUL2|HFMA2)\b")


def late_loads(ops, after):
    """Global loads in `ops` after the first instruction for which `after` holds."""
    first = next((n for n, op in enumerate(ops) if after(op)), len(ops))
    return sum(1 for op in ops[first:] if op.startswith("LDG"))


def sass_stats(nvdisasm, cubin):
    """`{entry: (instructions, position of the first global load, loads after the first
    global store, loads after the first floating-point instruction, R2UR copies)}` of a
    cubin's SASS (NOPs not counted; the position is 1-based, `-` when the kernel loads
    nothing)."""
    run = subprocess.run([nvdisasm, "-c", cubin], capture_output=True, text=True, check=False)
    if run.returncode != 0:
        sys.exit(f"nvdisasm failed:\n{run.stderr[-2000:]}")
    ops = {}
    name = None
    for line in run.stdout.splitlines():
        m = re.match(r"^\.text\.(\S+):$", line)
        if m:
            name = m.group(1)
            ops[name] = []
            continue
        i = SASS_INSTRUCTION.match(line)
        if name and i and i.group(1) != "NOP":
            ops[name].append(i.group(1))
    return {
        entry: (
            len(o),
            next((n + 1 for n, op in enumerate(o) if op.startswith("LDG")), "-"),
            late_loads(o, lambda op: op.startswith("STG")),
            late_loads(o, FP_OPS.match),
            sum(1 for op in o if op == "R2UR"),
        )
        for entry, o in ops.items()
    }


def registers(ptxas, ptx_text, arch, nvdisasm=None):
    """`{entry: (registers, SASS stats or None)}` from `ptxas -v` (and `nvdisasm` on its
    cubin). A PTX `.version` newer than this ptxas (pip's nvcc front end and ptxas can come
    from different releases) is lowered to the one it names."""
    with tempfile.TemporaryDirectory() as tmp:
        src, out = os.path.join(tmp, "in.ptx"), os.path.join(tmp, "out.cubin")
        for _ in range(2):
            with open(src, "w") as f:
                f.write(ptx_text)
            run = subprocess.run([ptxas, f"-arch={arch}", "-O3", "-v", src, "-o", out],
                                 capture_output=True, text=True, check=False)
            newer = re.search(r"Unsupported \.version (\S+); current version is '(\S+)'", run.stderr)
            if not newer:
                break
            ptx_text = re.sub(r"^\.version \S+", f".version {newer.group(2)}", ptx_text, count=1, flags=re.M)
        if run.returncode != 0:
            sys.exit(f"ptxas failed:\n{run.stderr[-2000:]}")
        sass = sass_stats(nvdisasm, out) if nvdisasm else {}
    found, entry = {}, None
    for line in run.stderr.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            entry = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and entry:
            found[entry] = (int(m.group(1)), sass.get(entry))
            entry = None
    return found


def rust_ptx(arch, build):
    """The PTX inside the rajaperf runner: built first (with this checkout's cargo-offload, so
    that its device linker is the one measured) unless `build` is false, then extracted from
    the executable, which names exactly the images it runs."""
    offload = os.path.join(ROOT, "target", "release", "cargo-offload")
    if build:
        subprocess.run(["cargo", "build", "--release", "-p", "cargo-offload"], cwd=ROOT, check=True)
        subprocess.run([offload, "offload", "build", "--release", "-p", "rajaperf-rs", "--bin", "rajaperf",
                        "--target-gpu", arch], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "offload", "host", "release", "rajaperf")
    if not (os.path.exists(exe) and os.path.exists(offload)):
        sys.exit(f"no rajaperf runner built with device images: run without --no-build")
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([offload, "offload", "inspect", exe, "--extract", tmp], cwd=ROOT, check=True,
                       stdout=subprocess.DEVNULL)
        path = os.path.join(tmp, f"{arch}.ptx")
        if not os.path.exists(path):
            sys.exit(f"the rajaperf runner has no {arch} image: run without --no-build")
        return open(path, "rb").read().replace(b"\0", b"").decode()


def cuda_ptx(nvcc, arch):
    texts = []
    with tempfile.TemporaryDirectory() as tmp:
        for cu in sorted(glob.glob(os.path.join(ROOT, "rajaperf-rs", "cuda", "*.cu"))):
            out = os.path.join(tmp, os.path.basename(cu) + ".ptx")
            # The flags of rajaperf-rs/cuda/build.sh. nvcc may check the PTX it wrote with a
            # ptxas older than its front end (pip's packages) and fail on `.version`; the PTX
            # is complete by then, and `registers` lowers the version.
            run = subprocess.run([nvcc, "-O3", f"-arch={arch}", "-restrict", "-std=c++17", "-ptx", cu, "-o", out],
                                 capture_output=True, text=True, check=False)
            if not (os.path.isfile(out) and os.path.getsize(out) > 0):
                sys.exit(f"nvcc failed on {cu}:\n{run.stderr[-2000:]}")
            texts.append(open(out).read())
    return texts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pattern", nargs="?", default="")
    ap.add_argument("--arch", default="sm_90")
    ap.add_argument("--no-build", action="store_true", help="use the runner as last built")
    ap.add_argument("--ptx", help="this PTX file of the Rust kernels (an earlier build, to compare), no build")
    args = ap.parse_args()
    ptxas = find_tool("ptxas")
    if not ptxas:
        sys.exit("ptxas not found: pip install nvidia-cuda-nvcc==13.0.88, or set OFFLOAD_PTXAS")
    nvdisasm = find_tool("nvdisasm")
    if not nvdisasm:
        print("nvdisasm not found (pip install nvidia-cuda-nvdisasm): no SASS columns", file=sys.stderr)
    rows = {}
    if args.ptx:
        ptx = open(args.ptx, "rb").read().replace(b"\0", b"").decode()
    else:
        ptx = rust_ptx(args.arch, not args.no_build)
    counts = ptx_instructions(ptx)
    for entry, (regs, sass) in registers(ptxas, ptx, args.arch, nvdisasm).items():
        rows.setdefault(kernel_name(entry), {})["rust"] = (regs, counts.get(entry), sass)
    nvcc = shutil.which("nvcc") or os.path.join(os.path.dirname(ptxas), "nvcc")
    if os.path.isfile(nvcc):
        for text in cuda_ptx(nvcc, args.arch):
            counts = ptx_instructions(text)
            for entry, (regs, sass) in registers(ptxas, text, args.arch, nvdisasm).items():
                # A templated kernel compiled for several shapes: keep the one with the most
                # registers.
                old = rows.setdefault(kernel_name(entry), {}).get("cuda")
                if old is None or regs > old[0]:
                    rows[kernel_name(entry)]["cuda"] = (regs, counts.get(entry), sass)
    else:
        print("nvcc not found: Rust column only", file=sys.stderr)
    pattern = args.pattern.lower().replace("_", "")
    header = f"{'kernel':<24} {'rust regs':>9} {'cuda regs':>9} {'rust PTX':>9} {'cuda PTX':>9}"
    if nvdisasm:
        header += f" {'rust SASS':>9} {'cuda SASS':>9} {'rust 1st ld':>11} {'cuda 1st ld':>11}"
        header += f" {'rust ld>st':>10} {'cuda ld>st':>10} {'rust ld>fp':>10} {'cuda ld>fp':>10}"
        header += f" {'rust R2UR':>9} {'cuda R2UR':>9}"
    print(header)
    missing = ("-", "-", None)
    for name in sorted(rows):
        if pattern not in name or "rust" not in rows[name]:
            continue
        rust, cuda = rows[name]["rust"], rows[name].get("cuda", missing)
        line = f"{name:<24} {rust[0]:>9} {cuda[0]:>9} {rust[1]:>9} {cuda[1]:>9}"
        if nvdisasm:
            rs, cs = rust[2] or ("-",) * 5, cuda[2] or ("-",) * 5
            line += f" {rs[0]:>9} {cs[0]:>9} {rs[1]:>11} {cs[1]:>11}"
            line += f" {rs[2]:>10} {cs[2]:>10} {rs[3]:>10} {cs[3]:>10} {rs[4]:>9} {cs[4]:>9}"
        print(line)

if __name__ == "__main__":
    main()
