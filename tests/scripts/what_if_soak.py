#!/usr/bin/env python3
"""`poolsched what-if` after minutes of a mixed workload on a real local cluster (the long form of
what_if_e2e.py: `make what-if-long`, WHAT_IF_SOAK_SECONDS of submissions, 240 by default).

Six two-slot nodes run real jobs. Three pools: a and b admit two operations at a time
(max_running_operation_count 2) and get a new operation every few seconds each, more than they
can run, so each keeps a queue; c takes a second user's (bob's) operations without a limit.
Operations differ in their jobs' count, length and CPU (seeded: WHAT_IF_SOAK_SEED). Then
`what-if` over the whole window with pool b's weight raised to 10. Checks: the no-change replay
is within the tolerance docs/what-if.md states; pool b waits less (p50 + p95 of the wait to the
first job) under the change; every operation of the window is compared; the report has both
users; the answer is deterministic. Usage: python3 what_if_soak.py BINARY."""
import json
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import require as check  # noqa: E402
from node_e2e import run_cluster_test, task  # noqa: E402
from what_if_e2e import check_fidelity, save_event_log, wait_p, what_if  # noqa: E402

SECONDS = int(os.environ.get("WHAT_IF_SOAK_SECONDS", "240"))
SEED = int(os.environ.get("WHAT_IF_SOAK_SEED", "1"))


def workload(c, bob):
    """A submission every 1.5 s, cycling through a, b, a, b, c (a and b each get one every
    3.75 s on average, c one every 7.5 s); submissions stay apart by more than a heartbeat
    period plus a fair share update period, so that none race for the same heartbeats
    (docs/what-if.md "What the replay cannot know"). Returns the operation ids."""
    rnd = random.Random(SEED)
    ops = []
    cycle = ("a", "b", "a", "b", "c")
    end = time.time() + SECONDS
    i = 0
    while time.time() < end:
        pool = cycle[i % len(cycle)]
        jobs = rnd.randint(5, 12)
        seconds = rnd.choice((2, 2.5, 3))
        cpu = rnd.choice((0.5, 1.0))
        spec = {"pool": pool, "tasks": {"work": task("sleep %s" % seconds, jobs, cpu_limit=cpu)}}
        ops.append(c.op(spec, bob if pool == "c" else None))
        i += 1
        time.sleep(1.5)
    return ops


def test(c, tmp):
    s = c.sched
    for pool in ("a", "b"):
        s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + pool,
                        "attributes": {"max_running_operation_count": 2}})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/c"})
    bob = s.token("bob")
    c.add_nodes(6, "cpu=2,memory=4G,user_slots=2")
    since = int(time.time() * 1000)
    ops = workload(c, bob)
    for op in ops:
        c.wait_op(op, SECONDS + 300)
    until = int(time.time() * 1000) + 5000   # time for the replay to finish its jobs
    print("%d operations in %.0f s" % (len(ops), (until - since) / 1000.0))
    window = ["--since", str(since), "--until", str(until)]
    if os.environ.get("PS_KEEP"):   # the record and its window, as scripts/what-if-fidelity.py reads them
        json.dump({"since": since, "until": until}, open(os.path.join(tmp, "window.json"), "w"))
        save_event_log(c, os.path.join(tmp, "rows.json"))
    change = "//sys/pool_trees/physical/b/@weight=10"
    text, r = what_if(c, os.path.join(tmp, "wi1"), *window, "--set", change)
    print(text)
    f = r["fidelity"]
    check_fidelity(f, "the no-change replay matches the record")
    check(f["operations"] == len(ops), "every operation of the window is compared", f, len(ops))
    rec, chg = r["recorded"], r["changed"]
    check(wait_p(chg, "b") < wait_p(rec, "b"), "pool b waits less with more weight",
          rec["pools"], chg["pools"])
    check(len(rec["users"]) == 2 and "bob" in rec["users"], "both users in the report",
          sorted(rec["users"]))
    _, again = what_if(c, os.path.join(tmp, "wi2"), *window, "--set", change)
    check(again == r, "the same record and change give the same answer")


def main():
    # fair share updates often, so that each freed slot goes by the latest usage (as
    # what_if_e2e.py)
    run_cluster_test("what_if_soak", "pswhatifsoak-", {"fair_share_update_period": 20}, test)


if __name__ == "__main__":
    main()
