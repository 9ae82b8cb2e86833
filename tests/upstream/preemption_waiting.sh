#!/usr/bin/env bash
# The waiting_job_timeout cases of yt/yt/tests/integration/scheduler/test_scheduler_preemption.py
# on a real cluster on 127.0.0.1: poolsched scheduler + poolsched node agents running real jobs
# (the helpers of tests/scripts/node_e2e.py). A job started on a node after preempting a victim
# that is still finishing its interruption waits there for the victim's resources; past its
# waiting timeout (the tree's waiting_job_timeout here) the node aborts it with
# waiting_timeout. Upstream's breakpoints become jobs that mark a file once their SIGINT trap is
# set and then run until interrupted.
# Usage: preemption_waiting.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: preemption_waiting.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 170 "$@" <<'PY'
import os, sys
BIN = sys.argv[1]
sys.argv = [sys.argv[0], BIN, "none"]
from checks import require as check
from node_e2e import run_on_cluster, task

T = "//sys/pool_trees/physical"
# TestSchedulerPreemption's setup_method
BASE = {"preemption_satisfaction_threshold": 0.99, "fair_share_starvation_tolerance": 0.8,
        "fair_share_starvation_timeout": 1000, "max_unpreemptible_running_job_count": 0,
        "preemptive_scheduling_backoff": 0, "job_graceful_interrupt_timeout": 10000}


def three_nodes(c):
    # TestSchedulerPreemption: 3 nodes of cpu 1, user_slots 2
    for i in range(3):
        c.node("n%d" % i, resources="cpu=1,memory=2G,user_slots=2")


def run_case(case):
    run_on_cluster(case, None, three_nodes)


def setup(c, waiting_job_timeout, job_interrupt_timeout):
    for k, v in BASE.items():
        c.sched.set(T + "/@config/" + k, v)
    c.sched.set(T + "/@config/waiting_job_timeout", waiting_job_timeout)
    c.sched.set(T + "/@config/job_interrupt_timeout", job_interrupt_timeout)
    # total_cpu_limit: the cluster's cpu once the three nodes are in
    root = "//sys/scheduler/orchid/scheduler/pool_trees/physical/pools/<Root>/resource_limits"
    c.wait(lambda: c.sched.call("get", {"path": root})[1].get("value", {}).get("cpu") == 3,
           60, "the cluster's 3 cpu")
    c.sched.ok("create", {"type": "scheduler_pool", "path": T + "/pool1",
                          "attributes": {"min_share_resources": {"cpu": 3}}})
    c.sched.ok("create", {"type": "scheduler_pool", "path": T + "/pool2"})


def interruptible_victims(c, on_sigint_sleep):
    """pool2's 3 jobs of 1 cpu: trap SIGINT (sleep, exit 0), then run until interrupted;
    returns once all three have set their trap (upstream's wait_breakpoint(job_count=3))."""
    ready = os.path.join(c.tmp, "ready")
    os.mkdir(ready)
    os.chmod(ready, 0o777)   # jobs run as slot users
    cmd = ("trap 'sleep %d; exit 0' INT; mktemp %s/XXXXXX >/dev/null; "
           "while true; do sleep 0.05; done" % (on_sigint_sleep, ready))
    op = c.op({"pool": "pool2", "tasks": {"main": task(cmd, 3, cpu_limit=1)}})
    c.wait(lambda: len(os.listdir(ready)) == 3, 60, "3 jobs of pool2 with their trap set")
    return op


def test_waiting_job_timeout(c):
    # upstream: test_scheduler_preemption::TestSchedulerPreemption::test_waiting_job_timeout
    # The victim would take 15 s to end on SIGINT; job_interrupt_timeout (5 s) kills it first,
    # well within waiting_job_timeout (10 s): op1's job waits, then runs and completes.
    setup(c, 10000, 5000)
    interruptible_victims(c, 15)
    op1 = c.op({"pool": "pool1", "tasks": {"main": task("sleep 1", 1, cpu_limit=1)}})
    c.wait_op(op1, 90)
    check(len(c.jobs(op1, "completed")) == 1, "op1: one completed job", c.jobs(op1))
    check(len(c.jobs(op1, "aborted")) == 0, "op1: no aborted job", c.jobs(op1))


def test_inconsistent_waiting_job_timeout(c):
    # upstream: test_scheduler_preemption::TestSchedulerPreemption::test_inconsistent_waiting_job_timeout
    # Pool tree misconfiguration: the victim takes 10 s to end on SIGINT (job_interrupt_timeout
    # 15 s lets it), longer than waiting_job_timeout (5 s): op1's job is aborted while waiting.
    setup(c, 5000, 15000)
    interruptible_victims(c, 10)
    op1 = c.op({"pool": "pool1", "tasks": {"main": task("cat </dev/null", 1, cpu_limit=1)}})
    aborted = c.wait(lambda: (lambda a: a if len(a) == 1 else None)(c.jobs(op1, "aborted")),
                     60, "one aborted job of op1")
    # beyond upstream's count: the reason is the node's waiting timeout
    check(aborted[0].get("abort_reason") == "waiting_timeout", "aborted for waiting_timeout",
          aborted)


for case in (test_waiting_job_timeout, test_inconsistent_waiting_job_timeout):
    run_case(case)
PY
