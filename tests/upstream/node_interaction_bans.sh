#!/usr/bin/env bash
# TestIgnoreJobFailuresAtBannedNodes and TestOperationNodeBan of
# yt/yt/tests/integration/scheduler/test_scheduler_node_interaction.py on a real cluster on
# 127.0.0.1 (poolsched scheduler + a poolsched node running real jobs; the helpers of
# tests/scripts/node_e2e.py): per-operation node bans (ban_nodes_with_failed_jobs,
# ignore_job_failures_at_banned_nodes, fail_on_all_nodes_banned). Upstream's map operations of
# 10 jobs become vanilla operations of 10 jobs, its map of 4 rows one of 4 jobs (the bans are
# the controller's, whatever the operation type); its breakpoints become jobs that wait for a
# marker file.
# Usage: node_interaction_bans.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: node_interaction_bans.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 240 "$@" <<'PY'
import os, shutil, sys, tempfile, time
BIN = sys.argv[1]
sys.argv = [sys.argv[0], BIN, "none"]
from checks import require as check
from node_e2e import run_on_cluster, task

# upstream's banned_exec_nodes_check_period 100 ms; the sanity checks from the start
CONFIG = {"available_exec_nodes_check_period": 100, "safe_scheduler_online_time": 0}


def run_case(case):
    run_on_cluster(case, CONFIG,
                   lambda c: c.node("a", resources="cpu=10,memory=10G,user_slots=10"))


def failing_op(c, fail_on_all_nodes_banned):
    """Upstream's map: 10 jobs "BREAKPOINT ; exit 1", max_failed_job_count 2, the node bans on;
    all 10 run, then are released at once. Returns the operation."""
    done = os.path.join(c.tmp, "release")
    op = c.op({"max_failed_job_count": 2, "ban_nodes_with_failed_jobs": True,
               "ignore_job_failures_at_banned_nodes": True,
               "fail_on_all_nodes_banned": fail_on_all_nodes_banned,
               "tasks": {"mapper": task("while [ ! -e %s ]; do sleep 0.05; done; exit 1" % done,
                                        10, cpu_limit=1, memory_limit=100 * 1024 * 1024)}})
    c.wait(lambda: len(c.jobs(op, "running")) == 10, 60, "10 jobs running")
    open(done, "w").close()
    return op


def test_ignore_job_failures_at_banned_nodes(c):
    # upstream: test_scheduler_node_interaction::TestIgnoreJobFailuresAtBannedNodes::test_ignore_job_failures_at_banned_nodes
    # The first failure bans the node for the operation; the other 9 failures happen at a
    # banned node and count as aborted with reason node_banned (upstream's
    # progress/jobs/aborted/scheduled/node_banned 9): failed 1. Also here: the operation, with
    # fail_on_all_nodes_banned off, stays running and starts no job on the banned node.
    op = failing_op(c, False)
    c.wait(lambda: c.get_op(op)["progress"]["failed"] == 1 and
           len([j for j in c.jobs(op, "aborted") if j.get("abort_reason") == "node_banned"]) == 9,
           40, "failed 1 and 9 aborted with node_banned")
    # five more heartbeats of the node (each could have started a job there), then look
    node = c.nodes["a"][2]
    seen = set()
    c.wait(lambda: seen.add(c.sched.get("//sys/cluster_nodes/%s/@last_heartbeat_time" % node))
           or len(seen) > 5, 40, "five more heartbeats")
    o = c.get_op(op)
    check(o["state"] == "running" and not c.jobs(op, "running") and o["progress"]["failed"] == 1,
          "the operation waits, running nothing", o)


def test_fail_on_all_nodes_banned(c):
    # upstream: test_scheduler_node_interaction::TestIgnoreJobFailuresAtBannedNodes::test_fail_on_all_nodes_banned
    # The same with fail_on_all_nodes_banned: the operation fails (upstream: op.track() raises),
    # here with upstream's message.
    op = failing_op(c, True)
    o = c.wait_op(op, 40, states=("failed",))
    check("All online nodes that match operation scheduling tag filter \"\" were banned in "
          "trees [\"physical\"] (\"ban_nodes_with_failed_jobs\" spec option is set" in
          str(o.get("error")), "failed: all nodes banned", o.get("error"))


def test_ban_nodes_with_failed_jobs(c):
    # upstream: test_scheduler_node_interaction::TestOperationNodeBan::test_ban_nodes_with_failed_jobs
    # Five nodes; jobs "exit 1" one at a time (resource_limits cpu 1), max_failed_job_count 3,
    # ban_nodes_with_failed_jobs: each failure bans its node, so the retry goes elsewhere; the
    # operation fails (upstream: op.track() raises), every job of it failed, on 3 nodes.
    op = c.op({"resource_limits": {"cpu": 1}, "max_failed_job_count": 3,
               "ban_nodes_with_failed_jobs": True,
               "tasks": {"mapper": task("exit 1", 4, cpu_limit=1)}})
    c.wait_op(op, 60, states=("failed",))
    jobs = c.jobs(op)
    check(jobs and all(j["state"] == "failed" for j in jobs), "all jobs failed", jobs)
    check(len({j["node_id"] for j in jobs}) == 3, "jobs on 3 nodes", jobs)


run_case(test_ignore_job_failures_at_banned_nodes)
run_case(test_fail_on_all_nodes_banned)
run_on_cluster(test_ban_nodes_with_failed_jobs, CONFIG,
               lambda c: [c.node(n, resources="cpu=2,memory=2G,user_slots=4") for n in "abcde"])
PY
