#!/usr/bin/env bash
# Scenario tests of starvation and preemption in `poolsched simulate` (docs/simulate.md):
#   - normal preemption as upstream's simulator test: A loses 20..22 jobs, B none;
#   - backoff and one allocation per preemptive heartbeat (event times per node);
#   - aggressive starvation: aggressively preemptible jobs are taken only then;
#   - interruptible jobs: job_preempted at t, job_aborted at t + allocation_preemption_timeout;
#   - node shrink (resource_overcommit) and lowered pool limits (resource_limits_violated),
#     also with interruptible victims still holding their resources: a second lowering takes
#     exactly the jobs it needs, none twice. (This does not show the allocations' `leaving`
#     flag: without it the check picks the same victims first again, which are already
#     preempting and ignored, and the outcome is the same.)
#   - no ping-pong between two equal pools; summary.json counts per pool and reason.
# Usage: sim_preempt.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: sim_preempt.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys
from simlib import *
init(sys.argv)

def two_pools(extra=None, pools=None):
    t = {"fair_share_starvation_timeout": 30000, "fair_share_starvation_tolerance": 0.8,
         "pools": pools or [{"name": "a"}, {"name": "b"}]}
    t.update(extra or {})
    return {"physical": t}

def preempted(r, op=None, reason=None):
    return [e for e in r.of_type("job_preempted")
            if (op is None or e["operation_id"] == op) and (reason is None or e["preemption_reason"] == reason)]

# 1. Normal preemption (upstream simulator test): 10 nodes x 10 cpu; A: 100 jobs of 2 cpu for
#    120 s at 0; B the same in a sibling pool of equal weight at 20 s.
cluster = [nodes("n", 10, cpu=10, slots=10)]
ops = [op("A", 0, "a", jobs=100, duration=120000, cpu=2), op("B", 20000, "b", jobs=100, duration=120000, cpu=2)]
r = load(run("normal", scenario(cluster, two_pools(), ops))[0])
lost_a, lost_b = int(r.ops["A"]["preempted_job_count"]), int(r.ops["B"]["preempted_job_count"])
print(f"normal preemption: A lost {lost_a}, B lost {lost_b}")
require(20 <= lost_a <= 22 and lost_b == 0, f"normal: A lost {lost_a}, B lost {lost_b}")
pre = preempted(r)
require(all(e["preempted_for"] == "B" and e["preemption_reason"] == "preempted_for_starving_operation"
          and e["interrupt_timeout"] == 0 for e in pre), "normal: victims' fields")
aborted = [e for e in r.of_type("job_aborted") if e["reason"] == "preemption"]
require(len(aborted) == len(pre) and all(a["time"] == p["time"] and a["job_id"] == p["job_id"]
                                       for a, p in zip(aborted, pre)), "normal: non-interruptible jobs abort at once")
starving = [e for e in r.of_type("starvation_status_changed") if e["element"] == "B"]
require(starving[0]["status"] == "starving" and 50000 < starving[0]["time"] <= 52000,
      f"normal: B starving at {starving[0]}")
require(min(e["time"] for e in pre) >= starving[0]["time"], "normal: preemption before starvation")
# Backoff and one allocation per heartbeat: per node, preemptive allocations >= 5 s apart, and
# one B start per job_preempted time and node.
by_node = {}
for e in pre:
    by_node.setdefault(e["node_id"], []).append(e["time"])
for node, times in by_node.items():
    require(len(set(times)) == len(times), f"normal: two preemptions on {node} in one heartbeat")
    require(all(b - a >= 5000 for a, b in zip(times, times[1:])), f"normal: backoff on {node}: {times}")
starts = [(e["time"], e["node_id"]) for e in r.of_type("job_started") if e["operation_id"] == "B"]
for e in pre:
    require(starts.count((e["time"], e["node_id"])) == 1, f"normal: B start for {e}")
sp = r.summary_pool("a")["preemptions"]
require(sp["preempted_for_starving_operation"] == lost_a and sp["resource_overcommit"] == 0, f"summary a: {sp}")
require(r.summary_pool("b")["preemptions"]["preempted_for_starving_operation"] == 0, "summary b")
require(r.summary["preemptions"]["preempted_for_starving_operation"] == lost_a, "summary totals")
rows = [x for x in r.pools if x["pool"] == "b" and x["starvation_status"] == "starving"]
require(rows and all(51000 <= int(x["time"]) < 80000 for x in rows), "pools.csv: b starving rows")

# 2. Backoff longer than the heartbeat period: 15 s backoff, 5 s heartbeats.
r = load(run("backoff", scenario(cluster, two_pools({"preemptive_scheduling_backoff": 15000}), ops))[0])
by_node = {}
for e in preempted(r):
    by_node.setdefault(e["node_id"], []).append(e["time"])
require(by_node and all(all(b - a >= 15000 for a, b in zip(t, t[1:])) for t in by_node.values()),
      f"backoff 15 s: {by_node}")
require(any(len(t) > 1 for t in by_node.values()), "backoff: some node preempted twice")

# 3. No ping-pong: after convergence, no preemption for the rest of a long run.
long_ops = [op("A", 0, "a", jobs=1000, duration=60000, cpu=2), op("B", 20000, "b", jobs=1000, duration=60000, cpu=2)]
r = load(run("pingpong", scenario(cluster, two_pools(), long_ops, duration=1200000))[0])
pre = preempted(r)
require(pre and max(e["time"] for e in pre) < 120000, f"ping-pong: preemptions until {max(e['time'] for e in pre)}")
require(all(e["operation_id"] == "A" for e in pre), "ping-pong: B preempted")

# 4. Interruptible jobs: aborted allocation_preemption_timeout (10 s) after job_preempted.
iops = [op("A", 0, "a", jobs=100, duration=120000, cpu=2), op("B", 20000, "b", jobs=100, duration=120000, cpu=2)]
iops[0]["tasks"][0]["interruptible"] = True
r = load(run("interrupt", scenario(cluster, two_pools(), iops))[0])
pre = preempted(r)
ab = {e["job_id"]: e["time"] for e in r.of_type("job_aborted") if e["reason"] == "preemption"}
require(pre and all(e["interrupt_timeout"] == 10000 and ab[e["job_id"]] == e["time"] + 10000 for e in pre),
      "interrupt: aborted 10 s after job_preempted")
# A job that ends before its timeout is not aborted: short jobs.
sops = [op("A", 0, "a", jobs=60, duration=54000, cpu=2), op("B", 20000, "b", jobs=100, duration=120000, cpu=2)]
sops[0]["tasks"][0]["interruptible"] = True
r = load(run("interrupt_ends", scenario(cluster, two_pools(), sops))[0])
pre = preempted(r, "A")
done = {e["job_id"] for e in r.of_type("job_completed")}
ab = {e["job_id"] for e in r.of_type("job_aborted")}
require(pre and all(e["job_id"] in done and e["job_id"] not in ab for e in pre),
      f"interrupt: jobs ending within the timeout complete ({len(pre)} preempted)")

# 5. Aggressive starvation: with preemption_satisfaction_threshold 2, A (at twice its fair
#    share) has no preemptible jobs and is protected in the preemptive stage; its aggressively
#    preemptible jobs (above 0.5 x fair share) are taken only once B is aggressively starving.
base = {"preemption_satisfaction_threshold": 2.0, "aggressive_preemption_satisfaction_threshold": 0.5}
plain = load(run("not_aggressive", scenario(cluster, two_pools(base), ops))[0])
require(len(preempted(plain)) == 0, f"aggressive off: {len(preempted(plain))} preempted")
agg_tree = two_pools(dict(base, enable_aggressive_starvation=True, fair_share_aggressive_starvation_timeout=60000))
r = load(run("aggressive", scenario(cluster, agg_tree, ops))[0])
agg = [e["time"] for e in r.of_type("starvation_status_changed") if e["element"] == "B" and e["status"] == "aggressively_starving"]
pre = preempted(r)
print(f"aggressive: {len(pre)} preempted from {min(e['time'] for e in pre) if pre else None}, B aggressively starving at {agg}")
require(agg and 80000 < agg[0] <= 82000, f"aggressive: status at {agg}")
require(20 <= len(pre) <= 22 and all(e["time"] >= agg[0] for e in pre), f"aggressive: {len(pre)} preempted")

# 6. Node shrink: n-0 goes from 10 to 4 cpu at 30 s: its heartbeat at 30 s sees the overcommit,
#    and the first heartbeat more than allowed_node_resources_overcommit_duration (15 s) later,
#    at 50 s, preempts jobs until usage fits.
sc = scenario(cluster, two_pools(), [op("A", 0, "a", jobs=100, duration=120000, cpu=2)])
sc["events"] = [{"time": 30000, "type": "set_node_resources", "node": "n-0", "resource_limits": {"cpu": 4}}]
r = load(run("shrink", sc)[0])
pre = preempted(r, reason="resource_overcommit")
require(len(pre) == 3 and all(e["node_id"] == "n-0" and e["preempted_for"] is None and e["time"] == 50000 for e in pre),
      f"shrink: {pre}")
require(r.summary_pool("a")["preemptions"]["resource_overcommit"] == 3, "shrink: summary")

# 7. Lowered pool limits: pool a limited to 20 cpu at 30 s: jobs of a preempted down to 10.
sc = scenario(cluster, two_pools(pools=[{"name": "a"}, {"name": "c"}]),
              [op("A", 0, "a", jobs=40, duration=120000, cpu=2), op("C", 0, "c", jobs=30, duration=120000, cpu=2)])
sc["events"] = [{"time": 30000, "type": "set_pool_attribute", "pool": "a", "key": "resource_limits", "value": {"cpu": 20}}]
r = load(run("limits", sc)[0])
pre = preempted(r, reason="resource_limits_violated")
want = r.running_at(29999)["A"] - 10   # 20 cpu = 10 jobs of 2 cpu
require(want > 0 and len(pre) == want and all(e["operation_id"] == "A" and 30000 <= e["time"] <= 31000 for e in pre),
      f"limits: {len(pre)} preempted, want {want}")
require(r.summary_pool("a")["preemptions"]["resource_limits_violated"] == want, "limits: summary")
require(max(n for t, n in [(0, 0)] + [(e["time"], 0) for e in pre]) == 0 and r.running_at(31000)["A"] == 10,
      f"limits: A runs {r.running_at(31000)['A']} after")
# ... and through update_operation.
sc["events"] = [{"time": 30000, "type": "update_operation", "operation": "C", "parameters": {"resource_limits": {"cpu": 10}}}]
r = load(run("op_limits", sc)[0])
pre = preempted(r, reason="resource_limits_violated")
want = r.running_at(29999)["C"] - 5
require(want > 0 and len(pre) == want and all(e["operation_id"] == "C" for e in pre), f"op limits: {len(pre)}, want {want}")

# 7b. Cases 6 and 7 with interruptible jobs: the victims hold their resources for the 10 s of
#     their interrupt timeout; no job is preempted twice and no more go than the limits need.
def interruptible(sc):
    for o in sc["operations"]:
        o["tasks"][0]["interruptible"] = True
    return sc
sc = interruptible(scenario(cluster, two_pools(), [op("A", 0, "a", jobs=100, duration=120000, cpu=2)]))
sc["events"] = [{"time": 30000, "type": "set_node_resources", "node": "n-0", "resource_limits": {"cpu": 4}}]
r = load(run("shrink_interruptible", sc)[0])
pre = preempted(r)
require(len(pre) == 3 and all(e["preemption_reason"] == "resource_overcommit" and e["interrupt_timeout"] == 10000
                              and e["time"] == 50000 for e in pre), f"shrink interruptible: {pre}")
sc = interruptible(scenario(cluster, two_pools(pools=[{"name": "a"}, {"name": "c"}]),
                            [op("A", 0, "a", jobs=40, duration=120000, cpu=2),
                             op("C", 0, "c", jobs=30, duration=120000, cpu=2)]))
sc["events"] = [{"time": 30000, "type": "set_pool_attribute", "pool": "a", "key": "resource_limits", "value": {"cpu": 20}}]
r = load(run("limits_interruptible", sc)[0])
pre = preempted(r, reason="resource_limits_violated")
want = r.running_at(29999)["A"] - 10
ids = [e["job_id"] for e in pre]
require(want > 0 and len(pre) == want and len(set(ids)) == len(ids) and
        all(e["interrupt_timeout"] == 10000 and 30000 <= e["time"] <= 31000 for e in pre),
        f"limits interruptible: {len(pre)} preempted ({len(set(ids))} jobs), want {want}")
# Lowered again to 10 cpu at 32 s, while the first victims still hold theirs: 5 more go.
sc["events"].append({"time": 32000, "type": "set_pool_attribute", "pool": "a", "key": "resource_limits",
                     "value": {"cpu": 10}})
r = load(run("limits_interruptible_twice", sc)[0])
pre = preempted(r, reason="resource_limits_violated")
later = [e for e in pre if e["time"] >= 32000]
ids = [e["job_id"] for e in pre]
require(len(pre) == want + 5 and len(later) == 5 and len(set(ids)) == len(ids) and
        all(e["time"] <= 33000 for e in later),
        f"limits lowered twice: {len(pre)} preempted ({len(later)} at 32 s), want {want} + 5")

# 8. Bad events: exit 2 naming the path.
sc = scenario(cluster, two_pools(), ops)
sc["events"] = [{"time": 1, "type": "set_node_resources", "node": "n-10", "resource_limits": {"cpu": 1}}]
_, err = run("bad_node", sc, expect_rc=2)
require("events[0].node: no node \"n-10\"" in err, err)
sc["events"] = [{"time": 1, "type": "set_pool_attribute", "pool": "zz", "key": "weight", "value": 2}]
_, err = run("bad_pool", sc, expect_rc=2)
require("events[0].pool: no pool \"zz\"" in err, err)
sc["events"] = [{"time": 1, "type": "update_operation", "operation": "A", "parameters": {"pool_trees": ["physical"]}}]
_, err = run("bad_param", sc, expect_rc=2)
require("events[0].parameters.pool_trees" in err, err)

# 9. Run-time changes the strategy accepts are accepted (docs/scheduling-loop.md): A moves to b
# at 1 ms, so pool a holds usage for 1 ms only and b holds A's from then on.
sc["events"] = [{"time": 1, "type": "update_operation", "operation": "A", "parameters": {"pool": "b"}}]
r = load(run("move", sc)[0])
require(r.summary_pool("a")["mean_usage_ratio"] < 1e-5 and r.summary_pool("b")["mean_usage_ratio"] > 0,
      "move: usage %s / %s" % (r.summary_pool("a")["mean_usage_ratio"], r.summary_pool("b")["mean_usage_ratio"]))
print("sim_preempt: ok")
PY
