#!/usr/bin/env bash
# Upstream test_scheduler_pool_trees.py and test_scheduler_node_interaction.py, translated: node
# tags that change while the node runs (@user_tags), trees re-evaluated, jobs of the old tree
# aborted, a node matching two trees taken offline with an alert (docs/api.md "Node tags").
# Upstream's tree "default" is poolsched's first tree "physical"; upstream nodes have 1 cpu and
# 1 user slot each, and so do the fake nodes here.
# usage: pooltrees_node_tags.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: pooltrees_node_tags.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 90 "$@" <<'EOF2'
import subprocess, sys, time
from server_helper import Scheduler, FakeNode, check, finish
from server_helper import start_vanilla as vanilla, op_jobs as jobs

bin, work = sys.argv[1], sys.argv[2]
PT = "//sys/pool_trees/"
NODES = "//sys/scheduler/orchid/scheduler/nodes/"
CN = "//sys/cluster_nodes/"


REFUSED = set()   # nodes whose heartbeats are expected to be refused (409)


def beat_all(nodes, seconds=0.6):
    end = time.time() + seconds
    while time.time() < end:
        for n in nodes:
            n.heartbeat(409 if n.id in REFUSED else 200)
        time.sleep(0.05)


def wait(cond, nodes, what, timeout=30):
    end = time.time() + timeout
    while time.time() < end:
        if cond():
            return True
        beat_all(nodes, 0.15)
    return check(False, what)


def fresh(name, n=3):
    s = Scheduler(bin, work + "/" + name, {"fair_share_update_period": 50,
                                           "available_exec_nodes_check_period": 50,
                                           "safe_scheduler_online_time": 0}).start()
    s.set(PT + "physical/@fair_share_update_period", 50)
    nodes = [FakeNode(s, "node%d" % i, cpu=1, slots=1) for i in range(n)]
    beat_all(nodes, 0.2)
    return s, nodes


servers = []
try:
    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_node_tags_changed
    s, nodes = fresh("changed")
    servers.append(s)
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "other", "config": {
        "nodes_filter": "other", "fair_share_update_period": 50}}})
    s.set(PT + "physical/@config/nodes_filter", "!other")
    s.set(CN + "node0/@user_tags", ["other"])
    check("other" in s.get(NODES + "node0/tags"), "node0 tagged other in the orchid")
    check(s.get(NODES + "node0/tree") == "other", "node0 moved to tree other")
    op1 = vanilla(s, 10, pool_trees=["physical"])
    wait(lambda: len(jobs(s, op1, "running")) == 2, nodes, "op1 runs 2 jobs in physical")
    op2 = vanilla(s, 10, pool_trees=["other"])
    wait(lambda: len(jobs(s, op2, "running")) == 1, nodes, "op2 runs 1 job in other")
    s.set(CN + "node1/@user_tags", ["other"])
    check("other" in s.get(NODES + "node1/tags"), "node1 tagged other in the orchid")
    wait(lambda: len(jobs(s, op1, "running")) == 1, nodes, "op1 down to 1 running job")
    aborted = jobs(s, op1, "aborted")
    check(len(aborted) == 1, "op1 has 1 aborted job: %s" % aborted)
    check(aborted and aborted[0].get("abort_reason") == "node_fair_share_tree_changed",
          "its abort reason is upstream's node_fair_share_tree_changed: %s" % aborted)
    wait(lambda: len(jobs(s, op2, "running")) == 2, nodes, "op2 runs 2 jobs in other")
    # poolsched: list-nodes shows the new tree and the tags
    p = subprocess.run([bin, "--proxy", "127.0.0.1:%d" % s.port, "--token", s.admin, "list-nodes"],
                       capture_output=True, text=True, timeout=30)
    row = [l.split() for l in p.stdout.splitlines() if l.split()[:1] == ["node1"]]
    check(row and row[0][3:5] == ["other", "other"], "list-nodes: node1 in other, tagged other: %s" % p.stdout)
    # poolsched: @user_tags reads back, @tags is the union, bad values name the key
    check(s.get(CN + "node1/@user_tags") == ["other"], "@user_tags reads back")
    for bad, want in (("x", "user_tags: must be a list"), ([""], "user_tags[0]: must be a non-empty"),
                      ([1], "user_tags[0]: must be a non-empty")):
        st, out = s.call("set", {"path": CN + "node1/@user_tags", "value": bad})
        check(st == 400 and want in out.get("message", ""), "bad %r refused: %d %s" % (bad, st, out))
    st, out = s.call("set", {"path": CN + "node1/@state", "value": "x"})
    check(st == 400 and "@banned and @user_tags" in out.get("message", ""), "other attrs read-only: %s" % out)
    user = s.token("alice")
    st, out = s.call("set", {"path": CN + "node1/@user_tags", "value": []}, token=user)
    check(st == 403, "a user may not set @user_tags: %d" % st)
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_incorrect_node_tags
    s, nodes = fresh("incorrect")
    servers.append(s)
    for name, flt in (("supertree1", "x|y"), ("supertree2", "y|z")):
        s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": name, "config": {
            "nodes_filter": flt}}})
    check(set(s.get("//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree")) >=
          {"supertree1", "supertree2"}, "both trees in the orchid")
    check(s.get(NODES + "node0/scheduler_state") == "online", "node0 online")
    slots = lambda: sum(s.get(NODES + n.id)["resource_limits"]["user_slots"] for n in nodes
                        if s.get(NODES + n.id)["tree"] is not None)
    check(slots() == 3, "3 user slots in the trees")
    check(s.get("//sys/scheduler/@alerts") == [], "no alerts")
    s.set(CN + "node0/@user_tags/end", "y")
    REFUSED.add("node0")
    wait(lambda: s.get(NODES + "node0/scheduler_state") == "offline" and slots() == 2, nodes,
         "node0 offline (it matches 3 trees), 2 user slots left")
    alerts = s.get("//sys/scheduler/@alerts")
    check(len(alerts) == 1 and alerts[0]["attributes"]["alert_type"] == "update_nodes_failed",
          "the update_nodes_failed alert: %s" % alerts)
    inner = alerts[0]["inner_errors"][0] if alerts and alerts[0].get("inner_errors") else {}
    check(inner.get("attributes", {}).get("node_id") == "node0" and
          sorted(inner["inner_errors"][0]["attributes"]["matched_pool_trees"]) ==
          ["physical", "supertree1", "supertree2"], "it names node0 and the 3 trees: %s" % inner)
    beat_all(nodes, 0.2)   # node0 heartbeats (refused) at least once more
    check(nodes[0].last and "two pool trees" in str(nodes[0].last),
          "node0's heartbeats are refused naming the trees: %s" % nodes[0].last)
    # poolsched: fixing the tags brings the node back and clears the alert
    s.ok("remove", {"path": CN + "node0/@user_tags"})
    REFUSED.clear()
    wait(lambda: s.get(NODES + "node0/scheduler_state") == "online", nodes, "node0 back online")
    wait(lambda: s.get("//sys/scheduler/@alerts") == [], nodes, "the alert cleared")
    s.stop()

    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_node_to_tree_map_in_orchid
    s, nodes = fresh("treemap")
    servers.append(s)
    s.set(PT + "physical/@config/nodes_filter", "!other & !some")
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "other", "config": {
        "nodes_filter": "other"}}})
    s.set(CN + "node1/@user_tags/end", "other")
    s.set(CN + "node2/@user_tags/end", "some")
    check(sorted(s.get(NODES[:-1])) == ["node0", "node1", "node2"], "3 nodes in the orchid")
    got = [s.get(NODES + n.id + "/tree") for n in nodes]
    check(got == ["physical", "other", None], "trees per node: %s" % got)
    # poolsched: the user tags survive a restart
    s.stop()
    s.start()
    beat_all(nodes, 0.3)
    got = [s.get(NODES + n.id + "/tree") for n in nodes]
    check(got == ["physical", "other", None], "trees per node after a restart: %s" % got)
    s.stop()

    # upstream: test_scheduler_node_interaction::TestSchedulingTags::test_tag_filters
    # (vanilla operations instead of map; an operation no node can take fails, as upstream's)
    s, nodes = fresh("tagfilters", 2)
    servers.append(s)
    s.set(CN + "node0/@user_tags", ["default", "tagA", "tagB"])
    s.set(CN + "node1/@user_tags", ["tagC"])
    s.set(PT + "physical/@config/nodes_filter", "default")
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "other", "config": {
        "nodes_filter": "tagC"}}})

    def outcome(spec):
        op = vanilla(s, 1, **spec)
        state = None
        end = time.time() + 6
        while time.time() < end:
            state = s.ok("get_operation", {"operation_id": op})["state"]
            if state == "failed":
                return "failed"
            for n in nodes:
                n.heartbeat()
                n.finish_all()
            if jobs(s, op, "completed"):
                return "completed"
            time.sleep(0.05)
        return state

    check(outcome({}) == "completed", "no tag: completes")
    check(outcome({"scheduling_tag": "tagC"}) == "failed", "tagC: fails (its node is in other)")
    check(outcome({"scheduling_tag": "tagA"}) == "completed", "tagA: completes")
    check(outcome({"scheduling_tag_filter": "tagA & !tagC"}) == "completed", "tagA & !tagC: completes")
    check(outcome({"scheduling_tag_filter": "tagA & !tagB"}) == "failed", "tagA & !tagB: fails")
    s.set(CN + "node0/@user_tags", ["default"])
    check(outcome({"scheduling_tag": "tagA"}) == "failed", "tagA after the tag went: fails")

    # upstream: test_scheduler_node_interaction::TestSchedulingTags::test_pools
    s.set(CN + "node0/@user_tags", ["default", "tagA", "tagB"])
    s.ok("create", {"type": "scheduler_pool", "path": PT + "physical/test_pool",
                    "attributes": {"scheduling_tag_filter": "tagA"}})
    op = vanilla(s, 1, pool="test_pool")
    wait(lambda: jobs(s, op), nodes, "test_pool's job starts")
    js = jobs(s, op)
    check(js and "tagA" in s.get(CN + js[0]["node_id"] + "/@tags"),
          "it ran on a node tagged tagA: %s" % js)
    s.ok("abort_op", {"operation_id": op})

    # upstream: test_scheduler_node_interaction::TestSchedulingTags::test_tag_correctness
    s.set(CN + "node0/@user_tags", ["default", "tagB"])
    s.set(PT + "physical/@config/nodes_filter", "default | tagB2")
    s.set(CN + "node1/@user_tags", ["tagB2"])
    s.ok("remove", {"path": PT + "other"})
    op = vanilla(s, 10, scheduling_tag="tagB")
    for _ in range(10):
        beat_all(nodes, 0.1)
        for n in nodes:
            n.finish_all()
    where = {j["node_id"] for j in jobs(s, op)}
    check(where == {"node0"}, "tagB's jobs ran on node0 only: %s" % where)
    op = vanilla(s, 10)
    for _ in range(10):
        beat_all(nodes, 0.1)
        for n in nodes:
            n.finish_all()
    where = {j["node_id"] for j in jobs(s, op)}
    check(len(where) <= 2, "untagged jobs on at most 2 nodes: %s" % where)
    s.stop()

    # upstream: test_scheduler_node_interaction::TestSchedulingTags::test_missing_nodes_after_revive
    # (the restart happens after the tag change: poolsched's Cypress is the scheduler)
    s, nodes = fresh("revive", 2)
    servers.append(s)
    s.set(CN + "node0/@user_tags", ["default"])
    s.set(CN + "node1/@user_tags", ["tagC"])
    s.set(PT + "physical/@config/nodes_filter", "default")
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "other", "config": {
        "nodes_filter": "tagC", "fair_share_update_period": 50}}})
    s.stop()
    s.config["safe_scheduler_online_time"] = 120000   # as upstream: the op must not fail
    s.start()
    op = vanilla(s, 1, pool_trees=["other"], scheduling_tag_filter="tagC")
    wait(lambda: jobs(s, op, "running"), nodes, "its job runs on node1")
    s.set(CN + "node1/@user_tags", [])
    s.stop()
    s.start()
    wait(lambda: not jobs(s, op, "running"), nodes, "its job is gone: node1 left tree other")
    beat_all(nodes, 5.0)   # upstream: time.sleep(5), then no job runs and the op still runs
    check(not jobs(s, op, "running"), "no job runs: node1 left tree other")
    check(s.ok("get_operation", {"operation_id": op})["state"] == "running", "op still running")
    s.set(CN + "node1/@user_tags", ["tagC"])
    wait(lambda: jobs(s, op, "running"), nodes, "a job runs again once node1 is back")
    s.stop()

    # upstream: test_scheduler_pool_trees::TestSchedulingTagFilterOnPerPoolTreeConfiguration::test_scheduling_tag_filter_applies_from_per_pool_tree_config
    # poolsched has no scheduler spec_template: the per-tree scheduling_tag_filter is in the spec
    s, nodes = fresh("pertree", 3)
    servers.append(s)
    s.set(CN + "node0/@user_tags/end", "default_tag")
    s.set(CN + "node1/@user_tags/end", "custom_tag")
    s.set(CN + "node2/@user_tags", ["custom_tag", "runnable_tag"])
    s.set(PT + "physical/@config/nodes_filter", "default_tag")
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "custom_pool_tree",
        "config": {"nodes_filter": "custom_tag", "fair_share_update_period": 50}}})
    op = vanilla(s, 1, pool_trees=["custom_pool_tree"], scheduling_options_per_pool_tree={
        "physical": {"scheduling_tag_filter": "default_tag"},
        "custom_pool_tree": {"scheduling_tag_filter": "runnable_tag"}})
    wait(lambda: jobs(s, op, "running"), nodes, "its job runs")
    js = jobs(s, op, "running")
    check(len(js) == 1 and js[0]["node_id"] == "node2", "on the runnable node: %s" % js)
    s.stop()

    # upstream: test_scheduler_node_interaction::TestResourceLimitsOverrides::test_cpu_override_with_preemption
    # upstream: test_scheduler_node_interaction::TestResourceLimitsOverrides::test_memory_override_with_preemption
    # Deliberate deviation: upstream lowers the node's limits with Cypress
    # @resource_limits_overrides; a poolsched node's limits are what its agent reports, so the
    # fake node reports the lowered limit. The job there is aborted and runs again elsewhere.
    # Upstream's node aborts the job itself (its limits shrank); a fake node does not, so the
    # scheduler's overcommit check does it, without the allowed_node_resources_overcommit_duration
    # wait (15 s by default) that is for transient overcommit.
    for res, low in (("cpu", 0), ("memory", 99 << 20)):
        s, nodes = fresh("overrides_" + res, 3)
        servers.append(s)
        s.set(PT + "physical/@allocation_preemption_timeout", 500)   # interrupted, then aborted
        s.set(PT + "physical/@allowed_node_resources_overcommit_duration", 0)
        op = vanilla(s, 1)
        wait(lambda: jobs(s, op, "running"), nodes, "the job runs")
        first = jobs(s, op, "running")[0]["node_id"]
        node = [n for n in nodes if n.id == first][0]
        node.limits[res] = low
        wait(lambda: jobs(s, op, "aborted") and jobs(s, op, "running"), nodes,
             "%s: the job is aborted and runs again" % res)
        for n in nodes:
            n.finish_all()
        wait(lambda: s.ok("get_operation", {"operation_id": op})["state"] == "completed", nodes,
             "%s: the operation completes" % res)
        check(len(jobs(s, op, "aborted")) == 1 and len(jobs(s, op, "completed")) == 1,
              "%s: aborted 1, completed 1: %s" % (res, jobs(s, op)))
        s.stop()

    # upstream: test_scheduler_pool_trees::TestNodeCountProfiling::test_node_count_profiling
    # (upstream's profiler sensor scheduler/node_count_per_tree is poolsched's /metrics gauge
    # poolsched_node_count_per_tree)
    s, nodes = fresh("profiling", 3)
    servers.append(s)
    s.set(PT + "physical/@config/nodes_filter", "!other")
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "other", "config": {
        "nodes_filter": "other", "fair_share_update_period": 50}}})

    def gauge(tree):
        st, text = s.raw("GET", "/metrics")
        for line in text.splitlines():
            if line.startswith('poolsched_node_count_per_tree{tree="%s"}' % tree):
                return float(line.split()[-1])
        return None
    for i in range(len(nodes) + 1):
        wait(lambda: gauge("other") == i and gauge("physical") == len(nodes) - i, nodes,
             "%d nodes in other, %d in physical: %s %s" % (i, len(nodes) - i, gauge("other"),
                                                          gauge("physical")))
        if i < len(nodes):
            s.set(CN + nodes[i].id + "/@user_tags/end", "other")
    s.stop()
finally:
    for x in servers:
        x.stop()
finish()
EOF2
