#!/usr/bin/env bash
# Operations through their lifecycle against a real scheduler, with fake nodes speaking the
# heartbeat protocol: start, running, jobs to start with memory reserve and job_cpu_monitor,
# completion, failure after max_failed_job_count, abort/suspend/resume/complete,
# update_op_parameters, list_operations/list_jobs/get_job_stderr, node offline and rescheduling,
# a node matching two trees (409), unknown jobs told to abort, CPU reclaim counted in usage.
# usage: server_operations.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_operations.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
with Scheduler(bin, work + "/data", {"node_offline_timeout": 1500, "max_failed_job_count": 3,
                                     "fair_share_update_period": 200}).start() as s:
    s.set("//sys/pool_trees/physical/@fair_share_update_period", 200)
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/research"})
    alice = s.token("alice")
    bob = s.token("bob")
    n1 = FakeNode(s, "n1", cpu=4, slots=4)
    n1.heartbeat()
    time.sleep(0.4)

    spec = {"pool": "research", "job_cpu_monitor": {"enable_cpu_reclaim": True},
            "tasks": {"main": {"command": "echo hi", "job_count": 3, "cpu_limit": 1,
                               "memory_limit": 100 << 20, "environment": {"A": "1"}}}}
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": spec}, alice)["operation_id"]
    o = s.ok("get_operation", {"operation_id": op}, alice)
    check(o["state"] in ("running", "pending"), "new operation state %s" % o["state"])
    check(o["user"] == "alice", "user")
    check(o["pool_per_tree"] == {"physical": "research"}, "pool_per_tree %s" % o["pool_per_tree"])
    rs = o["resulting_spec"]
    check(rs["job_cpu_monitor"]["enable_cpu_reclaim"] is True, "resulting job_cpu_monitor")
    check("smoothing_factor" in rs["job_cpu_monitor"], "job_cpu_monitor defaults filled in")
    check(rs["tasks"]["main"]["cpu_limit"] == 1 and rs["max_failed_job_count"] == 3,
          "resulting task defaults %s" % rs["tasks"])
    check(o["progress"]["total"] == 3 and o["progress"]["pending"] == 3, "progress %s" % o["progress"])

    time.sleep(0.4)
    out = n1.heartbeat()
    starts = out["jobs_to_start"]
    check(len(starts) == 3, "3 jobs to start, got %d" % len(starts))
    if starts:
        j = starts[0]
        check(j["operation_id"] == op and j["command"] == "echo hi" and j["environment"] == {"A": "1"},
              "start entry %s" % j)
        check(j["memory_reserve"] > 0 and j["memory_reserve"] <= 100 << 20, "memory reserve %s" % j)
        check(j["job_cpu_monitor"]["enable_cpu_reclaim"] is True, "job_cpu_monitor in start entry")
    o = s.ok("get_operation", {"operation_id": op})
    check(o["state"] == "running" and o["progress"]["running"] == 3, "running %s" % o["progress"])

    # CPU reclaim: the reported guarantee is the job's CPU usage
    for jid in n1.running:
        n1.running[jid]["cpu_guarantee"] = 0.5
    n1.heartbeat()
    jobs = s.ok("list_jobs", {"operation_id": op})["jobs"]
    check(all(j["cpu_guarantee"] == 0.5 for j in jobs), "guarantee recorded %s" % [j["cpu_guarantee"] for j in jobs])

    # finish: one with stderr and statistics
    ids = sorted(n1.running)
    n1.finish(ids[0], stderr="boom\n", statistics={"user_job/max_memory": 10 << 20})
    n1.finish(ids[1])
    out = n1.heartbeat()
    check(sorted(out["acknowledged"]) == sorted(ids[:2]), "acknowledged %s" % out["acknowledged"])
    e = s.ok("get_job_stderr", {"operation_id": op, "job_id": ids[0]})
    check(e == {"stderr": "boom\n", "truncated": False}, "stderr %s" % e)
    check(s.call("get_job_stderr", {"operation_id": op, "job_id": "nope"})[0] == 404, "unknown job 404")
    n1.finish_all()
    n1.heartbeat()
    o = s.ok("get_operation", {"operation_id": op})
    check(o["state"] == "completed" and o["progress"]["completed"] == 3, "completed %s %s" % (o["state"], o["progress"]))
    check("finish_time" in o, "finish_time")
    # times are integer milliseconds since the epoch (formats.md section 1)
    now_ms = int(time.time() * 1000)
    for what, t in (("start_time", o["start_time"]), ("finish_time", o.get("finish_time"))):
        check(type(t) is int and now_ms - 600000 < t <= now_ms + 1000,
              "operation %s is integer ms near now: %r" % (what, t))
    check(o["start_time"] <= o["finish_time"], "start before finish")
    listed = [x for x in s.ok("list_operations", {})["operations"] if x["id"] == op]
    check(len(listed) == 1 and listed[0]["start_time"] == o["start_time"]
          and listed[0]["finish_time"] == o["finish_time"], "list_operations times %s" % listed)
    done = s.ok("list_jobs", {"operation_id": op, "state": "completed"})["jobs"]
    check(len(done) == 3, "list_jobs completed %d" % len(done))
    for j in done:
        check(type(j["start_time"]) is int and type(j["finish_time"]) is int
              and o["start_time"] <= j["start_time"] <= j["finish_time"] <= now_ms + 1000,
              "job times are integer ms: %r %r" % (j["start_time"], j.get("finish_time")))
    check(any(j.get("statistics", {}).get("user_job/max_memory") == 10 << 20 for j in done), "statistics kept")

    # unknown running job: told to abort
    st, out = s.heartbeat({"node_id": "n1", "resource_limits": n1.limits,
                           "jobs": [{"job_id": "j-unknown", "state": "running"}]})
    check(st == 200 and out["jobs_to_abort"] == [{"job_id": "j-unknown", "reason": "unknown job"}],
          "unknown job aborted: %s" % out)

    # failures: max_failed_job_count = 3
    op2 = s.ok("start_op", {"spec": {"pool": "research", "tasks": {"t": {"command": "false", "job_count": 1}}}}, bob)["operation_id"]
    time.sleep(0.4)
    for attempt in range(3):
        n1.heartbeat()
        n1.finish_all("failed", exit_code=1)
        n1.heartbeat()
        time.sleep(0.3)
    o = s.ok("get_operation", {"operation_id": op2})
    check(o["state"] == "failed" and "max_failed_job_count" in o.get("error", ""), "failed op %s %s" % (o["state"], o.get("error")))
    check(o["progress"]["failed"] == 3, "3 failed jobs %s" % o["progress"])

    # user-given keys and task names are quoted and escaped: every error message is one line
    for tasks, want in [({"t": {"command": "x", "job_count": "3\n"}}, 'got "3\\n"'),
                        ({"a\nb": {"command": "x", "job_count": 1}}, 'task name "a\\nb"'),
                        ({"t": {"command": "x", "job_count": 1}}, None)]:
        spec = {"pool": "research", "tasks": tasks}
        if want is None:
            spec["job_cpu_monitor"] = {"smoothing_factor": "a\tb"}
            want = 'job_cpu_monitor/smoothing_factor: must be a number, got "a\\tb"'
        st, out = s.call("start_op", {"spec": spec}, bob)
        check(st == 400 and want in out["message"] and "\n" not in out["message"],
              "one-line error for %r: %d %s" % (tasks, st, out))

    # the largest operation start_op accepts: two tasks of a million jobs of 16 TiB each; their
    # demand for the trees' necessary-resources check leaves int64 (it saturates; under the
    # sanitizers an overflow there stops the scheduler)
    big = {"command": "true", "job_count": 1000000, "cpu_limit": 1, "memory_limit": 16 << 40}
    st, out = s.call("start_op", {"spec": {"pool": "research", "tasks": {"a": big, "b": big}}}, bob)
    check(st == 200, "the largest operation starts: %d %s" % (st, out))
    if st == 200:
        s.ok("abort_op", {"operation_id": out["operation_id"]}, bob)

    # permissions and lifecycle commands
    op3 = s.ok("start_op", {"spec": {"pool": "research", "tasks": {"t": {"command": "sleep 100", "job_count": 2}}}}, alice)["operation_id"]
    st, out = s.call("abort_op", {"operation_id": op3}, bob)
    check(st == 403 and "bob" in out["message"], "bob aborting alice's op: %d %s" % (st, out))
    check(s.ok("get_operation", {"operation_id": op3})["state"] != "aborted", "no change after 403")
    s.ok("suspend_op", {"operation_id": op3}, alice)
    o = s.ok("get_operation", {"operation_id": op3})
    check(o["suspended"] is True, "suspended")
    time.sleep(0.4)
    out = n1.heartbeat()
    check(out["jobs_to_start"] == [], "suspended op gets no jobs")
    o = s.ok("get_operation", {"operation_id": op3})
    check("suspended" in o.get("pending_reason", ""), "pending reason suspended: %s" % o.get("pending_reason"))
    s.ok("resume_op", {"operation_id": op3}, alice)
    s.ok("update_op_parameters", {"operation_id": op3, "parameters": {"weight": 2}}, alice)
    # upstream: the change lives in runtime_parameters; spec stays as submitted
    g = s.ok("get_operation", {"operation_id": op3})
    check(g["runtime_parameters"]["scheduling_options_per_pool_tree"] ==
          {"physical": {"pool": "research", "weight": 2, "resource_limits": {}}},
          "weight updated in runtime_parameters: %s" % g["runtime_parameters"])
    check("weight" not in g["spec"] and g["resulting_spec"]["weight"] is None,
          "spec and resulting_spec as submitted: %s" % g["spec"])
    st, out = s.call("update_op_parameters", {"operation_id": op3, "parameters": {"tasks": {}}}, alice)
    check(st == 400, "update of tasks refused: %d %s" % (st, out))
    time.sleep(0.4)
    out = n1.heartbeat()
    check(len(out["jobs_to_start"]) == 2, "resumed op gets 2 jobs: %s" % out["jobs_to_start"])
    lst = s.ok("list_operations", {"user": "alice"})["operations"]
    check([x["id"] for x in lst] == [op3, op], "list_operations newest first: %s" % [x["id"] for x in lst])
    check(len(s.ok("list_operations", {"state": "failed"})["operations"]) == 1, "filter by state")
    check(len(s.ok("list_operations", {"limit": 1})["operations"]) == 1, "limit")
    # brief: the same operations and keys without the specs; brief_spec from the spec, weight
    # the current one
    brief = s.ok("list_operations", {"user": "alice", "brief": True})["operations"]
    full = s.ok("list_operations", {"user": "alice"})["operations"]
    check([x["id"] for x in brief] == [x["id"] for x in full], "brief lists the same %s" % brief)
    b, f = brief[0], full[0]
    same = ("id", "user", "state", "start_time", "pool_per_tree", "suspended", "progress", "operation_type")
    check(all(b[k] == f[k] for k in same) and b.get("weight") == 2 ==
          f["runtime_parameters"]["scheduling_options_per_pool_tree"]["physical"]["weight"]
          and b.get("brief_spec") == {k: f["spec"][k] for k in ("pool", "title") if k in f["spec"]}
          and not {"spec", "resulting_spec", "pending_reason", "alerts", "runtime_parameters"} & set(b),
          "brief operation %s vs %s" % (b, f))
    check(s.call("list_operations", {"brief": "yes"})[0] == 400, "brief must be a boolean")
    # counters (YTsaurus's, over every operation: each over those passing the other filters) and
    # filter (case-insensitive substring of id, user, state, type, pools, title)
    import collections
    allops = s.ok("list_operations", {"limit": 10000})["operations"]
    mine = [o for o in allops if o["user"] == "alice"]
    c = s.ok("list_operations", {"user": "alice", "counters": True, "limit": 1})
    check(c["pool_counts"] == dict(collections.Counter(p for o in mine for p in o["pool_per_tree"].values()))
          and c["user_counts"] == dict(collections.Counter(o["user"] for o in allops))
          and c["state_counts"] == dict(collections.Counter(o["state"] for o in mine))
          and c["total_count"] == len(mine) and [o["id"] for o in c["operations"]] == [mine[0]["id"]]
          and c["failed_jobs_count"] == sum(1 for o in mine if o["progress"]["failed"] > 0),
          "counters %s over %s" % (c, [(o["user"], o["state"], o["pool_per_tree"]) for o in allops]))
    check("pool_counts" not in s.ok("list_operations", {}), "no counters unless asked")
    check([o["id"] for o in s.ok("list_operations", {"filter": op3.upper()})["operations"]] == [op3], "filter by id")
    check([o["id"] for o in s.ok("list_operations", {"filter": "ALIC"})["operations"]] == [o["id"] for o in mine],
          "filter by user, any case")

    # node offline: n1 stops; its jobs are aborted and rescheduled on n2
    n2 = FakeNode(s, "n2", cpu=4, slots=4)
    n2.heartbeat()
    time.sleep(2.2)
    early = n2.heartbeat()   # may already restart them: the heartbeat that finds n1 offline
    jobs = s.ok("list_jobs", {"operation_id": op3, "state": "aborted"})["jobs"]
    check(len(jobs) == 2 and all(j["abort_reason"] == "node_offline" for j in jobs), "node_offline aborts %s" % jobs)
    check("event=node_offline node=n1" in s.logtext(), "node_offline logged")
    time.sleep(0.4)
    out = n2.heartbeat()
    started = len(early["jobs_to_start"]) + len(out["jobs_to_start"])
    check(started == 2 and len(n2.running) == 2, "rescheduled on n2: %d" % started)
    s.ok("complete_op", {"operation_id": op3}, alice)
    out = n2.heartbeat()
    check(len(out["jobs_to_abort"]) == 2, "jobs of a completed op are aborted: %s" % out["jobs_to_abort"])
    check(s.ok("get_operation", {"operation_id": op3})["state"] == "completed", "complete_op")
    st, out = s.call("abort_op", {"operation_id": op3}, alice)
    check(st == 409, "abort of a finished op: %d" % st)

    # two trees: a node matching both is refused, naming both
    s.ok("create", {"type": "scheduler_pool_tree", "path": "//sys/pool_trees/gpu", "attributes": {"nodes_filter": "gpu"}})
    s.set("//sys/pool_trees/physical/@nodes_filter", "!gpu")
    st, out = s.heartbeat({"node_id": "g1", "tags": ["gpu"], "resource_limits": {"cpu": 8}, "jobs": []})
    check(st == 200, "gpu node registers: %s" % out)
    st, out = s.call("set", {"path": "//sys/pool_trees/physical/@nodes_filter", "value": ""})
    check(st == 400 and "g1" in out["message"] and "gpu" in out["message"], "overlap refused: %s" % out)
    check(s.get("//sys/pool_trees/physical/@nodes_filter") == "!gpu", "overlapping filter refused")
    s.set("//sys/pool_trees/gpu/@nodes_filter", "gpu | ssd")
    st, out = s.heartbeat({"node_id": "s1", "tags": ["ssd"], "resource_limits": {"cpu": 8}, "jobs": []})
    check(st == 409 and "physical" in out["message"] and "gpu" in out["message"], "two trees 409: %d %s" % (st, out))

    m = s.raw("GET", "/metrics")[1]
    check("poolsched_node_heartbeats_total" in m and "poolsched_pool_fair_share_ratio" in m, "metrics")
    check(s.raw("GET", "/healthz") == (200, "ok\n"), "healthz")
    log = s.logtext()
    for ev in ("operation_started", "operation_finished", "node_registered", "config_changed"):
        check("event=" + ev in log, "event %s logged" % ev)
    # the run-time parameters survive a restart, the spec stays as submitted
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/move_a"})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/move_b"})
    op4 = s.ok("start_op", {"spec": {"pool": "move_a", "tasks": {"t": {"command": "sleep 100",
                                                                        "job_count": 1}}}}, alice)["operation_id"]
    s.ok("update_op_parameters", {"operation_id": op4, "parameters": {"pool": "move_b"}}, alice)
    s.stop()
    s.start()
    g = s.ok("get_operation", {"operation_id": op3})
    check(g["runtime_parameters"]["scheduling_options_per_pool_tree"]["physical"].get("weight") == 2
          and "weight" not in g["spec"], "after a restart: %s %s" % (g["runtime_parameters"], g["spec"]))
    # moved to move_b, restarted (the spec still says move_a): a move back to the submitted pool
    # is a move, not a no-op against the spec
    check(s.ok("get_operation", {"operation_id": op4})["pool_per_tree"] == {"physical": "move_b"},
          "op4 restored in move_b")
    s.ok("update_op_parameters", {"operation_id": op4, "parameters": {"pool": "move_a"}}, alice)
    g = s.ok("get_operation", {"operation_id": op4})
    check(g["pool_per_tree"] == {"physical": "move_a"}, "moved back to the submitted pool after a "
          "restart: %s" % g["pool_per_tree"])
finish()
EOF
