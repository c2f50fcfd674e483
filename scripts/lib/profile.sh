#!/usr/bin/env bash
# Where the time of a bundle executable's kernels goes, per kernel, by Nsight Compute: GPU time,
# DRAM throughput, achieved occupancy, registers, and the average number of cycles a warp spent
# stalled per issued instruction, by reason (waiting at a barrier, for a global load, on a
# shuffle or shared-memory access, ...). The first thing to read when a kernel is slower than its
# CUDA twin and the source does not say why.
#
# Runs on the GPU machine after scripts/lib/gpu-env.sh's set-up (it sources it):
#   scripts/gpu profile OUT KERNEL_REGEX EXECUTABLE [ARGS...]
#   e.g. scripts/gpu profile OUT 'radix|scan' .gpu-bundle/bin/sort 67108864 0
# Profiles at most GPU_PROFILE_LAUNCHES (default 24) launches of kernels whose name matches
# KERNEL_REGEX, caches and clocks as in a timed run. OUT/profile.csv has every metric of every
# launch; the table printed has the medians per kernel name.
# GPU_PROFILE_SOURCE=1 also profiles the first matching launch instruction by instruction
# (Nsight Compute's source page, SASS): OUT/source.csv, and the 40 instructions that execute
# most and the 40 where warps stall most are printed — where in a kernel its time goes.
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${1:?usage: scripts/gpu profile OUT KERNEL_REGEX EXECUTABLE [ARGS...]}
regex=${2:?kernel name regex} bin=${3:?executable}
shift 3
mkdir -p "$out"
# shellcheck source=scripts/lib/gpu-env.sh
source scripts/lib/gpu-env.sh
ncu=$(command -v ncu || { [ -x /usr/local/cuda/bin/ncu ] && echo /usr/local/cuda/bin/ncu; } || true)
[ -n "$ncu" ] || { echo "no ncu (Nsight Compute) on this machine"; exit 1; }
stalls=barrier,long_scoreboard,short_scoreboard,membar,mio_throttle,lg_throttle,wait,math_pipe_throttle,not_selected,selected,branch_resolving,no_instruction,drain,dispatch_stall,sleeping,tex_throttle,imc_miss
metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active,launch__registers_per_thread,launch__occupancy_limit_registers,launch__grid_size,launch__block_size,smsp__inst_executed.sum
for s in ${stalls//,/ }; do metrics+=",smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
OFFLOAD_QUIET=1 "$ncu" --csv --cache-control none --clock-control none -k "regex:$regex" \
  --launch-count "${GPU_PROFILE_LAUNCHES:-24}" --metrics "$metrics" "$bin" "$@" \
  > "$out/profile.raw" 2> "$out/profile.err"
echo "ncu exit $?"
tail -3 "$out/profile.err"
sed -i "s#$PWD/##g" "$out/profile.raw"
PYTHONPATH=scripts/lib python3 - "$out" <<'PY'
import csv, os, re, statistics, sys
from ncu_csv import read_launches
out = sys.argv[1]
launches = read_launches(os.path.join(out, "profile.raw"))
if not launches:
    sys.exit("no profile rows (see profile.err)")
for l in launches.values():  # the GPU time in microseconds under its metric's name
    if "us" in l:
        l["gpu__time_duration.sum"] = l.pop("us")
    l.pop("process")
with open(os.path.join(out, "profile.csv"), "w", newline="") as f:
    names = sorted({k for l in launches.values() for k in l if k != "kernel"})
    w = csv.writer(f)
    w.writerow(["launch", "kernel"] + names)
    for i, l in launches.items():
        w.writerow([i, l["kernel"]] + [l.get(n, "") for n in names])
by = {}
for l in launches.values():
    short = re.sub(r"^__offload_[a-z0-9_]*?_[0-9a-f]{8}_", "", l["kernel"])[:40]
    by.setdefault(short, []).append(l)
med = lambda ls, k: statistics.median([l[k] for l in ls if k in l] or [float("nan")])
for short, ls in by.items():
    print(f"{short}: n={len(ls)} {med(ls, 'gpu__time_duration.sum'):.1f} us, DRAM {med(ls, 'dram__throughput.avg.pct_of_peak_sustained_elapsed'):.0f} %, "
          f"warps active {med(ls, 'sm__warps_active.avg.pct_of_peak_sustained_active'):.0f} %, {med(ls, 'launch__registers_per_thread'):.0f} registers, "
          f"grid {med(ls, 'launch__grid_size'):.0f} x {med(ls, 'launch__block_size'):.0f}")
    st = {k.split("stalled_")[1].split("_per_issue")[0]: med(ls, k) for k in ls[0] if "stalled_" in k}
    print("   stall cycles per issue: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(st.items(), key=lambda kv: -kv[1]) if v >= 0.05))
PY

if [ "${GPU_PROFILE_SOURCE:-0}" = 1 ]; then
  OFFLOAD_QUIET=1 "$ncu" --csv --cache-control none --clock-control none -k "regex:$regex" --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass "$bin" "$@" \
    > "$out/source.csv" 2> "$out/source.err"
  echo "ncu (source) exit $?"
  tail -3 "$out/source.err"
  python3 - "$out/source.csv" <<'PY' || echo "(no per-instruction summary: see source.csv)"
import csv, sys
lines = open(sys.argv[1]).read().splitlines()
start = next(n for n, l in enumerate(lines) if l.startswith('"') and "Source" in l)
rows = list(csv.DictReader(lines[start:]))
def num(r, *names):
    for n in names:
        for k in r:
            if k.startswith(n):
                try:
                    return float(str(r[k]).replace(",", ""))
                except ValueError:
                    pass
    return 0.0
for title, key in (("executed", ("Instructions Executed", "Warp Instructions Executed")),
                   ("stall samples", ("Warp Stall Sampling (All", "Sampling Data (All"))):
    total = sum(num(r, *key) for r in rows) or 1.0
    print(f"top instructions by {title} (share of the kernel's {total:.0f}):")
    for r in sorted(rows, key=lambda r: -num(r, *key))[:40]:
        print(f"  {num(r, *key) / total:6.1%}  {r.get('Address', '')}  {r.get('Source', '')[:90]}")
PY
fi
