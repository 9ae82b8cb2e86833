#!/usr/bin/env bash
# TestSsdPriorityPreemption cases of test_scheduler_preemption.py that need the real service (a
# restart, the scheduler's alerts), on a scheduler with fake nodes: upstream's 4 nodes of 2 cpu /
# 2 slots, nodes 0 and 1 tagged ssd_tag with a slot location on medium ssd_slots (4 MiB), every
# node 1 MiB on the default medium (disk_space_per_medium in the heartbeat); SSD jobs request
# 1 MiB on ssd_slots (vanilla task disk_request). The simulator cases: preemption_ssd.sh.
# usage: preemption_ssd_service.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: preemption_ssd_service.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys
from server_helper import Scheduler, FakeNode, check, finish
from upslib import beat, running, wait_for

bin, work = sys.argv[1], sys.argv[2]
T = "//sys/pool_trees/physical"
MIB = 1 << 20


def cluster(s):
    nodes = []
    for i in range(4):
        media = {"default": 1 * MIB}
        if i < 2:
            media["ssd_slots"] = 4 * MIB
        nodes.append(FakeNode(s, "n%d" % i, cpu=2, memory=16 << 30, slots=2,
                              tags=["ssd_tag"] if i < 2 else [], media=media))
    return nodes

def tree_config(s):
    for k, v in {"aggressive_preemption_satisfaction_threshold": 0.2,
                 "preemption_satisfaction_threshold": 1.0, "fair_share_starvation_tolerance": 0.9,
                 "max_unpreemptible_running_allocation_count": 0, "fair_share_starvation_timeout": 100,
                 "fair_share_aggressive_starvation_timeout": 200, "preemptive_scheduling_backoff": 0,
                 "max_ephemeral_pools_per_user": 5, "node_reconnection_timeout": 100,
                 "ssd_priority_preemption": {"enable": True, "node_tag_filter": "ssd_tag",
                                             "medium_names": ["ssd_slots"]}}.items():
        s.set(T + "/@config/" + k, v)

def vanilla(s, n, pool=None, ssd=False, tag=None):
    task = {"command": "sleep 1000", "job_count": n, "cpu_limit": 1, "memory_limit": 100 << 20}
    if ssd:
        task["disk_request"] = {"disk_space": 1 * MIB, "medium_name": "ssd_slots"}
    spec = {"tasks": {"main": task}}
    if pool:
        spec["pool"] = pool
    if tag:
        spec["scheduling_tag_filter"] = tag
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]

def ssd_alerts(s):
    return [a for a in s.get("//sys/scheduler/@alerts")
            if a["attributes"]["alert_type"] == "update_ssd_priority_preemption_media"]

for case in ("no_aggressive", "aggressive_for_ssd"):
    with Scheduler(bin, "%s/%s" % (work, case), {"fair_share_update_period": 100}).start() as s:
        tree_config(s)
        s.ok("create", {"type": "scheduler_pool", "path": T + "/aggressive",
                        "attributes": {"enable_aggressive_starvation": True}})
        nodes = cluster(s)
        beat(nodes, 0.3)
        blocking = vanilla(s, 4, ssd=True)
        wait_for(nodes, "%s: the blocking SSD op runs 4 jobs" % case, lambda: len(running(nodes, blocking)) == 4)
        check(all(n in ("n0", "n1") for n in running(nodes, blocking).values()), "SSD jobs off the SSD nodes")
        s.stop()
        s.start()
        wait_for(nodes, "%s: 4 SSD jobs after the restart" % case, lambda: len(running(nodes, blocking)) == 4)
        if case == "no_aggressive":
            # upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_no_aggressive_preemption_of_ssd_jobs_for_regular_jobs[True]
            op = vanilla(s, 1, pool="aggressive", tag="ssd_tag")
            wait_for(nodes, "regular op aggressively starving",
                     lambda: s.get("//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/operations/%s/starvation_status" % op) == "aggressively_starving")
            beat(nodes, 3.0)
            check(not running(nodes, op) and len(running(nodes, blocking)) == 4,
                  "the regular op preempted an SSD job")
            s.set(T + "/@config/ssd_priority_preemption/enable", False)
            wait_for(nodes, "regular op gets 1 cpu once SSD priority preemption is off",
                     lambda: len(running(nodes, op)) == 1)
        else:
            # upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_aggressive_preemption_of_ssd_jobs_for_ssd_jobs[True]
            op = vanilla(s, 1, pool="aggressive", ssd=True)
            wait_for(nodes, "SSD op in the aggressive pool gets 1 cpu", lambda: len(running(nodes, op)) == 1)

# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_profiling
# Upstream's counter scheduler/pools/preempted_job_resources/cpu {preemption_reason, tree, pool
# root} is poolsched_preempted_job_resources_cpu_total {tree, preemption_reason} (/metrics).
with Scheduler(bin, work + "/profiling", {"fair_share_update_period": 100}).start() as s:
    tree_config(s)
    nodes = cluster(s)
    beat(nodes, 0.3)
    # _run_sleeping_vanilla_with_unpreemptible_jobs_at_ssd_nodes: the SSD nodes first
    blocking = vanilla(s, 8, tag="ssd_tag")
    wait_for(nodes, "blocking op on the SSD nodes", lambda: len(running(nodes, blocking)) == 4)
    s.ok("update_op_parameters", {"operation_id": blocking, "parameters": {"scheduling_tag_filter": ""}})
    wait_for(nodes, "blocking op everywhere", lambda: len(running(nodes, blocking)) == 8)
    def counter():
        st, text = s.raw("GET", "/metrics")
        for line in text.splitlines():
            if line.startswith("poolsched_preempted_job_resources_cpu_total{") and \
                    'preemption_reason="ssd_preemption"' in line and 'tree="physical"' in line:
                return float(line.split()[-1])
        return 0.0
    before = counter()
    ssd = vanilla(s, 1, ssd=True)
    wait_for(nodes, "a blocking job preempted for the SSD op",
             lambda: any(j in n.interrupted for n in nodes for j, st in n.running.items()
                         if st.get("operation_id") == blocking) or len(running(nodes, blocking)) < 8)
    check(counter() - before >= 1.0, "ssd_preemption counter grew by %s" % (counter() - before))

# upstream: test_scheduler_preemption::TestSsdPriorityPreemption::test_config
with Scheduler(bin, work + "/config", {"fair_share_update_period": 100}).start() as s:
    nodes = cluster(s)
    beat(nodes, 0.3)
    s.set(T + "/@config/ssd_priority_preemption", {"enable": False, "node_tag_filter": "ssd_tag",
                                                    "medium_names": ["ssd_slots"]})
    check(ssd_alerts(s) == [], "no alert for ssd_slots, which the nodes report")
    check(s.get("//sys/cluster_nodes/n0/@disk_space_per_medium") == {"default": MIB, "ssd_slots": 4 * MIB},
          "n0's media as reported")
    s.set(T + "/@config/ssd_priority_preemption/medium_names", ["foo", "bar"])
    a = ssd_alerts(s)
    check(len(a) == 1 and a[0]["message"] == "Config contains unknown SSD priority preemption media"
          and a[0]["attributes"]["unknown_medium_names"] == ["foo", "bar"], "alert: %s" % a)
    s.set(T + "/@config/ssd_priority_preemption/medium_names", [])
    check(ssd_alerts(s) == [], "alert after medium_names = []")
    s.set(T + "/@config/ssd_priority_preemption/node_tag_filter", "")
    check(ssd_alerts(s) == [], "alert after node_tag_filter = \"\"")
    st, out = s.call("set", {"path": T + "/@config/ssd_priority_preemption/enable", "value": True})
    check(st == 400 and "SSD node tag filter must be non-empty when SSD priority preemption is enabled" in str(out),
          "enable with an empty filter: %s %s" % (st, out))
finish()
PY
