#!/usr/bin/env bash
# A slice of the Alibaba GPU trace through the simulator: `trace import alibaba-gpu --limit N`,
# then `simulate` until every operation has finished (the import's duration, which assumes no
# queueing, is dropped). Every job is accounted for: as many starts as completions, one
# operations.csv row per operation, each completed with its job. Jobs peak at their memory
# request (no max_memory in the trace) while the memory digest starts at half of it, so some
# attempts are aborted for resource_overdraft on full nodes and retried: every abort must be
# one and be retried. The full trace is
# examples/alibaba/run.sh. Usage: sim_alibaba.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
bin=$1
trace="$2/data/alibaba-gpu-2023"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ -f "$trace/openb_pod_list_default.csv" ] || fail "no trace in $trace"

for pods in default gpuspec33; do
    "$bin" trace import alibaba-gpu "$trace" --pods $pods --limit 400 --output "$work/$pods.json" 2> /dev/null \
        || fail "import $pods"
    python3 - "$work/$pods.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
del s["duration"]
json.dump(s, open(sys.argv[1], "w"))
PY
    "$bin" simulate "$work/$pods.json" --output "$work/$pods" --pools-period 3600000 2> /dev/null \
        || fail "simulate $pods"
    python3 - "$work/$pods.json" "$work/$pods" <<'PY'
import csv, json, sys
sc = json.load(open(sys.argv[1]))
out = sys.argv[2]
fail = lambda m: sys.exit("FAIL: " + m)
ids = [o["id"] for o in sc["operations"]]
jobs = sum(t["job_count"] for o in sc["operations"] for t in o["tasks"])
rows = list(csv.DictReader(open(f"{out}/operations.csv")))
if [r["id"] for r in rows] != ids:
    fail("operations.csv rows are not the scenario's operations")
if any(r["operation_state"] != "completed" or r["in_timeframe"] != "true" for r in rows):
    fail("an operation did not complete: " + str([r for r in rows if r["operation_state"] != "completed"][:1]))
counts = {}
filters = {o["id"]: o["spec"].get("scheduling_tag_filter") for o in sc["operations"]}
groups = {g["name"]: g["tags"] for g in sc["node_groups"]}
for line in open(f"{out}/events.jsonl"):
    e = json.loads(line)
    counts[e["event_type"]] = counts.get(e["event_type"], 0) + 1
    if e["event_type"] == "job_aborted" and e["reason"] != "resource_overdraft":
        fail(f"job aborted for {e['reason']}")
    if e["event_type"] == "job_started" and filters[e["operation_id"]]:
        tag = groups[e["node_id"].rsplit("-", 1)[0]][0]
        if tag not in filters[e["operation_id"]].split("|"):
            fail(f"job of {e['operation_id']} ({filters[e['operation_id']]}) on a {tag} node")
aborted = counts.get("job_aborted", 0)
if counts.get("job_started") != jobs + aborted or counts.get("job_completed") != jobs:
    fail(f"{jobs} jobs, {counts.get('job_started')} started, {counts.get('job_completed')} completed")
if counts.get("operation_completed") != len(ids):
    fail(f"{counts.get('operation_completed')} operations completed of {len(ids)}")
s = json.load(open(f"{out}/summary.json"))
j = s["jobs"]
if (j["total"], j["started"], j["completed"], j["running"], j["pending"], j["aborted"]) != (jobs, jobs + aborted, jobs, 0, 0, aborted):
    fail(f"summary jobs {j}")
if s["end"] != "all_operations_finished" or s["job_wait_time"]["count"] != jobs + aborted:
    fail(f"summary end {s['end']}, waits {s['job_wait_time']}")
PY
done
echo "sim_alibaba: ok"
