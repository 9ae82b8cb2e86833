#!/usr/bin/env bash
# Reproducers of the failures the stateful random test (server_stateful.sh) found, each made
# deterministic and run against a real scheduler with a fake node:
#   1. a suspended operation that then ended kept suspended=true until a restart, which
#      answered false (the flag was restored only for active operations).
#   2. a restart put active operations back by starting them again: through the spec's pool
#      (an operation in an explicit pool that had since got create_ephemeral_subpools moved to
#      pool$user, one in pool$user whose parent had lost it moved to the parent), under today's
#      limits (an operation admitted before max_operation_count was lowered failed: "could not
#      be restored"), and running or pending by start order (a running operation activated by a
#      raised max_running_operation_count came back pending after the limit was lowered again).
#      Now the document keeps running_per_tree and the restore takes the stored pool and state.
#   3. update_op_parameters moving an operation out of a pool at its running limit started the
#      pool's next pending operation in the tree but get_operation still said pending (and
#      orchid's running counts disagreed with the operations).
#   4. a pending operation with no job waiting (moved to a pool at its running limit while its
#      last job ran) had no pending_reason. Such a move is now refused (6); a pending operation
#      still always has a reason.
#   5. a heartbeat whose failed job failed the operation aborted the operation's other jobs on
#      that node without telling the node (they were reported running earlier in the same
#      heartbeat) and gave their room to new jobs in the same reply: the node ran both.
#   6. update_op_parameters moved a running operation into a pool at its
#      max_running_operation_count: it turned pending with its jobs still running, and a
#      pending operation's jobs are outside the fair share tree, so an ancestor's
#      resource_limits no longer counted them and the pool ran jobs above its limits. As
#      upstream (ValidateAllOperationsCountsOnPoolChange), such a move is refused (409).
#   7. a move with a new name whose rename was refused (operations below) had already moved
#      the pool, and the move had started a pending operation that moving back did not stop:
#      the pools counted it running while get_operation said pending. The rename comes first.
# usage: server_stateful_regressions.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_stateful_regressions.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
ORCHID = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/"


def scheduler(name):
    s = Scheduler(bin, work + "/" + name, {"fair_share_update_period": 100}).start()
    s.set("//sys/pool_trees/physical/@fair_share_update_period", 100)
    return s


def start(s, pool, jobs=1, token=None):
    spec = {"pool": pool, "tasks": {"t": {"command": "true", "job_count": jobs, "cpu_limit": 1}}}
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec}, token)["operation_id"]


def op(s, o):
    return s.ok("get_operation", {"operation_id": o})


def restart(s, hard):
    if hard:
        s.kill9()
    else:
        s.stop()
    return s.start()


# 1. the suspended flag of an operation that ended survives a restart
s = scheduler("suspended")
try:
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/a"})
    x, y = start(s, "a"), start(s, "a")
    for o in (x, y):
        s.ok("suspend_op", {"operation_id": o})
    s.ok("abort_op", {"operation_id": x})
    s.ok("complete_op", {"operation_id": y})
    before = [(op(s, o)["state"], op(s, o)["suspended"]) for o in (x, y)]
    check(before == [("aborted", True), ("completed", True)], "ended suspended: %s" % before)
    s = restart(s, hard=True)
    after = [(op(s, o)["state"], op(s, o)["suspended"]) for o in (x, y)]
    check(after == before, "after kill -9 and restart: %s, before %s" % (after, before))
finally:
    s.stop()

# 2. a restart restores active operations in their pools, running or pending as they were
for hard in (False, True):
    s = scheduler("restore%d" % hard)
    try:
        for p in ("a", "e", "f", "g"):
            s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + p})
        # running / pending as they were
        s.set("//sys/pools/a/@max_running_operation_count", 1)
        x, y = start(s, "a"), start(s, "a")
        s.set("//sys/pools/a/@max_running_operation_count", 2)
        check(op(s, y)["state"] == "running", "raised limit starts y")
        s.set("//sys/pools/a/@max_running_operation_count", 1)
        z = start(s, "a")
        # an explicit pool that gets create_ephemeral_subpools after the start
        ex = start(s, "e")
        s.set("//sys/pools/e/@create_ephemeral_subpools", True)
        # an ephemeral pool whose parent loses create_ephemeral_subpools: the operation moves
        # into the parent at once (docs/api.md "Ephemeral subpools") and stays there
        s.set("//sys/pools/f/@create_ephemeral_subpools", True)
        eph = start(s, "f")
        s.set("//sys/pools/f/@create_ephemeral_subpools", False)
        # admitted before max_operation_count was lowered to what is running
        g1, g2 = start(s, "g"), start(s, "g")
        s.set("//sys/pools/g/@max_running_operation_count", 1)
        s.set("//sys/pools/g/@max_operation_count", 1)
        ops = [x, y, z, ex, eph, g1, g2]
        before = [(op(s, o)["state"], op(s, o)["pool_per_tree"]) for o in ops]
        check([b[0] for b in before] == ["running", "running", "pending", "running", "running",
                                         "running", "running"], "before restart: %s" % before)
        check(before[4][1]["physical"] == "f", "f's operation moved into f: %s" % (before[4],))
        s = restart(s, hard)
        after = [(op(s, o)["state"], op(s, o)["pool_per_tree"]) for o in ops]
        for o, b, a in zip(ops, before, after):
            check(a == b, "%s: operation %s before %s, after %s" % ("kill -9" if hard else "SIGTERM", o, b, a))
        check(s.get(ORCHID + "a/running_operation_count") == 2, "a counts two running")
    finally:
        s.stop()

# 3. moving an operation out of a pool at its running limit starts the next one there
with scheduler("move") as s:
    for p in ("a", "b"):
        s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + p})
    s.set("//sys/pools/a/@max_running_operation_count", 1)
    x, y = start(s, "a"), start(s, "a")
    check([op(s, o)["state"] for o in (x, y)] == ["running", "pending"], "x runs, y waits")
    s.ok("update_op_parameters", {"operation_id": x, "parameters": {"pool": "b"}})
    check([op(s, o)["state"] for o in (x, y)] == ["running", "running"],
          "after the move: %s" % [op(s, o)["state"] for o in (x, y)])
    check(s.get(ORCHID + "a/running_operation_count") == 1, "a counts y running")

# 4 and 6. a running operation is not moved into a pool at its running limit: it would turn
# pending with its jobs running, outside the accounting of its ancestors' resource_limits
with scheduler("reason") as s:
    for p in ("L", "L/K", "L/M"):
        s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + p})
    s.set("//sys/pools/L/@resource_limits", {"cpu": 2})
    s.set("//sys/pools/L/M/@max_running_operation_count", 0)
    n = FakeNode(s, "n1", cpu=8, slots=8)
    n.heartbeat()
    x = start(s, "K", jobs=2)
    for _ in range(50):
        time.sleep(0.1)
        n.heartbeat()
        if len(n.running) == 2:
            break
    check(len(n.running) == 2, "x's two jobs run")
    st, out = s.call("update_op_parameters", {"operation_id": x, "parameters": {"pool": "M"}})
    check(st == 409 and "running operations" in out.get("message", ""), "move refused: %d %s" % (st, out))
    g = op(s, x)
    check(g["state"] == "running" and g["pool_per_tree"] == {"physical": "K"}, "x stays: %s" % g["state"])
    y = start(s, "K", jobs=4)
    for _ in range(5):
        time.sleep(0.15)
        n.heartbeat()
    cpu = sum(j["cpu_limit"] for j in n.running.values())
    check(cpu <= 2, "L's jobs within its cpu limit 2: %s" % cpu)

# 5. jobs ended while the heartbeat is read are aborted in its reply
with Scheduler(bin, work + "/hbabort", {"fair_share_update_period": 100, "max_failed_job_count": 1}).start() as s:
    s.set("//sys/pool_trees/physical/@fair_share_update_period", 100)
    n = FakeNode(s, "n1", cpu=2, slots=2)
    n.heartbeat()
    x = start(s, "x", jobs=2)
    for _ in range(50):
        time.sleep(0.1)
        n.heartbeat()
        if len(n.running) == 2:
            break
    check(len(n.running) == 2, "x runs two jobs")
    y = start(s, "x", jobs=2)
    time.sleep(0.4)   # y in the snapshot: the freed room could go to it at once
    failed, other = sorted(n.running)
    n.finish(failed, "failed", exit_code=1)
    out = n.heartbeat()
    check(op(s, x)["state"] == "failed", "x failed: %s" % op(s, x)["state"])
    check(other in [a["job_id"] for a in out["jobs_to_abort"]],
          "x's other job %s is aborted in the reply: %s" % (other, out["jobs_to_abort"]))
    check(len(n.running) <= 2, "the node runs at most its 2 slots: %s" % sorted(n.running))

# 7. a refused move with a new name changes nothing: no pending operation starts
with scheduler("move_rename") as s:
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/full",
                    "attributes": {"max_running_operation_count": 1}})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/full/q"})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/free"})
    first = start(s, "q")
    second = start(s, "q")
    check(op(s, second)["state"] == "pending", "the second waits at full's limit")
    st, out = s.call("move", {"source_path": "//sys/pools/full/q",
                              "destination_path": "//sys/pools/free/q2"})
    check(st == 409, "the rename of a pool with operations is refused: %d %s" % (st, out))
    check(op(s, second)["state"] == "pending", "nothing started: %s" % op(s, second)["state"])
    running = s.get(ORCHID + "full/running_operation_count")
    check(running == 1, "full still counts one running: %s" % running)
    check(s.get(ORCHID + "q/parent") == "full", "q stays under full")
    s.ok("abort_op", {"operation_id": first})

# 8. a running operation moved out of a stale user subpool stays running, counted in its new
# pool, even when an ancestor is at its running limit (as after a lowered limit); it was left
# "running" in the service while the tree had made it pending (found by server_stateful.py)
with scheduler("stale_running") as s:
    for p in ("p59", "p59/p81", "p59/p81/p55"):
        s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + p})
    s.set("//sys/pools/p59/p81/p55/@create_ephemeral_subpools", True)
    x = start(s, "p55")
    check(op(s, x)["state"] == "running", "x runs in p55's user subpool")
    s.set("//sys/pools/p59/p81/@max_running_operation_count", 0)
    s.set("//sys/pools/p59/p81/p55/@create_ephemeral_subpools", False)
    g = op(s, x)
    check(g["state"] == "running" and g["pool_per_tree"] == {"physical": "p55"},
          "x moved into p55, still running: %s %s" % (g["state"], g["pool_per_tree"]))
    running = s.get(ORCHID + "p55/running_operation_count")
    check(running == 1, "p55 counts x running: %s" % running)
finish()
EOF
