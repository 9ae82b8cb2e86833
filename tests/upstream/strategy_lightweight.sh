#!/usr/bin/env bash
# test_scheduler_strategy.py translated, TestLightweightOperations: pools with
# enable_lightweight_operations in fifo mode run their (vanilla, so eligible) operations whatever
# max_running_operation_count says, and count them in lightweight_running_operation_count. Each
# case runs its own scheduler (fair share update every 100 ms, tests/upstream/upslib.py) with
# upstream's pools: root {max_operation_count 5, max_running_operation_count 2} with children
# pool and lightweight_pool {mode fifo, enable_lightweight_operations}. Tree "physical" stands
# for upstream's "default".
# usage: strategy_lightweight.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: strategy_lightweight.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PYEOF'
import sys
from server_helper import check, finish
import upslib
from upslib import Env, case, state, try_op

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]

T = "//sys/pool_trees/physical/root/"


def env_with_pools(name):
    env = Env(name, nodes=3)
    env.pool("root", max_operation_count=5, max_running_operation_count=2)
    env.pool("pool", "root")
    env.pool("lightweight_pool", "root", mode="fifo", enable_lightweight_operations=True)
    return env


def run_ops(env, count, pool):
    return [env.op(pool=pool) for _ in range(count)]


def counts(env, pool_total, pool_running, pool_lw, lw_total, lw_running, lw_lw, check_root=True):
    want = {"pool": (pool_total, pool_running, pool_lw),
            "lightweight_pool": (lw_total, lw_running, lw_lw)}
    if check_root:
        want["root"] = (pool_total + lw_total, pool_running + lw_running, pool_lw + lw_lw)

    def cond():
        got = {p: tuple(env.pool_attr(p, k) for k in ("operation_count", "running_operation_count",
                                                      "lightweight_running_operation_count"))
               for p in want}
        return got == want or got
    env.wait(cond, "operation counts %s" % want)


def wait_state(env, op, s):
    env.wait(lambda: state(env, op) == s or state(env, op), "%s %s" % (op, s))


def lightweight(env, op, value):
    env.wait(lambda: env.op_attr(op, "lightweight") is value, "%s lightweight %s" % (op, value))


def enabled(env, pool, value, effective):
    env.wait(lambda: (env.pool_attr(pool, "lightweight_operations_enabled"),
                      env.pool_attr(pool, "effective_lightweight_operations_enabled")) == (value, effective),
             "%s lightweight_operations_enabled %s, effective %s" % (pool, value, effective))


def move(env, op, pool):
    return env.s.call("update_op_parameters", {"operation_id": op, "parameters": {"pool": pool}})


@case
def simple():
    # upstream: test_scheduler_strategy::TestLightweightOperations::test_simple
    with env_with_pools("simple") as env:
        enabled(env, "pool", False, False)
        enabled(env, "lightweight_pool", True, True)
        blocking = env.op(pool="pool")
        wait_state(env, blocking, "running")
        ops = run_ops(env, 4, "lightweight_pool")
        for op in ops:
            wait_state(env, op, "running")
        st, out = try_op(env, pool="lightweight_pool")
        check(st != 200, "a sixth operation is refused by root's max_operation_count: %d %s" % (st, out))
        counts(env, 1, 1, 0, 4, 0, 4)
        lightweight(env, blocking, False)
        for op in ops:
            lightweight(env, op, True)


@case
def change_operation_pool():
    # upstream: test_scheduler_strategy::TestLightweightOperations::test_change_operation_pool
    with env_with_pools("change_op_pool") as env:
        ops = run_ops(env, 3, "lightweight_pool")
        for op in ops:
            wait_state(env, op, "running")
        for op in ops[:2]:
            st, out = move(env, op, "pool")
            check(st == 200, "move to pool: %d %s" % (st, out))
        for op in ops[:2]:
            lightweight(env, op, False)
        counts(env, 2, 2, 0, 1, 0, 1)
        st, out = move(env, ops[2], "pool")
        check(st != 200 and "root" in str(out), "root's running limit refuses the move: %d %s" % (st, out))
        for op in ops:
            st, out = move(env, op, "lightweight_pool")
            check(st == 200, "move back: %d %s" % (st, out))
        for op in ops:
            lightweight(env, op, True)
        run_ops(env, 2, "pool")
        counts(env, 2, 2, 0, 3, 0, 3)


@case
def change_pool_config():
    # upstream: test_scheduler_strategy::TestLightweightOperations::test_change_pool_config
    with env_with_pools("change_pool_config") as env:
        ops = run_ops(env, 3, "lightweight_pool") + run_ops(env, 2, "pool")
        for op in ops:
            wait_state(env, op, "running")
        counts(env, 2, 2, 0, 3, 0, 3)
        env.s.set(T + "lightweight_pool/@enable_lightweight_operations", False)
        enabled(env, "lightweight_pool", False, False)
        counts(env, 2, 2, 0, 3, 3, 0)
        env.s.set(T + "lightweight_pool/@mode", "fair_share")
        enabled(env, "lightweight_pool", False, False)
        counts(env, 2, 2, 0, 3, 3, 0)
        env.s.set(T + "lightweight_pool/@enable_lightweight_operations", True)
        enabled(env, "lightweight_pool", True, False)
        counts(env, 2, 2, 0, 3, 3, 0)
        env.s.set(T + "lightweight_pool/@mode", "fifo")
        enabled(env, "lightweight_pool", True, True)
        counts(env, 2, 2, 0, 3, 0, 3)


@case
def move_pool():
    # upstream: test_scheduler_strategy::TestLightweightOperations::test_move_pool
    with env_with_pools("move_pool") as env:
        ops = run_ops(env, 3, "lightweight_pool") + run_ops(env, 2, "pool")
        for op in ops:
            wait_state(env, op, "running")
        counts(env, 2, 2, 0, 3, 0, 3)
        env.s.ok("move", {"source_path": T + "lightweight_pool",
                          "destination_path": T + "pool/lightweight_pool"})
        counts(env, 5, 2, 3, 3, 0, 3, check_root=False)


@case
def pending_operation_becomes_lightweight():
    # upstream: test_scheduler_strategy::TestLightweightOperations::test_pending_operation_becomes_lightweight
    with env_with_pools("pending_becomes_lw") as env:
        running = run_ops(env, 2, "pool")
        pending = run_ops(env, 2, "pool")
        for op in running:
            wait_state(env, op, "running")
            lightweight(env, op, False)
        for op in pending:
            wait_state(env, op, "pending")
            lightweight(env, op, False)
        counts(env, 4, 2, 0, 0, 0, 0)
        st, out = move(env, pending[0], "lightweight_pool")
        check(st == 200, "a pending operation moves to lightweight_pool: %d %s" % (st, out))
        lightweight(env, pending[0], True)
        counts(env, 3, 2, 0, 1, 0, 1)
        wait_state(env, pending[0], "running")
        env.s.set(T + "pool/@mode", "fifo")
        env.s.set(T + "pool/@enable_lightweight_operations", True)
        lightweight(env, pending[1], True)
        counts(env, 3, 0, 3, 1, 0, 1)
        wait_state(env, pending[1], "running")


@case
def pending_operation_becomes_running_after_other_becomes_lightweight():
    # upstream: test_scheduler_strategy::TestLightweightOperations::test_pending_operation_becomes_running_after_other_running_operation_becomes_lightweight
    with env_with_pools("pending_runs") as env:
        env.s.set(T + "lightweight_pool/@enable_lightweight_operations", False)
        enabled(env, "lightweight_pool", False, False)
        blocking = env.op(pool="lightweight_pool")
        wait_state(env, blocking, "running")
        ops = run_ops(env, 2, "pool")
        wait_state(env, ops[0], "running")
        wait_state(env, ops[1], "pending")
        env.s.set(T + "lightweight_pool/@enable_lightweight_operations", True)
        enabled(env, "lightweight_pool", True, True)
        lightweight(env, blocking, True)
        for op in ops:
            lightweight(env, op, False)
        wait_state(env, ops[1], "running")


upslib.run(upslib.CASES, sys.argv[3:])
finish()
PYEOF
