#!/usr/bin/env bash
# test_scheduler_strategy.py translated, TestEphemeralPools' cases of the user-to-default-pool
# map: //sys/scheduler/user_to_default_pool (upstream's document) and the tree option
# use_user_default_parent_pool_map. Each case runs its own scheduler (fair share update every
# 100 ms, tests/upstream/upslib.py) with upstream's user "u" (a token of user u). Tree "physical"
# stands for upstream's "default". Beyond upstream: the map and the moved pools survive a
# kill -9, and a bad map is refused whole.
# usage: strategy_user_pools.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: strategy_user_pools.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PYEOF'
import sys
from server_helper import check, finish
import upslib
from upslib import Env, ORCHID, case, refused

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]

MAP = "//sys/scheduler/user_to_default_pool"
TREE = "//sys/pool_trees/physical/@"


def parent(env, pool):
    return env.pool_attr(pool, "parent", "")


@case
def ephemeral_pool_is_created_in_user_default_parent_pool():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_ephemeral_pool_is_created_in_user_default_parent_pool
    with Env("created_in_default", nodes=3) as env:
        u = env.s.token("u")
        env.pool("default_for_u")
        env.s.set(TREE + "use_user_default_parent_pool_map", True)
        env.s.set(MAP, {"u": "default_for_u"})
        op = env.op(token=u)
        env.wait(lambda: env.op_attr(op, "pool", "") == "u", "operation in pool u")
        env.wait(lambda: parent(env, "u") == "default_for_u", "u under default_for_u")


@case
def change_in_map_changes_parent_of_existing_ephemeral_pool():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_change_in_user_default_parent_pool_map_changes_parent_of_existing_ephemeral_pool
    with Env("map_change", nodes=3) as env:
        u = env.s.token("u")
        env.pool("default_for_u")
        env.s.set(TREE + "use_user_default_parent_pool_map", True)
        env.op(token=u)
        env.wait(lambda: parent(env, "u") == "<Root>", "u under the root")
        env.s.set(MAP, {"u": "default_for_u"})
        env.wait(lambda: parent(env, "u") == "default_for_u", "u moved under default_for_u")
        # beyond upstream: a restart (kill -9) keeps the map, and the pool where it put it
        env.s.kill9()
        env.s.start()
        check(env.s.get(MAP) == {"u": "default_for_u"}, "the map after a restart: %s" % env.s.get(MAP))
        env.wait(lambda: parent(env, "u") == "default_for_u", "u under default_for_u after a restart")
        check(env.s.get(TREE + "use_user_default_parent_pool_map") is True, "the option after a restart")


@case
def nonexistent_pools_are_created_in_default_user_pool():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_nonexistent_pools_are_created_in_default_user_pool
    with Env("nonexistent", nodes=3) as env:
        env.s.set(TREE + "use_user_default_parent_pool_map", True)
        u = env.s.token("u")
        env.pool("default_for_u")
        env.s.set(MAP, {"u": "default_for_u"})
        op = env.op(token=u, pool="nonexistent")
        env.wait(lambda: env.op_attr(op, "pool", "") == "nonexistent", "operation in pool nonexistent")
        env.wait(lambda: parent(env, "nonexistent") == "default_for_u", "nonexistent under default_for_u")


@case
def per_user_default_ephemeral_hub_applies_ephemeral_subpool_config():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_per_user_default_ephemeral_hub_applies_ephemeral_subpool_config
    with Env("per_user_hub", nodes=3) as env:
        u = env.s.token("u")
        env.pool("default_for_u", ephemeral_subpool_config={
            "mode": "fifo", "max_operation_count": 1, "resource_limits": {"cpu": 1}})
        env.s.set(MAP, {"u": "default_for_u"})
        env.s.set(TREE + "use_user_default_parent_pool_map", True)
        op = env.op(token=u)
        # upstream waits for the running job
        env.wait(lambda: env.op_attr(op, "resource_usage", {}).get("user_slots") == 1, "job runs")
        info = env.get(ORCHID + "/fair_share_info/pools/u")
        check(info["parent"] == "default_for_u", "parent %s" % info["parent"])
        check(info["mode"] == "fifo", "mode %s" % info["mode"])
        check(info["resource_limits"]["cpu"] == 1.0, "resource_limits %s" % info["resource_limits"])


@case
def bad_maps_are_refused():
    # poolsched's own: the map is validated when written (upstream raises the scheduler alert
    # "Error updating mapping from user to default parent pool" and keeps its last map)
    with Env("bad_maps", nodes=1) as env:
        env.pool("a")
        env.s.set(TREE + "use_user_default_parent_pool_map", True)
        env.s.set(MAP, {"u": "a"})
        st, out = refused(env.s, "set", {"path": MAP, "value": {"u": "a", "v": "missing"}})
        msg = str(out)
        check(st == 400 and "user_to_default_pool/v" in msg and "\"missing\" is missing in pool tree"
              in msg, "a missing pool is refused: %d %s" % (st, msg))
        st, out = refused(env.s, "set", {"path": MAP, "value": ["a"]})
        check(st == 400 and "must be a map" in str(out), "a list is refused: %d %s" % (st, out))
        st, out = refused(env.s, "set", {"path": MAP + "/w", "value": 5})
        check(st == 400 and "user_to_default_pool/w" in str(out), "a number is refused: %d %s" % (st, out))
        check(env.s.get(MAP) == {"u": "a"}, "nothing changed: %s" % env.s.get(MAP))
        # one user at a time, and removal
        env.s.set(MAP + "/x", "a")
        check(env.s.get(MAP + "/x") == "a", "one user's pool")
        env.s.ok("remove", {"path": MAP + "/x"})
        check(env.s.get(MAP) == {"u": "a"}, "one user removed: %s" % env.s.get(MAP))
        # the option is refused in a tree lacking a pool of the map
        env.s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "other",
                                                                         "config": {"nodes_filter": "none"}}})
        st, out = refused(env.s, "set", {"path": "//sys/pool_trees/other/@use_user_default_parent_pool_map",
                                         "value": True})
        check(st == 400 and "\"a\" is missing in pool tree \"other\"" in str(out),
              "the option is refused: %d %s" % (st, out))
        # a pool of the map removed afterwards: upstream's alert, and u falls back to the root
        env.s.ok("remove", {"path": "//sys/pool_trees/physical/a"})
        alerts = [x for x in env.s.get("//sys/scheduler/@alerts")
                  if x["attributes"]["alert_type"] == "update_user_to_default_pool_map"]
        check(len(alerts) == 1 and alerts[0]["message"] ==
              "Error updating mapping from user to default parent pool" and
              alerts[0]["inner_errors"][0]["attributes"]["pool"] == "a", "alert: %s" % alerts)
        env.s.kill9()
        env.s.start()   # the stored map is restored as it was accepted
        check(env.s.get(MAP) == {"u": "a"}, "the map after a restart: %s" % env.s.get(MAP))
        u = env.s.token("u")
        env.op(token=u)
        env.wait(lambda: parent(env, "u") == "<Root>", "u under the root")
        env.s.ok("remove", {"path": MAP})
        check(env.s.get(MAP) == {}, "removed: %s" % env.s.get(MAP))
        check(not [x for x in env.s.get("//sys/scheduler/@alerts")
                   if x["attributes"]["alert_type"] == "update_user_to_default_pool_map"], "alert gone")


upslib.run(upslib.CASES, sys.argv[3:])
finish()
PYEOF
