#!/usr/bin/env python3
"""`poolsched what-if` on a real cluster (scheduler + two node agents, real jobs) whose event log
has passed its bound (event_log_max_row_count 80): the log's oldest rows, the operations'
started rows among them, are gone, and the replay starts from the scheduler's state rows
(docs/api.md "Event log", docs/what-if.md "The record's extent"). Checks: the long operation
whose operation_started row was dropped is in the replay with only the jobs it had left; the
window starts at the log's first pools_info row; the no-change replay matches the record within
the tolerance. python3 what_if_wrapped.py BINARY."""
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import require as check  # noqa: E402
from node_e2e import BIN, run_cluster_test, task  # noqa: E402
from what_if_e2e import check_fidelity  # noqa: E402


def test(c, tmp):
    s = c.sched
    for pool in ("a", "b"):
        s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + pool})
    c.add_nodes(2, "cpu=2,memory=2G,user_slots=2")
    # a long operation in a, then short ones in b whose rows push its start out of the log
    long_op = c.op({"pool": "a", "tasks": {"work": task("sleep 12", 4, cpu_limit=1)}})
    short = []
    for _ in range(12):
        short.append(c.op({"pool": "b", "tasks": {"work": task("sleep 1", 3, cpu_limit=1)}}))
        time.sleep(2)
    for op in [long_op] + short:
        c.wait_op(op, 90)
    time.sleep(1)
    rows = s.ok("get", {"path": "//sys/scheduler/event_log"})["value"]
    started = [r for r in rows if r["event_type"] == "operation_started"]
    check(len(rows) <= 80 and long_op not in [r["operation_id"] for r in started],
          "the bound dropped the long operation's operation_started row (else this tests "
          "nothing)", len(rows), [r["operation_id"] for r in started])
    first_state = next((r["timestamp"] for r in rows if r["event_type"] == "pools_info"), None)
    check(first_state is not None, "state rows in the wrapped log", [r["event_type"] for r in rows])
    out = os.path.join(tmp, "wi")
    args = [BIN, "what-if", "--proxy", c.url(), "--token", s.admin, "--since", "1h",
            "--heartbeat-period", "100", "--fair-share-update-period", "100", "--out", out]
    r = subprocess.run(args, capture_output=True, text=True, timeout=120)
    check(r.returncode == 0, "what-if exit %d" % r.returncode, r.stdout, r.stderr)
    print(r.stdout)
    w = json.load(open(os.path.join(out, "what-if.json")))
    sc = json.load(open(os.path.join(out, "scenario.json")))
    check(w["since"] == first_state and w["requested_since"] < first_state,
          "the window starts at the log's first state rows", w["since"], first_state)
    ops = {o["id"]: o for o in sc["operations"]}
    # the long operation: from operations_info, with the jobs it had not completed by then
    done_before = sum(1 for r in rows if r["event_type"] == "job_completed" and
                      r["operation_id"] == long_op and r["timestamp"] <= first_state)
    state = next((r for r in rows if r["event_type"] == "operations_info"), {"operations": {}})
    completed = state["operations"].get(long_op, {}).get("tasks", [{}])[0].get("completed")
    check(completed is not None, "the long operation runs at the log's first state rows (else "
          "this tests nothing)", state)
    check(long_op in ops and ops[long_op]["start_time"] == 0 and
          ops[long_op]["tasks"][0]["job_count"] == 4 - completed and completed >= done_before,
          "the long operation from the state rows, with its remaining jobs",
          ops.get(long_op), completed, done_before)
    check_fidelity(w["fidelity"], "the no-change replay of the wrapped log matches it")


def main():
    run_cluster_test("what_if_wrapped", "pswrapped-",
                     {"fair_share_update_period": 100, "event_log_max_row_count": 80}, test)


if __name__ == "__main__":
    main()
