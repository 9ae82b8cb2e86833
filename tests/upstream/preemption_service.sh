#!/usr/bin/env bash
# test_scheduler_preemption.py translated onto a real scheduler with fake nodes (the cases about
# the service itself: a restart).
# usage: preemption_service.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: preemption_service.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import sys
from server_helper import Scheduler, FakeNode, check, finish
from upslib import beat, running, wait_for

bin, work = sys.argv[1], sys.argv[2]
T = "//sys/pool_trees/physical"
s = Scheduler(bin, work + "/data", {"fair_share_update_period": 100}).start()


with s:
    # upstream: test_scheduler_preemption::TestSchedulerPreemption::test_retain_preemptible_status_after_revive
    # Upstream's figures: 3 nodes of 1 cpu / 2 slots, jobs of 0.5 cpu; two such jobs fit a node
    # with min_spare_job_resources_on_node 0.5 cpu (as test_conditional_preemption sets it;
    # the default is 1 cpu). research (user_slots limit 5) runs 5 of its operation's 6
    # jobs; with the limit removed the 6th starts last: the only preemptible job (usage above the
    # fair share left to production). After a restart the same job is still the one preempted
    # for production's operation.
    for k, v in {"preemption_satisfaction_threshold": 0.99, "fair_share_starvation_tolerance": 0.8,
                 "fair_share_starvation_timeout": 1000, "max_unpreemptible_running_job_count": 0,
                 "preemptive_scheduling_backoff": 0,
                 "min_spare_job_resources_on_node": {"cpu": 0.5, "user_slots": 1}}.items():
        s.set(T + "/@config/" + k, v)
    s.ok("create", {"type": "scheduler_pool", "path": T + "/research",
                    "attributes": {"resource_limits": {"user_slots": 5}}})
    s.ok("create", {"type": "scheduler_pool", "path": T + "/production",
                    "attributes": {"strong_guarantee_resources": {"cpu": 0.5}}})
    nodes = [FakeNode(s, "n%d" % i, cpu=1, memory=16 << 30, slots=2) for i in range(3)]
    beat(nodes, 0.3)
    task = lambda n: {"main": {"command": "sleep 1000", "job_count": n, "cpu_limit": 0.5, "memory_limit": 100 << 20}}
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": {"pool": "research", "tasks": task(6)}})["operation_id"]
    wait_for(nodes, "research runs 5 jobs", lambda: len(running(nodes, op)) == 5)
    first5 = set(running(nodes, op))
    beat(nodes, 0.5)
    s.set(T + "/research/@resource_limits", {})
    wait_for(nodes, "research runs 6 jobs", lambda: len(running(nodes, op)) == 6)
    newest = (set(running(nodes, op)) - first5).pop()
    s.stop()
    s.start()
    beat(nodes, 1.0)
    wait_for(nodes, "6 jobs (3 cpu) after the restart", lambda: len(running(nodes, op)) == 6)
    urgent = s.ok("start_op", {"operation_type": "vanilla", "spec": {"pool": "production", "tasks": task(1)}})["operation_id"]
    wait_for(nodes, "research down to 5 jobs", lambda: len(running(nodes, op)) == 5)
    check(newest not in running(nodes, op), "the preempted job is the one started last (%s)" % newest)
    wait_for(nodes, "production's job runs", lambda: len(running(nodes, urgent)) == 1)
finish()
EOF
