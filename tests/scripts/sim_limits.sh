#!/usr/bin/env bash
# Scenario tests of `poolsched simulate`: limits, pools made for operations, refusals and
# pending reasons, asserted on the outputs:
#   - operation-count limits at nested levels: a pool at its own limit and a parent at its
#     limit keep operations pending with a reason naming that pool, and they run later;
#   - ephemeral subpools `<pool>$<user>`, ephemeral pools under default_parent_pool, and the
#     refusal beyond max_ephemeral_pools_per_user;
#   - "why is it pending": no node large enough, no matching node, pool resource limits;
#   - overlapping trees and other bad input: exit 2, one line naming what is wrong, no outputs.
# Usage: sim_limits.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: sim_limits.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import os, sys
from simlib import *
init(sys.argv)

cluster = [nodes("n", 4)]

# 1. Nested count limits: team (max 2 running) > a (max 1 running), b.
tree = {"physical": {"pools": [
    {"name": "team", "max_running_operation_count": 2},
    {"name": "a", "parent": "team", "max_running_operation_count": 1},
    {"name": "b", "parent": "team"}]}}
sc = scenario(cluster, tree, [op("a1", 0, "a"), op("a2", 0, "a"), op("b1", 0, "b", duration=30000),
                              op("b2", 0, "b")])
r = load(run("count_limits", sc)[0])
pending = {e["operation_id"]: e for e in r.of_type("operation_pending")
           if e["reason"] == "max_running_operation_count"}
require(set(pending) == {"a2", "b2"}, f"count limits: pending operations {sorted(pending)}")
require(pending["a2"]["time"] == 0 and 'pool "a" reached (1 of 1)' in pending["a2"]["message"],
      f"count limits: a2 {pending['a2']}")
require(pending["b2"]["time"] == 0 and 'pool "team" reached (2 of 2)' in pending["b2"]["message"],
      f"count limits: b2 {pending['b2']}")
running = {e["operation_id"]: e["time"] for e in r.of_type("operation_running")}
done = {e["operation_id"]: e["time"] for e in r.of_type("operation_completed")}
require(running["a1"] == 0 and running["b1"] == 0, f"count limits: first runs {running}")
require(running["a2"] == done["a1"], f"count limits: a2 ran at {running['a2']}, a1 ended at {done['a1']}")
# b2 waits for the team: a2 (earlier in start order: same time, smaller id) takes a1's slot.
require(running["b2"] == done["a2"] and running["b2"] < done["b1"],
      f"count limits: b2 ran at {running['b2']}, a2 ended at {done['a2']}, b1 at {done['b1']}")
require(r.first_start("b2") >= running["b2"], "count limits: b2 got a job before it ran")
rows = {row["pool"]: row for row in r.pools if row["time"] == "1000"}
require((rows["team"]["running_operation_count"], rows["team"]["operation_count"]) == ("2", "4"),
      f"count limits: team counts {rows['team']}")
require((rows["a"]["running_operation_count"], rows["a"]["operation_count"]) == ("1", "2"),
      f"count limits: a counts {rows['a']}")
require(all(row["operation_state"] == "completed" for row in r.ops.values()), "count limits: not all completed")

# 1b. The same reason naming another pool: a2 waits for the team, then, once a1 took the slot
# b1 left, for its own pool; each change of the text is an event.
sc = scenario(cluster, tree, [op("b1", 0, "b", duration=30000), op("b2", 0, "b"),
                              op("a1", 1000, "a"), op("a2", 1000, "a")])
r = load(run("count_limits_text", sc)[0])
texts = [e["message"] for e in r.of_type("operation_pending")
         if e["operation_id"] == "a2" and e["reason"] == "max_running_operation_count"]
require(len(texts) == 2 and 'pool "team" reached (2 of 2)' in texts[0] and
        'pool "a" reached (1 of 1)' in texts[1], f"count limits: a2's texts {texts}")

# 2. Ephemeral pools.
tree = {"physical": {"default_parent_pool": "adhoc", "pools": [
    {"name": "research", "create_ephemeral_subpools": True,
     "ephemeral_subpool_config": {"max_running_operation_count": 1}},
    {"name": "adhoc"}]}}
sc = scenario(cluster, tree, [
    op("e1", 0, "research", user="alice"), op("e2", 0, "research", user="alice"),
    op("e3", 0, "research", user="bob"),
    op("d1", 0, "newpool", user="carol"), op("d2", 0, "otherpool", user="carol"),
    op("d3", 0, None, user="dave")])
r = load(run("ephemeral", sc)[0])
pools_of = {e["operation_id"]: e["pools"]["physical"] for e in r.of_type("operation_started")}
require(pools_of == {"e1": "research$alice", "e2": "research$alice", "e3": "research$bob",
                   "d1": "newpool", "d3": "dave"}, f"ephemeral: pools {pools_of}")
failed = {e["operation_id"]: e["error"] for e in r.of_type("operation_failed")}
require(list(failed) == ["d2"] and "the limit of 1 ephemeral pools for user \"carol\"" in failed["d2"],
      f"ephemeral: failures {failed}")
require(r.ops["d2"]["operation_state"] == "failed", "ephemeral: d2 state")
# The subpool takes its config from ephemeral_subpool_config: one running operation.
pend = [e for e in r.of_type("operation_pending") if e["operation_id"] == "e2"]
require(pend and 'pool "research$alice" reached (1 of 1)' in pend[0]["message"], f"ephemeral: e2 {pend}")
names = {row["pool"] for row in r.pools}
require({"research$alice", "research$bob", "newpool", "dave"} <= names, f"ephemeral: pools.csv pools {names}")
# Ephemeral pools vanish with their last operation: no rows after the end of d1.
end_d1 = int(r.ops["d1"]["finish_time"])
late = [row for row in r.pool_rows("newpool") if int(row["time"]) > end_d1 + 1000]
require(not late, f"ephemeral: newpool still listed after its operation ended: {late[:1]}")
require(r.summary["operations"]["completed"] == 5 and r.summary["operations"]["failed"] == 1,
      f"ephemeral: {r.summary['operations']}")

# 3. Pending reasons that never clear, and resource limits of a pool.
tree = {"physical": {"pools": [{"name": "small", "resource_limits": {"cpu": 4}}, {"name": "p"}]}}
sc = scenario(cluster, tree, [
    op("big", 0, "p", jobs=1, cpu=11),
    op("nomatch", 0, "p", jobs=1, scheduling_tag_filter="gpu"),
    op("limited", 0, "small", jobs=20, duration=60000)], duration=30000)
r = load(run("reasons", sc)[0])
last = {}
for e in r.of_type("operation_pending"):
    last[e["operation_id"]] = e
require(last["big"]["reason"] == "no_node_fits", f"reasons: big {last['big']}")
require(last["nomatch"]["reason"] == "no_matching_node" and '"gpu"' in last["nomatch"]["message"],
      f"reasons: nomatch {last['nomatch']}")
require(last["limited"]["reason"] == "pool_resource_limits" and
      last["limited"]["message"] == 'resource_limits of pool "small" reached (cpu)',
      f"reasons: limited {last['limited']}")
require(r.running_at(29999).get("limited") == 4, f"reasons: limited runs {r.running_at(29999)}")
at_end = {p["operation_id"]: p["reason"] for p in r.summary["pending_at_end"]}
require(at_end == {"big": "no_node_fits", "nomatch": "no_matching_node", "limited": "pool_resource_limits"},
      f"reasons: pending_at_end {at_end}")
require(r.summary["pending_reason_time"]["no_node_fits"] == 30000, f"reasons: {r.summary['pending_reason_time']}")

# 3b. An operation no node can take fails, as the service's (core/exec_nodes.h, upstream's
# controller CheckAvailableExecNodes): once the scheduler has been online for
# safe_scheduler_online_time (upstream's 10 min by default), at the first check
# (available_exec_nodes_check_period, 5 s) after it; the run does not end idle before.
tree = {"physical": {"pools": [{"name": "p"}]}}
sc = scenario(cluster, tree, [op("nomatch", 0, "p", jobs=1, scheduling_tag_filter="gpu"),
                              op("ok", 0, "p", jobs=1, duration=1000)])
r = load(run("no_exec_nodes", sc)[0])
failed = {e["operation_id"]: e for e in r.of_type("operation_failed")}
require(list(failed) == ["nomatch"] and failed["nomatch"]["time"] == 600000 and
      'No online nodes match operation scheduling tag filter "gpu" in pool trees ["physical"]'
      in failed["nomatch"]["error"], f"no exec nodes: failures {failed}")
require(r.ops["ok"]["operation_state"] == "completed", "no exec nodes: ok completes")
sc["safe_scheduler_online_time"] = 2000
sc["available_exec_nodes_check_period"] = 1500
r = load(run("no_exec_nodes_fast", sc)[0])
failed = {e["operation_id"]: e["time"] for e in r.of_type("operation_failed")}
# the checks run with fair share updates (every 1000 ms here): at 0, then at 2000 (>= 1500)
require(failed == {"nomatch": 2000}, f"no exec nodes, checks at 0 and 2000: failures {failed}")

# 4. Bad input: exit 2, one line naming the problem, no outputs left behind.
def refused(name, sc, needle):
    out, err = run(name, sc, expect_rc=2)
    lines = err.strip().split("\n")
    require(len(lines) == 1 and lines[0].startswith("error: ") and needle in lines[0],
          f"{name}: stderr {err!r}, expected one line with {needle!r}")
    require(not os.path.exists(os.path.join(out, "events.jsonl")), f"{name}: outputs left behind")

refused("overlap", scenario([nodes("n", 2, tags=["internal", "ssd"])],
                            {"a": {"nodes_filter": "internal"}, "b": {"nodes_filter": "ssd"}}, []) | {"default_tree": "a"},
        'node "n-0" matches the nodes_filter of two pool trees, "a" and "b"')
refused("bad_pool", scenario(cluster, {"a": {"pools": [{"name": "x", "weight": -1}]}}, []),
        'pool_trees.a: pools[0]: pool "x": weight: must be in')
# a scenario holds settings only: a key the Cypress API would keep as a custom attribute is a
# misspelling here
refused("custom_key", scenario(cluster, {"a": {"pools": [{"name": "x", "wieght": 2}]}}, []),
        'pool_trees.a: pools.x: wieght: unknown key of the pool config (did you mean "weight"?)')
refused("bad_spec", scenario(cluster, {"a": {}}, [op("x", 0, None, weight=0)]),
        "operations[0].spec: weight: must be in")
print("sim_limits: ok")
PY
