#!/usr/bin/env bash
# test_scheduler_preemption.py translated onto `poolsched simulate` (docs/simulate.md): the
# preemption cases whose timing the simulator reproduces (fair share updates, starvation
# timeouts and preemptive heartbeats in virtual time), with upstream's expected usages.
# Upstream changes a tree option in the middle of a test and waits; here each setting is its
# own run of the same scenario, checked at the end (the state upstream waits for).
# usage: preemption_sim.sh BINARY SHARED_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?usage: preemption_sim.sh BINARY SHARED_DIR SOURCE_DIR}
src=${3:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PYTHONPATH="$src/tests/scripts" python3 - "$bin" "$work" <<'PY'
import sys
from simlib import *
init(sys.argv)

def usage_at_end(r, op_id, cpu_per_job):
    return r.running_at(10 ** 12).get(op_id, 0) * cpu_per_job

def max_usage(r, op_id, cpu_per_job):
    """The largest usage the operation reached (upstream's `wait` for a usage)."""
    run, best = 0, 0
    for e in r.events:
        if e.get("operation_id") != op_id:
            continue
        if e["event_type"] == "job_started":
            run += 1
        elif e["event_type"] in ("job_completed", "job_aborted", "job_failed"):
            run -= 1
        best = max(best, run)
    return best * cpu_per_job

def preempted(r, op_id):
    return [e for e in r.of_type("job_preempted") if e["operation_id"] == op_id]

# ---- TestPreemptionPriorityScope::test_preemption_priority_scope ---------------------------
# One node of 10 cpu / 10 slots. first: strong guarantee 4.9 cpu, second: 5.1 cpu. normal_op
# (first) runs 5 jobs; starving_op (second) filters on a tag no node has; greedy_op (second)
# has 3 jobs of 2 cpu and gets 2 of them (4 cpu, 1 cpu stays free). Its fair share is 0.41:
# within node_reconnection_timeout of the connection (virtual time 0, as upstream's simulator)
# the missing tag's limits count as unlimited, so starving_op keeps 0.1 of second's 0.51 and
# stays starving, and so does second. greedy_op itself is non_starving (4 / 4.1 > 0.95).
def scope_scenario(scope, extra=None, lazy=False):
    t = {"preemption_satisfaction_threshold": 0.8, "fair_share_starvation_timeout": 1000,
         "fair_share_starvation_tolerance": 0.95, "max_unpreemptible_running_job_count": 0,
         "preemptive_scheduling_backoff": 0, "scheduling_preemption_priority_scope": scope,
         "pools": [{"name": "first", "strong_guarantee_resources": {"cpu": 4.9, "user_slots": 5}},
                   {"name": "second", "strong_guarantee_resources": {"cpu": 5.1, "user_slots": 5}}]}
    t.update(extra or {})
    ops = [op("normal", 0, "first", jobs=5, duration=10 ** 7, cpu=1),
           op("starving", 2000, "second", jobs=1, duration=10 ** 7, cpu=1,
              scheduling_tag_filter="nonexistent_tag"),
           op("greedy", 4000, "second", jobs=3, duration=10 ** 7, cpu=2)]
    if lazy:
        ops.append(op("lazy", 0, "first", jobs=2, duration=10 ** 7, cpu=1,
                      scheduling_tag_filter="nonexistent_tag"))
    return scenario([nodes("n", 1, cpu=10, slots=10)], {"physical": t}, ops, duration=60000,
                    heartbeat=100, fs=100)

# upstream: test_scheduler_preemption::TestPreemptionPriorityScope::test_preemption_priority_scope
r = load(run("scope_operation_only", scope_scenario("operation_only"))[0])
greedy = usage_at_end(r, "greedy", 2)
check(greedy == 4 and max_usage(r, "greedy", 2) == 4, f"operation_only: greedy_op uses {greedy} cpu, upstream 4.0")
check(not preempted(r, "normal"), "operation_only: normal_op lost jobs")
second = [e for e in r.of_type("starvation_status_changed") if e["element"] == "second"]
check(second and second[-1]["status"] == "starving", f"operation_only: second is {second[-1:]}, upstream starving")
gst = [e for e in r.of_type("starvation_status_changed") if e["element"] == "greedy"]
check(not gst or gst[-1]["status"] == "non_starving", f"operation_only: greedy_op is {gst[-1:]}, upstream non_starving")
# ... and with operation_and_ancestors (upstream switches the option and waits for 6 cpu):
# greedy_op reaches 6 cpu by preempting normal_op's job above its fair share. (normal_op, now
# starving in turn, takes it back later; upstream's test ends at the 6 cpu.)
r = load(run("scope_operation_and_ancestors", scope_scenario("operation_and_ancestors"))[0])
greedy = max_usage(r, "greedy", 2)
check(greedy == 6, f"operation_and_ancestors: greedy_op reaches {greedy} cpu, upstream 6.0")
first = preempted(r, "normal")
check(first and first[0]["preempted_for"] == "greedy", "operation_and_ancestors: normal_op loses a job to greedy_op")
print("priority scope: operation_only 4 cpu, operation_and_ancestors 6 cpu")

# preemption_check_satisfaction (TestSchedulerAggressivePreemption2 and
# test_ignore_preemption_blocking_ancestor_for_ssd_jobs set it): lazy_op, which no node can run,
# takes 2 cpu of first's fair share from normal_op, whose 5th job is then preemptible at a
# threshold of 1.1 (it starts at 4 > 2.9 x 1.1); first's local satisfaction 5 / 4.9 < 1.1 blocks
# it, unless the check is off.
r = load(run("check_satisfaction_on", scope_scenario("operation_and_ancestors",
                                                      {"preemption_satisfaction_threshold": 1.1}, lazy=True))[0])
check(max_usage(r, "greedy", 2) == 4, "preemption_check_satisfaction: normal_op preempted below the threshold")
r = load(run("check_satisfaction_off", scope_scenario("operation_and_ancestors",
              {"preemption_satisfaction_threshold": 1.1, "preemption_check_satisfaction": False}, lazy=True))[0])
check(max_usage(r, "greedy", 2) == 6, "preemption_check_satisfaction = false: normal_op not preempted")

# ---- TestSchedulerPreemption::test_conditional_preemption -----------------------------------
# Upstream: 3 nodes of 1 cpu / 2 slots, jobs of 0.5 cpu, min_spare_job_resources_on_node 0.5
# cpu. poolsched's min spare resources are upstream's default (1 cpu), so every cpu figure is
# doubled: nodes of 2 cpu / 2 slots, jobs of 1 cpu; the slots, the job counts and the ratios
# are upstream's. blocking_pool (strong guarantee 2) runs three operations of one job each
# (unpreemptible: max_unpreemptible_running_job_count 1); guaranteed_pool (4) runs donor_op,
# which gets 3 of its 4 jobs: the cluster is full. starving_op (2 jobs) then joins
# guaranteed_pool: donor_op is above its fair share but its pool is starving, so its jobs are
# preemptible only for operations inside guaranteed_pool (conditional preemption).
def conditional_scenario(extra):
    t = {"preemption_satisfaction_threshold": 0.99, "fair_share_starvation_tolerance": 0.8,
         "fair_share_starvation_timeout": 1000, "max_unpreemptible_running_job_count": 1,
         "preemptive_scheduling_backoff": 0,
         "pools": [{"name": "blocking_pool", "strong_guarantee_resources": {"cpu": 2}},
                   {"name": "guaranteed_pool", "strong_guarantee_resources": {"cpu": 4}}]}
    t.update(extra)
    ops = [op(f"blocking{i}", 0, "blocking_pool", jobs=1, duration=10 ** 7, cpu=1) for i in range(3)]
    ops += [op("donor", 1000, "guaranteed_pool", jobs=4, duration=10 ** 7, cpu=1),
            op("starving", 10000, "guaranteed_pool", jobs=2, duration=10 ** 7, cpu=1)]
    return scenario([nodes("n", 3, cpu=2, slots=2)], {"physical": t}, ops, duration=40000,
                    heartbeat=100, fs=100)

# upstream: test_scheduler_preemption::TestSchedulerPreemption::test_conditional_preemption
r = load(run("conditional_off", conditional_scenario({"enable_conditional_preemption": False}))[0])
check(usage_at_end(r, "donor", 1) == 3 and usage_at_end(r, "starving", 1) == 0,
      f"conditional off: donor {usage_at_end(r, 'donor', 1)}, starving {usage_at_end(r, 'starving', 1)}; upstream 1.5 and 0")
st = [e for e in r.of_type("starvation_status_changed") if e["element"] in ("donor", "starving", "guaranteed_pool")]
last = {e["element"]: e["status"] for e in st}
check(last.get("donor", "non_starving") == "non_starving" and last.get("starving") != "non_starving"
      and last.get("guaranteed_pool") != "non_starving", f"conditional off: starvation {last}")
r = load(run("conditional_on", conditional_scenario({"enable_conditional_preemption": True}))[0])
got = [usage_at_end(r, o, 1) for o in ("starving", "donor")] + \
      [sum(usage_at_end(r, f"blocking{i}", 1) for i in range(3))]
check(got == [1, 2, 3], f"conditional on: starving, donor, blocking_pool use {got} cpu; upstream (x2) 0.5, 1.0, 1.5")
print("conditional preemption on a full cluster: starving 1, donor 2, blocking 3 (x2 of upstream)")

# preemption_check_starvation: without conditional preemption and without the satisfaction check
# (guaranteed_pool's local satisfaction 3 / 4 is below 0.99), guaranteed_pool's starvation alone
# blocks donor_op's jobs; without the starvation check too they are preemptible for everybody.
for check_starvation, expected in ((True, 0), (False, 1)):
    r = load(run(f"check_starvation_{check_starvation}", conditional_scenario(
        {"enable_conditional_preemption": False, "preemption_check_satisfaction": False,
         "preemption_check_starvation": check_starvation}))[0])
    got = usage_at_end(r, "starving", 1)
    check(got == expected, f"preemption_check_starvation = {check_starvation}: starving_op uses {got} cpu, expected {expected}")
PY
