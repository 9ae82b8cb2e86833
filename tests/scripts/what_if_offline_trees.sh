#!/usr/bin/env bash
# `poolsched what-if --event-log FILE` on a cluster with two pool trees
# (tests/data/what_if/event_log_trees.json): the trees come from the pool_trees_info rows (their
# nodes_filter puts each node in its tree, a later row's change is a set_tree_attribute event,
# default_tree is the tree reported), the pool table covers the reported tree only (an
# operation in the other tree is in no pool of it, one in both trees in each tree's report),
# the user table every operation, a pool's jobs done only its jobs in the tree, the usage error
# over the tree's nodes; a bad pool_trees_info
# row is refused naming it.
# Usage: bash what_if_offline_trees.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
sh_test "$@"
log=$data/what_if/event_log_trees.json

run() { "$bin" what-if --since 1500 --until 12000 --heartbeat-period 100 \
    --fair-share-update-period 100 "$@"; }

# refused LOG PATTERN: what-if on LOG exits 2 with a message matching PATTERN
refused() {
    local rc=0
    run --event-log "$1" --out "$work/refused" >"$work/out" 2>"$work/err" || rc=$?
    [ "$rc" = 2 ] && grep -q -- "$2" "$work/err" || fail "$1: exit $rc $(cat "$work/err")"
}

run --event-log "$log" --out "$work/physical" >"$work/out" 2>"$work/err" ||
    fail "what-if: $(cat "$work/err")"
grep -q "pool tree physical, 3 operations" "$work/out" || fail "summary: $(cat "$work/out")"
run --event-log "$log" --default-tree gpu --set //sys/pools/g/@weight=2 --out "$work/gpu" \
    >"$work/out" 2>"$work/err" || fail "what-if --default-tree gpu: $(cat "$work/err")"
grep -q "pool tree gpu, 3 operations" "$work/out" || fail "summary: $(cat "$work/out")"

cp "$log" "$work/log.json"
python3 - "$work" <<'EOF'
import json, sys
d = sys.argv[1]
def check(cond, what, *ctx):
    if not cond:
        sys.exit("FAIL: %s %s" % (what, " ".join(json.dumps(x) for x in ctx)))
s = json.load(open(d + "/physical/scenario.json"))
t = s["pool_trees"]
check(t["physical"]["nodes_filter"] == "cpu" and t["gpu"]["nodes_filter"] == "gpu",
      "the trees' nodes_filter from pool_trees_info", t)
check(t["physical"]["max_operation_count"] == 10 and "max_operation_count" not in t["gpu"],
      "the trees' configs as of since, nulls left out", t)
check(s["default_tree"] == "physical", "the recorded default tree", s["default_tree"])
check(s["events"][0] == {"type": "set_tree_attribute", "tree": "physical",
                         "key": "max_operation_count", "value": 20, "time": 4500},
      "a tree's change in the window", s["events"])
check([(e["type"], e["time"]) for e in s["events"][1:]] ==
      [("set_node_resources", 5500), ("set_node_tags", 5500)], "x1's tag at 5500", s["events"])
c = json.load(open(d + "/gpu/scenario-changed.json"))
check(c["default_tree"] == "gpu" and c["pool_trees"]["gpu"]["pools"][0]["weight"] == 2,
      "--default-tree gpu: //sys/pools is that tree", c["pool_trees"]["gpu"])

# each node ran jobs of its own tree only
for run in ("physical", "gpu"):
    for line in open(d + "/" + run + "/recorded/events.jsonl"):
        e = json.loads(line)
        if e["event_type"] == "job_started":
            want = {"c1-0": "physical", "x1-0": "physical", "g1-0": "gpu"}[e["node_id"]]
            check(e["tree"] == want, run + ": a job in its node's tree", e)

# op1 in physical/a, op2 in gpu/g, op3 in both
for run, pools, op_count in (("physical", {"a", "idle"}, {"a": 2}), ("gpu", {"g"}, {"g": 2})):
    w = json.load(open(d + "/" + run + "/what-if.json"))
    check(w["tree"] == run, "the reported tree", w["tree"])
    for side in ("recorded", "changed"):
        p = w[side]["pools"]
        check(set(p) == pools, run + " " + side + ": the reported tree's pools only", sorted(p))
        for pool, n in op_count.items():
            check(p[pool]["operations"] == n and p[pool]["wait_p50_ms"] is not None,
                  run + " " + side + ": operations of " + pool, p[pool])
        u = w[side]["users"]
        check(set(u) == {"alice", "bob", "carol"} and all(x["operations"] == 1 for x in u.values()),
              run + " " + side + ": users count every operation", u)
        # a pool's jobs done are its operations' jobs in this tree (op3 runs in both), counted
        # here from the run's events.jsonl (a job's tree from its job_started) and the log's
        # pools per tree; a user's are all of their jobs
        ev = [json.loads(x) for x in open(d + "/" + run + "/" + side + "/events.jsonl")]
        tree_of = {e["job_id"]: e["tree"] for e in ev if e["event_type"] == "job_started"}
        pool_of = {r["operation_id"]: r["scheduling_info_per_tree"][run]["pool"]
                   for r in json.load(open(d + "/log.json"))
                   if r["event_type"] == "operation_started" and run in r["scheduling_info_per_tree"]}
        done = [e for e in ev if e["event_type"] == "job_completed"]
        for pool in pools:
            n = sum(1 for e in done if tree_of[e["job_id"]] == run and pool_of.get(e["operation_id"]) == pool)
            check(p[pool]["jobs_completed"] == n, run + " " + side + ": jobs done in " + pool, p[pool], n)
        check(sum(x["jobs_completed"] for x in u.values()) == len(done),
              run + " " + side + ": users' jobs done in every tree", u, len(done))
    check(set(w["fidelity"]["usage_error"]) <= pools, run + ": fidelity of the tree's pools",
          w["fidelity"]["usage_error"])
    # the usage error of the tree's busy pool, derived here: the recorded share is that of the
    # pool's jobs in this tree over this tree's nodes (each job half of c1 or of g1; x1, in no
    # tree at first, joins physical with its tag at 5500), the replay's that of pools.csv (the
    # last row at or before each of the 201 samples)
    pool = sorted(op_count)[0]
    rows = json.load(open(d + "/log.json"))
    since, duration = 1500, 10500
    step = duration // 200
    jobs = [(r["start_time"] - since, r["finish_time"] - since) for r in rows
            if r["event_type"] == "job_completed" and r["tree_id"] == run]
    rep = [0.0] * 201
    for line in open(d + "/" + run + "/recorded/pools.csv").read().splitlines()[1:]:
        f = line.split(",")
        if f[1] == run and f[2] == pool:
            for k in range(201):
                if k * step >= int(f[0]):
                    rep[k] = float(f[4])
    slots = lambda t: 4 if run == "physical" and t >= 5500 else 2
    err = sum(abs(sum(1 for a, b in jobs if a <= k * step < b) / slots(k * step) - rep[k])
              for k in range(201)) / 201
    got = w["fidelity"]["usage_error"][pool]
    check(abs(got - err) < 1e-9, run + ": usage error over the tree's nodes", got, err)
EOF

# a log without pool_trees_info rows is replayed as before: every tree with the defaults, so
# the nodes match both trees and the run is refused naming the node
grep -v pool_trees_info "$log" >"$work/old.json"
refused "$work/old.json" 'node "c1-0" matches the nodes_filter of two pool trees'

# a bad pool_trees_info row: one line naming row and key
echo '[{"timestamp": 1, "event_type": "pool_trees_info", "trees": {"t": 5}}]' >"$work/bad.json"
refused "$work/bad.json" "event log row 0: trees/t: must be a map (the pool tree's config)"
finish "ok what_if_offline_trees"
