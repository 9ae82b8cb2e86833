#!/usr/bin/env bash
# test_scheduler_strategy.py translated, the cases about operation limits, ephemeral pools,
# pool reconfiguration and integral volumes, on real schedulers (tests/upstream/upslib.py):
# operation states and pools read back from get_operation and the orchid.
# usage: strategy_pools.sh BINARY DATA_DIR SOURCE_DIR [CASE...]
source "${3:?usage: strategy_pools.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PYEOF'
import sys, time
from server_helper import check, finish
import upslib
from upslib import Env, ORCHID, near, state, try_op, case

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]
T = "//sys/pool_trees/physical"


def running_slots(env, op):
    return env.op_attr(op, "resource_usage", {}).get("user_slots")


@case
def resource_limits_runtime():
    # upstream: test_scheduler_strategy::TestResourceUsage::test_resource_limits_runtime
    with Env("limits_runtime", nodes=3) as env:
        op = env.op(jobs=3, resource_limits={"user_slots": 1})
        upslib.check_running_jobs(env, op, 1, "user_slots 1")
        env.s.ok("update_op_parameters", {"operation_id": op, "parameters": {
            "scheduling_options_per_pool_tree": {"physical": {"resource_limits": {"user_slots": 2}}}}})
        upslib.check_running_jobs(env, op, 2, "user_slots 2")


LIMITS_TREE = {"max_running_operation_count_per_pool": 1, "default_parent_pool": "default_pool"}


def limits_env(name):
    # upstream's setup_method: one running operation per pool, default_pool the default parent
    env = Env(name, nodes=3)
    env.pool("default_pool")
    for k, v in LIMITS_TREE.items():
        env.s.set(T + "/@" + k, v)
    return env


def run_three(env):
    """upstream's _run_operations: op1 and op3 run their jobs, op2 (op1's pool) stays pending
    for the second upstream sleeps; once the jobs end, op2 runs too and all three complete."""
    op1 = env.op(pool="test_pool_1")
    op2 = env.op(pool="test_pool_1")
    op3 = env.op(pool="test_pool_2")
    env.wait(lambda: running_slots(env, op1) == 1 and running_slots(env, op3) == 1,
             "op1's and op3's jobs run")
    end = time.time() + 1.0
    while time.time() < end:
        env.beat()
        time.sleep(0.1)
    got = [state(env, op) for op in (op1, op2, op3)]
    check(got == ["running", "pending", "running"], "op1, op2, op3: %s; upstream running, pending, running" % got)
    for n in env.nodes:
        n.finish_all()
    env.wait(lambda: state(env, op1) == "completed", "op1 completed")
    env.wait(lambda: running_slots(env, op2) == 1, "op2's job runs after op1")
    for n in env.nodes:
        n.finish_all()
    env.wait(lambda: [state(env, op) for op in (op1, op2, op3)] == ["completed"] * 3
             or [state(env, op) for op in (op1, op2, op3)], "all three completed")


@case
def operations_pool_limit():
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_operations_pool_limit
    with limits_env("pool_limit") as env:
        env.pool("test_pool_1")
        env.pool("test_pool_2")
        run_three(env)


@case
def operations_recursive_pool_limit():
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_operations_recursive_pool_limit
    with limits_env("recursive_limit") as env:
        env.pool("research", max_running_operation_count=2)
        env.pool("test_pool_1", "research")
        env.pool("test_pool_2", "research")
        run_three(env)


@case
def operation_count():
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_operation_count
    with limits_env("operation_count") as env:
        env.pool("research", max_running_operation_count=3)
        env.pool("subpool", "research", max_running_operation_count=3)
        env.pool("other_subpool", "subpool", max_running_operation_count=3)
        for _ in range(3):
            env.op(pool="other_subpool")
        env.wait(lambda: env.pool_attr("research", "operation_count") == 3, "operation_count 3")
        env.wait(lambda: env.pool_attr("research", "running_operation_count") == 3, "running 3")


@case
def abort_of_pending_operation():
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_abort_of_pending_operation
    with limits_env("abort_pending") as env:
        ops = [env.op() for _ in range(3)]
        env.wait(lambda: state(env, ops[0]) == "running", "op1 runs")
        env.wait(lambda: running_slots(env, ops[0]) == 1, "op1's job runs")
        check(state(env, ops[1]) == "pending" and state(env, ops[2]) == "pending", "op2, op3 pending")
        env.s.ok("abort_op", {"operation_id": ops[1]})
        for n in env.nodes:
            n.finish_all()
        env.wait(lambda: state(env, ops[0]) == "completed", "op1 completed")
        env.wait(lambda: running_slots(env, ops[2]) == 1, "op3's job runs")
        for n in env.nodes:
            n.finish_all()
        env.wait(lambda: state(env, ops[2]) == "completed", "op3 completed")
        check(state(env, ops[1]) == "aborted", "op2 aborted")


@case
def total_operations_limit():
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_total_operations_limit
    with limits_env("total_limit") as env:
        env.pool("research", max_operation_count=3)
        env.pool("research_subpool", "research")
        env.pool("production")
        for _ in range(3):
            env.op(pool="research")
        for pool in ("research", "research", "research_subpool", "research_subpool"):
            st, out = try_op(env, pool=pool)
            check(st != 200, "over max_operation_count in %s: %d %s" % (pool, st, out))
        env.s.stop()
        env.s.start()
        for pool in ("research", "research"):
            st, out = try_op(env, pool=pool)
            check(st != 200, "after a restart, over max_operation_count in %s: %d" % (pool, st))
        for _ in range(2):
            env.op(pool="production")
        a = env.pool_attr
        env.wait(lambda: a("production", "running_operation_count") == 1, "production running 1")
        check(a("production", "operation_count") == 2, "production count 2")
        check(a("research", "running_operation_count") == 1, "research running 1")
        check(a("research", "operation_count") == 3, "research count 3")
        check(a("<Root>", "running_operation_count") == 2, "root running 2")
        check(a("<Root>", "operation_count") == 5, "root count 5")


@case
def forbid_immediate_operations():
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_forbid_immediate_operations
    with limits_env("forbid_immediate") as env:
        env.pool("p1", forbid_immediate_operations=True)
        env.pool("p2", "p1")
        env.s.set(T + "/default_pool/@forbid_immediate_operations", True)
        u = env.s.token("u")
        st, out = try_op(env, u, pool="p1")
        check(st != 200, "immediate operation in p1 refused: %d %s" % (st, out))
        st, out = try_op(env, u, pool="p2")
        check(st == 200, "operation in p2: %d %s" % (st, out))
        st, out = try_op(env, u, pool="p3")
        check(st == 200, "operation in ephemeral p3 under default_pool: %d %s" % (st, out))


@case
def ephemeral_flag():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_ephemeral_flag
    with Env("ephemeral_flag", nodes=3) as env:
        env.pool("real_pool")
        env.op(pool="ephemeral_pool")
        env.wait(lambda: env.pool_attr("ephemeral_pool", "is_ephemeral") is True, "ephemeral")
        check(env.pool_attr("real_pool", "is_ephemeral") is False, "real_pool not ephemeral")
        check(env.pool_attr("<Root>", "is_ephemeral") is False, "root not ephemeral")


def hub_env(name, **attrs):
    env = Env(name, nodes=3)
    env.pool("custom_pool", create_ephemeral_subpools=True, **attrs)
    env.root = env.s.token("root")
    return env


@case
def ephemeral_pool_in_custom_pool_simple():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_ephemeral_pool_in_custom_pool_simple
    with hub_env("hub_simple") as env:
        op = env.op(token=env.root, pool="custom_pool")
        env.wait(lambda: running_slots(env, op) == 1, "job runs")
        p = env.get(ORCHID + "/fair_share_info/pools/custom_pool$root")
        check(p and p["parent"] == "custom_pool" and p["mode"] == "fair_share" and p["is_ephemeral"],
              "custom_pool$root: %s" % (p and {k: p[k] for k in ("parent", "mode", "is_ephemeral")}))


@case
def custom_ephemeral_pool_scheduling_mode():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_custom_ephemeral_pool_scheduling_mode
    with hub_env("hub_mode", ephemeral_subpool_config={"mode": "fifo"}) as env:
        env.op(token=env.root, pool="custom_pool")
        env.wait(lambda: env.pool_attr("custom_pool$root", "mode") == "fifo", "fifo subpool")
        check(env.pool_attr("custom_pool$root", "parent") == "custom_pool", "parent")


@case
def custom_ephemeral_pool_max_operation_count():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_custom_ephemeral_pool_max_operation_count
    with hub_env("hub_max_ops", ephemeral_subpool_config={"max_operation_count": 1}) as env:
        op = env.op(token=env.root, pool="custom_pool")
        env.wait(lambda: running_slots(env, op) == 1, "job runs")
        st, out = try_op(env, env.root, pool="custom_pool")
        check(st != 200, "second operation refused: %d %s" % (st, out))


@case
def custom_ephemeral_pool_resource_limits():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_custom_ephemeral_pool_resource_limits
    with hub_env("hub_limits", ephemeral_subpool_config={"resource_limits": {"cpu": 1}}) as env:
        env.op(token=env.root, pool="custom_pool")
        env.wait(lambda: near(env.pool_attr("custom_pool$root", "resource_limits")["cpu"], 1.0), "limit 1")


@case
def custom_ephemeral_pool_persists_after_pool_update():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_custom_ephemeral_pool_persists_after_pool_update
    with hub_env("hub_persists") as env:
        env.op(token=env.root, pool="custom_pool")
        env.wait(lambda: env.pool_attr("custom_pool$root", "parent") == "custom_pool", "parent")
        env.pool("trigger_pool_update")
        time.sleep(0.5)
        check(env.pool_attr("custom_pool$root", "parent") == "custom_pool", "parent kept")


@case
def fifo_pool_cannot_create_ephemeral_subpools():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_fifo_pool_cannot_create_ephemeral_subpools
    with Env("fifo_hub", nodes=1) as env:
        env.pool("fifo_pool", mode="fifo")
        st, _ = env.s.call("set", {"path": T + "/fifo_pool/@create_ephemeral_subpools", "value": True})
        check(st == 400, "fifo pool as a hub refused: %d" % st)
        env.pool("ephemeral_hub", create_ephemeral_subpools=True)
        st, _ = env.s.call("set", {"path": T + "/ephemeral_hub/@mode", "value": "fifo"})
        check(st == 400, "hub made fifo refused: %d" % st)


@case
def move_to_ephemeral_hub():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_move_to_ephemeral_hub_via_common_option
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_move_to_ephemeral_hub_via_per_pool_tree_option
    for via in ("common", "per_tree"):
        with Env("move_hub_" + via, nodes=1) as env:
            env.pool("ephemeral_hub", create_ephemeral_subpools=True)
            root = env.s.token("root")
            op = env.op(token=root, pool="inexistent")
            env.wait(lambda: env.pool_attr("inexistent", "parent") is not None, "ephemeral pool")
            params = ({"pool": "ephemeral_hub"} if via == "common" else
                      {"scheduling_options_per_pool_tree": {"physical": {"pool": "ephemeral_hub"}}})
            env.s.ok("update_op_parameters", {"operation_id": op, "parameters": params}, root)
            env.wait(lambda: env.op_attr(op, "pool") == "ephemeral_hub$root", "moved (%s)" % via)


@case
def move_last_operation_from_ephemeral_pool():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_move_last_operation_from_ephemeral_pool
    with Env("move_last", nodes=1) as env:
        env.pool("real")
        op = env.op(pool="ephemeral")
        env.wait(lambda: env.pool_attr("ephemeral", "parent") is not None, "ephemeral pool")
        env.s.ok("update_op_parameters", {"operation_id": op, "parameters": {"pool": "real"}})
        env.wait(lambda: env.pool_attr("ephemeral", "parent") is None, "ephemeral pool gone")


@case
def user_runs_operation_in_ephemeral_pool_under_root():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_user_runs_operation_in_ephemeral_pool_under_root
    with Env("user_pool", nodes=1) as env:
        u = env.s.token("u")
        op = env.op(token=u)
        env.wait(lambda: env.op_attr(op, "pool") == "u", "operation in pool u")
        check(env.pool_attr("u", "parent") == "<Root>", "u under <Root>")
        op2 = env.op(token=u)
        env.wait(lambda: env.op_attr(op2, "pool") == "u", "second operation in pool u")


@case
def default_ephemeral_hub_applies_ephemeral_subpool_config():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_default_ephemeral_hub_applies_ephemeral_subpool_config
    with Env("default_hub_config", nodes=1) as env:
        env.pool("research", ephemeral_subpool_config={"mode": "fifo", "max_operation_count": 1,
                                                       "resource_limits": {"cpu": 1}})
        env.s.set(T + "/@default_parent_pool", "research")
        op = env.op(pool="ephemeral")
        env.wait(lambda: running_slots(env, op) == 1, "job runs")
        p = env.get(ORCHID + "/fair_share_info/pools/ephemeral")
        check(p["parent"] == "research" and p["mode"] == "fifo", "parent and mode: %s %s" % (p["parent"], p["mode"]))
        check(near(p["resource_limits"]["cpu"], 1.0), "limit")
        check(p["max_operation_count"] == 1, "max_operation_count")


@case
def ephemeral_subpool_config_applies_to_existent():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_ephemeral_subpool_config_applies_to_existent_ephemeral_subpools
    with Env("config_applies", nodes=1) as env:
        env.pool("research", ephemeral_subpool_config={"max_operation_count": 3})
        env.pool("explicit", "research")
        env.s.set(T + "/@default_parent_pool", "research")
        op = env.op(pool="ephemeral")
        env.wait(lambda: env.op_attr(op, "pool") == "ephemeral", "in ephemeral")
        env.s.set(T + "/research/@ephemeral_subpool_config", {"max_operation_count": 5})
        env.wait(lambda: env.pool_attr("ephemeral", "max_operation_count") == 5, "applied")
        check(env.pool_attr("explicit", "max_operation_count") != 5, "explicit pool untouched")


@case
def ephemeral_pool_name_validation():
    # upstream: test_scheduler_strategy::TestSchedulerPoolsCommon::test_ephemeral_pool_name_validation
    with Env("name_validation", nodes=1) as env:
        st, out = try_op(env, pool="invalid$name")
        check(st != 200, "pool invalid$name refused: %d" % st)
        op = env.op(pool="valid_name")
        st, out = env.s.call("update_op_parameters", {"operation_id": op, "parameters": {"pool": "invalid|name"}})
        check(st != 200, "pool invalid|name refused: %d" % st)


@case
def add_nested_pool():
    # upstream: test_scheduler_strategy::TestSchedulerPoolsReconfiguration::test_add_nested_pool
    with Env("nested", nodes=1) as env:
        env.pool("test_parent")
        env.pool("test_pool", "test_parent")
        env.wait(lambda: env.pool_attr("test_pool", "parent") == "test_parent", "nested")
        check(env.pool_attr("test_parent", "parent") == "<Root>", "parent under <Root>")


def pool_parent(env, pool):
    return env.pool_attr(pool, "parent")


def move(env, a, b):
    env.s.ok("move", {"source_path": "//sys/pools/" + a, "destination_path": "//sys/pools/" + b})


@case
def move_to_existing_pool():
    # upstream: test_scheduler_strategy::TestSchedulerPoolsReconfiguration::test_move_to_existing_pool
    with Env("move_existing", nodes=1) as env:
        env.pool("test_parent")
        env.pool("test_pool")
        env.wait(lambda: pool_parent(env, "test_pool") == "<Root>", "test_pool at the top")
        move(env, "test_pool", "test_parent/test_pool")
        env.wait(lambda: pool_parent(env, "test_pool") == "test_parent", "moved under test_parent")


@case
def move_to_new_pool():
    # upstream: test_scheduler_strategy::TestSchedulerPoolsReconfiguration::test_move_to_new_pool
    with Env("move_new", nodes=1) as env:
        env.pool("test_pool")
        env.pool("new_pool")
        move(env, "test_pool", "new_pool/test_pool")
        env.wait(lambda: env.pool_attr("new_pool", "parent") == "<Root>", "new_pool in the orchid")
        env.wait(lambda: pool_parent(env, "test_pool") == "new_pool", "moved under new_pool")


@case
def move_to_root_pool():
    # upstream: test_scheduler_strategy::TestSchedulerPoolsReconfiguration::test_move_to_root_pool
    with Env("move_root", nodes=1) as env:
        env.pool("test_parent")
        env.pool("test_pool", "test_parent")
        env.wait(lambda: pool_parent(env, "test_pool") == "test_parent", "nested")
        move(env, "test_parent/test_pool", "test_pool")
        env.wait(lambda: pool_parent(env, "test_pool") == "<Root>", "moved to the top")


@case
def move_keeps_usage_in_source_ancestor():
    # upstream: test_scheduler_strategy::TestResourceUsage::test_move_does_not_lose_resource_usage_in_source_ancestor
    with Env("move_usage", nodes=1) as env:
        env.pool("pool_with_limits", resource_limits={"cpu": 1})
        env.pool("pool_without_limits", "pool_with_limits")
        op1 = env.op(pool="pool_without_limits")
        env.wait(lambda: running_slots(env, op1) == 1, "op1 runs")
        env.s.ok("move", {"source_path": T + "/pool_with_limits/pool_without_limits",
                          "destination_path": T + "/pool_without_limits"})
        # the running job's usage left pool_with_limits with its pool: op2 fits the limit
        op2 = env.op(pool="pool_with_limits")
        env.wait(lambda: running_slots(env, op2) == 1, "op2 runs")
        check(running_slots(env, op1) == 1, "op1 still runs")


@case
def pool_changes():
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_pool_changes
    # (upstream's map operations are sleeping vanilla ones here)
    with Env("pool_changes", nodes=3, tree=LIMITS_TREE) as env:
        env.pool("research")
        env.pool("subpool", "research")
        env.pool("production")
        for _ in range(3):
            env.op(pool="subpool")
        count = lambda p, k: env.pool_attr(p, k)
        env.wait(lambda: count("subpool", "running_operation_count") == 1, "subpool runs one")
        env.wait(lambda: count("subpool", "operation_count") == 3, "subpool has three")
        env.wait(lambda: count("research", "running_operation_count") == 1, "research runs one")
        env.wait(lambda: count("research", "operation_count") == 3, "research has three")
        check(count("production", "running_operation_count") == 0, "production runs none")
        check(count("production", "operation_count") == 0, "production has none")
        move(env, "research/subpool", "production/subpool")
        time.sleep(0.5)
        check(count("subpool", "running_operation_count") == 1, "subpool still runs one")
        check(count("subpool", "operation_count") == 3, "subpool still has three")
        env.wait(lambda: count("research", "running_operation_count") == 0, "research runs none")
        env.wait(lambda: count("research", "operation_count") == 0, "research has none")
        env.wait(lambda: count("production", "running_operation_count") == 1, "production runs one")
        env.wait(lambda: count("production", "operation_count") == 3, "production has three")


@case
def remove_big_hierarchy():
    # upstream: test_scheduler_strategy::TestSchedulerPoolsReconfiguration::test_remove_big_hierarchy
    # poolsched deviates on purpose: a pool with children is not removed with them (409, see
    # pools_cypress.sh remove_subtree); the chain goes bottom-up, and only <Root> remains.
    with Env("big_hierarchy", nodes=1) as env:
        parent = None
        for i in range(10):
            env.pool("pool%d" % i, parent)
            parent = "pool%d" % i
        st, _ = env.s.call("remove", {"path": T + "/pool0"})
        check(st == 409, "removing a pool with children: %d" % st)
        path = T + "".join("/pool%d" % i for i in range(10))
        for i in range(9, -1, -1):
            env.s.ok("remove", {"path": path})
            path = path[:path.rindex("/")]
        env.wait(lambda: list(env.get(ORCHID + "/fair_share_info/pools")) == ["<Root>"], "only <Root>")


@case
def subtle_reconfiguration_crash():
    # upstream: test_scheduler_strategy::TestSchedulerPoolsReconfiguration::test_subtle_reconfiguration_crash
    with Env("subtle", nodes=1) as env:
        env.pool("parent", max_running_operation_count=1)
        env.pool("child", "parent", max_running_operation_count=2)
        running = env.op(pool="child")
        env.wait(lambda: running_slots(env, running) == 1, "first runs")
        waiting = env.op(pool="child")
        env.wait(lambda: state(env, waiting) == "pending", "second pending")
        env.s.set(T + "/parent/child/@max_running_operation_count", 0)
        for n in env.nodes:
            n.finish_all()
        env.wait(lambda: state(env, running) == "completed", "first completed")
        env.beat()
        check(env.s.proc.poll() is None, "scheduler alive")


@case
def accumulated_resource_ratio_volume_consumption():
    # upstream: test_scheduler_strategy::TestIntegralGuarantees::test_accumulated_resource_ratio_volume_consumption
    with Env("volume_consumption", tree={"integral_guarantees": {"smooth_period": 100}}) as env:
        env.pool("test_pool", integral_guarantees={"guarantee_type": "relaxed", "resource_flow": {"cpu": 5}})
        env.wait(lambda: env.pool_attr("test_pool", "accumulated_resource_ratio_volume") > 1, "volume > 1")
        env.op(jobs=10, pool="test_pool")
        # upstream's bound is 0.25 = 0.5 s (its period) x 0.5 (flow ratio); here 0.1 s x 0.5
        env.wait(lambda: env.pool_attr("test_pool", "accumulated_resource_ratio_volume") < 0.3, "volume < 0.3")


@case
def accumulated_resource_volume_survives_restart():
    # upstream: test_scheduler_strategy::TestIntegralGuarantees::test_accumulated_resource_ratio_volume_survives_restart
    with Env("volume_restart", tree={"integral_guarantees": {"smooth_period": 100}}) as env:
        env.pool("test_pool", integral_guarantees={"guarantee_type": "relaxed", "resource_flow": {"cpu": 10}})
        env.wait(lambda: env.pool_attr("test_pool", "accumulated_resource_volume")["cpu"] > 30, "volume > 30")
        env.s.stop()
        env.s.start()
        env.wait(lambda: env.pool_attr("<Root>", "resource_limits")["cpu"] > 0, "nodes back")
        v = env.pool_attr("test_pool", "accumulated_resource_volume")["cpu"]
        check(30 < v < 50, "volume after the restart: %s" % v)


@case
def pool_count():
    # upstream: test_scheduler_strategy::TestSchedulerPoolsCommon::test_pool_count
    # (upstream's sensor scheduler/pools/pool_count is poolsched's gauge poolsched_pool_count)
    with Env("pool_count", nodes=3) as env:
        import re

        def sensor():
            st, text = env.s.raw("GET", "/metrics")
            m = re.search(r'^poolsched_pool_count\{tree="physical"\} ([0-9.]+)$', text, re.M)
            return float(m.group(1)) if m else None

        def check_count(n):
            env.wait(lambda: env.get(ORCHID + "/fair_share_info/pool_count") == n, "orchid %d" % n)
            env.wait(lambda: sensor() == n, "sensor %d" % n)

        check_count(0)
        env.pool("first_pool")
        env.pool("second_pool")
        check_count(2)
        op = env.op(pool="first_pool")
        check_count(2)
        env.s.ok("abort_op", {"operation_id": op})
        op = env.op()   # an ephemeral pool
        check_count(3)
        env.s.ok("abort_op", {"operation_id": op})
        check_count(2)


@case
def ephemeral_to_explicit_pool_transformation():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_ephemeral_to_explicit_pool_transformation
    # poolsched lists only users that have ephemeral pools in user_to_ephemeral_pools (upstream
    # keeps the user with an empty list), so "no ephemeral pools of root" is read as either.
    with Env("eph_to_explicit", nodes=1) as env:
        env.pool("default_pool")
        env.s.set(T + "/@default_parent_pool", "default_pool")
        root = env.s.token("root")
        env.op(token=root, pool="test_pool")
        env.wait(lambda: env.pool_attr("test_pool", "parent") == "default_pool", "ephemeral test_pool")
        env.pool("test_pool")
        env.wait(lambda: env.pool_attr("test_pool", "parent") == "<Root>", "explicit under <Root>")
        env.wait(lambda: env.get(ORCHID + "/user_to_ephemeral_pools").get("root", []) == [],
                 "no ephemeral pools of root")
        check(env.pool_attr("<Root>", "is_ephemeral") is False, "root not ephemeral")



@case
def reconfigured_pools_operations_limit():
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_reconfigured_pools_operations_limit
    with limits_env("reconfigured_limit") as env:
        env.pool("test_pool_1")
        env.pool("test_pool_2")
        op1 = env.op(pool="test_pool_1")
        env.wait(lambda: running_slots(env, op1) == 1, "op1's job runs")
        env.s.ok("remove", {"path": T + "/test_pool_1"})
        env.pool("test_pool_1", parent="test_pool_2")
        env.wait(lambda: env.pool_attr("test_pool_1", "parent") == "test_pool_2",
                 "test_pool_1 under test_pool_2")
        op2 = env.op(pool="test_pool_2")
        check(state(env, op1) == "running", "op1 running: %s" % state(env, op1))
        env.wait(lambda: state(env, op2) == "pending", "op2 pending")
        for n in env.nodes:
            n.finish_all()
        env.wait(lambda: state(env, op1) == "completed", "op1 completed")
        env.wait(lambda: running_slots(env, op2) == 1, "op2's job runs after op1")
        for n in env.nodes:
            n.finish_all()
        env.wait(lambda: state(env, op2) == "completed", "op2 completed")


def pool_exists(env, pool):
    return env.pool_attr(pool, "parent") is not None


@case
def ephemeral_pool_parent_is_removed_after_operation_complete():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_ephemeral_pool_parent_is_removed_after_operation_complete
    with Env("eph_parent_removed", nodes=1) as env:
        env.pool("custom_pool", create_ephemeral_subpools=True)
        op = env.op(token=env.s.token("root"), pool="custom_pool")
        env.wait(lambda: running_slots(env, op) == 1, "the job runs")
        env.s.ok("remove", {"path": T + "/custom_pool"})
        env.wait(lambda: pool_exists(env, "custom_pool"), "custom_pool kept")
        env.wait(lambda: pool_exists(env, "custom_pool$root"), "custom_pool$root kept")
        # beyond upstream: a restart (kill -9) keeps the operation in custom_pool$root
        env.s.kill9()
        env.s.start()
        env.wait(lambda: env.op_attr(op, "pool") == "custom_pool$root", "restored in custom_pool$root")
        env.wait(lambda: env.pool_attr("custom_pool", "is_ephemeral") is True, "custom_pool ephemeral")
        for n in env.nodes:
            n.finish_all()
        env.wait(lambda: state(env, op) == "completed", "op completed")
        env.wait(lambda: not pool_exists(env, "custom_pool"), "custom_pool gone")
        env.wait(lambda: not pool_exists(env, "custom_pool$root"), "custom_pool$root gone")


@case
def explicit_to_ephemeral_pool_transformation_with_user_default_parent_pool_map():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_explicit_to_ephemeral_pool_transformation_with_user_default_parent_pool_map
    with Env("explicit_to_eph_map", nodes=1) as env:
        u = env.s.token("u")
        env.pool("u")
        env.pool("default_parent_for_u")
        env.s.set(T + "/@use_user_default_parent_pool_map", True)
        env.s.set("//sys/scheduler/user_to_default_pool", {"u": "default_parent_for_u"})
        op = env.op(token=u)
        env.wait(lambda: env.op_attr(op, "pool", "") == "u", "operation in pool u")
        env.wait(lambda: env.pool_attr("u", "parent") == "<Root>", "u under <Root>")
        env.s.ok("remove", {"path": T + "/u"})
        env.wait(lambda: env.pool_attr("u", "parent") == "default_parent_for_u",
                 "u under default_parent_for_u")
        env.wait(lambda: env.pool_attr("u", "is_ephemeral", False) is True, "u ephemeral")


@case
def explicit_to_ephemeral_pool_transformation_with_ephemeral_subpool_config():
    # upstream: test_scheduler_strategy::TestEphemeralPools::test_explicit_to_ephemeral_pool_transformation_with_ephemeral_subpool_config
    with Env("explicit_to_eph_config", nodes=1) as env:
        env.pool("research", ephemeral_subpool_config={"max_operation_count": 3})
        env.pool("ephemeral")
        env.s.set(T + "/@default_parent_pool", "research")
        op = env.op(token=env.s.token("root"), pool="ephemeral")
        env.wait(lambda: env.op_attr(op, "pool", "") == "ephemeral", "operation in ephemeral")
        env.wait(lambda: env.pool_attr("ephemeral", "parent") == "<Root>", "ephemeral under <Root>")
        env.s.ok("remove", {"path": T + "/ephemeral"})
        env.wait(lambda: env.pool_attr("ephemeral", "parent") == "research", "under research")
        env.wait(lambda: env.pool_attr("ephemeral", "is_ephemeral", False) is True, "ephemeral")
        env.wait(lambda: env.pool_attr("ephemeral", "max_operation_count", False) == 3,
                 "max_operation_count 3")

upslib.run(upslib.CASES, sys.argv[3:])
finish()
PYEOF
