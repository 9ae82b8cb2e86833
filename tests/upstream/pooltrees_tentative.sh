#!/usr/bin/env bash
# Upstream test_scheduler_pool_trees.py::TestTentativePoolTrees and
# TestPoolTreeOperationLimits::test_ignoring_tentative_pool_operation_limit, translated:
# tentative_pool_trees, use_default_tentative_pool_trees and tentative_tree_eligibility
# (src/core/tentative.h, docs/api.md "Tentative pool trees"). As upstream: 6 nodes of 2 cpu / 2
# user slots, 3 of them tagged "other"; the default tree (poolsched's `physical`, upstream's
# "default") takes "!other", the tree "other" the tagged ones. Upstream's map operations over N
# rows are vanilla operations of N jobs here; the fake nodes finish jobs when the test says
# (upstream's events_on_fs). Every wait polls with a deadline.
# usage: pooltrees_tentative.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: pooltrees_tentative.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 300 "$@" <<'EOF2'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
PT = "//sys/pool_trees/"
CN = "//sys/cluster_nodes/"
ORCHID = "//sys/scheduler/orchid/scheduler/"
SAMPLE = 5            # TENTATIVE_TREE_ELIGIBILITY_SAMPLE_JOB_COUNT
servers = []


def beat(nodes, seconds=0.2):
    end = time.time() + seconds
    while True:
        for n in nodes:
            n.heartbeat()
        if time.time() >= end:
            return
        time.sleep(0.05)


def wait(nodes, cond, what, timeout=60):
    end = time.time() + timeout
    while time.time() < end:
        beat(nodes, 0.1)
        if cond():
            return True
    return check(False, "timed out waiting: " + what)


def setup(name, count=6, other=3, config=None):
    """upstream's _prepare_pool_trees: returns the scheduler, the nodes, the "other" nodes."""
    cfg = {"fair_share_update_period": 50}
    cfg.update(config or {})
    s = Scheduler(bin, work + "/" + name, cfg).start()
    servers.append(s)
    nodes = [FakeNode(s, "node%d" % i, cpu=2, slots=2) for i in range(count)]
    beat(nodes, 0.1)
    for n in nodes[:other]:
        s.set(CN + n.id + "/@user_tags", ["other"])
    s.set(PT + "physical/@config/nodes_filter", "!other")
    s.set(PT + "physical/@fair_share_update_period", 50)
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "other", "config": {
        "nodes_filter": "other", "fair_share_update_period": 50}}})
    beat(nodes, 0.3)
    return s, nodes, {n.id for n in nodes[:other]}


def create_spec(jobs):
    """upstream's _create_spec (its data_size_per_job: one job per row)."""
    return {"pool_trees": ["physical"], "tentative_pool_trees": ["other"],
            "scheduling_options_per_pool_tree": {"physical": {"min_share_resources": {"cpu": 1}},
                                                 "other": {"pool": "superpool"}},
            "tentative_tree_eligibility": {"sample_job_count": SAMPLE,
                                           "max_tentative_job_duration_ratio": 2,
                                           "min_job_duration": 1},
            "tasks": {"main": {"command": "true", "job_count": jobs, "cpu_limit": 1,
                               "memory_limit": 100 << 20}}}


def start(s, spec):
    return s.call("start_op", {"operation_type": "vanilla", "spec": spec})


def running(nodes, other_ids, tentative):
    return [(n, jid) for n in nodes for jid in n.running if (n.id in other_ids) == tentative]


def value(s, path):
    """The value at path, None while it does not exist."""
    st, out = s.call("get", {"path": path})
    return out["value"] if st == 200 else None


def progress_trees(s, op):
    st, out = s.call("get", {"path": ORCHID + "operations/%s/progress/scheduling_info_per_pool_tree" % op})
    return out["value"] if st == 200 else {}


try:
    # upstream: test_scheduler_pool_trees::TestTentativePoolTrees::test_tentative_pool_tree_sampling
    s, nodes, other = setup("sampling")
    st, out = start(s, create_spec(20))
    check(st == 200, "start: %d %s" % (st, out))
    op = out["operation_id"]
    # all jobs that can run run: 6 in the default tree, the sample of 5 in "other"
    wait(nodes, lambda: len(running(nodes, other, False)) == 6 and
         len(running(nodes, other, True)) == SAMPLE, "6 regular and %d tentative jobs" % SAMPLE)
    beat(nodes, 1.0)   # and stay so: no sixth job in "other" though a slot is free there
    check(len(running(nodes, other, True)) == SAMPLE,
          "tentative jobs == sample: %d" % len(running(nodes, other, True)))
    reasons = ORCHID + "scheduling_info_per_pool_tree/other/fair_share_info/operations/%s/deactivation_reasons/saturated_in_tentative_tree" % op
    wait(nodes, lambda: (value(s, reasons) or 0) > 0, "saturated_in_tentative_tree > 0")
    check(s.get(ORCHID + "scheduling_info_per_pool_tree/other/fair_share_info/operations/%s/tentative" % op) is True,
          "the tree orchid marks the operation tentative")
    # beyond upstream: a restart counts the running sample again (no sixth job in "other")
    s.stop()
    s.start()
    wait(nodes, lambda: (value(s, ORCHID + "scheduling_info_per_pool_tree/other/fair_share_info/operations/%s/deactivation_reasons/saturated_in_tentative_tree" % op) or 0) > 0,
         "saturated again after the restart")
    check(len(running(nodes, other, True)) == SAMPLE,
          "after the restart: tentative jobs == sample: %d" % len(running(nodes, other, True)))
    s.stop()

    # upstream: test_scheduler_pool_trees::TestTentativePoolTrees::test_tentative_pool_tree_banning
    s, nodes, other = setup("banning")
    st, out = start(s, create_spec(30))
    op = out["operation_id"]
    wait(nodes, lambda: len(running(nodes, other, True)) == SAMPLE, "the tentative sample runs")
    beat(nodes, 2.0)   # upstream's sleep: the tentative jobs get long (deliberate, not a sync)
    check("other" in progress_trees(s, op), "runs in other before the ban")
    completed = set()

    def complete_regular():
        for n, jid in running(nodes, other, False):
            if len(completed) < 20 and jid not in completed:
                completed.add(jid)
                n.finish(jid)
        return len(completed) == 20
    wait(nodes, complete_regular, "20 regular jobs completed")
    wait(nodes, lambda: s.ok("get_operation", {"operation_id": op})["progress"]["completed"] == 20,
         "completed == 20")
    wait(nodes, lambda: "other" not in progress_trees(s, op), "banned: other left the operation")
    check("physical" in progress_trees(s, op), "still runs in the default tree")
    got = s.ok("get_operation", {"operation_id": op})
    check(got["state"] == "running" and "other" in got["runtime_parameters"]["erased_trees"] and
          "other" not in got["runtime_parameters"]["scheduling_options_per_pool_tree"],
          "running, other erased: %s %s" % (got["state"], got["runtime_parameters"]))
    wait(nodes, lambda: not running(nodes, other, True), "the tentative jobs are aborted")
    jobs = s.ok("list_jobs", {"operation_id": op, "state": "aborted"})["jobs"]
    check(len(jobs) == SAMPLE and all(j.get("abort_reason") == "banned_in_tentative_tree" for j in jobs),
          "%d jobs aborted with banned_in_tentative_tree: %s" % (SAMPLE, [j.get("abort_reason") for j in jobs]))
    beat(nodes, 0.5)
    check(not running(nodes, other, True), "no job starts in the banned tree")
    # upstream's scheduler logs OperationBannedInTree (operation_id, tree_id)
    wait(nodes, lambda: [r.get("tree_id") for r in s.ok("get", {"path": "//sys/scheduler/event_log",
         "operation_id": op, "event_type": "operation_banned_in_tree"})["value"]] == ["other"],
         "the event log's operation_banned_in_tree")
    # beyond upstream: a restart keeps the ban
    s.stop()
    s.start()
    beat(nodes, 1.0)
    check("other" not in progress_trees(s, op) and "physical" in progress_trees(s, op),
          "after the restart: still banned: %s" % progress_trees(s, op))
    check(not running(nodes, other, True), "after the restart: no job in the banned tree")
    s.stop()

    # upstream: test_scheduler_pool_trees::TestTentativePoolTrees::test_missing_tentative_pool_trees
    s, nodes, other = setup("missing")
    spec = create_spec(7)
    spec["tentative_pool_trees"] = ["missing"]
    st, out = start(s, spec)
    check(st == 404 and "Pool tree \"missing\" not found" in str(out), "missing tree refused: %d %s" % (st, out))
    spec["tentative_tree_eligibility"]["ignore_missing_pool_trees"] = True
    st, out = start(s, spec)
    check(st == 200, "ignore_missing_pool_trees: started: %d %s" % (st, out))
    op = out["operation_id"]

    def done():
        for n in nodes:
            n.finish_all()
        return s.ok("get_operation", {"operation_id": op})["state"] == "completed"
    wait(nodes, done, "completed")
    s.stop()

    # upstream: test_scheduler_pool_trees::TestTentativePoolTrees::test_tentative_pool_tree_aborted_jobs
    # (upstream aborts a tentative job with abort_job; here its node reports it aborted)
    s, nodes, other = setup("aborted")
    st, out = start(s, create_spec(30))
    op = out["operation_id"]
    wait(nodes, lambda: len(running(nodes, other, True)) == SAMPLE, "the tentative sample runs")
    n, jid = running(nodes, other, True)[0]
    n.finish(jid, "aborted", abort_reason="other")
    # an aborted job leaves the sample: another tentative job takes its place
    wait(nodes, lambda: len(running(nodes, other, True)) == SAMPLE and
         jid not in [j for _, j in running(nodes, other, True)], "a new tentative job")
    for n, jid in running(nodes, other, True)[:SAMPLE - 1]:
        n.finish(jid)   # upstream lets the tentative jobs go on
    wait(nodes, lambda: len(running(nodes, other, True)) >= 1, "tentative jobs go on")
    s.stop()

    # upstream: test_scheduler_pool_trees::TestTentativePoolTrees::test_use_default_tentative_pool_trees
    s, nodes, other = setup("use_default")
    s.set("//sys/scheduler/config/default_tentative_pool_trees", ["other"])
    check(s.get("//sys/scheduler/config/default_tentative_pool_trees") == ["other"],
          "default_tentative_pool_trees set")
    spec = create_spec(30)
    spec["use_default_tentative_pool_trees"] = True
    st, out = start(s, spec)
    op = out["operation_id"]
    tentative = ORCHID + "operations/%s/progress/scheduling_info_per_pool_tree/other/tentative"
    wait(nodes, lambda: value(s, tentative % op) is True, "other is tentative")
    # beyond upstream (whose spec still names tentative_pool_trees): the default alone
    del spec["tentative_pool_trees"]
    st, out = start(s, spec)
    wait(nodes, lambda: value(s, tentative % out["operation_id"]) is True, "the default's other is tentative")
    check(s.get(ORCHID + "operations/%s/progress/scheduling_info_per_pool_tree/physical/tentative" % op) is False,
          "the regular tree is not tentative")
    # beyond upstream: test_tentative_pool_tree_not_supported's rule (left out: map_reduce) for
    # vanilla operations, through the tree's non_tentative_operation_types
    s.set(PT + "other/@config/non_tentative_operation_types", ["vanilla"])
    spec["tentative_pool_trees"] = ["other"]
    st, out = start(s, spec)
    check(st == 200, "started: %d %s" % (st, out))
    wait(nodes, lambda: "physical" in progress_trees(s, out["operation_id"]), "runs in the default tree")
    check("other" not in progress_trees(s, out["operation_id"]), "not in other: %s" % progress_trees(s, out["operation_id"]))
    # a restart keeps each operation in the trees it was in, whatever the config says now
    s.set(PT + "other/@config/non_tentative_operation_types", [])
    s.stop()
    s.start()
    wait(nodes, lambda: "physical" in progress_trees(s, out["operation_id"]), "restarted")
    check("other" not in progress_trees(s, out["operation_id"]) and "other" in progress_trees(s, op),
          "after the restart: %s %s" % (progress_trees(s, out["operation_id"]), progress_trees(s, op)))
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreeOperationLimits::test_ignoring_tentative_pool_operation_limit
    s = Scheduler(bin, work + "/limits", {"fair_share_update_period": 50}).start()
    servers.append(s)
    nodes = [FakeNode(s, "node%d" % i, cpu=2, slots=2) for i in range(4)]
    beat(nodes, 0.1)
    for n in nodes[:2]:
        s.set(CN + n.id + "/@user_tags", ["normal"])
    for n in nodes[2:]:
        s.set(CN + n.id + "/@user_tags", ["tentative"])
    s.set(PT + "physical/@config/nodes_filter", "!(normal|tentative)")
    for tree, limit in (("normal", 5), ("tentative", 3)):
        s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": tree, "config": {
            "nodes_filter": tree, "fair_share_update_period": 50}}})
        s.ok("create", {"type": "scheduler_pool", "path": PT + tree + "/pool",
                        "attributes": {"max_operation_count": limit}})
    pool_path = ORCHID + "scheduling_info_per_pool_tree/%s/fair_share_info/pools/pool"

    def run(trees, tentative_trees, should_raise):
        spec = {"pool_trees": sorted(trees), "tentative_pool_trees": sorted(tentative_trees),
                "scheduling_options_per_pool_tree": {t: {"pool": "pool"} for t in trees | tentative_trees},
                "tasks": {"main": {"command": "sleep 1000", "job_count": 1, "cpu_limit": 1,
                                   "memory_limit": 100 << 20}}}
        st, out = start(s, spec)
        if should_raise:
            check(st >= 400, "refused: %d %s" % (st, out))
        else:
            check(st == 200, "started: %d %s" % (st, out))
            st2, got = s.call("get_operation", {"operation_id": out.get("operation_id", "")})
            check(st2 == 200 and got["state"] in ("pending", "running"), "pending or running")

    for i in range(3):
        run({"normal", "tentative"}, set(), False)
    for i in range(3, 5):
        run({"normal", "tentative"}, set(), True)
    for i in range(3, 5):
        run({"normal"}, {"tentative"}, False)
    for i in range(5, 6):
        run({"normal"}, {"tentative"}, True)
    wait(nodes, lambda: value(s, pool_path % "normal" + "/operation_count") == 5, "normal: 5 operations")
    wait(nodes, lambda: value(s, pool_path % "tentative" + "/operation_count") == 3, "tentative: 3 operations")
    s.stop()
finally:
    for x in servers:
        x.stop()
finish()
EOF2
