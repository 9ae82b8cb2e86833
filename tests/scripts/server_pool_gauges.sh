#!/usr/bin/env bash
# Each pool's /metrics gauges follow the pools as they come and go: the service keeps each
# tree's gauge series by pool position (pool_gauges.c), so after a pool is removed and another
# created, every pool's series must carry its own values under its own name and the removed
# pool's are gone; after the tree's per_pool_satisfaction_profiling_quantiles change, only the
# new quantiles' series are there; an ephemeral pool's gauges go with it; a removed tree's
# series go with it.
# usage: server_pool_gauges.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_pool_gauges.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import re, sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
T = "//sys/pool_trees/physical/"
s = Scheduler(bin, work + "/data", {"fair_share_update_period": 100}).start()


def gauges(name):
    """{pool: value} of gauge name in tree physical (quantile-labelled: {(pool, q): value})."""
    st, text = s.raw("GET", "/metrics")
    out = {}
    for m in re.finditer(r'^%s\{tree="physical",pool="([^"]*)"(?:,quantile="([^"]*)")?\} (\S+)$'
                         % name, text, re.M):
        out[(m.group(1), m.group(2)) if m.group(2) else m.group(1)] = float(m.group(3))
    return out


def wait(cond, what, seconds=5):
    end = time.time() + seconds
    while time.time() < end:
        node.heartbeat()
        if cond():
            return True
        time.sleep(0.1)
    check(False, what)
    return False


with s:
    s.set(T + "@fair_share_update_period", 100)
    for p in ("a", "b", "c"):
        s.ok("create", {"type": "scheduler_pool", "path": T + p})
    node = FakeNode(s, "n1", cpu=4, slots=4)
    spec = {"pool": "b", "tasks": {"main": {"command": "true", "job_count": 2, "cpu_limit": 1}}}
    s.ok("start_op", {"operation_type": "vanilla", "spec": spec})
    usage = lambda: gauges("poolsched_pool_usage_ratio")
    wait(lambda: usage().get("b", 0) > 0 and "a" in usage() and "c" in usage(),
         "gauges of a, b, c with b using: %s" % usage())

    # a goes, d comes: the pools' places move under the kept series
    s.ok("remove", {"path": T + "a"})
    s.ok("create", {"type": "scheduler_pool", "path": T + "d"})
    demand = lambda: gauges("poolsched_pool_demand_ratio")
    wait(lambda: "d" in usage() and "d" in demand(), "gauges of the new pool d: %s" % usage())
    time.sleep(0.5)   # several updates after the change
    u, d = usage(), demand()
    check(u.get("b", 0) > 0 and d.get("b", 0) > 0, "b keeps its usage and demand: %s %s" % (u, d))
    check(u.get("c") == 0 and u.get("d") == 0, "c and d use nothing: %s" % u)
    check(d.get("c") == 0 and d.get("d") == 0, "c and d demand nothing: %s" % d)
    root = u.get("<Root>", 0)
    check(abs(root - u.get("b", 0)) < 1e-9, "b's usage is the root's (%s)" % u)
    # the removed pool's gauges are gone with it
    check("a" not in u and "a" not in d and "a" not in gauges("poolsched_pool_fair_share_ratio"),
          "a's gauges removed: %s" % u)
    check(not [k for k in gauges("poolsched_pool_operation_satisfaction_distribution") if k[0] == "a"],
          "a's satisfaction gauges removed")

    # satisfaction quantiles: the series follow the tree's list
    sat = lambda: gauges("poolsched_pool_operation_satisfaction_distribution")
    wait(lambda: ("b", "0.5") in sat(), "satisfaction of b at the default quantiles: %s" % sat())
    s.set(T + "@per_pool_satisfaction_profiling_quantiles", [0.3, 0.7])
    wait(lambda: ("b", "0.3") in sat() and ("d", "0.7") in sat(),
         "satisfaction series at the new quantiles: %s" % sorted(sat()))
    check(sorted({k[1] for k in sat()}) == ["0.3", "0.7"],
          "only the new quantiles' series remain: %s" % sorted({k[1] for k in sat()}))

    # ephemeral pools come and go with their operations' users: their gauges too
    eph = s.ok("start_op", {"operation_type": "vanilla", "spec": {"tasks": {"main": {
        "command": "true", "job_count": 1, "cpu_limit": 1}}}}, s.token("eve"))["operation_id"]
    wait(lambda: "eve" in usage(), "the ephemeral pool eve's gauges: %s" % sorted(usage()))
    # its running job's statistics go to eve's and the root's job metric counters (by what
    # grew: 700 reported after 300 counts 700 in all), and eve's leave with the pool
    smoothed = lambda: gauges("poolsched_pool_metrics_aggregated_smoothed_cpu_usage_x100_total")
    root_before = smoothed().get("<Root>", 0)
    (ejob,) = [j for j in node.running.values() if j["operation_id"] == eph]
    for value in (300, 700):
        ejob["statistics"] = {"job_proxy/aggregated_smoothed_cpu_usage_x100": value}
        wait(lambda: smoothed().get("eve") == value, "eve's smoothed counter at %d: %s" % (value, smoothed()))
    check(smoothed().get("<Root>", 0) - root_before == 700, "the root counts eve's job: %s" % smoothed())
    s.ok("abort_op", {"operation_id": eph})
    wait(lambda: "eve" not in usage() and not [k for k in sat() if k[0] == "eve"]
         and "eve" not in smoothed(),
         "eve's gauges and counters gone with its pool: %s" % sorted(usage()))
    check(smoothed().get("<Root>", 0) - root_before == 700, "the root keeps its count: %s" % smoothed())

    # a tree removed takes all its series: its pools', its pool and node counts
    def series_of(tree):
        st, text = s.raw("GET", "/metrics")
        return re.findall(r'^(\w+)\{tree="%s"[,}]' % tree, text, re.M)
    s.ok("create", {"type": "scheduler_pool_tree",
                    "attributes": {"name": "other", "config": {"nodes_filter": "other",
                                                               "fair_share_update_period": 100}}})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pool_trees/other/x"})
    wait(lambda: {"poolsched_pool_usage_ratio", "poolsched_pool_count",
                  "poolsched_node_count_per_tree"} <= set(series_of("other")),
         "the series of tree other: %s" % sorted(set(series_of("other"))))
    s.ok("remove", {"path": "//sys/pool_trees/other/x"})
    s.ok("remove", {"path": "//sys/pool_trees/other"})
    time.sleep(0.3)
    check(not series_of("other"), "tree other's series gone: %s" % series_of("other"))
    check(usage().get("b", 0) > 0, "physical's gauges stay: %s" % usage())
finish()
EOF
