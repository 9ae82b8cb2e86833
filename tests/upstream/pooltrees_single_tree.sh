#!/usr/bin/env bash
# Upstream test_scheduler_pool_trees.py::TestSchedulerScheduleInSingleTree, translated:
# schedule_in_single_tree picks one of the operation's pool_trees at its start (docs/api.md
# "schedule_in_single_tree"); the others are runtime_parameters/erased_trees. As upstream: 4
# nodes of 3 cpu / 3 user slots tagged default_tag, nirvana_tag, cloud_tag, empty_tag; trees
# physical (upstream's "default"), nirvana, cloud, empty; pools research and prod0..8 in all but
# empty. Jobs are finished by the fake nodes right away (upstream's "sleep 0.6").
# usage: pooltrees_single_tree.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: pooltrees_single_tree.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 100 "$@" <<'EOF2'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
PT = "//sys/pool_trees/"
CN = "//sys/cluster_nodes/"
TREES = ["physical", "nirvana", "cloud", "empty"]
TAG = {"physical": "default_tag", "nirvana": "nirvana_tag", "cloud": "cloud_tag", "empty": "empty_tag"}


def beat_all(nodes, seconds=0.3, complete=False, keep=()):
    end = time.time() + seconds
    while time.time() < end:
        for n in nodes:
            n.heartbeat()
            if complete:
                for jid, j in list(n.running.items()):
                    if j["operation_id"] not in keep:
                        n.finish(jid)
        time.sleep(0.05)


def setup(name, config=None):
    cfg = {"fair_share_update_period": 50}
    cfg.update(config or {})
    s = Scheduler(bin, work + "/" + name, cfg).start()
    nodes = [FakeNode(s, "node%d" % i, cpu=3, slots=3) for i in range(4)]
    beat_all(nodes, 0.1)
    s.set(PT + "physical/@config/nodes_filter", "default_tag")
    for n, t in zip(nodes, TREES):
        s.set(CN + n.id + "/@user_tags", [TAG[t]])
    for t in TREES:
        if t != "physical":
            s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": t, "config": {
                "nodes_filter": TAG[t], "fair_share_update_period": 50}}})
        else:
            s.set(PT + "physical/@fair_share_update_period", 50)
        if t != "empty":
            for p in ["research"] + ["prod%d" % i for i in range(9)]:
                s.ok("create", {"type": "scheduler_pool", "path": PT + t + "/" + p})
    beat_all(nodes, 0.3)
    return s, nodes


def vanilla(s, jobs, **spec):
    spec["tasks"] = {"main": {"command": "sleep 0.6", "job_count": jobs, "cpu_limit": 1,
                              "memory_limit": 100 << 20}}
    return s.call("start_op", {"operation_type": "vanilla", "spec": spec})


def tree_of_node(s, node):
    return {v: k for k, v in TAG.items()}[s.get(CN + node + "/@user_tags")[0]]


def run_and_check(s, nodes, spec, possible, jobs=10, keep=()):
    st, out = vanilla(s, jobs, **spec)
    if not check(st == 200, "start: %d %s" % (st, out)):
        return None
    op = out["operation_id"]
    end = time.time() + 10
    while time.time() < end and s.ok("get_operation", {"operation_id": op})["state"] != "completed":
        beat_all(nodes, 0.1, complete=True, keep=keep)
    got = s.ok("get_operation", {"operation_id": op})
    check(got["state"] == "completed", "op completed: %s" % got["state"])
    trees = {tree_of_node(s, j["node_id"]) for j in s.ok("list_jobs", {"operation_id": op})["jobs"]}
    check(len(trees) == 1 and trees <= set(possible), "jobs in one tree of %s: %s" % (possible, trees))
    erased = got["runtime_parameters"]["erased_trees"]
    spec_trees = spec.get("pool_trees", ["physical"])
    check(not (trees & set(erased)) and set(erased) | trees == set(spec_trees),
          "erased %s + chosen %s = the spec's trees %s" % (erased, trees, spec_trees))
    return trees.pop() if len(trees) == 1 else None


def sleeping(s, nodes, tree, jobs=1):
    """An operation of `jobs` jobs in tree's research that keeps running; returns once its jobs
    run and a fair share update has seen its demand (upstream waits for resource_demand > 0)."""
    st, out = vanilla(s, jobs, pool_trees=[tree], pool="research")
    op = out["operation_id"]
    demand = ("//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/%s/fair_share_info/"
              "pools/research/resource_demand" % tree)
    running = lambda: sum(1 for j in s.ok("list_jobs", {"operation_id": op})["jobs"]
                          if j["state"] == "running")
    end = time.time() + 30
    while time.time() < end:
        beat_all(nodes, 0.1)
        st, got = s.call("get", {"path": demand})
        if st == 200 and got["value"].get("cpu", 0) > 0 and running() == jobs:
            return op
    check(False, "%s in %s: %d jobs running, demand %s" % (op, tree, running(), got))
    return op


servers = []
try:
    s, nodes = setup("a")
    servers.append(s)
    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_one_empty_tree
    run_and_check(s, nodes, {"pool_trees": ["nirvana"], "pool": "research",
                             "schedule_in_single_tree": True}, ["nirvana"])
    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_one_empty_tree_ephemeral
    run_and_check(s, nodes, {"schedule_in_single_tree": True}, ["physical"])
    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_two_empty_trees
    run_and_check(s, nodes, {"pool_trees": ["nirvana", "cloud"], "pool": "research",
                             "schedule_in_single_tree": True}, ["nirvana", "cloud"])
    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_empty_trees_fail
    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_zero_guarantee_trees_fail
    # (upstream's operation fails at materialization; poolsched chooses at start_op and refuses)
    for trees in (["empty"], ["nirvana", "cloud"]):
        st, out = vanilla(s, 1, pool_trees=trees, pool="research", schedule_in_single_tree=True,
                          consider_guarantees_for_single_tree=True)
        check(st == 400 and "Found no best tree for operation" in out.get("message", ""),
              "%s with consider_guarantees_for_single_tree: refused (%d %s)" % (trees, st, out))

    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_two_trees_with_unequal_demand
    for busy, expected in (("physical", "nirvana"), ("nirvana", "physical")):
        other = sleeping(s, nodes, busy)
        run_and_check(s, nodes, {"pool_trees": ["physical", "nirvana"], "pool": "research",
                                 "schedule_in_single_tree": True}, [expected], keep=(other,))
        s.ok("abort_op", {"operation_id": other})
        beat_all(nodes, 0.3)

    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_two_trees_with_unequal_min_share_resources
    for expected in ("nirvana", "physical"):
        s.set(PT + expected + "/research/@min_share_resources", {"cpu": 1})
        beat_all(nodes, 0.3)
        run_and_check(s, nodes, {"pool_trees": ["physical", "nirvana"], "pool": "research",
                                 "schedule_in_single_tree": True}, [expected])
        s.set(PT + expected + "/research/@min_share_resources", {"cpu": 0})

    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_two_trees_with_unequal_total_resources
    spare = nodes[2]
    for expected in ("nirvana", "physical"):
        s.set(CN + spare.id + "/@user_tags", [TAG[expected]])
        beat_all(nodes, 0.3)
        run_and_check(s, nodes, {"pool_trees": ["physical", "nirvana"], "pool": "research",
                                 "schedule_in_single_tree": True}, [expected])
        s.set(CN + spare.id + "/@user_tags", [])
    s.set(CN + spare.id + "/@user_tags", [TAG["cloud"]])

    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_prefer_tree_with_min_share_resources
    s.set(PT + "nirvana/research/@min_share_resources", {"cpu": 3})
    other = sleeping(s, nodes, "nirvana", jobs=2)
    run_and_check(s, nodes, {"pool_trees": ["physical", "nirvana"], "pool": "research",
                             "schedule_in_single_tree": True}, ["nirvana"], jobs=3, keep=(other,))
    s.ok("abort_op", {"operation_id": other})
    s.set(PT + "nirvana/research/@min_share_resources", {"cpu": 0})

    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_ignore_trees_where_operation_is_not_running
    for t in ("physical", "nirvana"):
        s.set(PT + t + "/research/@max_running_operation_count", 1)
    for busy, expected in (("physical", "nirvana"), ("nirvana", "physical")):
        other = sleeping(s, nodes, busy)
        # the guarantee would make busy the better tree, but research there is full
        s.set(PT + busy + "/research/@min_share_resources", {"cpu": 3})
        beat_all(nodes, 0.3)
        run_and_check(s, nodes, {"pool_trees": ["physical", "nirvana"], "pool": "research",
                                 "schedule_in_single_tree": True}, [expected], keep=(other,))
        s.ok("abort_op", {"operation_id": other})
        s.set(PT + busy + "/research/@min_share_resources", {"cpu": 0})
        beat_all(nodes, 0.3)
    for t in ("physical", "nirvana"):
        s.set(PT + t + "/research/@max_running_operation_count", 8)

    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_revive_scheduler
    possible = ["physical", "nirvana", "cloud"]
    st, out = vanilla(s, 10, pool_trees=possible, pool="research", schedule_in_single_tree=True)
    op = out["operation_id"]
    beat_all(nodes, 0.3)
    erased = s.ok("get_operation", {"operation_id": op})["runtime_parameters"]["erased_trees"]
    check(len(erased) == 2, "2 trees erased: %s" % erased)
    s.stop()
    s.start()
    got = s.ok("get_operation", {"operation_id": op})
    check(got["state"] == "running" and got["runtime_parameters"]["erased_trees"] == erased,
          "after a restart: running, the same erased trees: %s" % got)
    end = time.time() + 10
    while time.time() < end and s.ok("get_operation", {"operation_id": op})["state"] != "completed":
        beat_all(nodes, 0.1, complete=True)
    trees = {tree_of_node(s, j["node_id"]) for j in s.ok("list_jobs", {"operation_id": op})["jobs"]}
    check(len(trees) == 1 and not trees & set(erased) and trees | set(erased) == set(possible),
          "all its jobs in the chosen tree: %s" % trees)
    s.stop()

    # upstream: test_scheduler_pool_trees::TestSchedulerScheduleInSingleTree::test_global_disable
    # (poolsched's scheduler config is its --config file: set at start rather than in Cypress)
    s, nodes = setup("disabled", {"enable_schedule_in_single_tree": False})
    servers.append(s)
    st, out = vanilla(s, 10, pool_trees=possible, pool="research", schedule_in_single_tree=True)
    op = out["operation_id"]
    end = time.time() + 10
    while time.time() < end and s.ok("get_operation", {"operation_id": op})["state"] != "completed":
        beat_all(nodes, 0.1, complete=True)
    check(s.ok("get_operation", {"operation_id": op})["runtime_parameters"]["erased_trees"] == [],
          "nothing erased")
    trees = {tree_of_node(s, j["node_id"]) for j in s.ok("list_jobs", {"operation_id": op})["jobs"]}
    check(trees == set(possible), "jobs in all 3 trees: %s" % trees)
    s.stop()
finally:
    for x in servers:
        x.stop()
finish()
EOF2
