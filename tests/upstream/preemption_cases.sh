#!/usr/bin/env bash
# test_scheduler_preemption.py translated onto `poolsched simulate`: the basic preemption cases
# (preemption for a guarantee, the preemptor in the event log, lowered operation limits,
# graceful preemption, node resources overdraft, aggressive preemption, starvation of fully
# satisfied demand). Upstream's map operations become vanilla operations with the same job
# counts; its `wait`s become checks on the event log of one run; option changes in the middle
# of a test become scenario events (docs/scenario.md).
# usage: preemption_cases.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: preemption_cases.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys
from simlib import *
init(sys.argv)
LONG = 10 ** 7

def of(r, t, op_id=None):
    return [e for e in r.of_type(t) if op_id is None or e.get("operation_id") == op_id]

def running(r, t, op_id):
    return r.running_at(t).get(op_id, 0)

# TestSchedulerPreemption's setup: 3 nodes of 1 cpu / 2 slots and these tree options.
BASE = {"preemption_satisfaction_threshold": 0.99, "fair_share_starvation_tolerance": 0.8,
        "fair_share_starvation_timeout": 1000, "max_unpreemptible_running_job_count": 0,
        "preemptive_scheduling_backoff": 0, "job_graceful_interrupt_timeout": 10000}
def base_tree(pools, **extra):
    t = dict(BASE, pools=pools)
    t.update(extra)
    return {"physical": t}
three = [nodes("n", 3, cpu=1, slots=2)]

# upstream: test_scheduler_preemption::TestSchedulerPreemption::test_preemption
# op1 (3 jobs) fills the cluster; op2 in test_pool (min_share_resources = the cluster's cpu)
# completes, taking its job by preemption.
sc = scenario(three, base_tree([{"name": "fake_pool"},
                                {"name": "test_pool", "min_share_resources": {"cpu": 3}}]),
              [op("op1", 0, "fake_pool", jobs=3, duration=LONG), op("op2", 5000, "test_pool", jobs=1, duration=1000)],
              duration=30000, heartbeat=100, fs=100)
r = load(run("preemption", sc)[0])
got = r.ratios("fake_pool", 4999)
require(got[0] >= 0.999 and got[1] >= 0.999, f"test_preemption: fake_pool fair share, usage {got}; upstream >= 0.999")
require(r.ops["op2"]["finish_time"] != "", f"test_preemption: op2 did not finish: {r.ops['op2']}")
require(len(of(r, "job_preempted", "op1")) >= 1, "test_preemption: op1 lost no job")

# upstream: test_scheduler_preemption::TestSchedulerPreemption::test_preemptor_event_log
# op0 (pool0, 3 jobs) fills the cluster; op1 in pool1 (min share = the cluster) starts one job:
# op0's preempted job names op1 as preempted_for.
sc = scenario(three, base_tree([{"name": "pool0"}, {"name": "pool1", "min_share_resources": {"cpu": 3}}]),
              [op("op0", 0, "pool0", jobs=3, duration=LONG), op("op1", 5000, "pool1", jobs=1, duration=LONG)],
              duration=30000, heartbeat=100, fs=100)
r = load(run("preemptor", sc)[0])
pre = of(r, "job_preempted", "op0")
require(pre and pre[0]["preempted_for"] == "op1", f"test_preemptor_event_log: {pre}")
aborted = [e for e in of(r, "job_aborted", "op0") if e["reason"] == "preemption"]
require(aborted and aborted[0]["job_id"] == pre[0]["job_id"], "test_preemptor_event_log: the job_aborted event")
# Upstream also checks preempted_for/job_id, the preemptor's job. The simulator's event names the
# preemptor's operation only; its job is the one op1 started on the victim's node at that
# moment, checked here (the service names that allocation in preemption_reason:
# preemption_orchid.sh, test_pass_preemption_reason_to_node).
started = of(r, "job_started", "op1")
require(started and pre and started[0]["node_id"] == pre[0]["node_id"] and started[0]["time"] == pre[0]["time"],
      f"test_preemptor_event_log: op1's job {started[:1]} took the victim's place {pre[:1]}")

# upstream: test_scheduler_preemption::TestSchedulerPreemption::test_preemption_of_jobs_excessing_resource_limits
# 3 running jobs; resource_limits/user_slots lowered to 1, then 0, by update_op_parameters.
sc = scenario(three, base_tree([]), [op("op", 0, None, jobs=3, duration=LONG)], duration=30000,
              heartbeat=100, fs=100)
sc["events"] = [
    {"time": 5000, "type": "update_operation", "operation": "op",
     "parameters": {"scheduling_options_per_pool_tree": {"physical": {"resource_limits": {"user_slots": 1}}}}},
    {"time": 10000, "type": "update_operation", "operation": "op",
     "parameters": {"scheduling_options_per_pool_tree": {"physical": {"resource_limits": {"user_slots": 0}}}}}]
r = load(run("excess_limits", sc)[0])
got = [running(r, t, "op") for t in (4999, 9999, 29999)]
require(got == [3, 1, 0], f"test_preemption_of_jobs_excessing_resource_limits: running {got}, upstream 3, 1, 0")

# upstream: test_scheduler_preemption::TestSchedulerPreemption::test_graceful_preemption_timeout
# A job of an operation in graceful preemption mode, its user_slots lowered to 0: interrupted,
# then aborted when job_graceful_interrupt_timeout (10 s) expires; one job in total.
# Upstream's job is interrupted first (an interruptible task here: docs/scenario.md).
g = op("op", 0, None, jobs=1, duration=LONG, preemption_mode="graceful")
g["tasks"][0]["interruptible"] = True
sc = scenario(three, base_tree([]), [g], duration=40000, heartbeat=100, fs=100)
sc["events"] = [{"time": 5000, "type": "update_operation", "operation": "op",
                 "parameters": {"scheduling_options_per_pool_tree": {"physical": {"resource_limits": {"user_slots": 0}}}}}]
r = load(run("graceful_timeout", sc)[0])
pre, ab = of(r, "job_preempted", "op"), of(r, "job_aborted", "op")
require(len(of(r, "job_started", "op")) == 1 and len(ab) == 1, "test_graceful_preemption_timeout: one job, aborted")
require(pre and ab[0]["time"] - pre[0]["time"] == 10000,
      f"test_graceful_preemption_timeout: aborted {ab[0]['time']} after interrupt {pre[0]['time'] if pre else None}")

# upstream: test_scheduler_preemption::TestSchedulingBugOfOperationWithGracefulPreemption::test_scheduling_bug_of_operation_with_graceful_preemption
# One node of 2 cpu / 2 slots: a placeholder holds one; the graceful operation (pool with
# tolerance 0.4) runs its first job, and its second once the placeholder ends.
sc = scenario([nodes("n", 1, cpu=2, slots=2)],
              {"physical": {"pools": [{"name": "pool", "fair_share_starvation_tolerance": 0.4}]}},
              [op("placeholder", 0, None, jobs=1, duration=5000),
               op("graceful", 1000, "pool", jobs=2, duration=LONG, preemption_mode="graceful")],
              duration=30000, heartbeat=100, fs=100)
r = load(run("graceful_bug", sc)[0])
require(running(r, 4999, "graceful") == 1, f"graceful bug: {running(r, 4999, 'graceful')} jobs beside the placeholder, upstream 1")
require(running(r, 29999, "graceful") == 2, f"graceful bug: {running(r, 29999, 'graceful')} jobs running, upstream 2")

# TestResourceLimitsOverdraftPreemption: 2 nodes of 2 cpu / 2 slots, node 0 unusable at first;
# op1 and op2 run one job each on node 1; then node 0 comes back and node 1 loses its cpu (or
# its slots): both jobs are aborted and run again, on node 0. Upstream's setup: the scheduler's
# allowed_node_resources_overcommit_duration 1 s (a tree key here), the tree's
# allocation_graceful_preemption_timeout 10 s and allocation_preemption_timeout 600 s, lowered to
# 1 s by test_scheduler_preempt_overdraft_resources only.
def overdraft(resource, preemption_timeout):
    t = {"allowed_node_resources_overcommit_duration": 1000,
         "allocation_graceful_preemption_timeout": 10000,
         "allocation_preemption_timeout": preemption_timeout}
    sc = scenario([nodes("n", 2, cpu=2, slots=2)], {"physical": t},
                  [op("op1", 1000, None, jobs=1, duration=LONG), op("op2", 1000, None, jobs=1, duration=LONG)],
                  duration=30000, heartbeat=100, fs=100)
    sc["events"] = [{"time": 0, "type": "set_node_resources", "node": "n-0", "resource_limits": {resource: 0}},
                    {"time": 10000, "type": "set_node_resources", "node": "n-0", "resource_limits": {resource: 2}},
                    {"time": 10000, "type": "set_node_resources", "node": "n-1", "resource_limits": {resource: 0}}]
    r = load(run("overdraft_" + resource, sc)[0])
    for o in ("op1", "op2"):
        starts, aborts = of(r, "job_started", o), of(r, "job_aborted", o)
        require(len(aborts) == 1 and len(starts) == 2 and starts[0]["node_id"] == "n-1"
              and starts[1]["node_id"] == "n-0" and running(r, 29999, o) == 1,
              f"overdraft {resource}: {o} starts {[(e['time'], e['node_id']) for e in starts]}")
    return r
# upstream: test_scheduler_preemption::TestResourceLimitsOverdraftPreemption::test_scheduler_preempt_overdraft_resources
overdraft("cpu", 1000)
# upstream: test_scheduler_preemption::TestResourceLimitsOverdraftPreemption::test_scheduler_force_abort
# (disable_scheduler_jobs: the node reports no user slots). With the 600 s preemption timeout a
# job preempted the regular way would be interrupted and aborted 600 s later, past this run's
# 30 s: both jobs aborted within it shows the abort was forced (the overcommit's 1 s).
r = overdraft("user_slots", 600000)
forced = [(e["preemption_reason"], e["interrupt_timeout"]) for e in r.of_type("job_preempted")]
require(forced == [("resource_overcommit", 0)] * 2, f"force abort: preempted {forced}, upstream aborted at once")
# TestSchedulerAggressivePreemption: 4 nodes of 2 cpu / 2 slots tagged group0, group1, group0,
# group1; two operations of 4 jobs each, each filtered to one group, fill the cluster.
AGG = {"aggressive_preemption_satisfaction_threshold": 0.2, "preemption_satisfaction_threshold": 1.0,
       "fair_share_starvation_tolerance": 0.9, "max_unpreemptible_running_job_count": 0,
       "fair_share_starvation_timeout": 100, "fair_share_aggressive_starvation_timeout": 200,
       "preemptive_scheduling_backoff": 0, "max_ephemeral_pools_per_user": 5}
groups = [dict(nodes(f"g{i}", 1, cpu=2, slots=2), tags=[f"group{i % 2}"]) for i in range(4)]

# upstream: test_scheduler_preemption::TestSchedulerAggressivePreemption::test_aggressive_preemption
# special_pool's operation (one job of 2 cpu, fair share 1/4) gets nothing by regular
# preemption (one preemptible job per node frees 1 cpu); with enable_aggressive_starvation set
# on its pool (at 20 s) it gets its job.
t = dict(AGG, pools=[{"name": "special_pool"}, {"name": "fake_pool0"}, {"name": "fake_pool1"}])
ops = [op(f"op{i}", 0, f"fake_pool{i}", jobs=4, duration=LONG, scheduling_tag_filter=f"group{i}") for i in range(2)]
ops.append(op("special", 5000, "special_pool", jobs=1, duration=LONG, cpu=2))
sc = scenario(groups, {"physical": t}, ops, duration=40000, heartbeat=100, fs=100)
sc["events"] = [{"time": 20000, "type": "set_pool_attribute", "pool": "special_pool",
                 "key": "enable_aggressive_starvation", "value": True}]
r = load(run("aggressive", sc)[0])
for i in range(2):
    got = r.ratios(f"fake_pool{i}", 4999)
    require(almost(got[0], 1 / 2) and almost(got[1], 1 / 2) and running(r, 4999, f"op{i}") == 4,
          f"aggressive: op{i} fair share, usage {got}, {running(r, 4999, f'op{i}')} jobs; upstream 1/2, 1/2, 4")
got = r.ratios("special_pool", 19999)
require(almost(got[0], 1 / 4) and almost(got[1], 0.0) and running(r, 19999, "special") == 0,
      f"aggressive: special fair share, usage {got} before; upstream 1/4, 0")
got = r.ratios("special_pool", 39999)
require(almost(got[1], 1 / 4) and running(r, 39999, "special") == 1,
      f"aggressive: special usage {got[1]}, {running(r, 39999, 'special')} jobs after; upstream 1/4, 1")

# upstream: test_scheduler_preemption::TestSchedulerAggressivePreemption::test_no_aggressive_preemption_for_non_aggressively_starving_operation
# bad_op (fake_pool, weight 10) holds all 8 slots; op1 (special_pool, weight 2, 2 jobs) gets one
# job (fair share 2/12, usage 1/8: starving); op2 (regular_pool, weight 1) gets nothing, and
# starving op2 does not make op1's pool aggressive; enable_aggressive_starvation on special_pool
# then gives op1 its second job.
t = dict(AGG, pools=[{"name": "fake_pool", "weight": 10.0}, {"name": "regular_pool", "weight": 1.0},
                     {"name": "special_pool", "weight": 2.0}])
ops = [op("bad", 0, "fake_pool", jobs=8, duration=LONG), op("op1", 5000, "special_pool", jobs=2, duration=LONG),
       op("op2", 15000, "regular_pool", jobs=1, duration=LONG)]
sc = scenario([nodes("n", 4, cpu=2, slots=2)], {"physical": t}, ops, duration=50000, heartbeat=100, fs=100)
sc["events"] = [{"time": 30000, "type": "set_pool_attribute", "pool": "special_pool",
                 "key": "enable_aggressive_starvation", "value": True}]
r = load(run("no_aggressive", sc)[0])
def expect(pool, op_id, t, fs, usage, jobs, what):
    got = r.ratios(pool, t) + (running(r, t, op_id),)
    require((fs is None or almost(got[0], fs)) and almost(got[1], usage) and got[2] == jobs,
          f"no aggressive preemption: {what}: fair share, usage, jobs {got}; upstream {fs}, {usage}, {jobs}")
expect("fake_pool", "bad", 4999, 1.0, 1.0, 8, "bad_op")
# op1 gets its job, and has it still 3 s later (upstream's sleep) and until op2 starts
for t in (8000, 11000, 14999):
    expect("special_pool", "op1", t, 2 / 12, 1 / 8, 1, "op1 at %d ms" % t)
require(r.status_at("op2", 18000) == "starving", f"no aggressive preemption: op2 is {r.status_at('op2', 18000)}")
for t in (18000, 21000, 29999):
    expect("regular_pool", "op2", t, 1 / 13, 0.0, 0, "op2 at %d ms" % t)
# (1/8) / (1/6) = 0.75 < 0.9, the tolerance
require(r.status_at("op1", 29999) == "starving", f"no aggressive preemption: op1 is {r.status_at('op1', 29999)}")
expect("special_pool", "op1", 49999, None, 2 / 8, 2, "op1 after enable_aggressive_starvation")
require(r.status_at("op1", 49999) == "non_starving",
      f"no aggressive preemption: op1 is {r.status_at('op1', 49999)} at last, upstream non_starving")

# TestIncreasedStarvationToleranceForFullySatisfiedDemand: one node of 10 cpu / 10 slots.
INC = {"aggressive_preemption_satisfaction_threshold": 0.2, "preemption_satisfaction_threshold": 1.0,
       "fair_share_starvation_tolerance": 0.8, "max_unpreemptible_running_job_count": 0,
       "fair_share_starvation_timeout": 100, "fair_share_aggressive_starvation_timeout": 200,
       "preemptive_scheduling_backoff": 0, "max_ephemeral_pools_per_user": 5}
ten = [nodes("n", 1, cpu=10, slots=10)]

# upstream: test_scheduler_preemption::TestIncreasedStarvationToleranceForFullySatisfiedDemand::test_increase_for_operation
# regular_op (2 cpu, regular_pool with 1 cpu guaranteed) leaves 8 cpu to starving_op (9 jobs,
# starving_pool with 9): 8 / 9 is above the tolerance 0.8, yet its demand is its fair share,
# so it is starving (and, with max_unpreemptible_running_job_count 0, still starving later).
t = dict(INC, pools=[{"name": "regular_pool", "strong_guarantee_resources": {"cpu": 1.0}},
                     {"name": "starving_pool", "strong_guarantee_resources": {"cpu": 9.0}}])
sc = scenario(ten, {"physical": t}, [op("regular", 0, "regular_pool", jobs=1, duration=LONG, cpu=2),
                                     op("starving", 1000, "starving_pool", jobs=9, duration=LONG)],
              duration=10000, heartbeat=100, fs=100)
r = load(run("increase_op", sc)[0])
require(running(r, 2000, "regular") == 1, f"increase_for_operation: regular_op runs {running(r, 2000, 'regular')} job of 2 cpu")
require(running(r, 2000, "starving") == 8, f"increase_for_operation: starving_op runs {running(r, 2000, 'starving')}, upstream 8")
require(r.status_at("starving") == "starving", f"increase_for_operation: starving_op is {r.status_at('starving')}")

# upstream: test_scheduler_preemption::TestIncreasedStarvationToleranceForFullySatisfiedDemand::test_no_increase_for_pool
# regular_op runs 9 jobs in pool; starving_op (same pool) filters on a tag no node has: within
# node_reconnection_timeout its demand still counts, it gets a fair share and starves, while
# pool, whose demand is not fully satisfied, is not starving.
t = dict(INC, pools=[{"name": "pool"}])
sc = scenario(ten, {"physical": t}, [op("regular", 0, "pool", jobs=9, duration=LONG),
                                     op("starving", 1000, "pool", jobs=1, duration=LONG,
                                        scheduling_tag_filter="nonexistent_tag")],
              duration=10000, heartbeat=100, fs=100)
r = load(run("no_increase_pool", sc)[0])
require(running(r, 999, "regular") == 9, "no_increase_for_pool: regular_op runs 9")
require(r.status_at("starving") == "starving" and r.status_at("pool") == "non_starving",
      f"no_increase_for_pool: starving_op {r.status_at('starving')}, pool {r.status_at('pool')}")
print("preemption cases: all passed")
PY
