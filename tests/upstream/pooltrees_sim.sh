#!/usr/bin/env bash
# Upstream test_scheduler_pool_trees.py, translated into scenarios of `poolsched simulate`:
# node tags and tree attributes that change mid-run (scenario events set_node_tags and
# set_tree_attribute, docs/scenario.md). A node that changes tree loses its running jobs
# (node_fair_share_tree_changed) and serves its new tree; tags matching two trees fail the run.
# Upstream's tree "default" is "physical" here; nodes have 1 cpu and 1 user slot, as upstream's.
# Usage: pooltrees_sim.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: pooltrees_sim.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys
from simlib import *
init(sys.argv)

ONE = dict(cpu=1, memory=4 * GIB, slots=1)
trees = {"physical": {"nodes_filter": "!other"}, "other": {"nodes_filter": "other"}}


def with_events(sc, events):
    sc["events"] = events
    sc["default_tree"] = "physical"
    return sc


# upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_node_tags_changed
# n-0 is tagged other from the start; at 20 s n-1 gets the tag: op1 (physical, 10 long jobs)
# goes from 2 running jobs to 1 (one aborted with node_fair_share_tree_changed), op2 (other)
# from 1 to 2.
ops = [op("op1", 0, jobs=10, duration=1000000, memory=GIB, pool_trees=["physical"]),
       op("op2", 0, jobs=10, duration=1000000, memory=GIB, pool_trees=["other"])]
sc = with_events(scenario([nodes("t", 1, tags=["other"], **ONE), nodes("n", 2, **ONE)], trees, ops,
                          duration=40000, heartbeat=100, fs=100),
                 [{"time": 20000, "type": "set_node_tags", "node": "n-0", "tags": ["other"]}])
r = load(run("tags_changed", sc)[0])
before, after = r.running_at(19999), r.running_at(40000)
require(before.get("op1") == 2 and before.get("op2") == 1, f"before: op1 2, op2 1 running: {before}")
require(after.get("op1") == 1 and after.get("op2") == 2, f"after: op1 1, op2 2 running: {after}")
aborted = r.of_type("job_aborted")
require(len(aborted) == 1 and aborted[0]["operation_id"] == "op1" and
      aborted[0]["reason"] == "node_fair_share_tree_changed" and aborted[0]["time"] == 20000,
      f"one op1 job aborted at 20 s, reason node_fair_share_tree_changed: {aborted}")

# The same move by a tree attribute: physical's nodes_filter drops n-0 and other's takes it.
sc = with_events(scenario([nodes("t", 1, tags=["other"], **ONE), nodes("n", 2, tags=["x"], **ONE)],
                          {"physical": {"nodes_filter": "!other & !x_moved"},
                           "other": {"nodes_filter": "other"}}, ops,
                          duration=40000, heartbeat=100, fs=100),
                 [{"time": 20000, "type": "set_node_tags", "node": "n-0", "tags": ["x", "x_moved"]},
                  {"time": 30000, "type": "set_tree_attribute", "tree": "other", "key": "nodes_filter",
                   "value": "other | x_moved"}])
r = load(run("filter_changed", sc)[0])
mid, after = r.running_at(29999), r.running_at(40000)
require(mid.get("op1") == 1 and mid.get("op2") == 1, f"n-0 in no tree: op1 1, op2 1: {mid}")
require(after.get("op1") == 1 and after.get("op2") == 2, f"n-0 in other: op1 1, op2 2: {after}")

# upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_incorrect_node_tags
# Deliberate deviation: the service takes such a node offline with an alert; the simulator has
# no operator to fix the tags, so the run fails naming the node and the trees (exit 1, as
# every event that fails mid-run).
sc = with_events(scenario([nodes("n", 3, **ONE)], {"physical": {}, "s1": {"nodes_filter": "x|y"},
                                                    "s2": {"nodes_filter": "y|z"}},
                          [op("a", 0, jobs=1, duration=1000)], duration=10000),
                 [{"time": 5000, "type": "set_node_tags", "node": "n-0", "tags": ["y"]}])
_, err = run("incorrect", sc, expect_rc=1)
require("events[0]" in err and "n-0" in err and "two pool trees" in err,
      f"the run fails naming the event, the node and the trees: {err}")
# A bad tree attribute fails the run naming the event and the key.
sc = with_events(scenario([nodes("n", 1, **ONE)], {"physical": {}}, [op("a", 0, jobs=1, duration=1000)],
                          duration=10000),
                 [{"time": 5000, "type": "set_tree_attribute", "key": "nodes_filter", "value": "a &"}])
_, err = run("bad_filter", sc, expect_rc=1)
require("events[0]" in err and "nodes_filter" in err, f"a bad nodes_filter names the event and key: {err}")

# upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_two_trees_with_unequal_demand
# The simulator chooses as the service does (core/single_tree.h): busy runs in physical's
# research from 0; at 5 s an operation over [physical, nirvana] goes to nirvana, and the other way
# round.
for busy_tree, expected in (("physical", "nirvana"), ("nirvana", "physical")):
    tr = {"physical": {"nodes_filter": "default_tag", "pools": [{"name": "research"}]},
          "nirvana": {"nodes_filter": "nirvana_tag", "pools": [{"name": "research"}]}}
    ops = [op("busy", 0, "research", jobs=1, duration=1000000, cpu=1, pool_trees=[busy_tree]),
           op("single", 5000, "research", jobs=3, duration=1000, cpu=1,
              pool_trees=["physical", "nirvana"], schedule_in_single_tree=True)]
    sc = with_events(scenario([nodes("d", 1, cpu=3, slots=3, tags=["default_tag"]),
                               nodes("v", 1, cpu=3, slots=3, tags=["nirvana_tag"])], tr, ops,
                              duration=20000, heartbeat=100, fs=100), [])
    del sc["events"]
    r = load(run("single_" + busy_tree, sc)[0])
    where = {e["node_id"] for e in r.of_type("job_started") if e["operation_id"] == "single"}
    want = {"physical": "d-0", "nirvana": "v-0"}[expected]
    require(where == {want}, f"busy in {busy_tree}: single runs on {want} only: {where}")
# upstream: test_scheduler_pool_trees::TestForbidOperationsWithZeroResourceDemand::test_forbid_operations_with_zero_resource_demand
# In the simulator the operation fails at submission, as a refused start does.
sc = scenario([nodes("n", 1, **ONE)], {"physical": {"necessary_resources_for_operation": ["gpu", "network"]}},
              [op("a", 0, jobs=1, duration=1000)], duration=10000)
r = load(run("necessary", sc)[0])
failed = r.of_type("operation_failed")
require(len(failed) == 1 and 'zero demand for resources which are necessary in tree "physical"' in failed[0]["error"],
      f"the operation fails naming the tree: {failed}")
print("ok")
PY
