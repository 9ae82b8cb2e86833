#!/usr/bin/env bash
# Issue 13: operations that can never run fail, as upstream, instead of staying "running" with
# no reason. (1) No online node matches the scheduling_tag_filter: once the scheduler has been
# up safe_scheduler_online_time, the operation fails with "No online nodes match operation
# scheduling tag filter" naming the filter; one whose filter matches runs. (2) A pool's
# resource_limits are below one job's needs (the limiting ancestor): after
# operation_hangup_due_to_limiting_ancestor_safe_timeout it fails with "Operation scheduling
# hung in all trees" naming the pool and the resource; one that fits the pool runs. Neither
# fails before its window.
# usage: server_unschedulable_ops.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_unschedulable_ops.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 60 "$@" <<'EOF2'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
SAFE, HANG = 3000, 3000   # ms
cfg = {"fair_share_update_period": 100, "safe_scheduler_online_time": SAFE,
       "available_exec_nodes_check_period": 200, "operation_hangup_check_period": 200,
       "operation_hangup_due_to_limiting_ancestor_safe_timeout": HANG}
try:
    s = Scheduler(bin, work + "/data", cfg).start()
except RuntimeError as e:   # a scheduler that does not know these keys
    check(False, "scheduler refuses the config: %s" % str(e)[-300:])
    finish()
started = time.time()
node = FakeNode(s, "n1", cpu=4, slots=8, tags=["ssd"])

def start(pool, filt, cpu, count=2):
    spec = {"pool": pool, "tasks": {"main": {"command": "sleep 100", "job_count": count,
                                             "cpu_limit": cpu}}}
    if filt:
        spec["scheduling_tag_filter"] = filt
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]

def get(op):
    return s.ok("get_operation", {"operation_id": op})

def beat(seconds):
    end = time.time() + seconds
    while time.time() < end:
        node.heartbeat()
        time.sleep(0.1)

with s:
    node.heartbeat()
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/limited",
                    "attributes": {"resource_limits": {"cpu": 1}}})
    no_node = start("free", "gpu & !ssd", 1)
    matching = start("free", "ssd", 1)
    too_big = start("limited", None, 2)
    fits = start("limited", None, 1, count=1)
    beat(1.5)
    for op, name in ((no_node, "no matching node"), (too_big, "too big for its pool")):
        check(get(op)["state"] == "running", "%s: still running inside its window" % name)
    beat(max(0.0, started + (max(SAFE, HANG) + 2500) / 1000.0 - time.time()))
    a = get(no_node)
    check(a["state"] == "failed", "no matching node: failed, got %s" % a["state"])
    err = a.get("error") or ""
    check("No online nodes match operation scheduling tag filter" in err and
          "gpu & !ssd" in err and "physical" in err, "no matching node: error %r" % err)
    b = get(too_big)
    check(b["state"] == "failed", "too big for its pool: failed, got %s" % b["state"])
    err = b.get("error") or ""
    check("Operation scheduling hung in all trees" in err and '"limited"' in err and
          "[cpu]" in err, "too big for its pool: error %r" % err)
    for op, name in ((matching, "matching filter"), (fits, "fits its pool")):
        g = get(op)
        check(g["state"] == "running" and g["progress"]["running"] >= 1,
              "%s: runs: %s %s" % (name, g["state"], g["progress"]))
    check("event=operation_unschedulable" in s.logtext(), "the scheduler logs why")
finish()
EOF2
