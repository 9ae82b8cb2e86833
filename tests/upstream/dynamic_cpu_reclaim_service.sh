#!/usr/bin/env bash
# yt/yt/tests/integration/node/test_dynamic_cpu_reclaim.py's "lack of CPU" cases and its
# per-pool aggregated CPU metrics (TestAggregatedCpuMetrics::test_sleeping) against the real
# scheduler, with upstream's node resources, settings and expected values.
# test_node_aborts_job_on_lack_of_cpu is the node's decision: a real `poolsched node` (2 slots,
# cpu_overdraft_timeout and resource_adjustment_period 1 s, the scheduler config's
# allowed_node_resources_overcommit_duration 600 s, as upstream's DELTA configs) runs Op1's job,
# idle at a breakpoint (a file it waits for) and then a busy loop, and Op2's job, which only
# sleeps: its usage is its guarantee (1 core), whatever it does. The node aborts Op2's job with
# resource_overdraft. The node has 1.2 cores, not upstream's 1.5: on this shared 2-core machine
# a busy loop whose cgroup weight is its low guarantee may get a third of a core, and the CPU
# monitor raises the guarantee only as far as the job's use: above 0.2 core it overcommits 1.2,
# not always above 0.5 (tests/scripts/overdraft_parity.sh has the same case).
# test_scheduler_aborts_job_on_lack_of_cpu is the scheduler's decision:
# server_helper's FakeNode reports the guarantees a node agent's CPU monitor reports with
# SPEC_WITH_CPU_MONITOR (1 -> 0.7 -> 0.49 while Op1's job sleeps, back to 1 once it busy-loops):
# busy loops of two more real jobs on this shared 2-core machine would make the preemption a
# matter of load. The monitor's numbers are in dynamic_cpu_reclaim_sim.sh.
# Usage: dynamic_cpu_reclaim_service.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: dynamic_cpu_reclaim_service.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 120 "$@" <<'PY'
import os, re, sys, time
from server_helper import FakeNode, NodeAgent, Scheduler, check, finish, wait_beating
from simlib import SPEC_WITH_CPU_MONITOR

bin, work = sys.argv[1], sys.argv[2]



def start(s, spec, count=1):
    spec = dict(spec, tasks={"t": {"command": "while :; do :; done", "job_count": count,
                                   "cpu_limit": 1, "memory_limit": 100 << 20}})
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]


def jobs_of(node, s, op):
    return [j for j in node.running.values() if j.get("operation_id") == op] or \
           [j for j in node.running.values() if j["job_id"] in
            {x["id"] for x in s.ok("list_jobs", {"operation_id": op, "state": "running"})["jobs"]}]


def beat_until(node, pred, seconds, what):
    wait_beating("timed out waiting for " + what, pred, [node], seconds)


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
        op1 = start(s, SPEC_WITH_CPU_MONITOR)
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


def node_agent(s, node_id, resources, extra=()):
    """A real `poolsched node` (its log: <work>/<node_id>.log)."""
    return NodeAgent(bin, s.url(""), node_id, resources, "%s/%s" % (work, node_id),
                     "%s/%s.log" % (work, node_id), data_dir=s.data_dir, extra=extra)


# upstream: test_dynamic_cpu_reclaim::TestDynamicCpuReclaim::test_node_aborts_job_on_lack_of_cpu
# Op2's job goes once Op1's job takes its core back: the node aborts it (resource_overdraft ==
# 1), the scheduler preempts nothing; Op1's keeps running, Op2's does not come back.
def wait_for(pred, seconds, what):
    wait_beating("timed out waiting for " + what, pred, (), seconds)


def running(s, op):
    return s.ok("list_jobs", {"operation_id": op, "state": "running"})["jobs"]


# upstream's DELTA_SCHEDULER_CONFIG: allowed_node_resources_overcommit_duration 600 s, in the
# scheduler config (every tree's default here)
s = Scheduler(bin, work + "/node_abort", {"fair_share_update_period": 100,
                                          "heartbeat_period": 100,
                                          "allowed_node_resources_overcommit_duration": 600 * 1000}).start()
gate = os.path.join(work, "gate")
os.mkdir(gate)
os.chmod(gate, 0o777)
agent = node_agent(s, "overdraft-n1", "cpu=1.2,memory=2G,user_slots=2",
                   ["--cpu-overdraft-timeout", "1000", "--resource-adjustment-period", "1000"])
try:
    check(s.get("//sys/pool_trees/physical/@allowed_node_resources_overcommit_duration") == 600 * 1000,
          "the scheduler's allowed_node_resources_overcommit_duration reaches the tree")
    breakpoint_then_busy = "while [ ! -e %s/release ]; do sleep 0.05; done; while :; do :; done" % gate
    op1 = s.ok("start_op", {"operation_type": "vanilla", "spec": {
        **SPEC_WITH_CPU_MONITOR, "tasks": {"t": {"command": breakpoint_then_busy, "job_count": 1,
                                               "cpu_limit": 1, "memory_limit": 100 << 20}}}})["operation_id"]
    wait_for(lambda: running(s, op1), 20, "Op1's job")
    op2 = s.ok("start_op", {"operation_type": "vanilla", "spec": {
        "tasks": {"t": {"command": "sleep 1000", "job_count": 1, "cpu_limit": 1,
                        "memory_limit": 100 << 20}}}})["operation_id"]
    wait_for(lambda: running(s, op2), 20, "Op2's job on Op1's reclaimed cpu")
    open(os.path.join(gate, "release"), "w").close()
    wait_for(lambda: aborted(s, op2), 30, "Op2's job aborted")
    time.sleep(1.0)
    ab = aborted(s, op2)
    check(len(ab) == 1 and ab[0]["abort_reason"] == "resource_overdraft", "Op2: one abort %s" % ab)
    check(len(running(s, op1)) == 1 and not running(s, op2), "Op1 runs, Op2 does not")
    check("preemption_reason=" not in s.logtext(), "the scheduler preempted nothing")
    print("test_node_aborts_job_on_lack_of_cpu: Op2's job aborted (%s)" % ab[0]["abort_reason"])
    for op in (op1, op2):
        s.ok("abort_op", {"operation_id": op})
finally:
    agent.stop()
    s.stop()

# upstream: test_dynamic_cpu_reclaim::TestAggregatedCpuMetrics::test_sleeping
# A sleeping vanilla job with SPEC_WITH_CPU_MONITOR on a real node: the scheduler's counters
# scheduler/pools/metrics/aggregated_*_cpu_x100 of the operation's pool (upstream's tags tree
# "default", pool "root": the tests' user's ephemeral pool; here tree physical, the user's
# ephemeral pool) grow by the job's statistics: preemptible > 0, smoothed > 0, smoothed < max
# (deltas from before the operation, as upstream's counter.get_delta()). Its ancestors
# (<Root>) count the same job.
def pool_counters(s, pool):
    st, text = s.raw("GET", "/metrics")
    out = {}
    for name in ("smoothed_cpu_usage", "max_cpu_usage", "preemptible_cpu"):
        m = re.search(r'^poolsched_pool_metrics_aggregated_%s_x100_total\{tree="physical",pool="%s"\} (\S+)$'
                      % (name, re.escape(pool)), text, re.M)
        out[name] = float(m.group(1)) if m else 0.0
    return out


s = Scheduler(bin, work + "/metrics", {"fair_share_update_period": 100, "heartbeat_period": 100}).start()
agent = node_agent(s, "metrics-n1", "cpu=2,memory=2G,user_slots=2")
try:
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": {
        **SPEC_WITH_CPU_MONITOR, "tasks": {"t": {"command": "sleep 1000", "job_count": 1,
                                               "cpu_limit": 1, "memory_limit": 100 << 20}}}})["operation_id"]
    pool = s.ok("get_operation", {"operation_id": op})["pool_per_tree"]["physical"]
    before = {p: pool_counters(s, p) for p in (pool, "<Root>")}
    wait_for(lambda: running(s, op), 20, "the sleeping job")

    def delta(p, name):
        return pool_counters(s, p)[name] - before[p][name]
    for p in (pool, "<Root>"):
        wait_for(lambda: delta(p, "preemptible_cpu") > 0, 30, "%s: preemptible delta > 0" % p)
        wait_for(lambda: delta(p, "smoothed_cpu_usage") > 0, 30, "%s: smoothed delta > 0" % p)
        wait_for(lambda: delta(p, "smoothed_cpu_usage") < delta(p, "max_cpu_usage"), 30,
                 "%s: smoothed delta < max delta" % p)
    print("test_sleeping: pool %s %s" % (pool, pool_counters(s, pool)))
    s.ok("abort_op", {"operation_id": op})
finally:
    agent.stop()
    s.stop()

# upstream: test_dynamic_cpu_reclaim::TestSchedulerAbortsJobOnLackOfCpu::test_scheduler_aborts_job_on_lack_of_cpu
# 2.5 cores, 3 slots, Op2 with weight 0.001 and 2 jobs: one of them is preempted, Op1 keeps its.
s, node, op1, op2 = case("sched_abort", 2.5, 3, {"weight": 0.001}, 2,
                         {"max_unpreemptible_running_allocation_count": 0, "preemptive_scheduling_backoff": 0,
                          "aggressive_preemption_satisfaction_threshold": 0.1,
                          "preemption_satisfaction_threshold": 0.1})
ab = aborted(s, op2)
check(len(jobs_of(node, s, op2)) == 1 and len(ab) == 1, "Op2: 2 -> 1 jobs")
check(ab and ab[0]["abort_reason"] == "preemption", "Op2's abort: preemption %s" % ab)
check(len(jobs_of(node, s, op1)) == 1, "Op1 keeps its job")
print("test_scheduler_aborts_job_on_lack_of_cpu: Op2 2 -> 1 jobs")
s.stop()
finish()
PY
