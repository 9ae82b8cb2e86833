#!/usr/bin/env bash
# test_scheduler_strategy.py::TestSchedulerHangingOperations translated: operations whose
# scheduling hung fail (docs/api.md "Operations that can never run"), by a limiting ancestor
# or by no successful scheduled allocations, and the switches and situations that keep them.
# Each case runs its own scheduler with upstream's config for the class (checks every 100 ms,
# safe timeouts 5 s, 10 schedule attempts) and three fake nodes of 2 cpu and 2 user slots.
# upstream waits 10 s where an operation must not fail; here 7 s, past both safe timeouts.
# usage: strategy_hanging.sh BINARY DATA_DIR SOURCE_DIR [CASE...]
source "${3:?usage: strategy_hanging.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 240 "$@" <<'PYEOF'
import sys, time
from server_helper import check, finish
import upslib
from upslib import Env, case, state

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]
PT = "//sys/pool_trees/physical/"
CN = "//sys/cluster_nodes/"
CONFIG = {"fair_share_update_period": 100, "operation_hangup_check_period": 100,
          "operation_hangup_safe_timeout": 5000,
          "operation_hangup_min_schedule_job_attempts": 10,
          "operation_hangup_due_to_limiting_ancestor_safe_timeout": 5000}
QUIET = 10.0   # seconds an operation that must not fail is watched (upstream: time.sleep(10))


def hang_env(name, config=None):
    cfg = dict(CONFIG)
    cfg.update(config or {})
    # upstream's nodes carry their address as a tag; the fake nodes get their id
    return Env(name, nodes=3, cpu=2, slots=2, config=cfg, tags=lambda i: ["n%d" % i])


def error(env, op):
    return env.s.ok("get_operation", {"operation_id": op}).get("error") or ""


def running_jobs(env, op):
    return [j for j in env.s.ok("list_jobs", {"operation_id": op})["jobs"] if j["state"] == "running"]


def stays_running(env, op, seconds=QUIET):
    end = time.time() + seconds
    while time.time() < end:
        env.beat()
        if state(env, op) != "running":
            raise AssertionError("%s became %s: %s" % (op, state(env, op), error(env, op)))
        time.sleep(0.1)


def track(env, op, timeout=30.0):
    """Runs op to its end: the fake nodes complete every job they are given (upstream's
    'sleep 0.5' jobs); true when it completed."""
    end = time.time() + timeout
    while time.time() < end:
        for n in env.nodes:
            n.heartbeat()
            n.finish_all()
        st = state(env, op)
        if st != "running" and st != "pending":
            return st == "completed" or st
        time.sleep(0.05)
    return "still %s" % state(env, op)


def limiting_pools(env):
    env.pool("limiting_pool", resource_limits={"cpu": 1.0})
    env.pool("subpool", "limiting_pool")
    env.wait(lambda: env.pool_attr("limiting_pool", "resource_limits")["cpu"] == 1.0,
             "limiting_pool limits")


def survives_limiting_ancestor(env, **spec):
    """An operation of 2 cpu jobs under limiting_pool (1 cpu) with the check off runs on past
    the safe timeout and completes once the limit is removed."""
    limiting_pools(env)
    op = env.op(jobs=10, cpu=2.0, **spec)
    stays_running(env, op)
    env.s.ok("remove", {"path": PT + "limiting_pool/@resource_limits"})
    got = track(env, op)
    check(got is True, "completes once the limit is gone: %s" % got)


@case
def hanging_operations():
    # upstream: test_scheduler_strategy::TestSchedulerHangingOperations::test_hanging_operations
    with hang_env("hanging") as env:
        ops = [env.op(pool="fake_pool", scheduling_tag_filter=n.id) for n in env.nodes]
        for op in ops:
            env.wait(lambda: len(running_jobs(env, op)) == 1, "%s runs its job" % op)
        op = env.op(pool="fake_pool", cpu=1.5)
        # starving needs the tree's fair_share_starvation_timeout (30 s) first, as upstream
        env.wait(lambda: state(env, op) == "failed" or state(env, op), "the 1.5 cpu operation fails",
                 timeout=60)
        result = error(env, op)
        check("scheduling hung" in result, "result says scheduling hung: %s" % result)
        check("no successful scheduled allocations" in result,
              "result says no successful scheduled allocations: %s" % result)
        for o in ops:
            check(state(env, o) == "running", "the fitting operations still run")


@case
def disable_limiting_ancestor_check_for_operation():
    # upstream: test_scheduler_strategy::TestSchedulerHangingOperations::test_disable_limiting_ancestor_check_for_operation
    with hang_env("disable_for_op") as env:
        survives_limiting_ancestor(env, enable_limiting_ancestor_check=False,
                                   scheduling_options_per_pool_tree={"physical": {"pool": "subpool"}})


@case
def disable_limiting_ancestor_check_for_tree():
    # upstream: test_scheduler_strategy::TestSchedulerHangingOperations::test_disable_limiting_ancestor_check_for_tree
    with hang_env("disable_for_tree") as env:
        env.s.set(PT + "@config/enable_limiting_ancestor_check", False)
        check(env.get(upslib.ORCHID + "/config/enable_limiting_ancestor_check") is False,
              "the orchid's tree config shows the switch off")
        survives_limiting_ancestor(env, pool="subpool")


@case
def limiting_ancestor():
    # upstream: test_scheduler_strategy::TestSchedulerHangingOperations::test_limiting_ancestor
    with hang_env("limiting") as env:
        limiting_pools(env)
        op = env.op(jobs=10, cpu=2.0, pool="subpool")
        env.wait(lambda: state(env, op) == "failed" or state(env, op), "the operation fails",
                 timeout=20)
        result = error(env, op)
        check("scheduling hung" in result, "result says scheduling hung: %s" % result)
        check("limiting_ancestor" in result and "limiting_pool" in result,
              "result names the limiting ancestor: %s" % result)


@case
def skip_limiting_ancestor_check_on_node_shortage():
    # upstream: test_scheduler_strategy::TestSchedulerHangingOperations::test_skip_limiting_ancestor_check_on_node_shortage
    with hang_env("node_shortage", {"operation_hangup_safe_timeout": 100000000}) as env:
        env.s.set(PT + "@config/nodes_filter", "!custom")
        env.s.ok("create", {"type": "scheduler_pool_tree",
                            "attributes": {"name": "custom_tree",
                                           "config": {"nodes_filter": "custom",
                                                      "fair_share_update_period": 100}}})
        env.s.ok("create", {"type": "scheduler_pool",
                            "attributes": {"name": "research", "pool_tree": "custom_tree"}})
        custom = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/custom_tree"
        node = env.nodes[0]
        env.s.set(CN + node.id + "/@user_tags", ["custom"])
        env.wait(lambda: (env.get(custom + "/resource_limits") or {}).get("cpu", 0) > 0,
                 "custom_tree has the node's cpu")
        op = env.op(jobs=2, cpu=2.0, pool="subpool", pool_trees=["custom_tree"])
        env.wait(lambda: len(running_jobs(env, op)) == 1, "one job runs (upstream's breakpoint)")
        env.s.set(CN + node.id + "/@user_tags", [])
        env.wait(lambda: (env.get(custom + "/resource_limits") or {}).get("cpu") == 0,
                 "custom_tree has no cpu")
        stays_running(env, op)
        env.s.set(CN + node.id + "/@user_tags", ["custom"])
        got = track(env, op)
        check(got is True, "completes once the node is back: %s" % got)


upslib.run(upslib.CASES, sys.argv[3:])
finish()
PYEOF
