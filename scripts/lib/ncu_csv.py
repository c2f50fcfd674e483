"""Nsight Compute's `--csv` output (one row per launch and metric) read into launches: for
scripts/lib/kernel-times.sh and scripts/lib/profile.sh."""

import csv

# gpu__time_duration's units, to microseconds.
TO_US = {"ns": 1e-3, "nsecond": 1e-3, "us": 1.0, "usecond": 1.0, "ms": 1e3, "msecond": 1e3}


def read_launches(path):
    """{launch id: {"process", "kernel", metric name: value, "us": GPU time}} from the CSV at
    `path` (ncu's own lines before the header skipped; values that are not numbers left out).
    None when the file holds no profile rows."""
    lines = open(path).read().splitlines()
    start = next((n for n, l in enumerate(lines) if l.startswith('"ID"')), len(lines))
    rows = [r for r in csv.reader(lines[start:]) if r]
    if not rows:
        return None
    head = rows[0]
    col = {name: head.index(name) for name in ("ID", "Process Name", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")}
    launches = {}
    for r in rows[1:]:
        l = launches.setdefault(r[col["ID"]], {"process": r[col["Process Name"]], "kernel": r[col["Kernel Name"]]})
        try:
            value = float(r[col["Metric Value"]].replace(",", ""))
        except ValueError:
            continue
        name = r[col["Metric Name"]]
        if name == "gpu__time_duration.sum":
            l["us"] = value * TO_US.get(r[col["Metric Unit"]], float("nan"))
        l[name] = value
    return launches
