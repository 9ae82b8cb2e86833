#!/usr/bin/env bash
# Two behaviours of a real scheduler that upstream's integration tests rely on:
#   - node_reconnection_timeout: for that long after the scheduler starts (and again after a
#     restart) a scheduling tag filter's resource limits count as unlimited, while the nodes
#     come back; an operation filtered to a tag no node has keeps a fair share (and starves)
#     in that window and gets none after it;
#   - a pool's satisfaction_ratio is its children's minimum (upstream's dynamic attributes):
#     a pool whose running operation holds the whole node and whose other operation has
#     nothing reports 0, not its own usage / fair share of 1.
# usage: server_reconnection.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_reconnection.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
T = "//sys/pool_trees/physical"
O = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/"
WINDOW = 3000
s = Scheduler(bin, work + "/data", {"fair_share_update_period": 100}).start()
started = time.time()

def vanilla(pool, jobs, **spec):
    spec.update({"pool": pool, "tasks": {"main": {"job_count": jobs, "command": "sleep 1000", "cpu_limit": 1}}})
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]

def pool_attr(pool, key):
    return s.get(O + pool + "/" + key)

with s:
    s.set(T + "/@config/node_reconnection_timeout", WINDOW)
    for p in ("tagged", "plain", "both"):
        s.ok("create", {"type": "scheduler_pool", "path": T + "/" + p})
    n = FakeNode(s, "n1", cpu=4, memory=64 << 30, slots=8)
    n.heartbeat()
    vanilla("tagged", 2, scheduling_tag_filter="missing_tag")
    vanilla("plain", 8)
    n.beat(0.5)
    fs = pool_attr("tagged", "fair_share_ratio")
    check(time.time() - started < WINDOW / 1000, "the window passed before the first check")
    check(fs > 0.4, "in the window the missing tag's limits are unlimited: tagged has %s" % fs)
    n.beat(WINDOW / 1000 - (time.time() - started) + 0.5)
    fs = pool_attr("tagged", "fair_share_ratio")
    check(fs == 0, "after node_reconnection_timeout the missing tag limits tagged to 0, got %s" % fs)

    # a restart opens the window again (the tree config is kept)
    s.stop()
    s.start()
    restarted = time.time()
    n.beat(0.5)
    fs = pool_attr("tagged", "fair_share_ratio")
    check(time.time() - restarted < WINDOW / 1000, "the window passed before the check after the restart")
    check(fs > 0.4, "after a restart the window opens again: tagged has %s" % fs)

    # satisfaction_ratio of a pool: its children's minimum
    for jid in list(n.running):
        n.finish(jid)
    n.heartbeat()
    for op in s.ok("list_operations", {})["operations"]:
        s.ok("abort_op", {"operation_id": op["id"]})
    n.beat(0.5)
    n.running.clear()
    vanilla("both", 4)
    n.beat(0.5)
    vanilla("both", 4)
    n.beat(0.5)
    usage = pool_attr("both", "usage_ratio")
    sat = pool_attr("both", "satisfaction_ratio")
    check(usage > 0.99, "both holds the node: usage %s" % usage)
    check(sat == 0, "both: satisfaction_ratio is its children's minimum 0, got %s" % sat)
finish()
EOF
