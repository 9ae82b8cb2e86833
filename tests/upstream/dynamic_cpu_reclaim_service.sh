#!/usr/bin/env bash
# yt/yt/tests/integration/node/test_dynamic_cpu_reclaim.py's "lack of CPU" cases against the
# real scheduler, with upstream's node resources, tree settings and expected values. The node is
# server_helper's FakeNode reporting the guarantees a node agent's CPU monitor reports with
# SPEC_WITH_CPU_MONITOR (1 -> 0.7 -> 0.49 while Op1's job sleeps at its breakpoint, back to 1
# once it busy-loops): busy loops of real jobs on this shared 2-core machine starve a 0.1-core
# weight and make the real raise a matter of load. The agent's part (a raise is always taken,
# the guarantee reported) is tested in tests/scripts/node_fake.py (case_cpu_monitor); the
# monitor's numbers in dynamic_cpu_reclaim_sim.sh.
# Deliberate deviation (docs/simulate-resources.md, "CPU monitor"): the scheduler preempts at
# the first heartbeat that finds the node overcommitted (upstream waits
# allowed_node_resources_overcommit_duration, 15 s, and its node aborts its newest job with
# resource_overdraft after cpu_overdraft_timeout); the abort reason is resource_overcommit.
# Usage: dynamic_cpu_reclaim_service.sh BINARY SHARED_DIR SOURCE_DIR
set -euo pipefail
bin=$1
src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PYTHONPATH="$src/tests/scripts" timeout -k 5 100 python3 - "$bin" "$work" <<'PY'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
MON = {"check_period": 100, "increase_coefficient": 1.45, "decrease_coefficient": 0.7,
       "smoothing_factor": 0.2, "vote_window_size": 5, "vote_decision_threshold": 3,
       "min_cpu_limit": 0.1, "enable_cpu_reclaim": True}


def start(s, spec, count=1):
    spec = dict(spec, tasks={"t": {"command": "while :; do :; done", "job_count": count,
                                   "cpu_limit": 1, "memory_limit": 100 << 20}})
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]


def jobs_of(node, s, op):
    return [j for j in node.running.values() if j.get("operation_id") == op] or \
           [j for j in node.running.values() if j["job_id"] in
            {x["id"] for x in s.ok("list_jobs", {"operation_id": op, "state": "running"})["jobs"]}]


def beat_until(node, pred, seconds, what):
    end = time.time() + seconds
    while time.time() < end:
        node.heartbeat()
        if pred():
            return
        time.sleep(0.1)
    check(False, "timed out waiting for " + what)


def aborted(s, op):
    return s.ok("list_jobs", {"operation_id": op, "state": "aborted"})["jobs"]


def case(name, cpu, slots, op2_spec, op2_jobs, tree=None):
    s = Scheduler(bin, "%s/%s" % (work, name), {"fair_share_update_period": 100,
                                                  "heartbeat_period": 100}).start()
    try:
        # a short interrupt window keeps the test fast (victims are interrupted, then aborted)
        for key, value in dict({"allocation_preemption_timeout": 300}, **(tree or {})).items():
            s.set("//sys/pool_trees/physical/@" + key, value)
        node = FakeNode(s, "n1", cpu=cpu, slots=slots)
        op1 = start(s, {"job_cpu_monitor": MON})
        beat_until(node, lambda: len(jobs_of(node, s, op1)) == 1, 10, "Op1's job")
        j1 = jobs_of(node, s, op1)[0]
        for g in (0.7, 0.49):                      # Op1's job sleeps at its breakpoint
            j1["cpu_guarantee"] = g
            node.heartbeat()
        op2 = start(s, op2_spec, op2_jobs)
        beat_until(node, lambda: len(jobs_of(node, s, op2)) == op2_jobs, 10, "Op2's jobs on reclaimed cpu")
        for g in (0.71, 1.0):                      # released: busy, the monitor raises it back
            j1["cpu_guarantee"] = g
            node.heartbeat()
        beat_until(node, lambda: len(aborted(s, op2)) >= 1, 20, "an Op2 job aborted")
        node.beat(1.0)
        return s, node, op1, op2
    except BaseException:
        print(s.logtext()[-3000:])
        s.stop()
        raise


# upstream: test_dynamic_cpu_reclaim::TestDynamicCpuReclaim::test_node_aborts_job_on_lack_of_cpu
# 1.5 cores, 2 slots: Op2's job goes once Op1's job takes its core back (upstream:
# resource_overdraft == 1), Op1's keeps running, Op2 does not come back.
s, node, op1, op2 = case("node_abort", 1.5, 2, {}, 1)
ab = aborted(s, op2)
check(len(ab) == 1 and ab[0]["abort_reason"] == "resource_overcommit", "Op2: one abort %s" % ab)
check(len(jobs_of(node, s, op1)) == 1 and len(jobs_of(node, s, op2)) == 0, "Op1 runs, Op2 does not")
print("test_node_aborts_job_on_lack_of_cpu: Op2's job aborted (%s)" % ab[0]["abort_reason"])
s.stop()

# upstream: test_dynamic_cpu_reclaim::TestSchedulerAbortsJobOnLackOfCpu::test_scheduler_aborts_job_on_lack_of_cpu
# 2.5 cores, 3 slots, Op2 with weight 0.001 and 2 jobs: one of them is preempted, Op1 keeps its.
s, node, op1, op2 = case("sched_abort", 2.5, 3, {"weight": 0.001}, 2,
                         {"max_unpreemptible_running_allocation_count": 0, "preemptive_scheduling_backoff": 0,
                          "aggressive_preemption_satisfaction_threshold": 0.1,
                          "preemption_satisfaction_threshold": 0.1})
check(len(jobs_of(node, s, op2)) == 1 and len(aborted(s, op2)) == 1, "Op2: 2 -> 1 jobs")
check(len(jobs_of(node, s, op1)) == 1, "Op1 keeps its job")
print("test_scheduler_aborts_job_on_lack_of_cpu: Op2 2 -> 1 jobs")
s.stop()
finish()
PY
