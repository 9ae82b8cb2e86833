#!/usr/bin/env bash
# yt/yt/tests/integration/node/test_dynamic_cpu_reclaim.py in `poolsched simulate`, with
# upstream's nodes, specs (SPEC_WITH_CPU_MONITOR) and expected values. A job "at its
# breakpoint" is idle (task cpu_usage 0) until the breakpoint is released, then busy (1 core).
#
# Upstream's TestDynamicCpuReclaim runs with the scheduler's
# allowed_node_resources_overcommit_duration at 600 s and the node's cpu_overdraft_timeout and
# resource_adjustment_period at 1 s, so its node aborts first; TestSchedulerAbortsJobOnLackOfCpu
# keeps the defaults (15 s, 10 min, 5 s). The same settings here: the tree option and the node
# group's keys (docs/simulate-resources.md, "CPU overdraft").
# Usage: dynamic_cpu_reclaim_sim.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: dynamic_cpu_reclaim_sim.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys
from simlib import *
init(sys.argv)

RELEASE = 10000      # the breakpoint is released at 10 s
LONG = 1000000


def node(cpu, slots, **config):
    return dict({"name": "n", "count": 1,
                 "resource_limits": {"cpu": cpu, "memory": 100 * GIB, "user_slots": slots, "gpu": 0, "network": 0}},
                **config)


# TestDynamicCpuReclaim's DELTA_SCHEDULER_CONFIG and DELTA_DYNAMIC_NODE_CONFIG
RECLAIM_TREE = {"allowed_node_resources_overcommit_duration": 600 * 1000}
RECLAIM_NODE = {"cpu_overdraft_timeout": 1000, "resource_adjustment_period": 1000}


def vanilla(id, start, jobs=1, usage=None, monitor=True, duration=LONG, **spec):
    if monitor:
        spec.update(SPEC_WITH_CPU_MONITOR)
    t = {"job_count": jobs, "duration": duration, "max_memory": 0,
         "resources": {"cpu": 1, "memory": 0, "user_slots": 1}}
    if usage is not None:
        t["cpu_usage"] = usage
    return {"id": id, "start_time": start, "spec": spec, "tasks": [t]}


BREAKPOINT_THEN_BUSY = [[0, 0], [RELEASE, 1]]


def sim(name, nodes_, ops, tree=None, duration=30000):
    return load(run(name, scenario([nodes_], {"physical": tree or {}}, ops, duration=duration,
                                   heartbeat=100, fs=100))[0])


def stats(r, op_id):
    return [e["statistics"] for e in r.events
            if e["event_type"] in ("job_completed", "job_aborted") and e["operation_id"] == op_id]


# upstream: test_dynamic_cpu_reclaim::TestDynamicCpuReclaim::test_dynamic_cpu_statistics
# While at the breakpoint: smoothed <= 15, preemptible >= 70 (a job that ends there shows it);
# after the release (busy loop): smoothed >= 85, preemptible <= 30.
r = sim("stats", node(4, 4), [vanilla("idle", 0, usage=[[0, 0]], duration=RELEASE),
                             vanilla("busy", 0, usage=BREAKPOINT_THEN_BUSY, duration=2 * RELEASE)])
s = stats(r, "idle")[0]
require(s["job_proxy/smoothed_cpu_usage_x100"] <= 15 and s["job_proxy/preemptible_cpu_x100"] >= 70,
      f"at the breakpoint: {s}")
s = stats(r, "busy")[0]
require(s["job_proxy/smoothed_cpu_usage_x100"] >= 85 and s["job_proxy/preemptible_cpu_x100"] <= 30,
      f"after the release: {s}")
print("test_dynamic_cpu_statistics: idle smoothed/preemptible x100 %d/%d, busy %d/%d" % (
    stats(r, "idle")[0]["job_proxy/smoothed_cpu_usage_x100"], stats(r, "idle")[0]["job_proxy/preemptible_cpu_x100"],
    s["job_proxy/smoothed_cpu_usage_x100"], s["job_proxy/preemptible_cpu_x100"]))

# upstream: test_dynamic_cpu_reclaim::TestDynamicCpuReclaim::test_new_jobs_are_scheduled_on_reclaimed_cpu
# A node of 1.5 cores and 2 slots: Op1's idle job frees more than half its core, then Op2's
# one-core job starts on the reclaimed cpu.
r = sim("reclaimed", node(1.5, 2), [vanilla("op1", 0, usage=[[0, 0]], duration=20000),
                                   vanilla("op2", 100, monitor=False, duration=5000)])
ch = r.of_type("job_cpu_limit_changed")
freed = next(e["time"] for e in ch if e["new_cpu_limit"] <= 0.5)
require(r.first_start("op2") is not None and r.first_start("op2") >= freed,
      f"Op2 starts {r.first_start('op2')} after the guarantee fell at {freed}")
require(stats(r, "op1")[0]["job_proxy/preemptible_cpu_x100"] > 50, "preemptible > 50")
print(f"test_new_jobs_are_scheduled_on_reclaimed_cpu: guarantee <= 0.5 at {freed} ms, Op2 starts at {r.first_start('op2')} ms")

# upstream: test_dynamic_cpu_reclaim::TestDynamicCpuReclaim::test_node_aborts_job_on_lack_of_cpu
# 1.5 cores, 2 slots; Op2's busy job runs on Op1's reclaimed cpu; released, Op1 takes its core
# back: the node's usage is above its cpu, and after cpu_overdraft_timeout (1 s, checked every
# second) the node aborts its newest job, Op2's: aborted/scheduled/resource_overdraft == 1.
# The scheduler (600 s) preempts nothing. Op1's keeps running; Op2's does not come back.
r = sim("node_abort", node(1.5, 2, **RECLAIM_NODE), [vanilla("op1", 0, usage=BREAKPOINT_THEN_BUSY),
                                                     vanilla("op2", 100, monitor=False)], RECLAIM_TREE)
require(r.running_at(RELEASE - 1) == {"op1": 1, "op2": 1}, f"before the release {r.running_at(RELEASE - 1)}")
ab = [e for e in r.of_type("job_aborted") if e["operation_id"] == "op2"]
require(len(ab) == 1 and ab[0]["reason"] == "resource_overdraft", f"Op2 aborted: {ab}")
over = next(e["time"] for e in r.of_type("job_cpu_limit_changed")
            if e["operation_id"] == "op1" and e["time"] > RELEASE and e["new_cpu_limit"] > 0.5)
# seen at the first adjustment (a whole second) after the raise, aborted 2 adjustments later
first = (over // 1000 + 1) * 1000
require(ab[0]["time"] == first + 2000, f"Op2 aborted at {ab[0]['time']}, over since {over}")
require(not r.of_type("job_preempted"), f"the scheduler preempts nothing {r.of_type('job_preempted')}")
end = r.running_at(30000)
require(end.get("op2", 0) == 0 and end["op1"] == 1, f"after: {end}")
require(not [e for e in r.of_type("job_aborted") if e["operation_id"] == "op1"], "Op1 keeps its job")
print(f"test_node_aborts_job_on_lack_of_cpu: over the node's cpu at {over} ms, Op2's job aborted "
      f"at {ab[0]['time']} ms (resource_overdraft)")

# upstream: test_dynamic_cpu_reclaim::TestSchedulerAbortsJobOnLackOfCpu::test_scheduler_aborts_job_on_lack_of_cpu
# 2.5 cores, 3 slots; Op2 (weight 0.001) runs 2 busy jobs on Op1's reclaimed cpu; released,
# one of Op2's jobs is preempted (aborted/preemption > 0), Op1's keeps running.
tree = {"max_unpreemptible_running_allocation_count": 0, "preemptive_scheduling_backoff": 0,
        "aggressive_preemption_satisfaction_threshold": 0.1, "preemption_satisfaction_threshold": 0.1}
r = sim("sched_abort", node(2.5, 3), [vanilla("op1", 0, usage=BREAKPOINT_THEN_BUSY),
                                     vanilla("op2", 100, jobs=2, monitor=False, weight=0.001)], tree)
require(r.running_at(RELEASE - 1) == {"op1": 1, "op2": 2}, f"before the release {r.running_at(RELEASE - 1)}")
ab = [e for e in r.of_type("job_aborted") if e["operation_id"] == "op2"]
require(len(ab) >= 1 and all(e["reason"] == "preemption" for e in ab), f"Op2 aborted: {ab}")
end = r.running_at(30000)
require(end["op2"] == 1 and end["op1"] == 1, f"after: {end}")
print(f"test_scheduler_aborts_job_on_lack_of_cpu: Op2 {r.running_at(RELEASE - 1)['op2']} -> {end['op2']} jobs, "
      f"{len(ab)} aborted (preemption)")
PY
