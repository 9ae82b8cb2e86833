#!/usr/bin/env bash
# test_scheduler_strategy.py translated, the free-volume overflow cases (should_distribute_free_volume_among_children,
# can_accept_free_volume) and satisfaction_ratio: each case runs its own scheduler (fair share
# update every 100 ms) with fake nodes shaped as upstream's (tests/scripts/server_helper.py),
# sleeping vanilla operations, and upstream's expected values. Tree "physical" stands for
# upstream's "default", //sys/pool_trees/physical for upstream's //sys/pools.
# usage: strategy_volume.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: strategy_volume.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PYEOF'
import sys, time
from server_helper import check, finish
import upslib
from upslib import Env, case

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]
POOLS = "//sys/pool_trees/physical/"
DISTRIBUTE = {"should_distribute_free_volume_among_children": True}


def ig(kind, flow, **extra):
    d = {"guarantee_type": kind, "resource_flow": {"cpu": flow}}
    d.update(extra)
    return d


def volume(env, pool):
    return env.pool_attr(pool, "accumulated_resource_volume", {}).get("cpu")


def overflow(name, deep=False, accept=True):
    with Env(name) as env:
        # upstream's request: the tree's @config set to a map (poolsched merges it into the
        # config, which keeps the 100 ms update period Env set)
        env.s.set(POOLS + "@config", DISTRIBUTE)
        env.pool("ancestor", integral_guarantees=ig("none", 10**10 + 1))
        over = "ancestor"
        if deep:
            env.pool("overflow_ancestor", "ancestor", integral_guarantees=ig("none", 10**10))
            over = "ancestor/overflow_ancestor"
        env.pool("overflow_pool", over.split("/")[-1], integral_guarantees=ig("relaxed", 10**10))
        target = "acceptable_pool" if accept else "not_acceptable_pool"
        parent = "ancestor"
        if deep:
            env.pool("acceptable_ancestor", "ancestor", integral_guarantees=ig("none", 1))
            parent = "acceptable_ancestor"
        extra = {} if accept else {"can_accept_free_volume": False}
        env.pool(target, parent, integral_guarantees=ig("relaxed", 1, **extra))
        time.sleep(1)  # upstream: wait a bit to accumulate some volume in overflow_pool
        env.s.set(POOLS + over + "/overflow_pool/@integral_guarantees/resource_flow/cpu", 10**5)
        # with 10**5 cpu flow overflow_pool is already full and fills its sibling in one second
        if accept:
            env.wait(lambda: volume(env, target) == 86400.0 or volume(env, target),   # exactly, as upstream
                     "%s volume 86400" % target)
        else:
            time.sleep(2)
            got = volume(env, target)
            check(got is not None and got < 30.0, "%s volume < 30, got %s" % (target, got))


@case
def overflow_simple():
    # upstream: test_scheduler_strategy::TestIntegralGuarantees::test_volume_overflow_distribution_simple
    overflow("overflow_simple")


@case
def overflow_deep():
    # upstream: test_scheduler_strategy::TestIntegralGuarantees::test_volume_overflow_distribution_with_deep_paths
    overflow("overflow_deep", deep=True)


@case
def overflow_not_accepted():
    # upstream: test_scheduler_strategy::TestIntegralGuarantees::test_volume_overflow_distribution_if_pool_does_not_accept_it
    overflow("overflow_not_accepted", accept=False)


@case
def crash_after_removing_flow():
    # upstream: test_scheduler_strategy::TestCrashDuringDistributingFreeVolumeAfterRemovingAllResourceFlow::test_crash_during_distributing_free_volume_after_removing_resource_flow
    # upstream's fair share update period there is 500 ms with smooth_period 500 ms; ours is 100.
    with Env("crash_flow", tree=dict(DISTRIBUTE, integral_guarantees={"smooth_period": 100})) as env:
        env.pool("ancestor", integral_guarantees=ig("none", 1000, burst_guarantee_resources={"cpu": 1000}))
        env.pool("overflow_pool", "ancestor", integral_guarantees=ig("relaxed", 1000.0))
        time.sleep(1)
        env.s.set(POOLS + "ancestor/overflow_pool/@integral_guarantees/resource_flow/cpu", 0.01)
        env.pool("problem_ancestor", "ancestor",
                 integral_guarantees=ig("none", 1, burst_guarantee_resources={"cpu": 1}))
        env.pool("problem_pool", "problem_ancestor",
                 integral_guarantees=ig("burst", 1, burst_guarantee_resources={"cpu": 1}))
        env.op(pool="problem_pool")
        env.s.set(POOLS + "ancestor/problem_ancestor/problem_pool/@integral_guarantees/resource_flow/cpu", 0)
        env.s.set(POOLS + "ancestor/problem_ancestor/@integral_guarantees/resource_flow/cpu", 0)
        # upstream: cannot use 0 since free volume from overflow_pool will always flow in
        def drained():
            v = volume(env, "problem_pool")
            return v is not None and v < 0.02 or v
        env.wait(drained, "problem_pool volume < 0.02")
        check(env.s.call("get", {"path": "//sys/scheduler/orchid"})[0] == 200, "the scheduler is alive")


upslib.run(upslib.CASES, sys.argv[3:])
finish()
PYEOF
