#!/usr/bin/env bash
# Scenario tests of the per-operation preemption settings of the spec (op_spec.h) in
# `poolsched simulate`, on the setup of sim_preempt.sh (10 nodes x 10 cpu, pools a and b,
# starvation timeout 30 s, B starving from 51 s):
#   - examples/simulate/preemption-mode.json: G (preemption_mode graceful) and N (normal), equal
#     operations in pool a: N loses jobs to B, G none; with G normal too, G loses jobs as well;
#   - a lone graceful A is never preempted for B (B stays starving), a normal one loses 20..22;
#   - max_unpreemptible_allocation_count (alias max_unpreemptible_job_count) 40: A (50 running)
#     loses exactly 10; 50: none; the tree's max_unpreemptible_running_allocation_count and the
#     spec's combine by min;
#   - a graceful operation's interruptible victims of a node shrink get 60 s
#     (allocation_graceful_preemption_timeout), a normal one's 10 s;
#   - bad values: exit 2 naming the key.
# Usage: sim_preemption_mode.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: sim_preemption_mode.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" "$3/examples/simulate/preemption-mode.json" <<'PY'
import copy
import json
import sys
from simlib import *
init(sys.argv)
with open(sys.argv[3]) as f:
    example = json.load(f)

def lost(r, op_id):
    return int(r.ops[op_id]["preempted_job_count"])

def preempted(r, op_id=None):
    return [e for e in r.of_type("job_preempted") if op_id is None or e["operation_id"] == op_id]

def starving_since(r, element):
    ev = [e for e in r.of_type("starvation_status_changed") if e["element"] == element]
    return ev[0]["time"] if ev and ev[0]["status"] == "starving" else None

# 1. The example: G graceful, N normal, both in pool a; B in pool b at 20 s.
r = load(run("example", example)[0])
g, n = lost(r, "G"), lost(r, "N")
print(f"example: G (graceful) lost {g}, N (normal) lost {n}")
require(g == 0 and 10 <= n <= 14, f"example: G lost {g}, N lost {n}")
require(all(e["preempted_for"] == "B" for e in preempted(r)), "example: victims made room for B")
require(51000 <= (starving_since(r, "B") or 0) <= 52000, "example: B starving")
# The same with G normal: G is a victim too (the mode, not the order, protected it).
sc = copy.deepcopy(example)
sc["operations"][0]["spec"]["preemption_mode"] = "normal"
r = load(run("example_normal", sc)[0])
print(f"both normal: G lost {lost(r, 'G')}, N lost {lost(r, 'N')}")
require(lost(r, "G") > 0 and lost(r, "G") + lost(r, "N") >= 10,
      f"both normal: G {lost(r, 'G')}, N {lost(r, 'N')}")

# 2. A lone operation in pool a (sim_preempt.sh's case 1), normal and graceful.
def single(**spec):
    sc = copy.deepcopy(example)
    a = sc["operations"][1]
    a["id"] = "A"
    a["spec"] = dict({"pool": "a"}, **spec)
    sc["operations"] = [a, sc["operations"][2]]
    return sc
r = load(run("single_normal", single())[0])
require(20 <= lost(r, "A") <= 22, f"single normal: A lost {lost(r, 'A')}")
r = load(run("single_graceful", single(preemption_mode="graceful"))[0])
print(f"single graceful: A lost {lost(r, 'A')}, B runs {r.running_at(119000).get('B', 0)} at 119 s")
require(lost(r, "A") == 0 and not preempted(r), f"single graceful: A lost {lost(r, 'A')}")
require(51000 <= (starving_since(r, "B") or 0) <= 52000, "single graceful: B starving")
require(r.running_at(119000).get("B", 0) == 0, "single graceful: B got no room before A's jobs end")

# 3. max_unpreemptible_allocation_count: A runs 50 jobs; preempted while it runs more.
for name, spec, want in [("max40", {"max_unpreemptible_allocation_count": 40}, 10),
                         ("max50", {"max_unpreemptible_allocation_count": 50}, 0),
                         ("alias45", {"max_unpreemptible_job_count": 45}, 5),
                         ("old_alias48", {"max_unpreemptable_job_count": 48}, 2)]:
    r = load(run(name, single(**spec))[0])
    print(f"{name}: A lost {lost(r, 'A')}")
    require(lost(r, "A") == want, f"{name}: A lost {lost(r, 'A')}, want {want}")
# The min of the tree's max_unpreemptible_running_allocation_count and the spec's. (The tree's
# also sets the user_slots of the tree's non_preemptible_resource_usage_threshold, which keeps
# the first allocations out of the preemptible class; user_slots 0 there turns that off.)
for name, tree_max, spec_max, want in [("tree_min", 40, 45, 10), ("spec_min", 45, 40, 10)]:
    sc = single(max_unpreemptible_allocation_count=spec_max)
    sc["pool_trees"]["physical"]["max_unpreemptible_running_allocation_count"] = tree_max
    sc["pool_trees"]["physical"]["non_preemptible_resource_usage_threshold"] = {"user_slots": 0}
    r = load(run(name, sc)[0])
    require(lost(r, "A") == want, f"{name}: A lost {lost(r, 'A')}, want {want}")

# 4. Node shrink with interruptible jobs: the graceful operation's victims get 60 s. (Seen at
#    30 s, preempted at the first heartbeat after allowed_node_resources_overcommit_duration:
#    50 s.)
for mode, timeout in [("normal", 10000), ("graceful", 60000)]:
    sc = single(preemption_mode=mode)
    sc["operations"] = sc["operations"][:1]
    sc["operations"][0]["tasks"][0]["interruptible"] = True
    sc["events"] = [{"time": 30000, "type": "set_node_resources", "node": "rack1-0",
                     "resource_limits": {"cpu": 4}}]
    r = load(run("shrink_" + mode, sc)[0])
    pre = preempted(r)
    ab = {e["job_id"]: e["time"] for e in r.of_type("job_aborted") if e["reason"] == "preemption"}
    require(len(pre) == 3 and all(e["preemption_reason"] == "resource_overcommit" and
                                e["interrupt_timeout"] == timeout and
                                e["time"] == 50000 and ab[e["job_id"]] == 50000 + timeout
                                for e in pre),
          f"shrink {mode}: {pre}")

# 5. Bad values: exit 2, the message names the operation, key and value.
for spec, want in [({"preemption_mode": "soft"}, "preemption_mode"),
                   ({"max_unpreemptible_allocation_count": -1},
                    "max_unpreemptible_allocation_count"),
                   ({"max_unpreemptible_job_count": 1.5}, "max_unpreemptible_job_count")]:
    _, err = run("bad_" + next(iter(spec)), single(**spec), expect_rc=2)
    require("operations[0].spec" in err and want in err, err)
print("sim_preemption_mode: ok")
PY
