#!/usr/bin/env bash
# test_scheduler_pool_trees.py::TestOffloadingPools translated: a pool's offloading_settings
# also start its operations in another tree (src/core/offloading.h). Each case runs its own
# scheduler with three fake nodes of 1 cpu and 1 user slot; upstream's
# create_custom_pool_tree_with_one_node becomes: physical takes the nodes without the tag, the
# new tree the one node tagged with its name. Three one-slot nodes also make "3 jobs running"
# mean that the offload tree runs one of them.
# usage: pooltrees_offloading.sh BINARY DATA_DIR SOURCE_DIR [CASE...]
source "${3:?usage: pooltrees_offloading.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 180 "$@" <<'PYEOF'
import sys
from server_helper import check, finish
import upslib
from upslib import Env, case, state

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]
PT = "//sys/pool_trees/"
INFO = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/%s/fair_share_info/operations/%s"


def offload_env(name):
    env = Env(name, nodes=3, cpu=1, slots=1)
    env.root = env.s.token("root")   # upstream's test user
    return env


def custom_tree_with_one_node(env, tree):
    """The last node goes to a new tree selected by its tag; returns that node's id."""
    env.s.set(PT + "physical/@config/nodes_filter", "!" + tree)
    env.s.ok("create", {"type": "scheduler_pool_tree",
                        "attributes": {"name": tree, "config": {"nodes_filter": tree,
                                                                "fair_share_update_period": 100}}})
    node = env.nodes[-1]
    env.s.set("//sys/cluster_nodes/%s/@user_tags" % node.id, [tree])
    env.beat()
    return node.id


def pool(env, name, tree="physical", parent=None, **attrs):
    a = dict(attrs, name=name, pool_tree=tree)
    if parent:
        a["parent_name"] = parent
    env.s.ok("create", {"type": "scheduler_pool", "attributes": a})


def in_tree(env, op, tree, attr):
    return env.get(INFO % (tree, op) + "/" + attr)


def jobs_on(env, op):
    return [j["node_id"] for j in env.s.ok("list_jobs", {"operation_id": op})["jobs"]
            if j["state"] == "running"]


def offloaded(name, settings_pool, pool_attrs, spec, want_pool, weight=None, jobs=3):
    """A pool with offloading_settings, an operation under it: it runs `jobs` jobs, one of them
    on the offload tree's node, in want_pool there."""
    env = offload_env(name)
    try:
        settings_pool(env)
        offload_node = custom_tree_with_one_node(env, "offload_tree")
        for p in pool_attrs:
            pool(env, p, "offload_tree")
        op = env.op(jobs=jobs, token=env.root, **spec)
        env.wait(lambda: len(jobs_on(env, op)) == jobs or jobs_on(env, op), "%d jobs run" % jobs)
        if jobs == 3:   # more than physical's two one-slot nodes run
            check(offload_node in jobs_on(env, op), "a job runs on the offload tree's node")
        env.wait(lambda: in_tree(env, op, "offload_tree", "pool") == want_pool or
                 in_tree(env, op, "offload_tree", "pool"), "pool %s in offload_tree" % want_pool)
        if weight is not None:
            check(in_tree(env, op, "offload_tree", "weight") == weight,
                  "weight %s in offload_tree: %s" % (weight, in_tree(env, op, "offload_tree", "weight")))
        return env, op
    except BaseException:
        env.stop()
        raise


@case
def offloading_pool_simple():
    # upstream: test_scheduler_pool_trees::TestOffloadingPools::test_offloading_pool_simple
    def primary(env):
        pool(env, "primary_pool")
        env.s.set(PT + "physical/primary_pool/@offloading_settings",
                  {"offload_tree": {"pool": "offload_pool", "weight": 0.5}})
    env, op = offloaded("simple", primary, ["offload_pool"], {"pool": "primary_pool"},
                        "offload_pool", weight=0.5)
    with env:
        # poolsched: the operation names both trees, and keeps both after a kill -9 restart
        ppt = env.s.ok("get_operation", {"operation_id": op})["pool_per_tree"]
        check(ppt == {"physical": "primary_pool", "offload_tree": "offload_pool"}, "pool_per_tree %s" % ppt)
        env.s.kill9()
        env.s.start()
        env.wait(lambda: in_tree(env, op, "offload_tree", "pool") == "offload_pool",
                 "offload_tree membership after the restart")
        check(state(env, op) == "running", "running after the restart")
        # poolsched: bad settings are refused naming the key
        st, out = env.s.call("set", {"path": PT + "physical/primary_pool/@offloading_settings",
                                     "value": {"offload_tree": {"weight": -1}}})
        check(st == 400 and "offloading_settings/offload_tree: weight" in out.get("message", ""),
              "a bad weight is refused: %d %s" % (st, out))


@case
def offloading_of_operations_in_nested_pools():
    # upstream: test_scheduler_pool_trees::TestOffloadingPools::test_offloading_of_operations_in_nested_pools
    def primary(env):
        pool(env, "primary_pool", offloading_settings={"offload_tree": {"pool": "offload_pool"}})
        pool(env, "child_pool", parent="primary_pool")
    offloaded("nested", primary, ["offload_pool"], {"pool": "child_pool"}, "offload_pool")[0].stop()


@case
def offloading_of_ephemeral_pools():
    # upstream: test_scheduler_pool_trees::TestOffloadingPools::test_offloading_of_ephemeral_pools
    def hub(env):
        pool(env, "ephemeral_hub", create_ephemeral_subpools=True,
             offloading_settings={"offload_tree": {"pool": "offload_pool"}})
    env, op = offloaded("ephemeral", hub, ["offload_pool"], {"pool": "ephemeral_hub"},
                        "offload_pool", jobs=1)
    with env:
        check(env.pool_attr("ephemeral_hub$root", "parent") == "ephemeral_hub",
              "ephemeral_hub$root in physical")


@case
def offloading_disabled_for_operations_with_scheduling_tag_filter():
    # upstream: test_scheduler_pool_trees::TestOffloadingPools::test_offloading_disabled_for_operations_with_scheduling_tag_filter
    with offload_env("tag_filter") as env:
        pool(env, "primary_pool")
        env.s.set(PT + "physical/primary_pool/@offloading_settings", {"offload_tree": {"pool": "offload_pool"}})
        offload_node = custom_tree_with_one_node(env, "offload_tree")
        pool(env, "offload_pool", "offload_tree")
        op = env.op(jobs=2, token=env.root, pool="primary_pool", scheduling_tag_filter="!x")
        env.wait(lambda: len(jobs_on(env, op)) == 2 or jobs_on(env, op), "2 jobs run")
        check(in_tree(env, op, "physical", "pool") == "primary_pool", "in physical")
        check(in_tree(env, op, "offload_tree", "pool") is None, "not in offload_tree")
        check(offload_node not in jobs_on(env, op), "no job on the offload node")


def some_pool_offloaded_to(settings):
    def some(env):
        pool(env, "some_pool", offloading_settings={"offload_tree": settings})
    return some


@case
def offloading_without_pool_to_simple_existing_pool():
    # upstream: test_scheduler_pool_trees::TestOffloadingPools::test_offloading_without_pool_to_simple_existing_pool
    offloaded("without_pool", some_pool_offloaded_to({}), ["some_pool"], {"pool": "some_pool"},
              "some_pool", jobs=1)[0].stop()


@case
def offloading_without_pool_to_username_pool():
    # upstream: test_scheduler_pool_trees::TestOffloadingPools::test_offloading_without_pool_to_username_pool
    def root(env):
        pool(env, "root", offloading_settings={"offload_tree": {}})
    offloaded("username", root, ["some_pool"], {}, "root", jobs=1)[0].stop()


@case
def offloading_with_empty_pool_hotfix():
    # upstream: test_scheduler_pool_trees::TestOffloadingPools::test_offloading_with_empty_pool_hotfix
    offloaded("empty_pool", some_pool_offloaded_to({"pool": ""}), ["some_pool"],
              {"pool": "some_pool"}, "some_pool", jobs=1)[0].stop()


upslib.run(upslib.CASES, sys.argv[3:])
finish()
PYEOF
