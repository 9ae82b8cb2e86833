#!/usr/bin/env bash
# One waiting rule, two hosts: a job started on a node whose victim of preemption is still
# finishing its interruption waits there (core/node_waiting.h), through the simulator and
# through a real `poolsched node` against the fake scheduler of node_fake.py, compared. A node
# of 1 cpu; victim V (1 cpu, interruptible) is interrupted, and W (1 cpu) is started beside it.
#   - "in_time": V is killed at its interrupt timeout (3 s), before W's waiting timeout
#     (10 s): W waits, then runs and completes;
#   - "timeout": V takes 20 s to end, W's waiting timeout is 3 s: W is aborted with
#     waiting_timeout while waiting.
# A side that does not make W wait, or ignores its timeout, disagrees.
# usage: waiting_parity.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: waiting_parity.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 150 "$@" <<'PY'
import json, os, subprocess, sys
from checks import Fail, require

bin, work = sys.argv[1], sys.argv[2]
sys.argv = [sys.argv[0], bin]          # node_fake reads BINARY from its argv
from node_fake import FakeScheduler, Node  # noqa: E402

# case: (V's interrupt timeout, V's run after SIGINT, W's waiting timeout), ms
CASES = {"in_time": (3000, 30000, 10000), "timeout": (20000, 20000, 3000)}
EXPECTED = {"in_time": {"waited": True, "W": "completed"},
            "timeout": {"waited": True, "W": "aborted: waiting_timeout"}}


def simulate(name, interrupt, waiting):
    # A's job (V) fills the node; B (pool b, guaranteed the node's cpu) starves and preempts
    # it: B's job is W
    ops = [{"id": "A", "start_time": 0, "spec": {"pool": "a"},
            "tasks": [{"job_count": 1, "duration": 600000, "interruptible": True,
                       "resources": {"cpu": 1, "memory": 1 << 28, "user_slots": 1}}]},
           {"id": "B", "start_time": 2000, "spec": {"pool": "b"},
            "tasks": [{"job_count": 1, "duration": 1000,
                       "resources": {"cpu": 1, "memory": 1 << 28, "user_slots": 1}}]}]
    tree = {"fair_share_starvation_timeout": 1000, "fair_share_starvation_tolerance": 0.8,
            "preemptive_scheduling_backoff": 0, "allocation_preemption_timeout": interrupt,
            "waiting_job_timeout": waiting, "max_unpreemptible_running_allocation_count": 0,
            "pools": [{"name": "a"}, {"name": "b", "strong_guarantee_resources": {"cpu": 1}}]}
    sc = {"heartbeat_period": 500, "fair_share_update_period": 500, "duration": 40000,
          "node_groups": [{"name": "n", "count": 1, "resource_limits": {
              "cpu": 1, "memory": 4 << 30, "user_slots": 2, "gpu": 0, "network": 0}}],
          "pool_trees": {"physical": tree}, "operations": ops}
    path = os.path.join(work, name + ".json")
    with open(path, "w") as f:
        json.dump(sc, f)
    out = os.path.join(work, "sim-" + name)
    p = subprocess.run([bin, "simulate", path, "--output", out], capture_output=True, text=True)
    if p.returncode != 0:
        raise Fail("simulate: " + p.stderr)
    events = [json.loads(line) for line in open(os.path.join(out, "events.jsonl"))]
    first = [e for e in events if e.get("operation_id") == "B" and e.get("job_id", "").endswith("/0")]
    kinds = [e["event_type"] for e in first]
    ends = [e for e in first if e["event_type"] in ("job_completed", "job_aborted", "job_failed")]
    w = "never ended" if not ends else ends[0]["event_type"][4:] + (
        ": " + ends[0]["reason"] if ends[0]["event_type"] == "job_aborted" else "")
    at = {e["event_type"]: e["time"] for e in first}
    if "job_running" in at:   # the simulator's own clock: W runs once V has left, 1 s from then
        require(at["job_running"] == at["job_waiting"] + interrupt and
                at.get("job_completed") == at["job_running"] + 1000,
                name + ": the simulator runs W from the victim's end", first)
    return {"waited": "job_waiting" in kinds, "W": w}


def serve(name, interrupt, after_sigint, waiting):
    tmp = os.path.join(work, "node-" + name)
    os.mkdir(tmp)
    ready = os.path.join(tmp, "ready")
    os.mkdir(ready)
    os.chmod(ready, 0o777)   # jobs may run as slot users
    sched = FakeScheduler()
    node = Node(sched, tmp, resources="cpu=1,memory=4G,user_slots=2")
    try:
        sched.start("V", "trap 'sleep %d; exit 0' INT; mktemp %s/XXXXXX >/dev/null; "
                    "while true; do sleep 0.05; done" % (after_sigint // 1000, ready))
        sched.wait(lambda: os.listdir(ready), 30, "V to set its trap")
        sched.interrupt("V", interrupt)
        sched.start("W", "true", waiting_job_timeout=waiting)
        rec = sched.wait_finished("W", 60)
        sched.abort("V")
        sched.wait_finished("V", 30)
        with open(node.log_path) as f:
            waited = "job W: waiting for resources" in f.read()
        w = rec.get("state", "?") + (": " + rec.get("abort_reason", "")
                                     if rec.get("state") == "aborted" else "")
        return {"waited": waited, "W": w}
    finally:
        node.stop()
        sched.close()


for name, (interrupt, after_sigint, waiting) in CASES.items():
    sim = simulate(name, interrupt, waiting)
    svc = serve(name, interrupt, after_sigint, waiting)
    print("%s:\n  simulator: %s\n  node:      %s" % (name, sim, svc))
    require(sim == svc, name + ": the simulator and the node agree", sim, svc)
    require(sim == EXPECTED[name], name + ": as upstream's node", sim, EXPECTED[name])
print("waiting jobs: both hosts wait, start and time out alike")
PY
