#!/usr/bin/env bash
# Upstream test_scheduler_pool_trees.py, translated: pool trees changed while operations run —
# trees added and removed (operations orphaned, multi-tree operations losing a tree), the
# default tree changed, multi-tree operations. Upstream's "default" tree is poolsched's
# "physical"; nodes have 1 cpu and 1 user slot each, as upstream's.
# usage: pooltrees_reconfig.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: pooltrees_reconfig.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 100 "$@" <<'EOF2'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish
from server_helper import start_vanilla as vanilla, op_jobs as jobs, op_state as state

bin, work = sys.argv[1], sys.argv[2]
PT = "//sys/pool_trees/"
CN = "//sys/cluster_nodes/"
INFO = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/"


def beat_all(nodes, seconds=0.3, complete=False):
    end = time.time() + seconds
    while time.time() < end:
        for n in nodes:
            n.heartbeat()
            if complete:
                n.finish_all()
        time.sleep(0.05)


def wait(cond, nodes, what, timeout=30, complete=False):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        beat_all(nodes, 0.15, complete)
    return check(False, what)


def fresh(name, n=3):
    s = Scheduler(bin, work + "/" + name, {"fair_share_update_period": 50}).start()
    s.set(PT + "physical/@fair_share_update_period", 50)
    s.set(PT + "physical/@max_running_operation_count_per_pool", 50)
    nodes = [FakeNode(s, "node%d" % i, cpu=1, slots=1) for i in range(n)]
    beat_all(nodes, 0.2)
    return s, nodes


def tree(s, name, flt, **config):
    config.update({"nodes_filter": flt, "fair_share_update_period": 50,
                   "max_running_operation_count_per_pool": 50})
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": name, "config": config}})


def custom_tree_with_one_node(s, name):
    """upstream yt_helpers.create_custom_pool_tree_with_one_node: node0 goes to tree `name`."""
    s.set(PT + "physical/@config/nodes_filter", "!" + name)
    s.set(CN + "node0/@user_tags/end", name)
    tree(s, name, name)
    return "node0"


servers = []
try:
    s, nodes = fresh("sanity")
    servers.append(s)
    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_basic_sanity
    check("physical" in s.get(INFO[:-1]), "the default tree in the orchid")
    tree(s, "other", "other")
    check("other" in s.get(INFO[:-1]), "tree other in the orchid")
    check(s.get("//sys/scheduler/@alerts") == [], "no alerts")
    # Deliberate deviation: upstream accepts the write and raises an update_pools alert
    # (the tree is not added); poolsched's Cypress is the scheduler, so it refuses the write at
    # once, naming the node and both trees (docs/api.md "Node tags").
    st, out = s.call("create", {"type": "scheduler_pool_tree", "attributes": {
        "name": "other_intersecting", "config": {"nodes_filter": ""}}})
    check(st == 400 and "two pool trees" in out.get("message", ""),
          "an intersecting tree is refused: %d %s" % (st, out))
    check("other_intersecting" not in s.get(INFO[:-1]), "and not added")
    check(s.get("//sys/scheduler/@alerts") == [], "no alert left behind")

    # upstream: test_scheduler_pool_trees::TestTreeSetChangedDuringFairShareUpdate::test_tree_set_changed_during_fair_share_update
    for i in range(10):
        tree(s, "other%d" % i, "other%d" % i)
        beat_all(nodes, 0.06)
    for i in range(10):
        s.ok("remove", {"path": PT + "other%d" % i})
        beat_all(nodes, 0.06)
    check(sorted(s.get(INFO[:-1])) == ["other", "physical"], "trees back to the two")
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_abort_orphaned_operations
    s, nodes = fresh("orphaned")
    servers.append(s)
    op = vanilla(s, 1)
    wait(lambda: state(s, op) == "running", nodes, "op running")
    s.ok("remove", {"path": PT + "@default_tree"})
    s.ok("remove", {"path": PT + "physical"})
    check(state(s, op) in ("aborted", "aborting"), "the orphaned op is aborted: %s" % state(s, op))
    got = s.ok("get_operation", {"operation_id": op})
    check("No suitable fair-share trees" in str(got.get("error")), "upstream's error: %s" % got.get("error"))
    beat_all(nodes, 0.2)
    check(all(not n.running for n in nodes), "its job is gone from the nodes")
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_abort_many_orphaned_operations_with_abort
    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_abort_many_orphaned_operations_with_update_runtime_parameters
    # (upstream sets @resource_limits_overrides for 10 slots; here the fake node has 10 slots)
    for variant in ("abort", "update"):
        s = Scheduler(bin, work + "/many_" + variant, {"fair_share_update_period": 50}).start()
        servers.append(s)
        s.set(PT + "physical/@max_running_operation_count_per_pool", 50)
        node = FakeNode(s, "node0", cpu=10, slots=10)
        ops = [vanilla(s, 1) for _ in range(10)]
        wait(lambda: all(state(s, o) == "running" for o in ops), [node], "10 ops running")
        s.ok("remove", {"path": PT + "@default_tree"})
        s.ok("remove", {"path": PT + "physical"})
        for o in reversed(ops):
            if variant == "abort":
                s.call("abort_op", {"operation_id": o})   # errors ignored, as upstream
            else:
                s.call("update_op_parameters", {"operation_id": o, "parameters": {
                    "scheduling_options_per_pool_tree": {"other1": {"resource_limits": {"user_slots": 1}}}}})
        check(all(state(s, o) in ("aborted", "aborting") for o in ops),
              "%s: all 10 ops aborted" % variant)
        s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_abort_many_orphaned_operations_with_multiple_trees
    s, nodes = fresh("multiple")
    servers.append(s)
    for n in nodes:
        n.limits.update({"cpu": 10, "user_slots": 10})
    s.set(PT + "physical/@config/nodes_filter", "!other1 & !other2 & !other3")
    for i, n in enumerate(nodes):
        tag = "other%d" % (i + 1)
        s.set(CN + n.id + "/@user_tags", [tag])
        check(tag in s.get("//sys/scheduler/orchid/scheduler/nodes/%s/tags" % n.id), "%s tagged" % n.id)
        tree(s, tag, tag)
    beat_all(nodes, 0.2)
    ops1 = [vanilla(s, 1, pool_trees=["other1"]) for _ in range(10)]
    ops12 = [vanilla(s, 1, pool_trees=["other1", "other2"]) for _ in range(10)]
    ops123 = [vanilla(s, 1, pool_trees=["other1", "other2", "other3"]) for _ in range(10)]
    wait(lambda: all(state(s, o) == "running" for o in ops1 + ops12 + ops123), nodes,
         "30 ops running")
    s.ok("remove", {"path": PT + "other1"})
    check(all(state(s, o) in ("aborted", "aborting") for o in ops1), "ops1 aborted")
    check(all(state(s, o) == "running" for o in ops12 + ops123), "ops12 and ops123 still running")
    # poolsched: a restart keeps them running in their remaining trees
    s.stop()
    s.start()
    beat_all(nodes, 0.3)
    check(all(state(s, o) == "running" for o in ops12 + ops123), "still running after a restart")
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_multitree_operations
    s, nodes = fresh("multitree")
    servers.append(s)
    custom_tree_with_one_node(s, "other")
    op = vanilla(s, 15, command="true", pool_trees=["physical", "other"])
    wait(lambda: state(s, op) == "completed", nodes, "the multi-tree op completes", complete=True)
    where = {j["node_id"] for j in jobs(s, op)}
    check(where == {"node0", "node1", "node2"}, "its jobs ran in both trees: %s" % where)

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_revive_multitree_operation
    op = vanilla(s, 6, pool_trees=["physical", "other"])
    wait(lambda: len(jobs(s, op, "running")) > 2, nodes, "more than 2 jobs running")
    s.stop()
    time.sleep(0.5)
    s.start()
    wait(lambda: state(s, op) == "running", nodes, "running after the restart")
    wait(lambda: state(s, op) == "completed", nodes, "and completes", complete=True)

    # upstream: test_scheduler_pool_trees::TestRaceBetweenSchedulingJobAndDisablingOperation::test_race_between_scheduling_job_and_disabling_operation
    op = vanilla(s, 2, command=":", pool_trees=["physical", "other"])
    wait(lambda: state(s, op) == "running", nodes, "op running in both trees")
    s.ok("remove", {"path": PT + "other"})
    check(state(s, op) == "running", "it keeps running without tree other")
    wait(lambda: state(s, op) == "completed", nodes, "and completes", complete=True)
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_race_between_pool_tree_removal_and_register_operation
    s, nodes = fresh("race")
    servers.append(s)
    custom_tree_with_one_node(s, "other")
    s.set(PT + "@default_tree", "other")
    op = vanilla(s, 1)
    wait(lambda: state(s, op) == "running", nodes, "op running in other")
    s.ok("remove", {"path": PT + "other"})
    s.set(PT + "@default_tree", "physical")
    check("other" not in s.get(INFO[:-1]), "tree other gone")
    tree(s, "other", "other")
    s.set(PT + "@default_tree", "other")
    check("other" in s.get(INFO[:-1]), "tree other back")
    op = vanilla(s, 1, command=":")
    wait(lambda: state(s, op) == "completed", nodes, "a new op completes in it", complete=True)
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_operation_failed_on_tree_remove_when_scheduler_is_down
    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_operation_completed_on_tree_remove_when_scheduler_is_down
    # Deliberate deviation: poolsched's Cypress is the scheduler, so a tree is removed while it
    # runs (never while it is down); the restart then checks that the outcome is kept.
    s, nodes = fresh("down")
    servers.append(s)
    custom_tree_with_one_node(s, "other")
    only = vanilla(s, 1, pool_trees=["other"])
    both = vanilla(s, 1, pool_trees=["physical", "other"])
    wait(lambda: state(s, only) == "running" and state(s, both) == "running", nodes, "both running")
    s.ok("remove", {"path": PT + "other"})
    s.stop()
    s.start()
    check(state(s, only) in ("failed", "aborted"), "the op only in other did not survive")
    check(state(s, both) == "running", "the op also in physical runs after the restart")
    wait(lambda: state(s, both) == "completed", nodes, "and completes", complete=True)
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreeOperationLimits::test_enabling_operation_separately_in_each_tree
    s, nodes = fresh("separately")
    servers.append(s)
    for n in nodes[:-1]:
        s.set(CN + n.id + "/@user_tags", ["other"])
    s.set(PT + "physical/@config/nodes_filter", "!other")
    s.set(PT + "physical/@max_running_operation_count_per_pool", 1)
    tree(s, "other", "other")
    s.set(PT + "other/@max_running_operation_count_per_pool", 1)
    blocking = vanilla(s, 1, pool_trees=["other"])
    wait(lambda: len(jobs(s, blocking, "running")) == 1, nodes, "the blocking op runs")
    op = vanilla(s, 2, pool_trees=["physical", "other"])
    beat_all(nodes, 3.0)   # upstream: time.sleep(3)
    # 2 nodes in other, 1 in physical; other's pool is full (max_running_operation_count_per_pool
    # 1), so op runs in physical only: 1 of its 2 jobs
    check(len(jobs(s, op, "running")) == 1, "op runs 1 job: %s" % jobs(s, op))
    check(state(s, op) == "running", "op is running (in physical): %s" % state(s, op))
    for n in nodes:
        n.finish_all()
    wait(lambda: state(s, blocking) == "completed" and state(s, op) == "completed", nodes,
         "both complete", complete=True)
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreeOperationLimits::test_erase_trees_with_pool_limit_violations
    s, nodes = fresh("erase")
    servers.append(s)
    s.ok("create", {"type": "scheduler_pool", "path": PT + "physical/pool"})
    tree(s, "other", "other")
    s.ok("create", {"type": "scheduler_pool", "path": PT + "other/pool", "attributes": {
        "max_running_operation_count": 0, "max_operation_count": 0}})
    spec = {"pool": "pool", "pool_trees": ["physical", "other"], "tasks": {"main": {
        "command": "sleep 1000", "job_count": 1, "cpu_limit": 1}}}
    st, out = s.call("start_op", {"operation_type": "vanilla", "spec": spec})
    check(st == 409 and "concurrent operations" in out.get("message", ""),
          "too many operations in other: %d %s" % (st, out))
    spec["erase_trees_with_pool_limit_violations"] = True
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
    got = s.ok("get_operation", {"operation_id": op})
    check(got["runtime_parameters"]["erased_trees"] == ["other"], "other erased: %s" % got["runtime_parameters"])
    check(list(got["pool_per_tree"]) == ["physical"], "it runs in physical only: %s" % got["pool_per_tree"])
    spec["pool_trees"] = ["other"]
    st, out = s.call("start_op", {"operation_type": "vanilla", "spec": spec})
    check(st == 409 and "All trees have been erased for operation" in out.get("message", ""),
          "all trees erased: %d %s" % (st, out))
    s.stop()

    # upstream: test_scheduler_pool_trees::TestForbidOperationsWithZeroResourceDemand::test_forbid_operations_with_zero_resource_demand
    s, nodes = fresh("necessary")
    servers.append(s)
    tree(s, "other", "other", necessary_resources_for_operation=["gpu", "network"])
    s.ok("create", {"type": "scheduler_pool", "path": PT + "other/pool"})
    st, out = s.call("start_op", {"operation_type": "vanilla", "spec": {
        "pool": "pool", "pool_trees": ["other"], "resource_limits": {"cpu": 0},
        "tasks": {"main": {"command": "sleep 1000", "job_count": 1, "cpu_limit": 1}}}})
    check(st == 400 and 'Operation has zero demand for resources which are necessary in tree "other"'
          in out.get("message", ""), "refused: %d %s" % (st, out))
    st, out = s.call("set", {"path": PT + "other/@necessary_resources_for_operation", "value": ["gpus"]})
    check(st == 400 and "necessary_resources_for_operation" in out.get("message", "") and
          "gpus" in out.get("message", ""), "a bad resource name is refused: %d %s" % (st, out))
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_default_tree_manipulations
    s, nodes = fresh("default")
    servers.append(s)
    check(s.get(PT + "@default_tree") == "physical", "physical is the default tree")
    s.ok("remove", {"path": PT + "@default_tree"})
    st, out = s.call("start_op", {"operation_type": "vanilla", "spec": {"tasks": {"main": {
        "command": ":", "job_count": 1, "cpu_limit": 1}}}})
    check(st == 400 and "no default tree" in out.get("message", ""),
          "no pool_trees and no default tree: refused (%d %s)" % (st, out))
    op = vanilla(s, 1, command=":", pool_trees=["physical"])
    wait(lambda: state(s, op) == "completed", nodes, "with pool_trees it completes", complete=True)
    # Deliberate deviation: upstream accepts an unknown default tree and raises an alert;
    # poolsched refuses the write (404 naming the tree).
    st, out = s.call("set", {"path": PT + "@default_tree", "value": "unexisting"})
    check(st == 404 and "unexisting" in out.get("message", ""), "unknown default refused: %d %s" % (st, out))
    s.set(PT + "@default_tree", "physical")
    check(s.get(PT + "@default_tree") == "physical", "physical is the default again")

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_default_tree_update
    custom_tree_with_one_node(s, "other")
    op1 = vanilla(s, 1)
    wait(lambda: state(s, op1) == "running", nodes, "op1 running")
    s.set(PT + "@default_tree", "other")
    check(state(s, op1) == "running", "op1 still running")
    op2 = vanilla(s, 1)
    wait(lambda: state(s, op2) == "running", nodes, "op2 running")
    ops = lambda t: set(s.get(INFO + t + "/fair_share_info/operations"))
    check(ops("physical") == {op1}, "op1 in physical only: %s" % ops("physical"))
    check(ops("other") == {op2}, "op2 in other only: %s" % ops("other"))
    s.ok("abort_op", {"operation_id": op1})
    s.ok("abort_op", {"operation_id": op2})

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_fair_share
    s.set(PT + "other/@fair_share_update_period", 50)
    tree_of = lambda t: [n.id for n in nodes if s.get(CN + n.id + "/@tree") == t]
    check(len(tree_of("physical")) == 2 and tree_of("other") == ["node0"], "2 nodes + 1 node")
    # upstream also reads node_count and node_addresses, which the tree's orchid here has not
    # (its nodes are each node's @tree, above)
    cpu = lambda t: s.get(INFO + t + "/resource_limits")["cpu"]
    wait(lambda: abs(cpu("physical") - 2) < 1e-4 and abs(cpu("other") - 1) < 1e-4, nodes,
         "resource_limits: cpu 2 and 1")
    op1 = vanilla(s, 3, pool_trees=["physical", "other"])
    op2 = vanilla(s, 3, pool_trees=["other"])

    def fs(t, op):
        try:
            return s.get(INFO + t + "/fair_share_info/operations/" + op + "/fair_share_ratio")
        except RuntimeError:
            return 0.0
    near = lambda a, b: abs(a - b) < 1e-4   # upstream's are_almost_equal
    wait(lambda: near(fs("physical", op1), 1.0) and near(fs("other", op1), 0.5) and
         near(fs("other", op2), 0.5), nodes,
         "fair shares 1.0 / 0.5 / 0.5: %s %s %s" % (fs("physical", op1), fs("other", op1), fs("other", op2)))
    s.stop()
finally:
    for x in servers:
        x.stop()
finish()
EOF2
