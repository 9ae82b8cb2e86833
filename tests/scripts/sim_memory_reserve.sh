#!/usr/bin/env bash
# Scenario tests of the memory reserve in `poolsched simulate` (docs/simulate-resources.md):
#   1. jobs peaking at 30% of memory_limit: the first wave reserves the default 0.5, later jobs
#      footprint + limit x the log digest's 0.95 quantile, 0.05 x 1.01^181 (the bucket above
#      0.30), exactly;
#   2. overdraft on a full node: job_aborted resource_overdraft, its retry reserves
#      footprint + memory_limit x 1.0 (the upper bound);
#   3. max_memory above memory_limit: job_failed "Memory limit exceeded" 1 s after the start,
#      retried until the operation's failures reach max_failed_job_count;
#   4. a mixed workload: summary.json's relative slack and overdraft abort share, printed.
# Usage: sim_memory_reserve.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: sim_memory_reserve.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import math, sys
from simlib import *
init(sys.argv)
MIB = 1024 ** 2
FOOT = 128 * MIB

def quantile_factor(samples, q=0.95, lo=0.05, hi=1.0, prec=0.01, default=0.5):
    """semantics.md 5.1, the log digest, as double arithmetic."""
    if not samples:
        return default
    step = 1 + prec
    n = max(1, math.ceil(math.log(hi / lo) / math.log(step)))
    buckets = [0] * n
    for v in samples:
        buckets[min(max(int(math.log(v / lo) / math.log(step)), 0), n - 1)] += 1
    value, total = lo, 0
    for b in buckets:
        if total >= q * len(samples):
            return value
        total += b
        value *= step
    return hi

def task(jobs, duration, limit, peak, memory=None):
    return {"job_count": jobs, "duration": duration, "memory_limit": limit, "max_memory": peak,
            "resources": {"cpu": 1, "memory": memory or limit, "user_slots": 1}}

# 1. 30% of the limit
o = {"id": "m", "start_time": 0, "spec": {}, "tasks": [task(40, 10000, GIB, int(0.3 * GIB))]}
r = load(run("converge", scenario([nodes("n", 2, cpu=10, memory=100 * GIB)], {"physical": {}}, [o]))[0])
q = quantile_factor([0.3 * GIB // 1 / GIB])
require(abs(q - 0.05 * 1.01 ** 181) < 1e-12 and 0.30 < q < 0.303, f"quantile {q}")
starts = r.of_type("job_started")
first = [e["memory_reserve"] for e in starts if e["time"] == starts[0]["time"]]
last = starts[-1]["memory_reserve"]
require(set(first) == {FOOT + int(0.5 * GIB)}, f"first wave {set(first)}")
require(last == int(FOOT + GIB * q), f"converged reserve {last}, want {int(FOOT + GIB * q)}")
st = r.of_type("job_completed")[-1]["statistics"]
require(st["user_job/memory_reserve"] == int(q * GIB) and st["user_job/max_memory"] == int(0.3 * GIB)
      and st["user_job/memory_limit"] == GIB and st["job_proxy/memory_reserve"] == 0
      and st["job_proxy/max_memory"] == FOOT
      and st["user_job/cumulative_memory_reserve"] == int(int(q * GIB) * 10000 / 1000.0), f"statistics {st}")
print(f"30% of the limit: reserve factor 0.5 -> {q:.6f} (user job reserve {int(q * GIB)} B)")

# 2. overdraft: two jobs reserving 640 MiB fill a 1280 MiB node; both peak at 0.8 GiB.
o = {"id": "d", "start_time": 0, "spec": {}, "tasks": [task(2, 20000, GIB, int(0.8 * GIB))]}
r = load(run("overdraft", scenario([nodes("n", 1, cpu=10, memory=2 * (FOOT + GIB // 2))],
                                   {"physical": {}}, [o]))[0])
ab = r.of_type("job_aborted")
require(len(ab) == 1 and ab[0]["reason"] == "resource_overdraft", f"aborts {ab}")
require(ab[0]["statistics"]["user_job/memory_reserve"] == GIB // 2, "aborted job's reserve")
retry = [e for e in r.of_type("job_started") if e["job_id"] == ab[0]["job_id"][:-1] + "1"]
require(len(retry) == 1 and retry[0]["memory_reserve"] == FOOT + GIB, f"retry {retry}")
require(len(r.of_type("job_completed")) == 2 and r.summary["memory"]["overdraft_aborts"] == 1,
      "both jobs complete")
print(f"overdraft: {ab[0]['job_id']} aborted at {ab[0]['time']} ms, retried with {retry[0]['memory_reserve']} B")

# 3. memory limit exceeded. A failed job is retried (its peak is the same every time) and the
#    operation fails when failures reach max_failed_job_count, as in YTsaurus (failed >= max):
#    with 0, at the first failure.
o = {"id": "x", "start_time": 0, "spec": {"max_failed_job_count": 0},
     "tasks": [task(1, 20000, GIB, int(1.5 * GIB))]}
r = load(run("limit", scenario([nodes("n", 1)], {"physical": {}}, [o]))[0])
f = r.of_type("job_failed")
require(len(f) == 1 and f[0]["error"] == "Memory limit exceeded"
      and f[0]["time"] == r.first_start("x") + 1000, f"failed {f}")
require(r.summary["memory"]["memory_limit_failures"] == 1, "summary")
require(r.ops["x"]["operation_state"] == "failed"
      and r.of_type("operation_failed")[0]["error"] == "Failed jobs limit exceeded", "operation fails")
o["spec"] = {}   # default max_failed_job_count 10: 10 failures
r = load(run("limit10", scenario([nodes("n", 1)], {"physical": {}}, [o]))[0])
require(len(r.of_type("job_failed")) == 10 and r.ops["x"]["operation_state"] == "failed",
      f"default limit: {len(r.of_type('job_failed'))} failures")

# 4. a mixed workload: 24 operations, peaks 10%..95% of their limits, 20 nodes.
ops = []
for i in range(24):
    frac = [0.1, 0.3, 0.45, 0.6, 0.75, 0.95][i % 6]
    limit = [1, 2, 4][i % 3] * GIB
    ops.append({"id": f"w{i}", "start_time": i * 20000, "spec": {},
                "tasks": [task(60, 30000 + 5000 * (i % 4), limit, int(frac * limit))]})
r = load(run("mixed", scenario([nodes("n", 20, cpu=16, memory=24 * GIB, slots=16)],
                               {"physical": {}}, ops))[0])
m = r.summary["memory"]
require(m["jobs_completed"] == 24 * 60 and r.summary["end"] == "all_operations_finished", f"mixed {m}")
print(f"mixed workload: relative slack {m['relative_slack']:.4f} (mean per job "
      f"{m['mean_job_relative_slack']:.4f}), overdraft aborts {m['overdraft_aborts']} of "
      f"{m['jobs_started']} starts ({100 * m['overdraft_abort_share']:.2f}%)")
print("sim_memory_reserve: ok")
PY
