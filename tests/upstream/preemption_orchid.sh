#!/usr/bin/env bash
# test_scheduler_preemption.py translated, the cases whose checks read the scheduler's orchid
# (effective_fair_share_starvation_tolerance, preemptible_job_count,
# aggressively_preemptible_job_count): each case runs its own scheduler (fair share update every
# 100 ms) with fake nodes shaped as upstream's (tests/scripts/server_helper.py), sleeping vanilla
# operations, and upstream's expected values. Tree "physical" stands for upstream's "default".
# usage: preemption_orchid.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: preemption_orchid.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PYEOF'
import json, re, sys, time
from server_helper import check, finish
import upslib
from upslib import Env, near, case

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]
TREE = "//sys/pool_trees/physical/@"


@case
def recursive_preemption_settings():
    # upstream: test_scheduler_preemption::TestSchedulerPreemption::test_recursive_preemption_settings
    # upstream's setup (tree fair_share_starvation_tolerance 0.8 among others) and 3 nodes of 1 cpu, 2 slots
    with Env("recursive", nodes=3, cpu=1, slots=2, tree={
        "preemption_satisfaction_threshold": 0.99, "fair_share_starvation_tolerance": 0.8,
        "fair_share_starvation_timeout": 1000, "max_unpreemptible_running_job_count": 0,
        "preemptive_scheduling_backoff": 0, "job_graceful_interrupt_timeout": 10000}) as env:
        env.pool("p1", fair_share_starvation_tolerance=0.6)
        env.pool("p2", "p1")
        env.pool("p3", "p1", fair_share_starvation_tolerance=0.5)
        env.pool("p4", "p1", fair_share_starvation_tolerance=0.9)
        env.pool("p5", fair_share_starvation_tolerance=0.8)
        env.pool("p6", "p5")
        tol = lambda p: env.pool_attr(p, "effective_fair_share_starvation_tolerance")
        for p, v in (("p1", 0.6), ("p2", 0.6), ("p3", 0.5), ("p4", 0.9), ("p5", 0.8), ("p6", 0.8)):
            env.wait(lambda: tol(p) == v or tol(p), "%s tolerance %s" % (p, v))
        op1 = env.op(pool="p2")
        op2 = env.op(pool="p6")
        optol = lambda op: env.op_attr(op, "effective_fair_share_starvation_tolerance")
        env.wait(lambda: optol(op1) == 0.6 or optol(op1), "op1 tolerance 0.6")
        env.wait(lambda: optol(op2) == 0.8 or optol(op2), "op2 tolerance 0.8")


def threshold_env(name):
    """TestNonPreemptibleResourceUsageThreshold's setup: one node of 10 cpu and 10 slots."""
    env = Env(name, cpu=10, slots=10, tree={
        "aggressive_preemption_satisfaction_threshold": 0.4, "preemption_satisfaction_threshold": 0.9,
        "fair_share_starvation_tolerance": 1.0, "non_preemptible_resource_usage_threshold": {}})
    return env


def run_15(env, **spec):
    op = env.op(jobs=15, **spec)
    env.wait(lambda: env.op_attr(op, "resource_usage")["cpu"] == 10.0, "usage 10 cpu")
    return op


def expect_counts(env, op, preemptible, aggressive, what):
    def cond():
        got = (env.op_attr(op, "preemptible_job_count"), env.op_attr(op, "aggressively_preemptible_job_count"))
        return got == (preemptible, aggressive) or got
    env.wait(cond, "%s: preemptible %d, aggressively %d" % (what, preemptible, aggressive))


def tree_option(env, key, value):
    env.s.set(TREE + key, value)


@case
def non_preemptible_resource_usage_threshold():
    # upstream: test_scheduler_preemption::TestNonPreemptibleResourceUsageThreshold::test_non_preemptible_resource_usage_threshold
    with threshold_env("threshold") as env:
        op = run_15(env)
        expect_counts(env, op, 1, 5, "no threshold")
        for value, counts in (({"cpu": 1.0}, (1, 5)), ({"cpu": 1.0, "user_slots": 2}, (1, 5)),
                              ({"cpu": 5.0, "user_slots": 2}, (1, 5)),
                              ({"cpu": 5.0, "user_slots": 6}, (1, 4)), ({"user_slots": 7}, (1, 2)),
                              ({"cpu": 10.0}, (0, 0))):
            tree_option(env, "non_preemptible_resource_usage_threshold", value)
            expect_counts(env, op, counts[0], counts[1], "threshold %s" % value)


@case
def max_unpreemptible_running_job_count():
    # upstream: test_scheduler_preemption::TestNonPreemptibleResourceUsageThreshold::test_max_unpreemptible_running_job_count
    with threshold_env("max_unpreemptible") as env:
        op = run_15(env)
        expect_counts(env, op, 1, 5, "no threshold")
        for value, counts in ((0, (1, 5)), (4, (1, 5)), (7, (1, 2)), (10, (0, 0))):
            tree_option(env, "max_unpreemptible_running_job_count", value)
            expect_counts(env, op, counts[0], counts[1], "max_unpreemptible_running_job_count %d" % value)


@case
def config_postprocessor():
    # upstream: test_scheduler_preemption::TestNonPreemptibleResourceUsageThreshold::test_config_postprocessor
    with threshold_env("postprocessor") as env:
        path = upslib.ORCHID + "/config/non_preemptible_resource_usage_threshold"
        check(env.get(path) == {}, "threshold {} at first: %s" % env.get(path))
        env.s.ok("remove", {"path": TREE + "config/max_unpreemptible_running_job_count"})
        for key, value, expect in (
                ("max_unpreemptible_running_job_count", 0, {"user_slots": 0}),
                ("max_unpreemptible_running_job_count", 7, {"user_slots": 7}),
                ("non_preemptible_resource_usage_threshold", {"cpu": 1.0}, {"cpu": 1.0, "user_slots": 7}),
                ("non_preemptible_resource_usage_threshold", {"cpu": 1.0, "user_slots": 5},
                 {"cpu": 1.0, "user_slots": 5})):
            tree_option(env, key, value)
            env.wait(lambda: env.get(path) == expect or env.get(path), "%s %s: %s" % (key, value, expect))
        # upstream then sets the threshold to an entity and expects an error (its config has no
        # null for this key); poolsched's null resets any tree key to its default
        # (docs/api.md, "Where it differs"), so that last step is not translated


@case
def pool_config_overrides_tree_config():
    # upstream: test_scheduler_preemption::TestNonPreemptibleResourceUsageThreshold::test_pool_config_overrides_tree_config
    with threshold_env("pool_overrides") as env:
        env.pool("pool")
        op = run_15(env, pool="pool")
        expect_counts(env, op, 1, 5, "no threshold")
        tree_option(env, "non_preemptible_resource_usage_threshold", {"user_slots": 1})
        expect_counts(env, op, 1, 5, "tree threshold 1 slot")
        env.s.set("//sys/pool_trees/physical/pool/@non_preemptible_resource_usage_threshold", {"user_slots": 7})
        expect_counts(env, op, 1, 2, "pool threshold 7 slots")
        tree_option(env, "non_preemptible_resource_usage_threshold", {"user_slots": 10})
        expect_counts(env, op, 1, 2, "the pool's 7 slots over the tree's 10")


@case
def operation_max_unpreemptible_running_job_count():
    # upstream: test_scheduler_preemption::TestNonPreemptibleResourceUsageThreshold::test_operation_max_unpreemptible_running_job_count
    with threshold_env("op_max_unpreemptible") as env:
        op = run_15(env, max_unpreemptible_job_count=7)
        expect_counts(env, op, 1, 2, "operation's 7")
        tree_option(env, "non_preemptible_resource_usage_threshold", {"user_slots": 1})
        expect_counts(env, op, 1, 5, "tree threshold 1 slot")
        tree_option(env, "non_preemptible_resource_usage_threshold", {"user_slots": 10})
        expect_counts(env, op, 1, 2, "tree threshold 10 slots")


@case
def job_preemption_order():
    # upstream: test_scheduler_preemption::TestSchedulerPreemption::test_job_preemption_order
    # upstream's setup (3 nodes of 1 cpu, 2 slots; jobs of 0.5 cpu), min_spare 0.5 cpu. research
    # (no aggressive preemption, runs only on nodes tagged "research") gets each node's tag at
    # runtime (@user_tags/end) and its cpu limit raised half a cpu at a time, so its 6 jobs start
    # node by node: n0's first, n2's last. production (guarantee 3 cpu) then asks for 0.5 cpu:
    # only research's newest job is preemptible, so an operation confined to n0 stays at 0 and
    # one confined to n2 preempts the later of n2's two jobs, never the earlier one.
    with Env("preemption_order", nodes=3, cpu=1, slots=2, tree={
        "preemption_satisfaction_threshold": 0.99, "fair_share_starvation_tolerance": 0.8,
        "fair_share_starvation_timeout": 1000, "max_unpreemptible_running_job_count": 0,
        "preemptive_scheduling_backoff": 0,
        "min_spare_job_resources_on_node": {"cpu": 0.5, "user_slots": 1}}) as env:
        # upstream's node has its address among its tags; here each agent reports its id as a tag
        for n in env.nodes:
            n.tags = [n.id]
        env.beat()
        env.pool("production", strong_guarantee_resources={"cpu": 3.0})
        env.pool("research", allow_aggressive_preemption=False, scheduling_tag_filter="research",
                 resource_limits={"cpu": 0.0})
        usage = lambda op: (env.op_attr(op, "resource_usage") or {}).get("cpu")
        op1 = env.op(jobs=6, cpu=0.5, pool="research")
        for i, n in enumerate(env.nodes):
            env.s.set("//sys/cluster_nodes/%s/@user_tags/end" % n.id, "research")
            for lim in (i + 0.5, i + 1.0):
                env.s.set("//sys/pool_trees/physical/research/@resource_limits/cpu", lim)
                env.wait(lambda: usage(op1) == lim or usage(op1), "research usage %s" % lim)
                time.sleep(0.1)
        running = lambda op: [j for n in env.nodes for j, st in n.running.items()
                              if st.get("operation_id") == op and j not in n.interrupted]
        check(len(running(op1)) == 6, "research runs 6 jobs: %d" % len(running(op1)))
        op2 = env.op(cpu=0.5, pool="production", scheduling_tag_filter="n0")
        env.wait(lambda: env.op_attr(op1, "preemptible_job_count") == 1
                 or env.op_attr(op1, "preemptible_job_count"), "op1 preemptible_job_count 1")
        env.wait(lambda: usage(op2) == 0.0 or usage(op2), "op2 usage 0")
        end = time.time() + 1.5
        while time.time() < end:
            env.beat()
            time.sleep(0.1)
        check(usage(op2) == 0.0, "op2 still at 0 cpu on n0: %r" % usage(op2))
        n2 = env.nodes[2]
        earlier = [j for j, st in n2.running.items() if st.get("operation_id") == op1][0]
        env.op(cpu=0.5, pool="production", scheduling_tag_filter="n2")
        env.wait(lambda: len(running(op1)) == 5 or len(running(op1)), "op1 down to 5 jobs")
        check(earlier in running(op1), "n2's earlier job %s survives" % earlier)


@case
def pass_preemption_reason_to_node():
    # upstream: test_scheduler_preemption::TestSchedulerPreemption::test_pass_preemption_reason_to_node
    # upstream's setup (3 nodes of 1 cpu, 2 slots). research's one-cpu job is preempted for
    # prod's operation of 3 jobs (guarantee 3 cpu); get_job (the YTsaurus face) shows it aborted
    # with reason preemption and upstream's error: abort_reason and preemption_reason naming the
    # allocation started in its place and its operation.
    with Env("preemption_reason", nodes=3, cpu=1, slots=2, tree={
        "preemption_satisfaction_threshold": 0.99, "fair_share_starvation_tolerance": 0.8,
        "fair_share_starvation_timeout": 1000, "max_unpreemptible_running_job_count": 0,
        "preemptive_scheduling_backoff": 0}) as env:
        env.pool("research")
        env.pool("prod", strong_guarantee_resources={"cpu": 3})
        op1 = env.op(pool="research")
        jobs = lambda op: env.s.ok("list_jobs", {"operation_id": op})["jobs"]
        env.wait(lambda: len(jobs(op1)) == 1, "op1's job starts")
        job_id = jobs(op1)[0]["id"]
        op2 = env.op(jobs=3, pool="prod")
        env.wait(lambda: jobs(op1)[0]["state"] == "aborted" or jobs(op1)[0]["state"],
                 "op1's job aborted")
        st, out = env.s.raw("GET", "/api/v4/get_job?operation_id=%s&job_id=%s" % (op1, job_id),
                            token=env.s.admin)
        check(st == 200, "get_job: %d %s" % (st, out))
        job = json.loads(out)
        check(job["state"] == "aborted", "state %s" % job["state"])
        check(job["abort_reason"] == "preemption", "abort_reason %s" % job.get("abort_reason"))
        err = job["error"] if isinstance(job.get("error"), dict) else {}
        attrs = err.get("attributes", {})
        check(attrs.get("abort_reason") == "preemption", "error abort_reason: %s" % err)
        why = attrs.get("preemption_reason", "")
        check(why.startswith("Preempted to start allocation") and
              ("of operation %s" % op2) in why, "preemption_reason: %r" % why)
        # upstream's text names the allocation started in the victim's place
        m = re.match(r'Preempted to start allocation (\S+) of operation %s; this allocation '
                     r'had status "preemptible"$' % re.escape(op2), why)
        check(m is not None, "the reason names the new allocation: %r" % why)
        check(m is not None and m.group(1) in [j["id"] for j in jobs(op2)],
              "the named allocation is one of op2's jobs: %r" % why)
        check(err.get("message") == "Job preempted", "error message: %s" % err)
        # poolsched: the reason is stored with the job and reads back after a restart
        env.s.stop()
        env.s.start()
        again = [j for j in jobs(op1) if j["id"] == job_id]
        check(bool(again) and again[0].get("preemption_reason") == why,
              "preemption_reason after a restart: %r" % again)


@case
def preemption_priority_scope():
    # upstream: test_scheduler_preemption::TestPreemptionPriorityScope::test_preemption_priority_scope
    # One node of 10 cpu / 10 slots. first guarantees 4.9 cpu, second 5.1: normal_op (first)
    # runs 5 jobs; starving_op (second) filters on a tag no node has and starves, and so does
    # second; greedy_op (second, 3 jobs of 2 cpu) gets fair share 0.41 and 2 jobs. With
    # operation_only, only greedy_op's own status counts (non_starving), so it stays at 4 cpu;
    # with operation_and_ancestors, second's starvation lets it preempt normal_op: 6 cpu.
    # Upstream also reads the node's last_preemptive_heartbeat_statistics
    # (operation_count_by_preemption_priority), which poolsched's orchid does not have.
    with Env("priority_scope", cpu=10, slots=10, tree={
        "preemption_satisfaction_threshold": 0.8, "fair_share_starvation_timeout": 1000,
        "fair_share_starvation_tolerance": 0.95, "max_unpreemptible_running_job_count": 0,
        "preemptive_scheduling_backoff": 0, "scheduling_preemption_priority_scope": "operation_only"}) as env:
        env.pool("first", strong_guarantee_resources={"cpu": 4.9, "user_slots": 5})
        env.pool("second", strong_guarantee_resources={"cpu": 5.1, "user_slots": 5})
        usage = lambda op: (env.op_attr(op, "resource_usage") or {}).get("cpu")
        normal = env.op(jobs=5, pool="first")
        env.wait(lambda: usage(normal) == 5.0 or usage(normal), "normal_op at 5 cpu")
        starving = env.op(pool="second", scheduling_tag_filter="nonexistent_tag")
        status = lambda op: env.op_attr(op, "starvation_status")
        env.wait(lambda: status(starving) == "starving" or status(starving), "starving_op starving")
        second = lambda: env.pool_attr("second", "starvation_status")
        env.wait(lambda: second() == "starving" or second(), "second starving")
        greedy = env.op(jobs=3, cpu=2, pool="second")
        fs = lambda: (env.op_attr(greedy, "detailed_fair_share") or {}).get("total", {}).get("cpu")
        env.wait(lambda: near(fs(), 0.41) or fs(), "greedy_op fair share 0.41")
        env.wait(lambda: usage(greedy) == 4.0 or usage(greedy), "greedy_op at 4 cpu")
        end = time.time() + 3.0   # upstream's sleep: nothing changes in 3 s
        while time.time() < end:
            env.beat()
            time.sleep(0.1)
        got = (usage(greedy), status(greedy), second())
        check(got == (4.0, "non_starving", "starving"),
              "after 3 s: greedy_op usage, status, second's status %r; upstream 4.0, non_starving, starving" % (got,))
        tree_option(env, "scheduling_preemption_priority_scope", "operation_and_ancestors")
        env.wait(lambda: usage(greedy) == 6.0 or usage(greedy), "greedy_op at 6 cpu")


upslib.run(upslib.CASES, sys.argv[3:])
finish()
PYEOF
