#!/usr/bin/env bash
# One memory overdraft, two hosts: the node's victim rule (core/node_overdraft.h, upstream's
# job controller) through the simulator and through a real `poolsched node` against the fake
# scheduler of node_fake.py, and the victims compared. A node of 300 MiB; job A (reserve
# 50 MiB) grows to 200 MiB and holds it; then job B (reserve 50 MiB) grows to 120 MiB, a growth
# the node cannot hold (200 + 120 > 300). Upstream aborts the job that grew, B, being above its
# reserve, though A's overdraft is the larger; A runs on. A rule that picks another victim on
# either side (largest overdraft first, say) disagrees.
# usage: memory_overdraft_parity.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: memory_overdraft_parity.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 120 "$@" <<'PY'
import json, os, subprocess, sys
from checks import Fail, require

bin, work = sys.argv[1], sys.argv[2]
sys.argv = [sys.argv[0], bin]          # node_fake reads BINARY from its argv
from node_fake import FakeScheduler, Node  # noqa: E402

MIB = 1 << 20
NODE_MEMORY, RESERVE, LIMIT = 300 * MIB, 50 * MIB, 400 * MIB
PEAK = {"A": 200 * MIB, "B": 120 * MIB}


def simulate():
    ops = [{"id": name, "start_time": start, "spec": {"memory_reserve_factor": RESERVE / LIMIT},
            "tasks": [{"job_count": 1, "duration": 60000, "memory_limit": LIMIT,
                       "max_memory": PEAK[name],
                       "resources": {"cpu": 1, "memory": RESERVE, "user_slots": 1}}]}
           for name, start in (("A", 0), ("B", 5000))]
    sc = {"heartbeat_period": 1000, "fair_share_update_period": 1000, "duration": 20000,
          "controller_agent": {"footprint_memory": 0},
          "node_groups": [{"name": "n", "count": 1, "resource_limits": {
              "cpu": 4, "memory": NODE_MEMORY, "user_slots": 4, "gpu": 0, "network": 0}}],
          # the tree leaves no spare memory per node (upstream keeps 256 MiB): B fits beside A
          "pool_trees": {"physical": {"min_spare_allocation_resources_on_node": {"memory": 0}}},
          "operations": ops}
    path = os.path.join(work, "sim.json")
    with open(path, "w") as f:
        json.dump(sc, f)
    out = os.path.join(work, "sim")
    p = subprocess.run([bin, "simulate", path, "--output", out], capture_output=True, text=True)
    if p.returncode != 0:
        raise Fail("simulate: " + p.stderr)
    events = [json.loads(line) for line in open(os.path.join(out, "events.jsonl"))]
    starts = [e for e in events if e["event_type"] == "job_started"]
    reserves = {e["operation_id"]: e["memory_reserve"] for e in starts}
    require(reserves == {"A": RESERVE, "B": RESERVE}, "the simulator's reserves", reserves)
    aborted = [(e["operation_id"], e["reason"]) for e in events if e["event_type"] == "job_aborted"]
    running = {op: sum(1 for e in starts if e["operation_id"] == op) -
               sum(1 for e in events if e["operation_id"] == op and
                   e["event_type"] in ("job_aborted", "job_completed", "job_failed"))
               for op in ("A", "B")}
    return {"first_aborted": aborted[:1], "A_runs": running["A"] == 1}


def serve(tmp):
    sched = FakeScheduler()
    node = Node(sched, tmp, resources="cpu=2,memory=%d,user_slots=4" % NODE_MEMORY)
    gate = os.path.join(tmp, "release")
    grow = ("python3 -c 'import os, time; x = bytearray(%d); x[::4096] = b\"x\" * len(x[::4096]); "
            "t = time.time() + 60\nwhile not os.path.exists(\"%s\") and time.time() < t: time.sleep(0.05)'")
    try:
        sched.start("A", grow % (PEAK["A"], gate), memory_limit=LIMIT, memory_reserve=RESERVE)
        sched.wait(lambda: sched.running.get("A", {}).get("memory_bytes", 0) >= PEAK["A"], 30,
                   "A to hold its 200 MiB")
        sched.start("B", grow % (PEAK["B"], gate), memory_limit=LIMIT, memory_reserve=RESERVE)
        first = sched.wait(lambda: [(j, r["abort_reason"]) for j, r in sched.finished.items()
                                    if r.get("state") == "aborted"], 30, "an abort")
        a_runs = "A" in sched.running and "A" not in sched.finished
        open(gate, "w").close()
        sched.wait_finished("A", 30)
        sched.wait_finished("B", 30)
        return {"first_aborted": first[:1], "A_runs": a_runs}
    finally:
        node.stop()
        sched.close()


sim = simulate()
tmp = os.path.join(work, "node")
os.mkdir(tmp)
svc = serve(tmp)
print("simulator: %s\nnode:      %s" % (sim, svc))
require(sim == svc, "the simulator and the node agree on the victim", sim, svc)
require(sim == {"first_aborted": [("B", "resource_overdraft")], "A_runs": True},
        "B, the job that grew, goes; A runs on", sim)
print("memory overdraft: both hosts abort B (resource_overdraft), A runs on")
PY
