#!/usr/bin/env python3
"""Registers and PTX instruction counts of the rajaperf-rs kernels, Rust and CUDA side by
side, without a GPU: `ptxas -v` on the PTX that `cargo offload build` made and on nvcc's PTX
of the CUDA baselines. ptxas reports the same register counts as the GPU does at run time
(checked against Nsight Compute on an H200), so register pressure can be compared before a
GPU run.

Usage: scripts/kernel-resources.py [--arch sm_90] [--no-build] [PATTERN]
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

from kernel_names import kernel_identifier

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


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


def registers(ptxas, ptx_text, arch):
    """`{entry: registers}` from `ptxas -v`. A PTX `.version` newer than this ptxas (pip's nvcc
    front end and ptxas can come from different releases) is lowered to the one it names."""
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
    found, entry = {}, None
    for line in run.stderr.splitlines():
        m = re.search(r"Compiling entry function '(\S+)'", line)
        if m:
            entry = m.group(1)
        m = re.search(r"Used (\d+) registers", line)
        if m and entry:
            found[entry] = int(m.group(1))
            entry = None
    return found


def rust_ptx(arch, build):
    if build:
        subprocess.run(["cargo", "offload", "build", "--release", "-p", "rajaperf-rs", "--target-gpu", arch],
                       cwd=ROOT, check=True)
    candidates = glob.glob(os.path.join(ROOT, "target", "offload", "cache", f"{arch}-*", f"{arch}.ptx"))
    candidates = [p for p in candidates if b"__offload_rajaperf_" in open(p, "rb").read()]
    if not candidates:
        sys.exit(f"no rajaperf-rs PTX for {arch}: run without --no-build")
    newest = max(candidates, key=os.path.getmtime)
    return open(newest, "rb").read().replace(b"\0", b"").decode()


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
    ap.add_argument("--no-build", action="store_true", help="use the newest PTX already built")
    ap.add_argument("--ptx", help="this PTX file of the Rust kernels (an earlier build, to compare), no build")
    args = ap.parse_args()
    ptxas = find_tool("ptxas")
    if not ptxas:
        sys.exit("ptxas not found: pip install nvidia-cuda-nvcc==13.0.88, or set OFFLOAD_PTXAS")
    rows = {}
    if args.ptx:
        ptx = open(args.ptx, "rb").read().replace(b"\0", b"").decode()
    else:
        ptx = rust_ptx(args.arch, not args.no_build)
    counts = ptx_instructions(ptx)
    for entry, regs in registers(ptxas, ptx, args.arch).items():
        rows.setdefault(kernel_name(entry), {})["rust"] = (regs, counts.get(entry))
    nvcc = shutil.which("nvcc") or os.path.join(os.path.dirname(ptxas), "nvcc")
    if os.path.isfile(nvcc):
        for text in cuda_ptx(nvcc, args.arch):
            counts = ptx_instructions(text)
            for entry, regs in registers(ptxas, text, args.arch).items():
                # A templated kernel compiled for several shapes: keep the most registers.
                old = rows.setdefault(kernel_name(entry), {}).get("cuda", (0, 0))
                rows[kernel_name(entry)]["cuda"] = max(old, (regs, counts.get(entry)))
    else:
        print("nvcc not found: Rust column only", file=sys.stderr)
    pattern = args.pattern.lower().replace("_", "")
    print(f"{'kernel':<24} {'rust regs':>9} {'cuda regs':>9} {'rust PTX':>9} {'cuda PTX':>9}")
    for name in sorted(rows):
        if pattern not in name or "rust" not in rows[name]:
            continue
        rust, cuda = rows[name]["rust"], rows[name].get("cuda", ("-", "-"))
        print(f"{name:<24} {rust[0]:>9} {cuda[0]:>9} {rust[1]:>9} {cuda[1]:>9}")


if __name__ == "__main__":
    main()
