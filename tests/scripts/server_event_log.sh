#!/usr/bin/env bash
# //sys/scheduler/event_log on a real scheduler with fake nodes (docs/api.md "Event log"): the
# rows of an operation's life (operation_started with its pool, spec and user, job_started,
# job_completed / job_failed / job_aborted with reason, runtime_parameters_info after
# update_op_parameters, operation_completed / _aborted with progress), node_registered and
# node_offline, the filters (operation_id, event_type, since, until, limit) and their refusals,
# `poolsched event-log`, the YTsaurus face's ISO times, the rows kept across a restart, and the
# size bound (event_log_max_row_count), pool_trees_info before each pools_info row, the state
# rows (pool_trees_info, pools_info, nodes_info, operations_info) at start, every sixteenth of the bound
# once nodes_info_logging_period has passed, and again when the bound drops them; a change of
# the trees logs pool_trees_info and pools_info alone. pools_info and preempted_for:
# tests/upstream/event_log_service.sh.
# usage: server_event_log.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_event_log.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import json, subprocess, sys, time, urllib.parse
from server_helper import EVENT_LOG as LOG, Scheduler, FakeNode, check, event_log_rows, finish, wait_beating

bin, work = sys.argv[1], sys.argv[2]
T = "//sys/pool_trees/physical"
cfg = {"fair_share_update_period": 100}
s = Scheduler(bin, work + "/data", cfg).start()

def rows(**filters):
    return event_log_rows(s, **filters)

def types(op):
    return [r["event_type"] for r in rows(operation_id=op)]

try:
    s.set(T + "/@fair_share_update_period", 100)
    s.ok("create", {"type": "scheduler_pool", "path": T + "/research",
                    "attributes": {"strong_guarantee_resources": {"cpu": 1}}})
    node = FakeNode(s, "n1", cpu=4, memory=16 << 30, slots=4)
    node.heartbeat()
    task = lambda n: {"t": {"command": "sleep 1000", "job_count": n, "cpu_limit": 1, "memory_limit": 64 << 20}}

    # the state a replay starts from, at one timestamp, logged as the scheduler starts:
    # pool_trees_info, pools_info, nodes_info (every node in scheduling; none yet)
    # (nodes_info and operations_info are made off the scheduler's lock and land a moment after
    # the rows logged meanwhile: every check of them waits until they are there)
    def state_at(got, k):
        return (k + 3 < len(got) and [r["event_type"] for r in got[k:k + 4]] ==
                ["pool_trees_info", "pools_info", "nodes_info", "operations_info"])
    first = wait_beating("the state rows at start", lambda: (lambda r: state_at(r, 0) and r[:4])(rows()))
    check([r["event_type"] for r in first] == ["pool_trees_info", "pools_info", "nodes_info", "operations_info"] and
          len({r["timestamp"] for r in first}) == 1 and first[2]["nodes"] == {} and first[3]["operations"] == {},
          "the state rows first: %s" % first)

    # pools_info carries each pool's parent (the tree's shape, for a replay: docs/what-if.md)
    s.ok("create", {"type": "scheduler_pool", "path": T + "/research/deep"})
    def parents():
        info = [r["pools"]["physical"] for r in rows(event_type="pools_info")]
        return info and "deep" in info[-1] and info[-1]
    info = wait_beating("a pools_info row with research/deep", parents)
    check(info and info["deep"]["parent"] == "research" and info["research"]["parent"] == "<Root>",
          "pools_info's parents: %s" % info)

    # pool_trees_info, just before each pools_info row: every tree's config (nodes_filter, for
    # an offline replay of a cluster with several trees: docs/what-if.md) and the default tree
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "gpu", "nodes_filter": "gpu"}})
    def trees(default):
        info = rows(event_type="pool_trees_info")
        last = info and info[-1]
        return last and "gpu" in last["trees"] and last["default_tree"] == default and last
    got = wait_beating("a pool_trees_info row with tree gpu", lambda: trees("physical"))
    check(got and got["trees"]["gpu"]["nodes_filter"] == "gpu" and
          got["trees"]["physical"]["max_operation_count"] is not None,
          "pool_trees_info: every tree's config: %s" % got)
    s.set("//sys/pool_trees/@default_tree", "gpu")
    wait_beating("a pool_trees_info row after the default tree changed", lambda: trees("gpu"))
    s.set("//sys/pool_trees/@default_tree", "physical")
    wait_beating("a pool_trees_info row with the default tree back", lambda: trees("physical"))
    pairs = rows(event_type=["pool_trees_info", "pools_info"])
    check(pairs and [r["event_type"] for r in pairs] == ["pool_trees_info", "pools_info"] * (len(pairs) // 2)
          and all(a["timestamp"] == b["timestamp"] for a, b in zip(pairs[::2], pairs[1::2])),
          "pool_trees_info before each pools_info row: %s" % [(r["event_type"], r["timestamp"]) for r in pairs])
    # a change of the trees logs those two rows alone: the nodes and the operations follow from
    # their own rows, and on a large cluster their state is megabytes
    state = rows(event_type=["nodes_info", "operations_info"])
    check(len(pairs) >= 4 and [r["timestamp"] for r in state] == [pairs[0]["timestamp"]] * 2,
          "no nodes_info or operations_info after a change of the trees: %s (trees at %s)"
          % ([(r["event_type"], r["timestamp"]) for r in state], [r["timestamp"] for r in pairs]))

    reg = wait_beating("node_registered of n1", lambda: rows(event_type="node_registered"))
    check(reg and reg[0]["node_address"] == "n1" and reg[0]["resource_limits"]["user_slots"] == 4,
          "node_registered: %s" % reg)

    # one operation's life: two jobs, one completes, one fails and runs again, completes
    op = s.ok("start_op", {"operation_type": "vanilla",
                           "spec": {"pool": "research", "max_failed_job_count": 5, "tasks": task(2)}})["operation_id"]
    wait_beating("2 jobs running", lambda: len(node.running) == 2, [node])
    first = sorted(node.running)
    node.finish(first[0], "completed")
    node.finish(first[1], "failed", error="boom")
    wait_beating("the failed job's work runs again", lambda: len(node.running) == 1 and
              sorted(node.running) != first[1:], [node])
    node.finish_all("completed")
    got = wait_beating("operation_completed", lambda: "operation_completed" in types(op), [node])
    evs = rows(operation_id=op)
    check([e["event_type"] for e in evs] == ["operation_started", "job_started", "job_started",
                                             "job_completed", "job_failed", "job_started",
                                             "job_completed", "operation_completed"],
          "the operation's rows in order: %s" % [e["event_type"] for e in evs])
    started, done = evs[0], evs[-1]
    check(started["pool"] == "research" and started["authenticated_user"] == "admin" and
          started["spec"]["pool"] == "research" and started["operation_type"] == "vanilla" and
          started["scheduling_info_per_tree"] == {"physical": {"pool": "research"}} and
          started["tasks"][0]["job_count"] == 2, "operation_started: %s" % started)
    check(done["progress"]["jobs"]["completed"] == 2 and done["progress"]["jobs"]["failed"] == 1 and
          done["start_time"] <= done["finish_time"] and "error" not in done,
          "operation_completed: %s" % done)
    js = evs[1]
    check(js["node_address"] == "n1" and js["tree_id"] == "physical" and js["job_type"] == "vanilla"
          and js["resource_limits"]["cpu"] == 1 and js["task_name"] == "t", "job_started: %s" % js)
    failed = [e for e in evs if e["event_type"] == "job_failed"][0]
    check(failed["error"]["message"] == "boom" and failed["job_id"] == first[1] and
          failed["start_time"] <= failed["finish_time"], "job_failed: %s" % failed)

    # an aborted operation: its running job ends aborted with the operation's reason
    op2 = s.ok("start_op", {"operation_type": "vanilla", "spec": {"tasks": task(1)}})["operation_id"]
    wait_beating("op2 runs", lambda: "job_started" in types(op2), [node])
    s.ok("update_op_parameters", {"operation_id": op2, "parameters": {"weight": 3}})
    rp = wait_beating("runtime_parameters_info", lambda: rows(operation_id=op2, event_type="runtime_parameters_info"))
    check(rp and rp[0]["authenticated_user"] == "admin" and
          rp[0]["runtime_parameters"]["scheduling_options_per_pool_tree"]["physical"]["weight"] == 3,
          "runtime_parameters_info: %s" % rp)
    s.ok("abort_op", {"operation_id": op2})
    wait_beating("operation_aborted", lambda: "operation_aborted" in types(op2), [node])
    ab = rows(operation_id=op2, event_type="job_aborted")
    check(len(ab) == 1 and ab[0]["reason"] == "operation_aborted", "op2's job_aborted: %s" % ab)

    # filters
    both = rows(event_type=["operation_started", "operation_aborted"], operation_id=op2)
    check([r["event_type"] for r in both] == ["operation_started", "operation_aborted"],
          "event_type as a list: %s" % both)
    every = rows()
    check(rows(limit=2) == every[-2:], "limit keeps the newest rows, oldest first")
    t = every[-1]["timestamp"]
    check(all(r["timestamp"] >= t for r in rows(since=t)) and rows(since=t),
          "since: rows at or after it")
    t0 = every[0]["timestamp"]
    check(rows(until=t0) and all(r["timestamp"] <= t0 for r in rows(until=t0)),
          "until: rows at or before it")
    check(rows(since=t0, until=t) == every, "since and until together")
    check([r["timestamp"] for r in every] == sorted(r["timestamp"] for r in every), "rows in time order")
    for bad, name in (({"limit": 0}, "limit"), ({"since": "yesterday"}, "since"),
                      ({"until": -1}, "until"),
                      ({"event_type": [1]}, "event_type"), ({"operation_id": 5}, "operation_id")):
        st, out = s.call("get", dict(bad, path=LOG))
        check(st == 400 and out["message"].startswith(name + ":") and "got" in out["message"],
              "bad %s: %d %s" % (bad, st, out))
    st, out = s.call("get", {"path": T, "operation_id": op})
    check(st == 400 and "operation_id" in out["message"], "filters on another path: %d %s" % (st, out))
    check(s.ok("exists", {"path": LOG})["value"] is True, "exists of the event log")

    # the YTsaurus face: ISO times, the filters as query parameters
    q = urllib.parse.urlencode({"path": LOG, "operation_id": op, "event_type": "operation_completed"})
    st, out = s.raw("GET", "/api/v4/get?" + q, None, s.admin)
    v4 = json.loads(out)["value"] if st == 200 else []
    check(len(v4) == 1 and v4[0]["timestamp"].endswith("Z") and v4[0]["finish_time"].endswith("Z"),
          "v4 get: %d %s" % (st, out[:300]))

    # the CLI: JSON lines, the filters as flags (an event type list with commas)
    cli = lambda *a: subprocess.run([bin, "event-log", "--proxy", s.url(""), "--token", s.admin] + list(a),
                                    capture_output=True, text=True, timeout=60)
    r = cli("--operation-id", op2, "--event-type", "operation_started,operation_aborted")
    got = [json.loads(l)["event_type"] for l in r.stdout.splitlines()] if r.returncode == 0 else r.stderr
    check(got == ["operation_started", "operation_aborted"], "poolsched event-log: %s" % got)
    r = cli("--limit", "1", "--format", "json")
    check(r.returncode == 0 and json.loads(r.stdout) == rows(limit=1), "event-log --format json: %s" % r.stdout[:200])
    r = cli("--limit", "0")
    check(r.returncode == 2 and "--limit" in r.stderr, "event-log --limit 0: %d %s" % (r.returncode, r.stderr))

    # a restart keeps the rows and goes on after them
    before = rows()
    s.stop()
    s = Scheduler(bin, work + "/data", dict(cfg, event_log_max_row_count=5, node_offline_timeout=2000)).start()
    # its state rows come at its engine loop's first tick: a heartbeat answered before then
    # (a slow start, under a sanitizer) logs its row first. The bound's checks below count rows
    # from the state rows, so they wait for them.
    # (the old rows stay until the first new one applies the bound of 5)
    wait_beating("the state rows after the restart",
                 lambda: (lambda r: len(r) <= 5 and any(state_at(r, k) for k in range(len(r))))(rows()))
    node = FakeNode(s, "n1", cpu=4, memory=16 << 30, slots=4)
    # the bound: the next row drops every row beyond the newest 5
    node.heartbeat()
    # (the state rows of the restart, then node_registered)
    after = wait_beating("5 rows after the bound applied", lambda: (lambda r: r if len(r) == 5 else None)(rows()), [node])
    if after:
        check([r["event_type"] for r in after] ==
              ["pool_trees_info", "pools_info", "nodes_info", "operations_info", "node_registered"],
              "the newest rows kept, the new rows after them: %s" % [r["event_type"] for r in after])
    # a node that stops heartbeating: node_offline after node_offline_timeout
    gone = FakeNode(s, "n2", cpu=1, memory=1 << 30, slots=1)
    gone.heartbeat()
    off = wait_beating("node_offline of n2", lambda: [r for r in rows(event_type="node_offline")
                                                  if r["node_address"] == "n2"], [node])
    check(off and off[0]["resource_limits"]["cpu"] == 1, "node_offline: %s" % off)
    # the bound drops the state rows (n3's registration pushes out the last ones): they are
    # logged again (n1 and n3 in scheduling, n2 gone), so the log always holds a state a replay
    # can start from
    n3 = FakeNode(s, "n3", cpu=1, memory=1 << 30, slots=1)
    n3.heartbeat()
    def state_again():
        got = rows()
        info = [r for r in got if r["event_type"] == "nodes_info"]
        k = max([k for k, r in enumerate(got) if r["event_type"] == "pool_trees_info"] or [0])
        return (state_at(got, k) and info and "n2" not in info[-1]["nodes"] and
                "n3" in info[-1]["nodes"] and info[-1])
    info = wait_beating("nodes_info logged again after the bound dropped it", state_again, [node, n3])
    check(info and info["nodes"].get("n1", {}).get("resource_limits", {}).get("user_slots") == 4 and
          info["nodes"]["n1"]["tags"] == [] and
          [r["event_type"] for r in rows(event_type=["pool_trees_info", "pools_info", "nodes_info", "operations_info"])][-4:] ==
          ["pool_trees_info", "pools_info", "nodes_info", "operations_info"],
          "the state rows again: %s" % rows())

    # state rows every sixteenth of the bound (at least 64 rows) once nodes_info_logging_period
    # has passed since the last ones: with 200 rows and a period of 4 s, 70 nodes registered in 2
    # s make 64 rows before the period is over; the rows come when it is, with every node
    # registered by then, so that a replay finds a state near the log's start
    s.stop()
    s = Scheduler(bin, work + "/data", dict(cfg, event_log_max_row_count=200,
                                            nodes_info_logging_period=4000)).start()
    op3 = s.ok("start_op", {"operation_type": "vanilla", "spec": {"pool": "research", "tasks": task(2)}})["operation_id"]
    many = [FakeNode(s, "m%02d" % i, cpu=1, memory=1 << 30, slots=1) for i in range(70)]
    for i, n in enumerate(many):   # 35 a second: the 64 rows come before the period's end
        n.heartbeat()
        if i % 35 == 34:
            time.sleep(1.0)
    def periodic():
        got = rows()
        at = [i for i, r in enumerate(got) if r["event_type"] == "pool_trees_info"]
        late = [b for a, b in zip(at, at[1:]) if b - a >= 64 and state_at(got, b)]
        return late and (got, at, late[0])
    got = wait_beating("state rows after 64 rows", periodic, many)
    if got:
        got, at, k = got
        nodes = got[k + 2]["nodes"] if k + 2 < len(got) else {}
        first_m = next(i for i, r in enumerate(got) if r.get("node_address", "").startswith("m"))
        check(all(b - a >= 64 and got[b]["timestamp"] - got[a]["timestamp"] >= 4000
                  for a, b in zip(at, at[1:]) if b > first_m)   # none sooner
              and got[k + 1]["event_type"] == "pools_info" and got[k + 2]["event_type"] == "nodes_info" and
              {a for a in nodes if a.startswith("m")} ==
              {r["node_address"] for r in got[:k]
               if r["event_type"] == "node_registered" and r["node_address"].startswith("m")},
              "state rows every 64 rows and 4 s: %s" % [(i, r["event_type"], r["timestamp"])
                                                       for i, r in enumerate(got)
                                                       if r["event_type"] in ("pool_trees_info", "nodes_info")])
        # operations_info: every operation not finished, as operation_started has it, with its
        # start time and each task's completed jobs (a replay's operations whose started row
        # the bound dropped)
        ops = got[k + 3]["operations"] if got[k + 3]["event_type"] == "operations_info" else {}
        started = [r for r in got if r["event_type"] == "operation_started" and r["operation_id"] == op3]
        o = ops.get(op3, {})
        check(started and o.get("start_time") == started[0]["timestamp"] and
              o.get("scheduling_info_per_tree") == {"physical": {"pool": "research"}} and
              o.get("spec") == {k: v for k, v in started[0]["spec"].items() if k != "tasks"} and
              [(t["name"], t["job_count"], t["completed"]) for t in o.get("tasks", [])] == [("t", 2, 0)] and
              o.get("runtime_parameters", {}).get("scheduling_options_per_pool_tree") is not None,
              "operations_info: %s (started: %s)" % (ops, started))
finally:
    s.stop()
finish()
PY
