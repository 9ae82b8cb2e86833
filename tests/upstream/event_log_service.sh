#!/usr/bin/env bash
# Upstream's cases that read //sys/scheduler/event_log, translated onto a real scheduler with fake
# nodes (docs/api.md "Event log"). Upstream's map operations become vanilla operations with the
# same job counts; its read_table of the log is a get of the path; its tree "default" is
# "physical" here.
# usage: event_log_service.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: event_log_service.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish
from server_helper import event_log_rows as rows, wait_beating as wait_for

bin, work = sys.argv[1], sys.argv[2]
T = "//sys/pool_trees/physical"

def task(n, command="sleep 1000"):
    return {"t": {"command": command, "job_count": n, "cpu_limit": 1, "memory_limit": 64 << 20}}

# upstream: test_scheduler_strategy::TestSchedulerPoolsCommon::test_event_log
# An operation in event_log_test_pool (min_share_resources cpu 1) runs to completion: its
# operation_* rows are operation_started (with its pool) and operation_completed (with its
# progress); exactly one pools_info row shows the pool, with its guarantee and mode. Upstream also
# asserts progress/job_statistics and job_statistics_v2, the controller's aggregate of a map's
# table statistics: poolsched's progress counts jobs (vanilla jobs read no tables); that the
# progress is there is checked instead.
with Scheduler(bin, work + "/a", {"fair_share_update_period": 100}).start() as s:
    s.ok("create", {"type": "scheduler_pool", "path": T + "/event_log_test_pool",
                    "attributes": {"min_share_resources": {"cpu": 1}}})
    node = FakeNode(s, "n1", cpu=3, memory=16 << 30, slots=3)
    op = s.ok("start_op", {"operation_type": "vanilla",
                           "spec": {"pool": "event_log_test_pool", "tasks": task(1, "cat")}})["operation_id"]
    wait_for("the job runs", lambda: node.running, [node])
    node.finish_all("completed")

    def op_events():
        evs = [r for r in rows(s, operation_id=op) if r["event_type"].startswith("operation_")
               and r["event_type"] not in ("operation_prepared", "operation_materialized")]
        return evs if [e["event_type"] for e in evs] == ["operation_started", "operation_completed"] else None
    evs = wait_for("operation_started, operation_completed", op_events, [node])
    if evs:
        check(evs[0]["pool"], "operation_started has a pool: %s" % evs[0])
        check(evs[1]["progress"]["jobs"]["completed"] == 1, "operation_completed's progress: %s" % evs[1])

    def pools_info():
        return [r for r in rows(s, event_type="pools_info") if "event_log_test_pool" in r["pools"]["physical"]]
    info = wait_for("a pools_info row with the pool", pools_info)
    check(info and len(info) == 1, "one pools_info row with the pool: %d" % len(info or []))
    if info:
        pool = info[-1]["pools"]["physical"]["event_log_test_pool"]
        check(abs(pool["strong_guarantee_resources"]["cpu"] - 1.0) < 1e-6, "strong_guarantee_resources: %s" % pool)
        check(pool["mode"] == "fair_share", "mode: %s" % pool["mode"])

# upstream: test_scheduler_preemption::TestSchedulerPreemption::test_preemptor_event_log
# TestSchedulerPreemption's setup (3 nodes of 1 cpu, 2 slots; its tree options); pool1's
# min_share_resources is the cluster's cpu. op0 in pool0 runs 3 jobs; op1 in pool1 starts one, by
# preemption: op0's job_aborted row names op1 and op1's job as preempted_for.
with Scheduler(bin, work + "/b", {"fair_share_update_period": 100}).start() as s:
    for k, v in {"preemption_satisfaction_threshold": 0.99, "fair_share_starvation_tolerance": 0.8,
                 "fair_share_starvation_timeout": 1000, "max_unpreemptible_running_job_count": 0,
                 "preemptive_scheduling_backoff": 0, "max_ephemeral_pools_per_user": 2}.items():
        s.set(T + "/@config/" + k, v)
    nodes = [FakeNode(s, "n%d" % i, cpu=1, memory=16 << 30, slots=2) for i in range(3)]
    for n in nodes:
        n.heartbeat()
    total_cpu = sum(n.limits["cpu"] for n in nodes)   # upstream reads orchid scheduler/cluster
    s.ok("create", {"type": "scheduler_pool", "path": T + "/pool1",
                    "attributes": {"min_share_resources": {"cpu": total_cpu}}})
    op0 = s.ok("start_op", {"operation_type": "vanilla", "spec": {"pool": "pool0", "tasks": task(3)}})["operation_id"]
    wait_for("op0's 3 jobs run", lambda: sum(len(n.running) for n in nodes) == 3, nodes)
    op1 = s.ok("start_op", {"operation_type": "vanilla", "spec": {"pool": "pool1", "tasks": task(1)}})["operation_id"]
    started = wait_for("op1's job starts", lambda: rows(s, operation_id=op1, event_type="job_started"), nodes)
    preemptor = started[0]["job_id"] if started else None

    def check_events():
        for row in rows(s, event_type="job_aborted"):
            if row["operation_id"] == op0:
                return row
        return None
    row = wait_for("op0's job_aborted", check_events, nodes)
    if row:
        check(row.get("preempted_for", {}).get("operation_id") == op1, "preempted_for's operation: %s" % row)
        check(row.get("preempted_for", {}).get("job_id") == preemptor,
              "preempted_for's job: %s, preemptor %s" % (row, preemptor))
    s.ok("abort_op", {"operation_id": op0})
finish()
PY
