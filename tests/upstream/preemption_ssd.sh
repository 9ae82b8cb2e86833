#!/usr/bin/env bash
# test_scheduler_preemption.py's TestSsdPriorityPreemption translated onto `poolsched simulate`
# (docs/preemption-options.md, SSD priority preemption). Upstream's cluster: 4 nodes of 2 cpu /
# 2 slots; nodes 0 and 1 carry the tag ssd_tag and a slot location on medium ssd_slots (4 MiB),
# every node one of 1 MiB on the default medium; SSD jobs request 1 MiB on ssd_slots, so they
# run on the two SSD nodes only. Upstream switches ssd_priority_preemption/enable in the middle
# of a test and waits; here each setting is its own run of the same scenario, checked at the end
# (the state upstream waits for), as tests/upstream/preemption_sim.sh does.
# usage: preemption_ssd.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: preemption_ssd.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys
from simlib import *
init(sys.argv)

MIB = 1 << 20
SSD_NODES = ("n0-0", "n1-0")   # node ids: <group>-<index>

def cluster():
    groups = []
    for i in range(4):
        g = nodes(f"n{i}", 1, cpu=2, slots=2, tags=[f"n{i}"] + (["ssd_tag"] if i < 2 else []))
        g["disk_space_per_medium"] = {"default": 1 * MIB}
        if i < 2:
            g["disk_space_per_medium"]["ssd_slots"] = 4 * MIB
        groups.append(g)
    return groups

def tree(enable, extra=None):
    t = {"aggressive_preemption_satisfaction_threshold": 0.2, "preemption_satisfaction_threshold": 1.0,
         "fair_share_starvation_tolerance": 0.9, "max_unpreemptible_running_allocation_count": 0,
         "fair_share_starvation_timeout": 100, "fair_share_aggressive_starvation_timeout": 200,
         "preemptive_scheduling_backoff": 0, "max_ephemeral_pools_per_user": 5,
         "node_reconnection_timeout": 100,
         "ssd_priority_preemption": {"enable": enable, "node_tag_filter": "ssd_tag",
                                     "medium_names": ["ssd_slots"]}}
    t.update(extra or {})
    return t

def ssd_op(id, start, pool=None, jobs=1, cpu=1, duration=10 ** 7, **spec):
    o = op(id, start, pool, jobs=jobs, duration=duration, cpu=cpu, **spec)
    o["tasks"][0]["disk_request"] = {"disk_space": 1 * MIB, "medium_name": "ssd_slots"}
    return o

def sim(name, t, ops, events=None, pools=None, duration=20000):
    t = dict(t)
    if pools:
        t["pools"] = pools
    sc = scenario(cluster(), {"physical": t}, ops, duration=duration, heartbeat=100, fs=100)
    if events:
        sc["events"] = events
    return load(run(name, sc)[0])

def usage(r, op_id, cpu=1):
    return r.running_at(10 ** 12).get(op_id, 0) * cpu

def starts(r, op_id):
    return [e for e in r.of_type("job_started") if e["operation_id"] == op_id]

def preempted(r, op_id):
    return [e for e in r.of_type("job_preempted") if e["operation_id"] == op_id]

# _run_sleeping_vanilla_with_unpreemptible_jobs_at_ssd_nodes: 8 jobs, first on the SSD nodes only
# (a filter only they satisfy), then everywhere; the 4 jobs on the SSD nodes started first and stay
# within the operation's fair share: non-preemptible.
def unpreemptible_at_ssd():
    return (op("blocking", 0, jobs=8, duration=10 ** 7, cpu=1, scheduling_tag_filter="ssd_tag"),
            {"time": 2000, "type": "update_operation", "operation": "blocking",
             "parameters": {"scheduling_tag_filter": ""}})

# ---- test_regular_ssd_priority_preemption -------------------------------------------------
# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_regular_ssd_priority_preemption
# (upstream also reads the SSD job's disk_quota_usage, only ssd_slots: the simulator has no
# per-job disk quota output)
blocking, ev = unpreemptible_at_ssd()
for enable in (False, True):
    r = sim(f"regular_{enable}", tree(enable), [blocking, ssd_op("ssd", 4000, jobs=4)], [ev])
    if not enable:
        require(usage(r, "blocking") == 8, f"disabled: blocking op runs {usage(r, 'blocking')} jobs, upstream 8")
        require(not starts(r, "ssd") and r.status_at("ssd") == "starving",
              f"disabled: ssd op starts {len(starts(r, 'ssd'))} jobs, is {r.status_at('ssd')}; upstream none, starving")
        require(not preempted(r, "blocking"), "disabled: blocking op lost jobs")
    else:
        require(usage(r, "ssd") == 4, f"enabled: ssd op uses {usage(r, 'ssd')} cpu, upstream 4.0")
        require(all(e["node_id"] in SSD_NODES for e in starts(r, "ssd")), "enabled: ssd jobs off the SSD nodes")
print("regular SSD priority preemption: disabled 0 cpu, enabled 4 cpu")

# ---- test_regular_ssd_priority_preemption_many_operations ----------------------------------
# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_regular_ssd_priority_preemption_many_operations
# One blocking operation of 2 jobs per node (filter: the node's own tag) in pool first; the SSD
# operation's jobs need a whole node (2 cpu): regular preemption frees one job per node at most.
for enable in (False, True):
    ops = [op(f"b{i}", 0, "first", jobs=2, duration=10 ** 7, cpu=1, scheduling_tag_filter=f"n{i}")
           for i in range(4)]
    ops.append(ssd_op("ssd", 2000, jobs=2, cpu=2))
    r = sim(f"many_{enable}", tree(enable, {"max_unpreemptible_running_allocation_count": 1}), ops,
            pools=[{"name": "first"}, {"name": "second"}])
    if not enable:
        require(not starts(r, "ssd") and r.status_at("ssd") == "starving",
              f"many, disabled: ssd op starts {len(starts(r, 'ssd'))} jobs; upstream none, starving")
    else:
        require(usage(r, "ssd", 2) == 4, f"many, enabled: ssd op uses {usage(r, 'ssd', 2)} cpu, upstream 4.0")
print("many operations: disabled 0 cpu, enabled 4 cpu")

# ---- test_regular_preemption_of_ssd_jobs ---------------------------------------------------
# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_regular_preemption_of_ssd_jobs
r = sim("regular_of_ssd", tree(True),
        [ssd_op("blocking", 0, "first", jobs=4), op("regular", 2000, "second", jobs=8, duration=10 ** 7)],
        pools=[{"name": "first", "strong_guarantee_resources": {"cpu": 2}},
               {"name": "second", "strong_guarantee_resources": {"cpu": 6}}])
require(usage(r, "blocking") == 2, f"blocking SSD op keeps {usage(r, 'blocking')} cpu, upstream 2.0")
print("regular preemption of SSD jobs: blocking op down to 2 cpu")

# ---- test_no_aggressive_preemption_of_ssd_jobs_for_regular_jobs[False] ---------------------
# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_no_aggressive_preemption_of_ssd_jobs_for_regular_jobs[False]
# The SSD jobs are aggressively preemptible (above 0.2 of the fair share); on the SSD nodes they
# are ssd_aggressively_preemptible, out of reach of an aggressively starving regular operation.
aggr = [{"name": "aggressive", "enable_aggressive_starvation": True}]
for enable in (True, False):
    r = sim(f"no_aggr_{enable}", tree(enable),
            [ssd_op("blocking", 0, jobs=4), op("regular", 2000, "aggressive", jobs=1, duration=10 ** 7,
                                              scheduling_tag_filter="ssd_tag")], pools=aggr)
    if enable:
        require(usage(r, "blocking") == 4 and not starts(r, "regular"),
              f"enabled: blocking {usage(r, 'blocking')} cpu, regular starts {len(starts(r, 'regular'))}; upstream 4.0 and none")
        require(r.status_at("regular") == "aggressively_starving",
              f"enabled: regular op is {r.status_at('regular')}, upstream aggressively_starving")
    else:
        require(usage(r, "regular") == 1, f"disabled: regular op uses {usage(r, 'regular')} cpu, upstream 1.0")
print("no aggressive preemption of SSD jobs for regular jobs")

# ---- test_aggressive_preemption_of_ssd_jobs_for_ssd_jobs[False] ----------------------------
# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_aggressive_preemption_of_ssd_jobs_for_ssd_jobs[False]
r = sim("aggr_ssd", tree(True), [ssd_op("blocking", 0, jobs=4), ssd_op("ssd", 2000, "aggressive")],
        pools=aggr)
require(usage(r, "ssd") == 1, f"ssd op in the aggressive pool uses {usage(r, 'ssd')} cpu, upstream 1.0")
require(preempted(r, "blocking"), "the blocking SSD op lost no job")
print("aggressive preemption of SSD jobs for SSD jobs: 1 cpu")

# ---- test_forbid_regular_jobs_on_ssd_nodes -------------------------------------------------
# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_forbid_regular_jobs_on_ssd_nodes
# Upstream aborts regular_op before starting ssd_op; here regular_op's jobs end at 10 s. Upstream
# also reads are_regular_jobs_on_ssd_nodes_allowed, which the simulator does not output.
r = sim("forbid", tree(True),
        [op("protected", 0, "protected", jobs=4, duration=10 ** 7),
         op("regular", 2000, "regular", jobs=4, duration=8000),
         ssd_op("ssdp", 12000, "protected")],
        pools=[{"name": "protected", "allow_regular_jobs_on_ssd_nodes": False}, {"name": "regular"}])
require(starts(r, "protected") and all(e["node_id"] not in SSD_NODES for e in starts(r, "protected")),
      "protected op's jobs on SSD nodes")
require(len(starts(r, "regular")) == 4 and all(e["node_id"] in SSD_NODES for e in starts(r, "regular")),
      "regular op's 4 jobs not all on the SSD nodes")
require(usage(r, "protected") == 4 and usage(r, "ssdp") == 1,
      f"protected {usage(r, 'protected')} cpu, its SSD op {usage(r, 'ssdp')}; upstream 4.0 and 1.0")
print("forbid regular jobs on SSD nodes")

# ---- test_ignore_preemption_blocking_ancestor_for_ssd_jobs ---------------------------------
# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_ignore_preemption_blocking_ancestor_for_ssd_jobs
# prod's blocking op runs 4 jobs of 1.5 cpu (6 cpu); prod is below its satisfaction threshold, which
# blocks preemption of its jobs (preemption_check_satisfaction) for every stage but the SSD ones.
# Upstream waits for blocking_op's satisfaction ratios (0.8, then 4.5/7); the simulator has no
# per-operation satisfaction, so its usage is checked (4.5 of its 7 cpu fair share).
r = sim("ignore_blocking", tree(True, {"preemption_check_satisfaction": True}),
        [op("blocking", 0, "prod", jobs=5, duration=10 ** 7, cpu=1.5), ssd_op("ssd", 2000, "research")],
        pools=[{"name": "prod", "strong_guarantee_resources": {"cpu": 7}},
               {"name": "research", "strong_guarantee_resources": {"cpu": 1}}])
require(usage(r, "ssd") == 1, f"ssd op uses {usage(r, 'ssd')} cpu, upstream 1.0")
require(usage(r, "blocking", 1.5) == 4.5, f"blocking op keeps {usage(r, 'blocking', 1.5)} cpu, upstream 4.5 of 7")
print("preemption-blocking ancestors ignored for SSD jobs")

# ---- test_config (the validation half; the medium alert is the service's) -------------------
# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_config
sc = scenario(cluster(), {"physical": tree(True, {"ssd_priority_preemption": {"enable": True, "node_tag_filter": ""}})},
              [op("x", 0, jobs=1)], duration=1000)
out, err = run("config_empty_filter", sc, expect_rc=2)
require("SSD node tag filter must be non-empty when SSD priority preemption is enabled" in err,
      f"enable with an empty node_tag_filter: {err.strip()}")
PY
