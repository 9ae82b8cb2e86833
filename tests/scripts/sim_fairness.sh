#!/usr/bin/env bash
# Scenario tests of `poolsched simulate`: how resources are shared. Each case builds a small
# cluster, runs the simulator and asserts numbers read back from its outputs:
#   - sibling pools with weights 1:3 settle at 25% / 75% of the cluster (within one job);
#   - a pool with a strong guarantee reaches its guarantee (and its fair share) under
#     contention, against a pool that took the whole cluster first;
#   - FIFO pools run operations in the order of each fifo_sort_parameters value;
#   - scheduling_tag_filter keeps jobs on matching nodes;
#   - an operation's spec min_share_resources gives it no share of its own.
# Usage: sim_fairness.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: sim_fairness.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys
from simlib import *
init(sys.argv)

cluster = [nodes("n", 4)]          # 40 cpu, 40 slots: one job of 1 cpu is 2.5%

# 1. Weights 1:3: steady-state usage follows the weights, within one job.
sc = scenario(cluster, {"physical": {"pools": [{"name": "a", "weight": 1}, {"name": "b", "weight": 3}]}},
              [op("A", 0, "a", jobs=2000, duration=30000), op("B", 0, "b", jobs=2000, duration=30000)],
              duration=600000)
r = load(run("weights", sc)[0])
for t in (120000, 300000, 450000, 599999):
    run_ = r.running_at(t)
    require(abs(run_.get("A", 0) - 10) <= 1 and abs(run_.get("B", 0) - 30) <= 1,
          f"weights: running jobs at {t} ms are {run_}, expected A 10 / B 30 (+-1)")
    require(run_["A"] + run_["B"] == 40, f"weights: the cluster is not full at {t} ms: {run_}")
fs = {row["pool"]: float(row["fair_share_ratio"]) for row in r.pools if row["time"] == "300000"}
require(fs["a"] == 0.25 and fs["b"] == 0.75, f"weights: fair shares {fs}")
a, b = r.summary_pool("a"), r.summary_pool("b")
require(abs(a["mean_usage_ratio"] - 0.25) < 0.01 and abs(b["mean_usage_ratio"] - 0.75) < 0.01,
      f"weights: mean usage {a['mean_usage_ratio']} / {b['mean_usage_ratio']}")

# 2. Strong guarantee under contention: research fills the cluster first; prod (guarantee 30
#    of 40 cpu) arrives at 60 s. Vector HDRF: prod's fair share = 0.75 + half the rest = 0.875.
sc = scenario(cluster, {"physical": {"pools": [{"name": "prod", "strong_guarantee_resources": {"cpu": 30}},
                                               {"name": "research"}]}},
              [op("r", 0, "research", jobs=5000, duration=30000),
               op("p", 60000, "prod", jobs=5000, duration=30000)], duration=600000)
r = load(run("guarantee", sc)[0])
require(r.running_at(59999) == {"r": 40}, f"guarantee: research should hold the cluster before prod: {r.running_at(59999)}")
rows = {row["pool"]: row for row in r.pools if row["time"] == "60000"}
require(float(rows["prod"]["fair_share_ratio"]) == 0.875, f"guarantee: prod fair share {rows['prod']}")
require(float(rows["prod"]["strong_guarantee_ratio"]) == 0.75, f"guarantee: prod strong part {rows['prod']}")
for t in (150000, 300000, 599999):
    run_ = r.running_at(t)
    require(run_.get("p", 0) >= 30, f"guarantee: prod runs {run_.get('p', 0)} jobs at {t} ms, below its guarantee of 30")
    require(run_.get("p", 0) == 35 and run_.get("r", 0) == 5, f"guarantee: at {t} ms expected prod 35 / research 5, got {run_}")

# 3. FIFO order by each fifo_sort_parameters value. Three operations, each able to fill the
#    cluster twice (80 jobs of 1 cpu); jobs of the next operation start only when the one
#    before has started all of its jobs.
def fifo_order(name, params, ops_):
    pool = {"name": "q", "mode": "fifo"}
    if params is not None:
        pool["fifo_sort_parameters"] = params
    r = load(run(name, scenario(cluster, {"physical": {"pools": [pool]}}, ops_))[0])
    finish = sorted(r.ops.values(), key=lambda row: int(row["finish_time"]))
    starts = {o["id"]: r.first_start(o["id"]) for o in ops_}
    return [row["id"] for row in finish], starts, r

order, starts, _ = fifo_order("fifo_weight", ["weight"],
                              [op("w1", 0, "q", jobs=80, weight=1), op("w3", 0, "q", jobs=80, weight=3),
                               op("w2", 0, "q", jobs=80, weight=2)])
require(order == ["w3", "w2", "w1"], f"fifo by weight: finish order {order}")
require(starts["w3"] < starts["w2"] < starts["w1"], f"fifo by weight: first starts {starts}")
# start_time: the earliest first whatever the weights (weights would give the reverse order).
order, starts, _ = fifo_order("fifo_start", ["start_time"],
                              [op("s0", 0, "q", jobs=80, weight=1), op("s1", 1, "q", jobs=80, weight=2),
                               op("s2", 2, "q", jobs=80, weight=3)])
require(order == ["s0", "s1", "s2"], f"fifo by start_time: finish order {order}")
# Default [weight, start_time]: s2 (weight 3) overtakes s1 even though s1 started earlier.
order, _, _ = fifo_order("fifo_default", None,
                         [op("s0", 0, "q", jobs=80, weight=1), op("s1", 1, "q", jobs=80, weight=2),
                          op("s2", 2, "q", jobs=80, weight=3)])
require(order.index("s2") < order.index("s1"), f"fifo default order: {order}")
# pending_job_count: fewer pending jobs first.
order, starts, _ = fifo_order("fifo_pending", ["pending_job_count"],
                              [op("p120", 0, "q", jobs=120), op("p40", 0, "q", jobs=40),
                               op("p80", 0, "q", jobs=80)])
require(order == ["p40", "p80", "p120"], f"fifo by pending_job_count: finish order {order}")
require(starts["p40"] < starts["p80"] < starts["p120"], f"fifo by pending_job_count: first starts {starts}")

# 4. Tag filters: jobs only on matching nodes, per operation and per pool.
sc = scenario([nodes("cpu", 3, tags=["cpu"]), nodes("gpu", 2, tags=["gpu", "ssd"])],
              {"physical": {"pools": [{"name": "gpupool", "scheduling_tag_filter": "gpu"}, {"name": "any"}]}},
              [op("f_op", 0, "any", jobs=60, scheduling_tag_filter="ssd & !cpu"),
               op("f_pool", 0, "gpupool", jobs=60),
               op("free", 0, "any", jobs=200)])
r = load(run("filters", sc)[0])
where = {}
for e in r.of_type("job_started"):
    where.setdefault(e["operation_id"], set()).add(e["node_id"].split("-")[0])
require(where["f_op"] == {"gpu"}, f"filters: operation filter ran on {where['f_op']}")
require(where["f_pool"] == {"gpu"}, f"filters: pool filter ran on {where['f_pool']}")
require(where["free"] <= {"cpu", "gpu"} and where["free"], f"filters: unfiltered operation ran on {where['free']}")
require(all(row["operation_state"] == "completed" for row in r.ops.values()), "filters: not all completed")

# 5. An operation's spec min_share_resources gives it no guarantee (docs/api.md, as upstream's
#    current vector HDRF): two equal operations in one pool still share it half and half, and
#    the key is recognised (no unrecognized_spec in operation_started).
sc = scenario(cluster, {"physical": {"pools": [{"name": "p"}]}},
              [op("G", 0, "p", jobs=2000, duration=30000, min_share_resources={"cpu": 30}),
               op("H", 0, "p", jobs=2000, duration=30000)], duration=300000)
r = load(run("op_guarantee", sc)[0])
for t in (120000, 299999):
    run_ = r.running_at(t)
    require(abs(run_.get("G", 0) - 20) <= 1 and abs(run_.get("H", 0) - 20) <= 1,
          f"op guarantee: running jobs at {t} ms are {run_}, expected G 20 / H 20 (+-1)")
started = [e for e in r.of_type("operation_started") if e["operation_id"] == "G"][0]
require("unrecognized_spec" not in started, f"op guarantee: {started}")
print("sim_fairness: ok")
PY
