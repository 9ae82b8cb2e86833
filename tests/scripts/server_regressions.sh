#!/usr/bin/env bash
# Reproducers of scheduler crashes on ordinary features, each run against a real scheduler with a
# fake node speaking the heartbeat protocol. All three used to kill the daemon (SIGSEGV in an
# HTTP worker) or leave an operation pending forever: the service wrote its own operation
# record into the tree membership's user_data, which belongs to the strategy's operation, so
# the strategy's refresh of an operation made running by a freed slot read the wrong struct.
#   1. max_running_operation_count=1 with three operations (also through an ephemeral subpool's
#      limit and the tree's max_running_operation_count_per_pool): each starts when the one
#      before it finishes; a pending operation always has a pending reason.
#   2. update_op_parameters moving a running operation to another pool.
#   3. abort a pending operation, then let the running one finish: the third one starts.
# usage: server_regressions.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_regressions.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
ORCHID = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/"


def alive(s, what):
    return check(s.proc.poll() is None, "scheduler alive after %s (exit %s)" % (what, s.proc.poll()))


def start(s, pool, jobs=1, token=None):
    spec = {"pool": pool, "tasks": {"t": {"command": "true", "job_count": jobs, "cpu_limit": 1}}}
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec}, token)["operation_id"]


def states(s, ops):
    out = []
    for o in ops:
        g = s.ok("get_operation", {"operation_id": o})
        if g["state"] == "pending":
            check(bool(g.get("pending_reason")), "pending operation %s has a pending reason: %s" % (o, g))
        out.append(g["state"])
    return out


def cycle(s, node):
    """Runs what the node is given, finishes it, reports it."""
    time.sleep(0.35)
    node.heartbeat()
    node.finish_all()
    node.heartbeat()


def run_in_turn(s, node, ops, what):
    """Exactly one of ops runs at a time, in order (when one runs, those before it have
    completed); all complete."""
    for _ in range(40):
        st = states(s, ops)
        if not alive(s, what):
            return
        running = [i for i, x in enumerate(st) if x == "running"]
        check(len(running) <= 1, "%s: at most one running at a time, got %s" % (what, st))
        for i in running:
            check(all(x == "completed" for x in st[:i]), "%s: started in order, got %s" % (what, st))
        if all(x == "completed" for x in st):
            break
        cycle(s, node)
    check(all(x == "completed" for x in states(s, ops)), "%s: all complete, got %s" % (what, states(s, ops)))


def scheduler(name):
    s = Scheduler(bin, work + "/" + name, {"fair_share_update_period": 200}).start()
    s.set("//sys/pool_trees/physical/@fair_share_update_period", 200)
    return s


# 1a. a pool's max_running_operation_count
with scheduler("limit") as s:
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/a"})
    s.set("//sys/pools/a/@max_running_operation_count", 1)
    n = FakeNode(s, "n1", cpu=4, slots=4)
    n.heartbeat()
    ops = [start(s, "a") for _ in range(3)]
    check(states(s, ops) == ["running", "pending", "pending"], "one running, two pending: %s" % states(s, ops))
    run_in_turn(s, n, ops, "pool limit")
    check(s.get(ORCHID + "a/running_operation_count") == 0, "no running operation counted in a")
    alive(s, "pool limit")

# 1b. an ephemeral subpool's limit (create_ephemeral_subpools) and 1c. the tree's per-pool default
with scheduler("ephemeral") as s:
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/e"})
    s.set("//sys/pools/e/@create_ephemeral_subpools", True)
    s.set("//sys/pools/e/@ephemeral_subpool_config", {"max_running_operation_count": 1})
    n = FakeNode(s, "n1", cpu=4, slots=4)
    n.heartbeat()
    alice = s.token("alice")
    ops = [start(s, "e", token=alice) for _ in range(3)]
    check(s.ok("get_operation", {"operation_id": ops[0]})["pool_per_tree"] == {"physical": "e$alice"},
          "ephemeral subpool e$alice")
    run_in_turn(s, n, ops, "ephemeral subpool limit")

    s.set("//sys/pool_trees/physical/@max_running_operation_count_per_pool", 1)
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/d"})
    ops = [start(s, "d") for _ in range(3)]
    run_in_turn(s, n, ops, "tree max_running_operation_count_per_pool")

# 2. moving a running operation to another pool
with scheduler("move") as s:
    for p in ("a", "b"):
        s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + p})
    n = FakeNode(s, "n1", cpu=4, slots=4)
    n.heartbeat()
    op = start(s, "a", jobs=2)
    time.sleep(0.35)
    n.heartbeat()
    check(len(n.running) == 2, "two jobs running before the move")
    s.ok("update_op_parameters", {"operation_id": op, "parameters": {"pool": "b"}})
    time.sleep(0.35)
    n.heartbeat()
    if alive(s, "pool move"):
        g = s.ok("get_operation", {"operation_id": op})
        check(g["state"] == "running" and g["pool_per_tree"] == {"physical": "b"}, "moved: %s" % g)
        check(s.get(ORCHID + "b/running_operation_count") == 1, "b counts the moved operation")
        check(s.get(ORCHID + "a/running_operation_count") == 0, "a no longer counts it")
        n.finish_all()
        n.heartbeat()
        time.sleep(0.35)
        check(s.ok("get_operation", {"operation_id": op})["state"] == "completed", "moved operation completes")
        alive(s, "moved operation finishing")

# 3. abort a pending operation, then finish the running one: the third one starts
with scheduler("abort") as s:
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/a"})
    s.set("//sys/pools/a/@max_running_operation_count", 1)
    n = FakeNode(s, "n1", cpu=4, slots=4)
    n.heartbeat()
    ops = [start(s, "a") for _ in range(3)]
    s.ok("abort_op", {"operation_id": ops[1]})
    check(states(s, ops) == ["running", "aborted", "pending"], "after abort: %s" % states(s, ops))
    run_in_turn(s, n, [ops[0], ops[2]], "abort of a pending operation")
finish()
EOF
