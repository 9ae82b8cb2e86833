#!/usr/bin/env bash
# One overcommit, two hosts: a reclaimed job takes its core back on a full node (1.2 cores,
# 2 slots; Op1's job idles, lends its core to Op2's job, then busy-loops), through the
# simulator and through the real service with a real `poolsched node`, and the outcome compared:
# who aborted Op2's job and with which reason, and what runs afterwards. Two settings, as
# upstream's two test classes (test_dynamic_cpu_reclaim.py):
#   node       the scheduler's allowed_node_resources_overcommit_duration 600 s, the node's
#              cpu_overdraft_timeout 1 s: the node aborts its newest job, resource_overdraft;
#   scheduler  1 s and the node's default 10 min: the scheduling loop preempts, preemption.
# The simulator models the agent's rule (core/node_overdraft.h) and both hosts drive the one
# loop (core/tree_sched.h): a different reason means a host or the model drifted. (Upstream's
# node has 1.5 cores; 1.2 here because on this shared machine a busy loop whose cgroup weight is
# its low guarantee may get a third of a core, and the monitor raises the guarantee only as far
# as that: above 0.2 core it overcommits 1.2, not always above 0.5.)
# usage: overdraft_parity.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: overdraft_parity.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 150 "$@" <<'PY'
import os, sys, time
from server_helper import NodeAgent, Scheduler, check, finish, wait_beating
import simlib
from simlib import SPEC_WITH_CPU_MONITOR

bin, work = sys.argv[1], sys.argv[2]
simlib.init(sys.argv)
SETTINGS = {   # tree allowed_node_resources_overcommit_duration, node cpu_overdraft_timeout (ms)
    "node": (600000, 1000),
    "scheduler": (1000, 600000),
}
RELEASE = 8000   # the simulator's breakpoint, after Op2 starts (Op1 at 0.17 core)


def simulate(name, duration_ms, node_timeout_ms):
    sc = {"heartbeat_period": 100, "fair_share_update_period": 100, "duration": 25000,
          "node_groups": [{"name": "n", "count": 1, "cpu_overdraft_timeout": node_timeout_ms,
                           "resource_adjustment_period": 1000, "resource_limits": {
                               "cpu": 1.2, "memory": 2 << 30, "user_slots": 2, "gpu": 0, "network": 0}}],
          "pool_trees": {"physical": {"allowed_node_resources_overcommit_duration": duration_ms}},
          "operations": [
              {"id": "op1", "start_time": 0, "spec": SPEC_WITH_CPU_MONITOR,
               "tasks": [{"job_count": 1, "duration": 10 ** 7, "cpu_usage": [[0, 0], [RELEASE, 1]],
                          "resources": {"cpu": 1, "memory": 0, "user_slots": 1}}]},
              {"id": "op2", "start_time": 1500, "spec": {},
               "tasks": [{"job_count": 1, "duration": 10 ** 7,
                          "resources": {"cpu": 1, "memory": 0, "user_slots": 1}}]}]}
    events = simlib.load(simlib.run(name, sc)[0]).events
    running = {"op1": 0, "op2": 0}
    aborted, preempted = [], 0
    for e in events:
        t = e["event_type"]
        if t == "job_started":
            running[e["operation_id"]] += 1
        elif t == "job_aborted":
            running[e["operation_id"]] -= 1
            aborted.append((e["operation_id"], e["reason"]))
        elif t == "job_preempted":
            preempted += 1
    return {"aborted": aborted, "preempted": preempted, "running": running}


def serve(name, duration_ms, node_timeout_ms):
    s = Scheduler(bin, os.path.join(work, name + "-data"),
                  {"fair_share_update_period": 100, "heartbeat_period": 100}).start()
    gate = os.path.join(work, name + "-gate")
    os.mkdir(gate)
    os.chmod(gate, 0o777)
    agent = NodeAgent(bin, s.url(""), "parity-" + name, "cpu=1.2,memory=2G,user_slots=2",
                      os.path.join(work, name + "-node"), os.path.join(work, name + "-node.log"),
                      data_dir=s.data_dir, extra=["--cpu-overdraft-timeout", str(node_timeout_ms),
                                                  "--resource-adjustment-period", "1000"])

    def jobs(op, state=None):
        body = {"operation_id": op}
        if state:
            body["state"] = state
        return s.ok("list_jobs", body)["jobs"]

    def wait_for(pred, seconds, what):
        wait_beating("%s: timed out waiting for %s" % (name, what), pred, (), seconds)

    def start(command, spec):
        spec = dict(spec, tasks={"t": {"command": command, "job_count": 1, "cpu_limit": 1,
                                       "memory_limit": 100 << 20}})
        return s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]

    try:
        s.set("//sys/pool_trees/physical/@allowed_node_resources_overcommit_duration", duration_ms)
        op1 = start("while [ ! -e %s/release ]; do sleep 0.05; done; while :; do :; done" % gate,
                    SPEC_WITH_CPU_MONITOR)
        wait_for(lambda: jobs(op1, "running"), 20, "Op1's job")
        op2 = start("sleep 1000", {})
        wait_for(lambda: jobs(op2, "running"), 20, "Op2's job on the reclaimed cpu")
        open(os.path.join(gate, "release"), "w").close()
        wait_for(lambda: jobs(op2, "aborted"), 30, "Op2's job aborted")
        time.sleep(1.0)
        names = {op1: "op1", op2: "op2"}
        aborted = [(names[op], j["abort_reason"]) for op in (op1, op2) for j in jobs(op, "aborted")]
        preempted = s.logtext().count("preemption_reason=")
        running = {names[op]: len(jobs(op, "running")) for op in (op1, op2)}
        for op in (op1, op2):
            s.ok("abort_op", {"operation_id": op})
        return {"aborted": aborted, "preempted": preempted, "running": running}
    finally:
        agent.stop()
        s.stop()


WANT = {"node": [("op2", "resource_overdraft")], "scheduler": [("op2", "preemption")]}
for name, (duration_ms, node_timeout_ms) in SETTINGS.items():
    sim = simulate(name, duration_ms, node_timeout_ms)
    svc = serve(name, duration_ms, node_timeout_ms)
    print("%s\n  simulator: %s\n  service:   %s" % (name, sim, svc), flush=True)
    check(sim == svc, "%s: simulator %s, service %s" % (name, sim, svc))
    check(sim["aborted"] == WANT[name] and sim["running"] == {"op1": 1, "op2": 0},
          "%s: want %s aborted, Op1 running: %s" % (name, WANT[name], sim))
finish()
PY
