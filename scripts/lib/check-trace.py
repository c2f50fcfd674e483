#!/usr/bin/env python3
"""Checks the four timelines `examples/pipeline --timeline DIR` writes (Chrome trace JSON):
each parses, names its tracks, has the expected launches, and the host-slice variant copies in
and out around every launch while the other three copy only at their edges. Prints a summary
line per variant; exits non-zero on the first problem.

Usage: scripts/lib/check-trace.py DIR STAGES_TIMES_REPS"""
import json, os, sys

d, launches = sys.argv[1], int(sys.argv[2])
copies = {}
for variant in ("host-slices", "launch-scope", "preloads", "buffers"):
    path = os.path.join(d, f"pipeline-{variant}.json")
    trace = json.load(open(path))
    events = trace["traceEvents"]
    named = {e["tid"] for e in events if e.get("ph") == "M" and e.get("name") == "thread_name"}
    spans = [e for e in events if e.get("ph") == "X"]
    bad = [e for e in spans if e["ts"] < 0 or e["dur"] < 0]
    if bad:
        sys.exit(f"{variant}: events with negative times: {bad[:3]}")
    if not named or any(e["tid"] not in named for e in spans):
        sys.exit(f"{variant}: an event on a track without a name")
    host_launches = [e for e in spans if e["name"].startswith("launch ")]
    # (Each launch is on the host thread's track and, as queued work, on the queue's.)
    per_track = {}
    for e in host_launches:
        per_track[e["tid"]] = per_track.get(e["tid"], 0) + 1
    if max(per_track.values(), default=0) != launches:
        sys.exit(f"{variant}: {per_track} launches per track, want {launches} on one")
    # (Copies are queued work: on the device queue's track.)
    queues = {e["tid"] for e in events if e.get("ph") == "M" and "queue" in e.get("args", {}).get("name", "")}
    copies[variant] = sum(1 for e in spans if e["name"].startswith("copy ") and e["tid"] in queues)
    waits = sum(1 for e in spans if e["name"] == "wait")
    print(f"{variant}: {len(spans)} events, {launches} launches, {copies[variant]} copies, {waits} waits, tracks {sorted(per_track)}")
if copies["host-slices"] < 2 * launches:
    sys.exit(f"host-slices: {copies['host-slices']} copies for {launches} launches, want a copy in and out around each")
for v in ("launch-scope", "preloads", "buffers"):
    if copies[v] >= copies["host-slices"] / 4:
        sys.exit(f"{v}: {copies[v]} copies, not far fewer than the host slices' {copies['host-slices']}")
print("timelines: valid, the host-slice launches copy around every launch")
