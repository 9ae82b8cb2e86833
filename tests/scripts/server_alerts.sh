#!/usr/bin/env bash
# Scheduler alerts (docs/api.md "Alerts"): each appears in //sys/scheduler/@alerts and in the
# tree's orchid with the YTsaurus error shape, and clears when its condition goes away:
#   update_fair_share            strong + burst guarantees above the cluster (scaled down)
#   invalid_default_parent_pool  default_parent_pool naming no pool (ephemeral pools go under
#                                the root meanwhile)
#   pool_usage_exceeds_limits    usage above a lowered resource_limits, until preempted
# usage: server_alerts.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_alerts.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 120 "$@" <<'EOF2'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
s = Scheduler(bin, work + "/data", {"fair_share_update_period": 100}).start()
node = FakeNode(s, "n1", cpu=4, slots=8)
T = "//sys/pool_trees/physical/"
ORCH = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/"

beat = node.beat

def alerts(kind):
    return [a for a in s.get("//sys/scheduler/@alerts") if a["attributes"]["alert_type"] == kind]

def shaped(a):
    return (a.get("code") == 1 and isinstance(a.get("message"), str) and
            a["attributes"].get("pool_tree") == "physical")

with s:
    s.set(T + "@fair_share_update_period", 100)
    s.set(T + "@allocation_preemption_timeout", 1000)
    beat(0.5)
    check(s.get("//sys/scheduler/@alerts") == [], "no alerts at first")

    # (a) guarantees overcommitted: strong 3 + burst 2 of a 4-cpu cluster
    s.ok("create", {"type": "scheduler_pool", "path": T + "g",
                    "attributes": {"strong_guarantee_resources": {"cpu": 3}}})
    s.ok("create", {"type": "scheduler_pool", "path": T + "burst",
                    "attributes": {"integral_guarantees": {"guarantee_type": "burst",
                                   "resource_flow": {"cpu": 1},
                                   "burst_guarantee_resources": {"cpu": 2}}}})
    beat(0.5)
    a = alerts("update_fair_share")
    check(len(a) == 1 and shaped(a[0]), "one overcommit alert: %s" % a)
    if a:
        at = a[0]["attributes"]
        check(abs(at["ratio"] - 1.25) < 1e-6 and abs(at["scale_factor"] - 0.8) < 1e-6,
              "ratio 5/4, scaled by 0.8: %s" % at)
        check(sorted(at["pools"]) == ["burst", "g"], "names the pools: %s" % at["pools"])
        # the guarantees are set on cpu (the main resource) and inferred on the others, so every
        # resource is 1.25 overcommitted: the alert names cpu, not the first resource in order
        inner = a[0]["inner_errors"][0]["attributes"]
        check(inner["resource"] == "cpu" and "of the cluster's cpu;" in a[0]["message"],
              "names cpu: %s" % a[0])
        # upstream's attributes: the sums compared with the cluster
        check(inner["total_strong_guarantee_resources"]["cpu"] == 3 and
              inner["total_burst_resources"]["cpu"] == 2 and
              inner["total_cluster_resources"]["cpu"] == 4 and
              inner["total_cluster_resources"]["user_slots"] == 8, "upstream's sums: %s" % inner)
        check("burst guarantees exceed total cluster resources" in
              a[0]["inner_errors"][0]["message"], "upstream's message: %s" % a[0])
    check([x["attributes"]["alert_type"] for x in s.get(ORCH + "alerts")] == ["update_fair_share"],
          "the tree's orchid lists it: %s" % s.get(ORCH + "alerts"))
    s.set(T + "burst/@integral_guarantees/burst_guarantee_resources", {"cpu": 1})
    beat(0.5)
    check(alerts("update_fair_share") == [], "cleared once it fits: %s" % alerts("update_fair_share"))
    s.ok("remove", {"path": T + "burst"})
    s.ok("remove", {"path": T + "g"})
    beat(0.5)

    # (a2) a guarantee far beyond the cluster: the memory inferred from it (1e12 / 4 of 8 GiB)
    # leaves int64, where upstream's cast is undefined (x86 makes the share negative); it
    # saturates, and every share is scaled into the cluster with the alert
    s.ok("create", {"type": "scheduler_pool", "path": T + "huge",
                    "attributes": {"strong_guarantee_resources": {"cpu": 1e12}}})
    beat(0.5)
    a = alerts("update_fair_share")   # the strong guarantee alone exceeds: both checks fire
    check(len(a) == 2 and all(x["attributes"]["pools"] == ["huge"] for x in a),
          "the flow and burst overcommit alerts: %s" % a)
    for x in a:
        total = x["inner_errors"][0]["attributes"]["total_strong_guarantee_resources"]
        check(total["cpu"] == 1e12 and total.get("memory", 0) >= 0,   # saturated: unlimited
              "the sum, nothing negative: %s" % total)
    share = s.get(ORCH + "fair_share_info/pools/huge/strong_guarantee_share")
    check(all(0 <= v <= 1 for v in share.values()) and abs(share["cpu"] - 1) < 1e-9 and
          share["memory"] > 0, "shares within the cluster: %s" % share)
    s.ok("remove", {"path": T + "huge"})
    beat(0.5)
    check(alerts("update_fair_share") == [], "cleared with the pool: %s" % alerts("update_fair_share"))

    # (b) default_parent_pool that does not exist: accepted, alerted, ephemeral pools at the root
    s.set(T + "@default_parent_pool", "missing")
    a = alerts("invalid_default_parent_pool")
    check(len(a) == 1 and shaped(a[0]) and a[0]["message"] ==
          'Default parent pool "missing" in tree "physical" is not registered', "alert: %s" % a)
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": {"pool": "eph", "tasks": {"main": {
        "command": "sleep 100", "job_count": 1, "cpu_limit": 1, "memory_limit": 100 << 20}}}})
    beat(0.5)
    check(s.get(ORCH + "fair_share_info/pools/eph/parent") == "<Root>", "the ephemeral pool is at the root")
    s.ok("abort_op", {"operation_id": op["operation_id"]})
    s.ok("create", {"type": "scheduler_pool", "path": T + "missing"})
    check(alerts("invalid_default_parent_pool") == [], "cleared once the pool exists")
    s.set(T + "@default_parent_pool", "<Root>")
    beat(0.5)

    # (c) a pool over its lowered limit, until the excess is preempted
    s.ok("create", {"type": "scheduler_pool", "path": T + "lim"})
    s.ok("start_op", {"operation_type": "vanilla", "spec": {"pool": "lim", "tasks": {"main": {
        "command": "sleep 100", "job_count": 4, "cpu_limit": 1, "memory_limit": 100 << 20}}}})
    deadline = time.time() + 10
    while len(node.running) < 4 and time.time() < deadline:
        beat(0.2)
    check(len(node.running) == 4, "4 jobs run: %d" % len(node.running))
    check(alerts("pool_usage_exceeds_limits") == [], "no alert under no limit")
    s.set(T + "lim/@resource_limits", {"cpu": 2})
    beat(0.3)
    a = alerts("pool_usage_exceeds_limits")
    check(len(a) == 1 and shaped(a[0]) and a[0]["attributes"]["pool"] == "lim" and
          a[0]["attributes"]["resources"] == ["cpu"] and
          a[0]["attributes"]["resource_usage"]["cpu"] == 4, "over limits: %s" % a)
    beat(2.5)
    check(len(node.running) == 2, "the excess was preempted: %d run" % len(node.running))
    check(alerts("pool_usage_exceeds_limits") == [], "cleared after preemption: %s"
          % alerts("pool_usage_exceeds_limits"))
    check(s.get("//sys/scheduler/@alerts") == [], "no alerts at the end: %s" % s.get("//sys/scheduler/@alerts"))
finish()
EOF2
