#!/usr/bin/env bash
# `poolsched simulate` is deterministic: the same scenario run twice gives byte-identical
# outputs (all four files), also through standard input; --pools-period samples pools.csv at
# multiples of the period. Usage: sim_determinism.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
sh_test "$@"

# A scenario with a bit of everything: two trees, FIFO and weighted pools, guarantees, an
# integral pool (its updates are never skipped), filters, ephemeral pools, count limits, task
# phases and cpu_usage profiles; jobs whose lengths do not line up with the heartbeats.
PYTHONPATH="$src/tests/scripts" python3 - "$work/s.json" <<'PY'
import json, sys
from simlib import nodes, op, scenario, GIB
ops = []
for i in range(40):
    o = op(f"op{i:02d}", 1000 * (i % 13) + 7 * i, ["prod", "batch", "adhoc", "ml", None][i % 5],
           jobs=5 + (i * 7) % 23, duration=3000 + (i * 1733) % 20000, cpu=1 + (i % 3),
           user=["ann", "bob", "cid"][i % 3])
    if i % 4 == 0:
        o["tasks"].append({"name": "reduce", "job_count": 3, "duration": 4100,
                           "resources": {"cpu": 2, "memory": GIB, "user_slots": 1},
                           "cpu_usage": [[0, 0.5], [2000, 2]]})
    if i % 5 == 3:
        o["spec"]["scheduling_tag_filter"] = "gpu"
    if i % 7 == 6:
        o["spec"]["pool_trees"] = ["side"]
        o["spec"].pop("pool", None)
    ops.append(o)
sc = scenario([nodes("a", 6, tags=["dc1"]), nodes("g", 2, cpu=16, tags=["dc1", "gpu"]),
               nodes("s", 3, tags=["dc2"])],
              {"main": {"nodes_filter": "dc1", "default_parent_pool": "adhoc", "pools": [
                  {"name": "prod", "weight": 2, "strong_guarantee_resources": {"cpu": 20}},
                  {"name": "batch", "mode": "fifo", "max_running_operation_count": 3},
                  {"name": "adhoc", "create_ephemeral_subpools": True},
                  {"name": "ml", "integral_guarantees": {"guarantee_type": "burst",
                   "resource_flow": {"cpu": 5}, "burst_guarantee_resources": {"cpu": 30}}}]},
               "side": {"nodes_filter": "dc2"}},
              ops, heartbeat=2000, fs=500)
sc["default_tree"] = "main"
json.dump(sc, open(sys.argv[1], "w"))
PY

"$bin" simulate "$work/s.json" --output "$work/one" 2> /dev/null || fail "first run"
"$bin" simulate - --output "$work/two" < "$work/s.json" 2> /dev/null || fail "second run (stdin)"
for f in operations.csv events.jsonl pools.csv summary.json; do
    [ -s "$work/one/$f" ] || fail "$f is empty"
    cmp -s "$work/one/$f" "$work/two/$f" || fail "$f differs between two runs"
done
lines=$(wc -l < "$work/one/events.jsonl")
[ "$lines" -gt 1000 ] || fail "only $lines events"

# Sampling: rows at the first update at or after each multiple of 5 s.
"$bin" simulate "$work/s.json" --output "$work/sampled" --pools-period 5000 2> /dev/null || fail "sampled run"
python3 - "$work" <<'PY'
import csv, sys
work = sys.argv[1]
full = list(csv.DictReader(open(f"{work}/one/pools.csv")))
sampled = list(csv.DictReader(open(f"{work}/sampled/pools.csv")))
times = sorted({int(r["time"]) for r in sampled})
if not times or any(t % 5000 for t in times) or times != list(range(0, times[-1] + 1, 5000)):
    sys.exit(f"FAIL: sampled times {times[:5]}...")
# The sampled rows are exactly the full series' rows at those times.
keep = set(times)
if sampled != [r for r in full if int(r["time"]) in keep]:
    sys.exit("FAIL: sampled rows differ from the full series")
for f in ("operations.csv", "events.jsonl"):
    if open(f"{work}/one/{f}").read() != open(f"{work}/sampled/{f}").read():
        sys.exit(f"FAIL: {f} changed with --pools-period")
PY

# Every operation that waits has one top reason from the documented list (core/pending.h).
python3 - "$work/one" <<'PY'
import json, sys
out = sys.argv[1]
known = {"suspended", "max_running_operation_count", "no_nodes", "no_matching_node",
         "operation_resource_limits", "pool_resource_limits", "waiting_for_fair_share_update",
         "usage_at_fair_share", "resources_fragmented", "no_node_fits", "no_free_resources",
         "waiting_for_heartbeat"}
s = json.load(open(f"{out}/summary.json"))
seen = set()
for line in open(f"{out}/events.jsonl"):
    e = json.loads(line)
    if e["event_type"] == "operation_pending":
        if e["reason"] not in known or not e["message"]:
            sys.exit(f"FAIL: reason {e}")
        seen.add(e["reason"])
if len(seen) < 4:
    sys.exit(f"FAIL: only reasons {seen}")
for p in s["pending_at_end"]:
    if p["reason"] not in known or p["pending_job_count"] <= 0 and p["state"] == "running":
        sys.exit(f"FAIL: pending_at_end {p}")
if set(s["pending_reason_time"]) != known:
    sys.exit(f"FAIL: pending_reason_time keys {sorted(s['pending_reason_time'])}")
PY

# Usage errors.
"$bin" simulate "$work/s.json" 2> "$work/err" && fail "no --output accepted"
grep -q "^error: simulate: missing --output DIR" "$work/err" || fail "message for a missing --output"
"$bin" simulate "$work/s.json" --output "$work/x" --pools-period -5 2> "$work/err" && fail "negative period accepted"
echo "sim_determinism: ok"
