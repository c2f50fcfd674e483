"""The summary of `scripts/gpu ab` (scripts/lib/ab.sh): per kernel the median Rust/CUDA ratio of
A and of B over the rounds, B/A, and B/A of Rust's own time, with their geometric means. Also
run on its own, on the folder of a run that was cut short: it reads the rounds that finished.

Usage: python3 scripts/lib/ab-summary.py OUT ROUNDS
"""
import csv, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
ratios = {}  # (kernel, side) -> [rust/cuda per round]
times = {}  # (kernel, side) -> [Rust's time per repetition per round]
for side in "AB":
    for r in range(1, rounds + 1):
        path = os.path.join(out, f"{side}-{r}", "results.csv")
        if not os.path.exists(path):
            continue
        for row in csv.DictReader(open(path)):
            if row["variant"] == "rust" and row["rust_over_cuda"]:
                ratios.setdefault((row["kernel"], side), []).append(float(row["rust_over_cuda"]))
            if row["variant"] == "rust" and row.get("time_per_rep_avg_s"):
                times.setdefault((row["kernel"], side), []).append(float(row["time_per_rep_avg_s"]))
kernels = sorted({k for k, _ in ratios}, key=lambda k: k)
quotients, time_quotients = [], []
# B/A: of the Rust/CUDA ratios (each round's CUDA run is the machine-state reference); time B/A:
# of Rust's own times, which is what to read where A and B compare with different CUDA
# baselines (revisions on both sides of a protocol change, e.g. before and after the tunings).
print(f"{'kernel':<24} {'A rust/cuda':>12} {'B rust/cuda':>12} {'B/A':>7} {'time B/A':>9}  (medians of {rounds} rounds; all rounds A | B)")
for k in kernels:
    ra, rb = ratios.get((k, "A"), []), ratios.get((k, "B"), [])
    if not ra or not rb:
        print(f"{k:<24} missing rounds: A {len(ra)}, B {len(rb)}")
        continue
    ma, mb = statistics.median(ra), statistics.median(rb)
    quotients.append(mb / ma)
    ta, tb = times.get((k, "A"), []), times.get((k, "B"), [])
    tq = statistics.median(tb) / statistics.median(ta) if ta and tb else float("nan")
    if ta and tb:
        time_quotients.append(tq)
    print(f"{k:<24} {ma:12.3f} {mb:12.3f} {mb / ma:7.3f} {tq:9.3f}  " + " ".join(f"{x:.3f}" for x in ra) + " | " + " ".join(f"{x:.3f}" for x in rb))
if quotients:
    print(f"geometric mean of B/A over {len(quotients)} kernels: {statistics.geometric_mean(quotients):.4f}")
if time_quotients:
    print(f"geometric mean of Rust's time B/A over {len(time_quotients)} kernels: {statistics.geometric_mean(time_quotients):.4f}")
