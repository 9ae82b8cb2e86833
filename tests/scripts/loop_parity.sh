#!/usr/bin/env bash
# One loop, two hosts: the same scenarios through the simulator and through the real service
# (HTTP, fake nodes speaking the heartbeat protocol), compared once they settle: which
# operations run and how many jobs, pending reasons, preempted jobs per operation and pools'
# fair shares. Both drive core/tree_sched.h; a difference means a host feeds the loop
# differently (docs/scheduling-loop.md). Jobs never end, so every scenario settles. Operations
# no node can take, or whose next job no node can hold, fail in both (core/exec_nodes.h),
# which the final states and errors compare. Broken nodes fail every job FAIL_AFTER_MS after
# its start (the simulator's node group key fail_jobs_after; the fake nodes report the failure):
# per-operation node bans (core/node_ban.h) decide where the retries go, which failures count,
# and when an operation fails for want of an unbanned node.
# usage: loop_parity.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: loop_parity.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 240 "$@" <<'PY'
import os, sys, time
from server_helper import Scheduler, FakeNode, check, finish
import simlib

bin, work = sys.argv[1], sys.argv[2]
simlib.init(sys.argv)
MIB = 1 << 20
NODES, CPU, MEMORY, SLOTS = 2, 4, 8 << 30, 8
TAGS = [["tagA", "tagB"], ["tagA", "tagB"]]   # node i's tags
CHECK = {"available_exec_nodes_check_period": 500, "safe_scheduler_online_time": 2000,
         "resource_demand_sanity_check_period": 500}
TREE = {"fair_share_starvation_timeout": 300, "fair_share_starvation_tolerance": 0.9,
        "preemptive_scheduling_backoff": 0, "allocation_preemption_timeout": 60000,
        "fair_share_update_period": 100}
JOBS = 10
TASKS = "tasks"   # an operation's own tasks: [(name, jobs, disk medium or None[, cpu])]

# Scenarios: pools {name: attributes}, operations [(id, pool, start s[, spec])], optional run-time
# updates [(s, operation, parameters)] (update_operation / update_op_parameters); every job takes
# 1 cpu and 128 MiB and never ends. Victims are interrupted with a timeout longer than the
# run: they keep their resources, as on a full cluster waiting for its victims to leave.
SCENARIOS = {
    "weights": ({"a": {"weight": 1}, "b": {"weight": 3}}, [("A", "a", 0), ("B", "b", 0)]),
    "preemption": ({"a": {}, "b": {}}, [("A", "a", 0), ("B", "b", 2)]),
    "limits": ({"c": {"resource_limits": {"cpu": 2}}, "d": {"max_running_operation_count": 1}},
               [("C", "c", 0), ("D1", "d", 0), ("D2", "d", 0)]),
    "move": ({"a": {"weight": 1}, "b": {"weight": 3}, "c": {"resource_limits": {"cpu": 1}}},
             [("A", "a", 0), ("B", "b", 0)], [(2, "A", {"pool": "c"})]),
    # upstream test_tag_filters: an operation whose filter no node satisfies fails
    "tags": ({"a": {}}, [("A", "a", 0, {"scheduling_tag_filter": "tagA"}),
                         ("N", "a", 0, {"scheduling_tag_filter": "tagA & !tagB"}),
                         ("C", "a", 1, {"scheduling_tag": "tagC"})]),
    # the offered task is the first with pending jobs, and its own disk request decides where
    # its jobs go (core/sched_inputs.h): "plain" asks for none and runs, "ssd" asks for a
    # medium no node has and waits behind it
    "tasks": ({"a": {}}, [("T", "a", 0, {TASKS: [("plain", 3, None), ("ssd", 2, "ssd")]})]),
    # upstream CheckMinNeededResourcesSanity: B's jobs ask 8 cpu of nodes with 4, and B fails
    # with "No online node can satisfy the resource demand"
    "demand": ({"a": {}}, [("A", "a", 0), ("B", "a", 0, {TASKS: [("huge", 2, None, 8)]})]),
    # node n0 broken: its 4 failures ban it for A, whose retries wait for n1
    "ban": ({"a": {}}, [("A", "a", 0, {"ban_nodes_with_failed_jobs": True})]),
    # upstream test_ignore_job_failures_at_banned_nodes: the first failure at n0 bans it, the
    # other 3 there count as aborted (node_banned)
    "ignore": ({"a": {}}, [("I", "a", 0, {"ban_nodes_with_failed_jobs": True,
                                          "ignore_job_failures_at_banned_nodes": True})]),
    # both nodes broken: once both are banned, the operation fails (fail_on_all_nodes_banned)
    "allbanned": ({"a": {}}, [("A", "a", 0, {"ban_nodes_with_failed_jobs": True})]),
    # upstream test_tentative_pool_tree_sampling: n1 alone is tree tent, tentative for A, which
    # runs its sample of 2 jobs there (core/tentative.h) and 4 in physical
    "tentative": ({"a": {}}, [("T", "a", 0, {"pool_trees": ["physical"],
                                             "tentative_pool_trees": ["tent"],
                                             "tentative_tree_eligibility": {"sample_job_count": 2}})]),
    # upstream test_tentative_pool_tree_banning: tent's jobs never end, physical's take 300 ms;
    # after 2 regular completions tent's average (the time since its last start) passes
    # min_job_duration and twice the regular one: tent is banned, its 2 jobs aborted
    # (banned_in_tentative_tree), retried in physical, and the operation completes there
    "tentban": ({"a": {}}, [("T", "a", 0, {
        "pool_trees": ["physical"], "tentative_pool_trees": ["tent"],
        TASKS: [("main", 10, None)],
        "tentative_tree_eligibility": {"sample_job_count": 2, "min_job_duration": 1000,
                                       "max_tentative_job_duration_ratio": 2}})]),
}
BROKEN = {"ban": {0}, "ignore": {0}, "allbanned": {0, 1}}   # scenario -> broken nodes
# Scenarios with a second tree: node i's tags, and the trees' nodes_filter (physical first).
TREES = {"tentative": ([["r"], ["t"]], {"physical": "r", "tent": "t"}),
         "tentban": ([["r"], ["t"]], {"physical": "r", "tent": "t"})}
# Scenarios whose jobs end: they take TASK_MS there, except on slow nodes (the simulator's
# job_duration_factor), where they never end.
TASK_MS = {"tentban": 300}
SLOW = {"tentban": {1}}
FAIL_AFTER_MS = 500
BAN_REASONS = ("node_banned", "banned_in_tentative_tree")   # aborts compared by reason
SETTLE_S = 6


def spec_of(o):
    return {k: v for k, v in (o[3] if len(o) > 3 else {}).items() if k != TASKS}


def tasks_of(o):
    """[(name, jobs, medium, cpu)]: the operation's tasks, one of JOBS jobs by default."""
    tasks = (o[3] if len(o) > 3 else {}).get(TASKS, [("main", JOBS, None)])
    return [(t + (1,))[:4] for t in tasks]


def disk(medium):
    return {"disk_request": {"disk_space": 1 << 30, "medium_name": medium}} if medium else {}



def tags_of(name):
    return TREES[name][0] if name in TREES else TAGS


def simulate(name, pools, ops, updates=()):
    filters = TREES[name][1] if name in TREES else {"physical": None}
    trees = {t: dict(TREE, **({"nodes_filter": f} if f else {}),
                     pools=[dict(v, name=k) for k, v in pools.items()] if t == "physical" else [])
             for t, f in filters.items()}
    sc = dict(CHECK, heartbeat_period=100, fair_share_update_period=100,
          duration=SETTLE_S * 1000,
          node_groups=[dict({"name": "n%d" % i, "count": 1, "tags": tags_of(name)[i], "resource_limits": {
              "cpu": CPU, "memory": MEMORY, "user_slots": SLOTS, "gpu": 0, "network": 0}},
              **({"fail_jobs_after": FAIL_AFTER_MS} if i in BROKEN.get(name, ()) else {}),
              **({"job_duration_factor": 10 ** 6} if i in SLOW.get(name, ()) else {}))
              for i in range(NODES)])
    sc.update({
          "pool_trees": trees, "default_tree": "physical",
          "operations": [{"id": o[0], "start_time": o[2] * 1000, "spec": dict(spec_of(o), pool=o[1]),
                          "tasks": [dict(disk(m), name=t, job_count=n,
                                         duration=TASK_MS.get(name, 10 ** 8),
                                         interruptible=True,
                                         resources={"cpu": c, "memory": 128 * MIB, "user_slots": 1})
                                    for t, n, m, c in tasks_of(o)]}
                         for o in ops],
          "events": [{"time": t * 1000, "type": "update_operation", "operation": i, "parameters": u}
                     for t, i, u in updates]})
    result = simlib.load(simlib.run(name, sc)[0])
    events = result.events
    running = {o[0]: 0 for o in ops}
    preempted = {o[0]: 0 for o in ops}
    failed = {o[0]: 0 for o in ops}
    banned_aborts = {o[0]: {} for o in ops}
    reason, state, error = {}, {o[0]: "active" for o in ops}, {}
    for e in events:
        t, oid = e["event_type"], e.get("operation_id")
        if t == "job_started":
            running[oid] += 1
        elif t in ("job_completed", "job_aborted", "job_failed"):
            running[oid] -= 1
            failed[oid] += t == "job_failed"
            if t == "job_aborted" and e.get("reason") in BAN_REASONS:
                banned_aborts[oid][e["reason"]] = banned_aborts[oid].get(e["reason"], 0) + 1
        elif t == "job_preempted":
            preempted[oid] += 1
        elif t == "operation_pending":
            reason[oid] = e["message"]
        elif t == "operation_failed":
            state[oid] = "failed"
            error[oid] = e["error"]
            reason.pop(oid, None)
        elif t == "operation_completed":
            state[oid] = "completed"
            reason.pop(oid, None)
    last = {r["pool"]: round(float(r["fair_share_ratio"]), 3) for r in result.pools
            if r["tree"] == "physical"}
    return (running, preempted, reason, {k: last.get(k, 0.0) for k in pools}, state, error,
            failed, banned_aborts)


def serve(name, pools, ops, updates=()):
    with Scheduler(bin, os.path.join(work, name + "-data"),
                   dict(CHECK, fair_share_update_period=100)).start() as s:
        for k, v in TREE.items():
            s.set("//sys/pool_trees/physical/@" + k, v)
        for t, f in (TREES[name][1] if name in TREES else {}).items():
            if t == "physical":
                s.set("//sys/pool_trees/physical/@config/nodes_filter", f)
            else:
                s.ok("create", {"type": "scheduler_pool_tree", "attributes": {
                    "name": t, "config": dict(TREE, nodes_filter=f)}})
        for k, v in pools.items():
            s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + k, "attributes": v})
        nodes = [FakeNode(s, "n-%d" % i, cpu=CPU, memory=MEMORY, slots=SLOTS, tags=tags_of(name)[i])
                 for i in range(NODES)]
        for n in nodes:
            n.heartbeat()
        broken = [nodes[i] for i in sorted(BROKEN.get(name, ()))]
        ending = [n for i, n in enumerate(nodes) if i not in SLOW.get(name, ())]
        started_at = {}   # job id -> when a broken node got it
        ids, t0, todo = {}, time.time(), sorted(ops, key=lambda o: o[2])
        later = sorted(updates)
        job_op, victims = {}, set()
        while time.time() < t0 + SETTLE_S:
            batch = []
            while todo and time.time() >= t0 + todo[0][2]:
                o = todo.pop(0)
                i, p = o[0], o[1]
                spec = {**spec_of(o), "pool": p, "tasks": {
                    t: dict(disk(m), command="sleep 1000", job_count=n, cpu_limit=c,
                            memory_limit=128 * MIB) for t, n, m, c in tasks_of(o)}}
                ids[i] = s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
                batch.append(ids[i])
            # Operations the simulator starts at one millisecond meet the nodes together: no
            # heartbeat until a fair share update has included all of them.
            deadline = time.time() + 5
            while batch and time.time() < deadline and any(
                    s.ok("get_operation", {"operation_id": o}).get("pending_reason") ==
                    "waiting for fair share update" for o in batch):
                time.sleep(0.05)
            while later and time.time() >= t0 + later[0][0]:
                _, i, u = later.pop(0)
                s.ok("update_op_parameters", {"operation_id": ids[i], "parameters": u})
            for n in broken:   # its jobs fail FAIL_AFTER_MS after it got them
                for j in [j for j in n.running if time.time() >= started_at[j] + FAIL_AFTER_MS / 1000]:
                    n.finish(j, "failed", error="User job failed")
            for n in (ending if name in TASK_MS else ()):   # jobs complete after TASK_MS
                for j in [j for j in n.running if time.time() >= started_at[j] + TASK_MS[name] / 1000]:
                    n.finish(j)
            for n in nodes:
                out = n.heartbeat()
                job_op.update((j["job_id"], j["operation_id"]) for j in out["jobs_to_start"])
                victims.update(j["job_id"] for j in out["jobs_to_interrupt"] + out["jobs_to_abort"]
                               if j.get("reason") not in BAN_REASONS)
                started_at.update((j["job_id"], time.time()) for j in out["jobs_to_start"])
            time.sleep(0.1)
        running, preempted, reason, state, error = {}, {}, {}, {}, {}
        failed, banned_aborts = {}, {}
        by_id = {v: k for k, v in ids.items()}
        for i in ids:
            o = s.ok("get_operation", {"operation_id": ids[i]})
            running[i] = o["progress"]["running"]
            failed[i] = o["progress"]["failed"]
            banned_aborts[i] = {}
            for j in s.ok("list_jobs", {"operation_id": ids[i]})["jobs"]:
                r = j.get("abort_reason")
                if r in BAN_REASONS:
                    banned_aborts[i][r] = banned_aborts[i].get(r, 0) + 1
            state[i] = "active" if o["state"] in ("pending", "running") else o["state"]
            preempted[i] = sum(1 for j in victims if by_id.get(job_op.get(j)) == i)
            if o.get("error"):
                e = o["error"]
                e = e.get("message") if isinstance(e, dict) else e
                error[i] = e.replace(ids[i], i)   # the simulator's operation ids are the names
            if o.get("pending_reason"):
                reason[i] = o["pending_reason"]
        shares = {}
        for k in pools:
            v = s.get("//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/"
                      "fair_share_info/pools/%s/fair_share_ratio" % k)
            shares[k] = round(v, 3)
        return running, preempted, reason, shares, state, error, failed, banned_aborts


only = os.environ.get("LOOP_PARITY_ONLY")   # a comma-separated subset, for a break check
for name, (pools, ops, *updates) in SCENARIOS.items():
    if only and name not in only.split(","):
        continue
    sim = simulate(name, pools, ops, *updates)
    svc = serve(name, pools, ops, *updates)
    print("%s\n  simulator: %s\n  service:   %s" % (name, sim, svc), flush=True)
    for what, a, b in zip(("running jobs", "preempted jobs",
                           # an operation of several trees: the service names a reason per
                           # tree, the simulator its first tree's (docs/scheduling-loop.md)
                           None if name in TREES else "pending reasons", "fair shares",
                           "operation states", "errors", "failed jobs",
                           "jobs aborted for a ban"), sim, svc):
        check(what is None or a == b,
              "%s: %s differ: simulator %s, service %s" % (name, what, a, b))
finish()
PY
