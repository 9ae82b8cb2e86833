#!/usr/bin/env bash
# The job-level cases of yt/yt/tests/integration/scheduler/test_scheduler_resource_limits.py on
# a real cluster on 127.0.0.1 (poolsched scheduler + poolsched node running real jobs, the
# helpers of tests/scripts/node_e2e.py), with upstream's commands, limits and expected values.
# Upstream's map operations become vanilla operations (poolsched runs vanilla operations only);
# what the cases check is the job's memory limit, sandbox and statistics, which do not depend
# on the operation type.
# Usage: resource_limits_service.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: resource_limits_service.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 150 "$@" <<'PY'
import os, shutil, sys, tempfile, time
BIN = sys.argv[1]
sys.argv = [sys.argv[0], BIN, "none"]
import node_e2e
from checks import require
from node_e2e import run_on_cluster, task


def run_case(case, nodes_args=(), config=None):
    run_on_cluster(case, config, lambda c: c.node("a", resources="cpu=2,memory=4G,user_slots=4",
                                                  extra=nodes_args))


def test_map(c):
    # upstream: test_scheduler_resource_limits::TestSchedulerMemoryLimits::test_map
    # python allocating 800 MB under a 512 MiB memory_limit, max_failed_job_count 2: the
    # operation fails and every job failed with "Memory limit exceeded". (Upstream also reads
    # the process list from the error's attributes; poolsched's job error is the message.)
    op = c.op({"max_failed_job_count": 2, "tasks": {"mapper": task(
        "python3 -c 'import time; a=[1]*100000000; time.sleep(10)'", 2, memory_limit=512 << 20)}})
    c.wait_op(op, 60, states=("failed",))
    jobs = c.jobs(op, "failed")
    require(len(jobs) == 2 and all("Memory limit exceeded" in j["error"] for j in jobs),
          "every job failed with Memory limit exceeded", jobs)


def test_dirty_sandbox(c):
    # upstream: test_scheduler_resource_limits::TestSchedulerMemoryLimits::test_dirty_sandbox
    # A job leaves a directory it made unreadable (chmod 700 on its own files is fine; the
    # sandbox cleanup must not fail the job); max_failed_job_count 1: it completes.
    op = c.op({"max_failed_job_count": 1, "tasks": {"mapper": task(
        "mkdir ./tmpxxx; echo 1 > ./tmpxxx/f1; chmod 700 ./tmpxxx; chmod 000 ./tmpxxx/f1", 1)}})
    c.wait_op(op, 30)


def test_cumulative_memory_statistics(c):
    # upstream: test_scheduler_resource_limits::TestCumulativeMemoryStatistics::test_cumulative_memory_statistics
    # 2 jobs allocating 10 MB then sleeping; each job's cumulative_memory_mb_sec x 2^20 is
    # below its cumulative_max_memory (the integral of its use below max x duration).
    # Deviation: upstream checks the same of job_proxy/*; a poolsched node runs the job without
    # a job proxy process, so there is no job proxy memory to integrate (docs/platform-jobs.md).
    op = c.op({"user_job_memory_digest_default_value": 0.4, "tasks": {"mapper": task(
        "python3 -c 'import time; a = bytearray(10 * 10 ** 6); a[::4096] = b\"x\" * len(a[::4096]); "
        "time.sleep(2)'", 2, memory_limit=400 * 10 ** 6)}})
    c.wait_op(op, 40)
    for j in c.jobs(op, "completed"):
        st = j["statistics"]
        mb_sec, cum_max = st.get("user_job/cumulative_memory_mb_sec"), st.get("user_job/cumulative_max_memory")
        require(mb_sec is not None and cum_max is not None and mb_sec > 0, "cumulative statistics", st)
        require(mb_sec * 2 ** 20 < cum_max, "cumulative_memory_mb_sec x 2^20 < cumulative_max_memory", st)
    print("cumulative_memory_mb_sec %s, cumulative_max_memory %s" % (mb_sec, cum_max))


def test_always_abort(c):
    # The node setting of upstream's TestMemoryReserveMultiplier / TestMemoryReserveFactor
    # (exec_node/job_proxy/always_abort_on_memory_reserve_overdraft, agent flag
    # --always-abort-on-memory-reserve-overdraft): a job using 100 MB above its 40 MB reserve
    # (digest default 0.1 of a 400 MB limit) is aborted for resource_overdraft although the
    # node has 4 GB, and its retry, reserving the upper bound, completes.
    op = c.op({"max_failed_job_count": 1, "user_job_memory_digest_default_value": 0.1,
               "tasks": {"mapper": task(
        "python3 -c 'import time; a = bytearray(100 * 10 ** 6); a[::4096] = b\"x\" * len(a[::4096]); "
        "time.sleep(2)'", 1, memory_limit=400 * 10 ** 6)}})
    c.wait_op(op, 40)
    ab = c.jobs(op, "aborted")
    require(len(ab) == 1 and ab[0].get("abort_reason") == "resource_overdraft", "one overdraft abort", ab)


def test_user_job_resource_overdraft_memory_multiplier(c):
    # upstream: test_scheduler_resource_limits::TestMemoryReserveMultiplier::test_user_job_resource_overdraft_memory_multiplier
    # The real service and node: controller_agent user_job_resource_overdraft_memory_multiplier
    # 1.5 and precision 0.05 in the scheduler's config, --always-abort-on-memory-reserve-overdraft
    # on the node; one job of 250 MB (python), limit 400 MB, digest default 0.4: the attempts
    # reserve 160e6, 240e6 and 400e6 bytes, the first two aborted for resource_overdraft.
    op = c.op({"user_job_memory_digest_default_value": 0.4, "tasks": {"mapper": task(
        "python3 -c 'import time; time.sleep(0.5); a = bytearray(250 * 10 ** 6); "
        "a[::4096] = b\"x\" * len(a[::4096]); time.sleep(1)'", 1, memory_limit=400 * 10 ** 6)}})
    c.wait_op(op, 60)
    jobs = sorted(c.jobs(op), key=lambda j: j["start_time"])
    reserves = [j["statistics"]["user_job/memory_reserve"] for j in jobs]
    require(reserves == [160 * 10 ** 6, 240 * 10 ** 6, 400 * 10 ** 6], "reserves", reserves)
    require([j["state"] for j in jobs] == ["aborted", "aborted", "completed"] and
          all(j.get("abort_reason") == "resource_overdraft" for j in jobs[:2]), "ends", jobs)
    print("memory reserves of the attempts: %s" % reserves)


def config_errors():
    # The scheduler's controller_agent section refuses a bad value or key naming it (exit 2).
    import subprocess
    tmp = tempfile.mkdtemp(prefix="psups-")
    try:
        for doc, words in [({"controller_agent": {"user_job_resource_overdraft_memory_multiplier": 11}},
                            ["controller_agent/user_job_resource_overdraft_memory_multiplier", "[1, 10]", "11"]),
                           ({"controller_agent": {"footprint_memroy": 1}},
                            ["controller_agent/footprint_memroy", "footprint_memory"])]:
            path = os.path.join(tmp, "config.json")
            with open(path, "w") as f:
                f.write(__import__("json").dumps(doc))
            p = subprocess.run([BIN, "scheduler", "--listen", "127.0.0.1:0", "--data-dir",
                                os.path.join(tmp, "data"), "--config", path],
                               capture_output=True, text=True, timeout=10)
            require(p.returncode == 2 and all(w in p.stderr for w in words), "config error", p.stderr)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok   controller_agent config errors")


config_errors()
run_case(test_map)
run_case(test_dirty_sandbox)
run_case(test_cumulative_memory_statistics)
run_case(test_always_abort, ("--always-abort-on-memory-reserve-overdraft",))
run_case(test_user_job_resource_overdraft_memory_multiplier, ("--always-abort-on-memory-reserve-overdraft",),
         {"controller_agent": {"user_job_memory_digest_precision": 0.05,
                               "user_job_resource_overdraft_memory_multiplier": 1.5}})
PY
