#!/usr/bin/env bash
# The memory reserve cases of yt/yt/tests/integration/scheduler/test_scheduler_resource_limits.py
# in `poolsched simulate`, with upstream's controller settings (the scenario's controller_agent
# section: user_job_memory_digest_precision, user_job_memory_reserve_quantile,
# user_job_resource_overdraft_memory_multiplier), node setting (node group
# always_abort_on_memory_reserve_overdraft), specs and expected values. A job's memory use is
# its task's max_memory (upstream's script allocates 200 MB or 250 MB in python; the simulated
# peak adds 20 MB for the interpreter).
# Usage: resource_limits_memory_sim.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: resource_limits_memory_sim.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys
from simlib import *
init(sys.argv)


def node_group(count, always_abort=True):
    g = nodes("n", count, cpu=16, memory=64 * GIB, slots=16)
    g["always_abort_on_memory_reserve_overdraft"] = always_abort
    return g


def memory_op(jobs, limit, peak, spec, duration=5000):
    return {"id": "op", "start_time": 0, "spec": spec,
            "tasks": [{"job_count": jobs, "duration": duration, "memory_limit": limit,
                       "max_memory": peak, "resources": {"cpu": 1, "memory": limit, "user_slots": 1}}]}


def ended(r):
    return [e for e in r.events if e["event_type"] in ("job_completed", "job_aborted")]


def reserve_factor_case(label):
    # 20 jobs of 200 MB (+20 MB) with limit 400 MB, digest default 0.9, one at a time
    # (resource_limits cpu 1); controller precision 0.05, quantile 0.8. The last job that is
    # not an overdraft retry reserves 2e8..3.5e8 bytes.
    sc = scenario([node_group(5)], {"physical": {}},
                  [memory_op(20, 400 * 10 ** 6, 220 * 10 ** 6,
                             {"resource_limits": {"cpu": 1}, "user_job_memory_digest_default_value": 0.9})],
                  heartbeat=100, fs=100)
    sc["controller_agent"] = {"user_job_memory_digest_precision": 0.05, "user_job_memory_reserve_quantile": 0.8}
    r = load(run(label, sc)[0])
    done = [e for e in r.of_type("job_completed") if not e["job_id"].endswith("/0") or True]
    firsts = [e for e in done if e["job_id"].endswith("/0")]   # attempt 0: not an overdraft retry
    last = int(firsts[-1]["statistics"]["user_job/memory_reserve"])
    require(len(done) == 20, f"{len(done)} jobs completed")
    require(2e8 <= last <= 3.5e8, f"last memory_reserve {last}")
    return last, [int(e["statistics"]["user_job/memory_reserve"]) for e in done]


# upstream: test_scheduler_resource_limits::TestMemoryReserveFactor::test_memory_reserve_factor
last, seq = reserve_factor_case("reserve_factor")
print(f"test_memory_reserve_factor: reserves {seq[0]} .. {last} (last), within [2e8, 3.5e8]")
# upstream: test_scheduler_resource_limits::TestJobWorkspaceBuilder::test_memory_reserve_factor
# (the same case under another node config upstream; one job environment here)
reserve_factor_case("workspace_builder")

# upstream: test_scheduler_resource_limits::TestMemoryReserveMultiplier::test_user_job_resource_overdraft_memory_multiplier
# One job of 250 MB (+20 MB), limit 400 MB, digest default 0.4, multiplier 1.5: it reserves
# 160 MB, is aborted for resource_overdraft, its retry reserves 240 MB (x 1.5), is aborted
# again, the next reserves the whole 400 MB and completes. Each retry follows its predecessor.
sc = scenario([node_group(1)], {"physical": {}},
              [memory_op(1, 400 * 10 ** 6, 270 * 10 ** 6,
                         {"resource_limits": {"cpu": 1}, "user_job_memory_digest_default_value": 0.4})],
              heartbeat=100, fs=100)
sc["controller_agent"] = {"user_job_memory_digest_precision": 0.05,
                          "user_job_resource_overdraft_memory_multiplier": 1.5}
r = load(run("user_multiplier", sc)[0])
ev = ended(r)
reserves = [int(e["statistics"]["user_job/memory_reserve"]) for e in ev]
require(reserves[:3] == [160 * 10 ** 6, 240 * 10 ** 6, 400 * 10 ** 6], f"reserves {reserves}")
require([e["event_type"] for e in ev] == ["job_aborted", "job_aborted", "job_completed"], f"ends {ev}")
require(all(e["reason"] == "resource_overdraft" for e in ev[:2]), "predecessor_type resource_overdraft")
require([e["job_id"] for e in ev] == ["op/0/0/0", "op/0/0/1", "op/0/0/2"], "each retry follows its predecessor")
print(f"test_user_job_resource_overdraft_memory_multiplier: reserves {reserves}")
# The simulator shows upstream's cumulative statistics too (a job holds its peak from its start:
# 270 MB for 5 s is 1287 MiB x s).
st = ev[2]["statistics"]
require(st["user_job/cumulative_memory_mb_sec"] == int(270 * 10 ** 6 * 5 / 2 ** 20)
      and st["user_job/cumulative_max_memory"] == 270 * 10 ** 6 * 5, f"cumulative {st}")

# upstream: test_scheduler_resource_limits::TestMemoryReserveMultiplier::test_job_proxy_resource_overdraft_memory_multiplier
# The job proxy overdrafts: footprint_memory 16 MiB, job_proxy_resource_overdraft_memory_multiplier
# 1.5; spec job_proxy_memory_digest default 0.1, lower 0.1, upper 2.0; user job limit 500 MB,
# digest default 0.9, lower 0.8 (its `sleep 10` uses little). Here the job proxy's estimate is
# 100 MB and it peaks at 150 MB + footprint (upstream's proxy reads 5M rows). The job proxy
# reserves (without the footprint) go x1.5 after the first overdraft and to the upper bound (x20)
# after the second; the user job's reserves do not grow.
FOOT = 16 * 1024 * 1024
o = memory_op(1, 500 * 10 ** 6, 10 * 10 ** 6,
              {"user_job_memory_digest_default_value": 0.9, "user_job_memory_digest_lower_bound": 0.8,
               "job_proxy_memory_digest": {"default_value": 0.1, "lower_bound": 0.1, "upper_bound": 2.0}},
              duration=10000)
o["tasks"][0].update({"job_proxy_memory": 100 * 10 ** 6, "job_proxy_max_memory": 150 * 10 ** 6 + FOOT})
sc = scenario([node_group(1)], {"physical": {}}, [o], heartbeat=100, fs=100)
sc["controller_agent"] = {"user_job_memory_digest_precision": 0.05,
                          "job_proxy_resource_overdraft_memory_multiplier": 1.5, "footprint_memory": FOOT}
r = load(run("proxy_multiplier", sc)[0])
ev = ended(r)
require([e["event_type"] for e in ev] == ["job_aborted", "job_aborted", "job_completed"] and
      all(e["reason"] == "resource_overdraft" for e in ev[:2]), f"ends {[(e['event_type'], e.get('reason')) for e in ev]}")
# Upstream subtracts the footprint from the job proxy's own job_proxy/memory_reserve; poolsched
# reports the controller's value, estimate x factor (upstream's UpdateJobletFromSummary puts the
# same path), which has no footprint to subtract.
jp = [int(e["statistics"]["job_proxy/memory_reserve"]) for e in ev]
uj = [int(e["statistics"]["user_job/memory_reserve"]) for e in ev]
require(abs(jp[1] / jp[0] - 1.5) < 1e-3 and abs(jp[2] / jp[0] - 20.0) < 1e-3, f"job proxy reserves {jp}")
require(uj[1] <= uj[0] and uj[2] <= uj[0], f"user job reserves {uj}")
require(all(int(e["statistics"]["user_job/max_memory"]) < 400 * 1024 * 1024 for e in ev), "user job stays small")
print(f"test_job_proxy_resource_overdraft_memory_multiplier: job proxy reserves {jp}, user job {uj}")

# The node setting matters: without always_abort the node has the memory and lets the job run.
sc["node_groups"] = [node_group(1, always_abort=False)]
r = load(run("no_always_abort", sc)[0])
require([e["event_type"] for e in ended(r)] == ["job_completed"], "without always_abort: no abort")

# A bad controller value is refused naming the key.
sc["controller_agent"] = {"user_job_resource_overdraft_memory_multiplier": 11}
_, err = run("bad", sc, expect_rc=2)
require("controller_agent" in err and "user_job_resource_overdraft_memory_multiplier" in err and "11" in err,
      f"error: {err}")
PY
