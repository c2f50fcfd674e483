#!/usr/bin/env python3
"""Rust/CUDA ratios of one or more rajaperf-rs runs (their results.csv files), by tier.

With several runs (separate processes on the same machine), each kernel's ratio is the
geometric mean over the runs, and each run's own geometric means are listed too: at the
default size many kernels take 4-10 us per repetition and their ratio moves by several per
cent from one process to the next, which one run cannot show.

The ratios are of the average time per repetition over a run's passes (as RAJAPerf reports);
a last line gives them from each side's fastest pass instead (`time_per_rep_min_s`), which a
transient slow pass of one side (a few milliseconds of a slower machine state) does not move.

The CUDA side of a kernel is its fastest Base_CUDA tuning of the run (the runner's choice,
column `cuda_tuning`); the summary lists which tuning that was for the kernels with several.

    scripts/lib/rajaperf-summary.py OUT/rajaperf-default*/results.csv
"""
import csv
import math
import sys

# The tiers, in its order (tier 2 also holds REDUCE3_INT, integer data).
TIERS = {
    "1": "COPY MUL ADD TRIAD DAXPY INIT3 MULADDSUB IF_QUAD HYDRO_1D PRESSURE FIR LTIMES",
    "1b": "EOS FIRST_DIFF INT_PREDICT DIFF_PREDICT PLANCKIAN INIT_VIEW1D COPY8 NESTED_INIT FIRST_SUM "
          "TRIDIAG_ELIM GEN_LIN_RECUR ENERGY VOL3D DEL_DOT_VEC_2D ZONAL_ACCUMULATION_3D MATVEC_3D_STENCIL",
    "2": "DOT REDUCE_SUM PI_REDUCE TRAP_INT PI_ATOMIC DAXPY_ATOMIC FIRST_MIN REDUCE_STRUCT MULTI_REDUCE "
         "HISTOGRAM NODAL_ACCUMULATION_3D REDUCE3_INT",
    "3": "HYDRO_2D JACOBI_1D JACOBI_2D HEAT_3D MAT_MAT_SHARED GEMM 2MM",
}
SLOWER = 1.05


def geomean(values):
    values = list(values)
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def load(path):
    """kernel -> rust/cuda ratio (the runner's, of the averages), kernel -> the ratio of the
    two sides' fastest passes, whether every result of the run passed its checks, and kernel
    -> the CUDA tuning compared with (runs before the column: "default")."""
    ratios, passed, fastest, tunings = {}, True, {}, {}
    for row in csv.DictReader(open(path)):
        passed &= row["verified"] == "true" and row["checksum_agrees"] == "true"
        if row["variant"] == "rust" and row["rust_over_cuda"]:
            ratios[row["kernel"]] = float(row["rust_over_cuda"])
        if row["variant"] == "cuda":
            tunings[row["kernel"]] = row.get("cuda_tuning") or "default"
        fastest[(row["kernel"], row["variant"])] = float(row["time_per_rep_min_s"])
    by_min = {k: fastest[(k, "rust")] / fastest[(k, "cuda")] for k in ratios if (k, "cuda") in fastest}
    return ratios, by_min, passed, tunings


def tier_line(ratios):
    parts = []
    for tier, names in TIERS.items():
        got = [ratios[k] for k in names.split() if k in ratios]
        if got:
            parts.append(f"tier {tier} {geomean(got):.3f} ({len(got)})")
    parts.append(f"all {geomean(ratios.values()):.3f} ({len(ratios)})")
    return ", ".join(parts)


def main():
    paths = sys.argv[1:]
    if not paths:
        sys.exit(__doc__)
    loaded = [load(p) for p in paths]
    runs = [(ratios, by_min, passed) for ratios, by_min, passed, _ in loaded]
    for path, (ratios, _, passed) in zip(paths, runs):
        print(f"{path}: {tier_line(ratios)}; every check passed: {'yes' if passed else 'NO'}")
    kernels = [k for names in TIERS.values() for k in names.split() if any(k in r for r, _, _ in runs)]
    combined = {k: geomean(r[k] for r, _, _ in runs if k in r) for k in kernels}
    if len(runs) > 1:
        print(f"\n{'kernel':<24} {'geomean':>8}  per run")
        for k in kernels:
            print(f"{k:<24} {combined[k]:8.3f}  " + " ".join(f"{r[k]:.3f}" if k in r else "-" for r, _, _ in runs))
        print(f"\nover the {len(runs)} runs: {tier_line(combined)}")
    slower = [f"{k} {v:.3f}" for k, v in combined.items() if v > SLOWER]
    print(f"above {SLOWER}: " + (", ".join(slower) if slower else "none"))
    by_min = {k: geomean(m[k] for _, m, _ in runs if k in m) for k in kernels}
    slower = [f"{k} {v:.3f}" for k, v in by_min.items() if v > SLOWER]
    print(f"from each side's fastest pass: {tier_line(by_min)}; above {SLOWER}: " + (", ".join(slower) if slower else "none"))
    # Which CUDA tuning was the fastest, for the kernels with several (count of runs each).
    chosen = []
    for k in kernels:
        counts = {}
        for *_, tunings in loaded:
            if tunings.get(k, "default") != "default":
                counts[tunings[k]] = counts.get(tunings[k], 0) + 1
        if counts:
            chosen.append(f"{k} " + ", ".join(f"{t} ({n}/{len(loaded)})" for t, n in sorted(counts.items(), key=lambda c: -c[1])))
    if chosen:
        print("fastest CUDA tuning: " + "; ".join(chosen))
    return 0 if all(passed for _, _, passed in runs) else 1


if __name__ == "__main__":
    sys.exit(main())
