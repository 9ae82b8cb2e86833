#!/usr/bin/env bash
# The service's other two preemption reasons, with a fake node: a node that heartbeats with half
# its cpu loses the jobs that no longer fit (preemption reason resource_overcommit, once
# allowed_node_resources_overcommit_duration has passed), and a pool whose resource_limits are
# lowered below its running jobs loses the excess (resource_limits_violated) and starts no more.
# Victims are interrupted with allocation_preemption_timeout and aborted at the deadline, all
# with abort reason preemption as upstream's (the log names the preemption reason); a job
# already interrupted is not chosen again, so exactly the excess is preempted.
# usage: server_shrink_limits.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_shrink_limits.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 120 "$@" <<'EOF2'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
s = Scheduler(bin, work + "/data", {"fair_share_update_period": 100}).start()

node = FakeNode(s, "n1", cpu=4, slots=8)

def beat(seconds):
    end = time.time() + seconds
    while time.time() < end:
        node.heartbeat()
        time.sleep(0.1)

def fill(pool):
    spec = {"pool": pool, "tasks": {"main": {"command": "sleep 100", "job_count": 4,
                                             "cpu_limit": 1, "memory_limit": 100 << 20}}}
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
    deadline = time.time() + 10
    while len(node.running) < 4 and time.time() < deadline:
        node.heartbeat()
        time.sleep(0.1)
    check(len(node.running) == 4, "%s: 4 jobs run, got %d" % (pool, len(node.running)))
    node.interrupted.clear()
    return op, set(node.running)

def preempted(name, mine, why, reason="preemption"):
    """Heartbeats until the interrupt deadline (1 s) has passed for a while; checks that exactly
    two of `mine` were interrupted and then aborted with `reason`, and that two still run."""
    beat(2.5)
    intr = {j: i["reason"] for j, i in node.interrupted.items() if j in mine}
    check(len(intr) == 2, "%s: 2 jobs interrupted, got %d: %s" % (name, len(intr), intr))
    check(all(r == reason for r in intr.values()), "%s: interrupt reasons %s" % (name, intr))
    gone = mine - set(node.running)
    check(gone == set(intr), "%s: the interrupted jobs ended: %s vs %s" % (name, gone, set(intr)))
    jobs = {j["id"]: j for j in s.ok("list_jobs", {"operation_id": op})["jobs"]}
    reasons = [jobs[j].get("abort_reason") for j in gone if j in jobs]
    check(reasons == [reason] * len(gone), "%s: abort reasons %s" % (name, reasons))
    check(len(node.running) == 2, "%s: 2 jobs run, got %d" % (name, len(node.running)))
    logged = [l for l in s.logtext().splitlines() if "preemption_reason=" + why in l]
    check(len(logged) == 2, "%s: 2 preemptions logged with %s: %s" % (name, why, logged))

with s:
    t = "//sys/pool_trees/physical/@"
    s.set(t + "allocation_preemption_timeout", 1000)
    s.set(t + "fair_share_update_period", 100)
    s.set(t + "allowed_node_resources_overcommit_duration", 500)
    for p in ("a", "b"):
        s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + p})

    # (1) the node shrinks to half its cpu
    op, mine = fill("a")
    node.limits["cpu"] = 2
    beat(0.3)                      # within allowed_node_resources_overcommit_duration: nothing
    check(not node.interrupted, "overcommit: nothing before 500 ms: %s" % node.interrupted)
    preempted("overcommit", mine, "resource_overcommit")
    s.ok("abort_op", {"operation_id": op})
    beat(0.5)
    node.finish_all("aborted", abort_reason="operation_aborted")
    node.limits["cpu"] = 4
    beat(0.5)
    check(not node.running, "node empty after the overcommit case")

    # (2) the pool's user_slots are lowered below its running jobs
    op, mine = fill("b")
    s.set("//sys/pools/b/@resource_limits", {"user_slots": 2})
    preempted("limits", mine, "resource_limits_violated")
    beat(1.0)
    check(set(node.running) <= mine and len(node.running) == 2,
          "limits: no more jobs start: %s" % sorted(node.running))
finish()
EOF2
