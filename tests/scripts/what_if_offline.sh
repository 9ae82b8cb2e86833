#!/usr/bin/env bash
# `poolsched what-if --event-log FILE`: a saved event log (tests/data/what_if/event_log.json)
# as a scenario (nodes joining, pools with parents, a pool change, jobs completed, aborted and
# still running at the window's end, a runtime parameter change), the proposed change applied
# from the start, deterministic outputs, and bad input refused with one line naming it; the
# fidelity's usage error recomputed from the rows; the window starting where the record does,
# also in a log whose oldest rows the bound dropped (event_log_wrapped.json).
# Usage: bash what_if_offline.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
sh_test "$@"
log=$data/what_if/event_log.json

run() { "$bin" what-if --event-log "$log" --since 1500 --until 10000 "$@"; }

run --set //sys/pool_trees/physical/a/@weight=5 --out "$work/one" >"$work/out" 2>"$work/err" ||
    fail "what-if: $(cat "$work/err")"
grep -q "pool tree physical, 3 operations" "$work/out" || fail "summary: $(cat "$work/out")"
grep -Eq '^b +0 +n/a->n/a +n/a->n/a ' "$work/out" || fail "b without wait figures: $(cat "$work/out")"
grep -q "what-if: recorded run 100%" "$work/err" || fail "progress: $(cat "$work/err")"
for f in scenario.json scenario-changed.json what-if.json report.html recorded/report.html \
         changed/report.html recorded/events.jsonl changed/pools.csv; do
    [ -s "$work/one/$f" ] || fail "missing $f"
done

python3 - "$work/one" <<'EOF'
import json, sys
d = sys.argv[1]
s = json.load(open(d + "/scenario.json"))
c = json.load(open(d + "/scenario-changed.json"))
def check(cond, what, *ctx):
    if not cond:
        sys.exit("FAIL: %s %s" % (what, " ".join(json.dumps(x) for x in ctx)))
check(s["duration"] == 8500, "duration = until - since", s["duration"])
g = {x["name"]: x for x in s["node_groups"]}
check(g["n1"]["resource_limits"]["cpu"] == 2 and g["n1"]["tags"] == ["ssd"], "n1 as of since", g)
check(g["n2"]["resource_limits"]["cpu"] == 0, "n2 joins later: no resources at first", g)
pools = s["pool_trees"]["physical"]["pools"]
check([p["name"] for p in pools] == ["a", "b", "b1"] and pools[2]["parent"] == "b"
      and "weight" not in pools[2], "pools, parents first, nulls left out", pools)
ops = {o["id"]: o for o in s["operations"]}
t = ops["op1"]["tasks"]
# j1 3000 ms in the window, j3 running at until 5900 ms, j2 aborted (left out), one never started
# (the mean); the jobs' own durations in their start order
check(ops["op1"]["start_time"] == 500 and ops["op1"]["user"] == "alice", "op1", ops["op1"])
check(t == [{"name": "main", "job_count": 3, "duration": 4450,
             "resources": t[0]["resources"], "job_durations": [3000, 5900]}], "op1's task", t)
check("tasks" not in ops["op1"]["spec"], "the commands are not part of the replay", ops["op1"])
check(ops["op2"]["tasks"][0]["job_count"] == 2 and ops["op2"]["tasks"][0]["duration"] == 3000,
      "op2: its job cut at until, its unstarted job", ops["op2"])
check(ops["op3"]["tasks"] == [{"name": "main", "job_count": 1, "duration": 3000,
                               "resources": t[0]["resources"]}],
      "op3 never ran: its task the mean of completed jobs of that name, the unknown one left out",
      ops["op3"])
ev = [(e["time"], e["type"]) for e in s["events"]]
check(ev == [(1500, "set_node_resources"), (4500, "set_pool_attribute"), (5000, "update_operation")],
      "events in time order", s["events"])
cp = {p["name"]: p for p in c["pool_trees"]["physical"]["pools"]}
check(cp["a"]["weight"] == 5, "the change applied", cp)
check(all(e["type"] != "set_pool_attribute" for e in c["events"]),
      "the recorded change of the same key dropped", c["events"])
w = json.load(open(d + "/what-if.json"))
check(w["recorded"]["pools"]["a"]["jobs_completed"] >= 1 and
      0 < w["recorded"]["users"]["alice"]["mean_usage"] <= 1, "metrics per pool and user",
      w["recorded"])
check(w["fidelity"]["operations"] == 3, "the operations submitted in the window compared",
      w["fidelity"])
# b has no operation of its own (only its child b1): in the table from pools.csv (its fair
# share, its child's usage), without wait figures, and no internal key of the measures leaks
# into what-if.json
for run in ("recorded", "changed"):
    b = w[run]["pools"]["b"]
    check(b["operations"] == 0 and b.get("wait_p50_ms", 0) is None and b.get("wait_p95_ms", 0) is None
          and b["mean_fair_share"] > 0 and b["mean_usage"] == w[run]["pools"]["b1"]["mean_usage"],
          run + ": a pool without operations", b)
def keys(x):
    return [k for k, v in x.items() for k in [k] + keys(v)] if isinstance(x, dict) else []
check(not [k for k in keys(w) if k.startswith("_")], "internal keys in what-if.json", keys(w))
# each run's measures (collected while it ran) are those of its events.jsonl
import math
for run in ("recorded", "changed"):
    m, ops, first, count = w[run], {}, {}, {}
    for line in open(d + "/" + run + "/events.jsonl"):
        e = json.loads(line)
        t, op = e["event_type"], e.get("operation_id")
        if t == "operation_started":
            ops[op], first[op] = (e["pools"]["physical"], e["user"], e["time"]), None
        elif op in ops:
            if t == "job_started" and first[op] is None:
                first[op] = e["time"]
            key = {"job_completed": "jobs_completed", "job_preempted": "preempted_jobs"}.get(t)
            for k in (("pools", ops[op][0]), ("users", ops[op][1])) if key else ():
                count[k + (key,)] = count.get(k + (key,), 0) + 1
    check(m["first_job"] == first, run + ": first job of each operation", m["first_job"], first)
    waits = {}
    for op, (pool, user, submitted) in ops.items():
        for k in (("pools", pool), ("users", user)):
            waits.setdefault(k, []).append((first[op] if first[op] is not None else 8500) - submitted)
            count[k + ("operations",)] = count.get(k + ("operations",), 0) + 1
    for (kind, name), v in waits.items():
        v.sort()
        for q, key in ((0.5, "wait_p50_ms"), (0.95, "wait_p95_ms")):
            count[(kind, name, key)] = v[max(math.ceil(q * len(v)), 1) - 1]
    for (kind, name, key), v in count.items():
        check(m[kind][name][key] == v, run + ": " + key, kind, name, m[kind][name], v)
EOF

# deterministic
run --set //sys/pool_trees/physical/a/@weight=5 --out "$work/two" >/dev/null 2>&1 || fail "second run"
for f in what-if.json scenario.json recorded/events.jsonl changed/pools.csv; do
    cmp -s "$work/one/$f" "$work/two/$f" || fail "$f differs between two runs"
done

# --format json: what-if.json on stdout
run --set //sys/pool_trees/physical/a/@weight=5 --out "$work/three" --format json >"$work/json" 2>/dev/null ||
    fail "--format json"
cmp -s "$work/json" <(cat "$work/one/what-if.json"; echo) || fail "--format json prints what-if.json"

# The fidelity's usage error against the same measure computed from the rows: windows after a
# job ended (it is not running in them), shorter than the 200 samples, and starting before the
# log's oldest row (the window starts there)
for win in "1500 10000" "8000 12000" "5050 5150" "1 10000"; do
    set -- $win
    "$bin" what-if --event-log "$log" --since "$1" --until "$2" --out "$work/fid$1" >/dev/null \
        2>"$work/err" || fail "what-if $win: $(cat "$work/err")"
    python3 "$src/tests/scripts/what_if_fidelity_check.py" "$log" "$work/fid$1" "$1" "$2" ||
        fail "fidelity of $win"
done

# Nothing before the log's oldest row (1000): the same replay as from that row, said so
"$bin" what-if --event-log "$log" --since 1000 --until 10000 --out "$work/from1000" >/dev/null 2>&1 ||
    fail "what-if from the oldest row"
"$bin" what-if --event-log "$log" --since 1 --until 10000 --out "$work/from1" >"$work/out" 2>&1
for f in scenario.json recorded/events.jsonl recorded/pools.csv changed/pools.csv; do
    cmp -s "$work/from1/$f" "$work/from1000/$f" || fail "$f: a window from before the oldest row"
done
grep -q "window 1000..10000 ms" "$work/out" || fail "window from the oldest row: $(cat "$work/out")"
grep -q "starts where the event log's record does: it holds nothing to replay from 1 (since, as asked) to 1000" \
    "$work/out" || fail "the summary says where the window starts: $(cat "$work/out")"
python3 -c '
import json, sys
w = json.load(open(sys.argv[1]))
sys.exit(0 if (w["since"], w["requested_since"]) == (1000, 1) else "FAIL: " + json.dumps(w)[:200])
' "$work/from1/what-if.json"

# A log the bound wrapped (event_log_wrapped.json): it starts with jobs of an operation whose
# operation_started row was dropped ("old": 3 jobs, one done before the log, one after, one
# running), pool_trees_info and pools_info of a change of the trees (no state), then the
# scheduler's state rows (pool_trees_info, pools_info, nodes_info, operations_info), repeated
# later. The window starts at the state, not at the change's rows; the nodes are nodes_info's,
# there from the start, with no event for the repeat; "old" is operations_info's, submitted
# before the window with its runtime parameters and one job left (the two completed by the
# state are its completed); op1 is not taken twice
wrapped=$data/what_if/event_log_wrapped.json
"$bin" what-if --event-log "$wrapped" --since 1 --until 6000 --out "$work/wrapped" >/dev/null 2>"$work/err" ||
    fail "what-if of a wrapped log: $(cat "$work/err")"
python3 - "$work/wrapped" <<'EOF2'
import json, sys
s = json.load(open(sys.argv[1] + "/scenario.json"))
w = json.load(open(sys.argv[1] + "/what-if.json"))
g = {x["name"]: (x["resource_limits"]["cpu"], x["tags"]) for x in s["node_groups"]}
ok = (w["since"] == 1200 and s["duration"] == 4800 and g == {"n1": (2, []), "n2": (2, ["ssd"])}
      and not s.get("events") and [o["id"] for o in s["operations"]] == ["old", "op1"])
old = s["operations"][0]
ok = ok and (old["start_time"] == 0 and old["user"] == "bob" and
             old["spec"]["scheduling_options_per_pool_tree"]["physical"]["weight"] == 2 and
             [(t["job_count"], t.get("job_durations")) for t in old["tasks"]] == [(1, [1800])])
sys.exit(0 if ok else "FAIL: wrapped log: since %s, nodes %s, events %s, operations %s" %
         (w["since"], g, s.get("events"), s["operations"]))
EOF2
python3 "$src/tests/scripts/what_if_fidelity_check.py" "$wrapped" "$work/wrapped" 1 6000 ||
    fail "fidelity of the wrapped log"

# --config and --remove
echo '{"//sys/pools/b/@weight": 3, "//sys/pool_trees/physical/a/@weight": null}' >"$work/cfg.json"
run --config "$work/cfg.json" --out "$work/cfg" >/dev/null 2>&1 || fail "--config"
python3 -c '
import json, sys
p = {x["name"]: x for x in json.load(open(sys.argv[1]))["pool_trees"]["physical"]["pools"]}
sys.exit(0 if p["b"]["weight"] == 3 and "weight" not in p["a"] else "FAIL: --config " + json.dumps(p))
' "$work/cfg/scenario-changed.json"

# bad input: exit 2, one line naming it
expect_error() {   # pattern, args...
    local pattern=$1
    shift
    set +e
    "$bin" what-if "$@" >"$work/out" 2>"$work/err"
    local rc=$?
    set -e
    [ "$rc" = 2 ] || fail "exit $rc for $*: $(cat "$work/err")"
    grep -q -- "$pattern" "$work/err" || fail "message for $*: $(cat "$work/err")"
}
expect_error '//sys/pool_trees/physical/zz/@weight: no such pool' --event-log "$log" --since 1500 \
    --until 10000 --set //sys/pool_trees/physical/zz/@weight=2 --out "$work/bad"
expect_error 'must end in /@<attribute>' --event-log "$log" --since 1500 --until 10000 \
    --set //sys/pool_trees/physical/a=2 --out "$work/bad"
expect_error 'the changed scenario: .*weight' --event-log "$log" --since 1500 --until 10000 \
    --set //sys/pool_trees/physical/a/@weight=-1 --out "$work/bad"
[ ! -e "$work/bad" ] || fail "a refused change leaves no outputs"
expect_error '\-\-since: "yesterday" is not a time' --event-log "$log" --since yesterday
expect_error '\-\-until: must be after \-\-since' --event-log "$log" --since 5000 --until 4000
expect_error 'until: the window ends at 1000 ms since the epoch, not after the start of the event log.s record (1000)' \
    --event-log "$log" --since 1 --until 1000
expect_error 'missing --since' --event-log "$log"
expect_error '\-\-format: "yson" is not one of text, json' --event-log "$log" --since 1 --format yson
echo '[{"timestamp": 5, "event_type": "node_registered", "node_address": "n", "resource_limits": {}}]' \
    >"$work/nopools.json"
expect_error 'no pools_info row' --event-log "$work/nopools.json" --since 1 --until 100
echo '[{"timestamp": 5, "event_type": "pools_info", "pools": {}}, {"timestamp": 5, "event_type": "nodes_info", "nodes": {"n1": 2}}]' \
    >"$work/badnodes.json"
expect_error 'event log row 1: nodes.n1: must be a map {tags, resource_limits}' --event-log "$work/badnodes.json" \
    --since 1 --until 100
echo '[{"timestamp": "x", "event_type": "pools_info"}]' >"$work/badrow.json"
expect_error 'event log row 0: timestamp' --event-log "$work/badrow.json" --since 1 --until 100

# the same rows one per line (as `poolsched event-log --format json` prints them; job rows read
# by the record's own scanner): the same what-if, byte for byte
python3 -c '
import json, sys
for row in json.load(open(sys.argv[1])):
    print(json.dumps(row, separators=(",", ":")))
' "$log" >"$work/rows.jsonl"
"$bin" what-if --event-log "$work/rows.jsonl" --since 1500 --until 10000 \
    --set //sys/pool_trees/physical/a/@weight=5 --out "$work/lines" >/dev/null 2>&1 || fail "rows one per line"
for f in what-if.json scenario.json scenario-changed.json recorded/events.jsonl changed/pools.csv; do
    cmp -s "$work/one/$f" "$work/lines/$f" || fail "$f differs with the rows one per line"
done
{ head -n 3 "$work/rows.jsonl"; echo; echo '{"timestamp": 1, "event_type": "job_started"'; } >"$work/badline.jsonl"
expect_error 'badline.jsonl: line 5: not a JSON row' --event-log "$work/badline.jsonl" --since 1 --until 100
echo "ok what_if_offline"
