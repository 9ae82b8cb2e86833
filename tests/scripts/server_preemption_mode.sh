#!/usr/bin/env bash
# The spec's preemption settings in the service (ps_svc_sched_op_fn), with a fake node: an
# operation filling the node is preempted for a starving operation of a guaranteed pool when
# its preemption_mode is normal, not when it is graceful, and not while it runs no more than
# its max_unpreemptible_allocation_count; resulting_spec shows both keys with their defaults; a
# bad value is refused (400) naming the key.
# usage: server_preemption_mode.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_preemption_mode.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 120 "$@" <<'EOF2'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
s = Scheduler(bin, work + "/data", {"fair_share_update_period": 100}).start()

def task(n):
    return {"main": {"command": "sleep 100", "job_count": n, "cpu_limit": 1,
                     "memory_limit": 100 << 20}}

node = FakeNode(s, "n1", cpu=2, slots=8)

def beat(seconds):
    end = time.time() + seconds
    while time.time() < end:
        node.heartbeat()
        time.sleep(0.1)

def case(name, extra, wait=3, stop_early=False):
    """How many of the greedy operation's jobs were preempted (interrupted or aborted) within
    `wait` s of the urgent operation's start (or at the first when stop_early), and the greedy
    operation's resulting_spec. The normal case shows how soon preemption comes. One node,
    emptied between cases, so that the tree total stays 2 cpu."""
    node.interrupted.clear()
    spec = dict({"pool": "other", "tasks": task(2)}, **extra)
    greedy = s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
    deadline = time.time() + 10
    while len(node.running) < 2 and time.time() < deadline:
        node.heartbeat()
        time.sleep(0.1)
    check(len(node.running) == 2, "%s: greedy fills the node" % name)
    mine = set(node.running)
    spec = {"pool": "guaranteed", "tasks": task(2)}
    urgent = s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
    start = time.time()
    victims = set()
    while time.time() < start + wait and not (victims and stop_early):
        node.heartbeat()
        time.sleep(0.1)
        victims = mine & (set(node.interrupted) | set(j for j in mine if j not in node.running))
    print("%s: %d preempted after %.1f s" % (name, len(victims), time.time() - start))
    rs = s.ok("get_operation", {"operation_id": greedy})["resulting_spec"]
    for op in (greedy, urgent):
        s.ok("abort_op", {"operation_id": op})
    beat(0.5)
    node.finish_all("aborted", abort_reason="operation_aborted")
    beat(0.5)
    check(not node.running, "%s: node empty after the case" % name)
    return len(victims), rs

with s:
    t = "//sys/pool_trees/physical/@"
    for key, value in [("fair_share_starvation_timeout", 300), ("preemptive_scheduling_backoff", 0),
                       ("fair_share_starvation_tolerance", 0.9), ("fair_share_update_period", 100)]:
        s.set(t + key, value)
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/guaranteed",
                    "attributes": {"strong_guarantee_resources": {"cpu": 2}}})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/other"})

    n, rs = case("normal", {}, wait=15, stop_early=True)
    check(n >= 1, "normal: the greedy operation is preempted")
    check(rs["preemption_mode"] == "normal" and rs["max_unpreemptible_allocation_count"] is None,
          "resulting_spec defaults: %s" % rs)
    n, rs = case("graceful", {"preemption_mode": "graceful"})
    check(n == 0, "graceful: nothing preempted, got %d" % n)
    check(rs["preemption_mode"] == "graceful", "resulting_spec: %s" % rs.get("preemption_mode"))
    n, rs = case("unpreemptible", {"max_unpreemptible_job_count": 2})
    check(n == 0, "max 2: nothing preempted, got %d" % n)
    check(rs["max_unpreemptible_allocation_count"] == 2, "resulting_spec: %s" % rs)

    st, out = s.call("start_op", {"operation_type": "vanilla",
                                  "spec": {"preemption_mode": "soft", "tasks": task(1)}})
    msg = out.get("message", "") if isinstance(out, dict) else str(out)
    check(st == 400 and "preemption_mode" in msg and "soft" in msg,
          "bad preemption_mode refused: %d %s" % (st, out))
    spec = {"max_unpreemptible_allocation_count": -1, "tasks": task(1)}
    st, out = s.call("start_op", {"operation_type": "vanilla", "spec": spec})
    msg = out.get("message", "") if isinstance(out, dict) else str(out)
    check(st == 400 and "max_unpreemptible_allocation_count" in msg,
          "bad max_unpreemptible_allocation_count refused: %d %s" % (st, out))
finish()
EOF2
