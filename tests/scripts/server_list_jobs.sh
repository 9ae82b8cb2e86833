#!/usr/bin/env bash
# list_jobs' parameters against a real scheduler with fake nodes (docs/api.md "list_jobs"): the
# state filter, sort_field / sort_order, offset / limit, state_counts over every job whatever
# the filter, refusals naming the parameter; get_job of running and stored jobs; and through
# /api/v4 upstream's default limit of 1,000 with its job counts, and get_job. Every expected page is worked out here from the unfiltered listing
# (start order), not by the server's sort.
# usage: server_list_jobs.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_list_jobs.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import json, sys, time, urllib.parse
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
with Scheduler(bin, work + "/data", {"fair_share_update_period": 100}).start() as s:
    s.set("//sys/pool_trees/physical/@fair_share_update_period", 100)
    nodes = [FakeNode(s, "a-node", cpu=600, memory=600 << 30, slots=600),
             FakeNode(s, "b-node", cpu=600, memory=600 << 30, slots=600)]
    for n in nodes:
        n.heartbeat()
    spec = {"max_failed_job_count": 100, "tasks": {"t": {"command": "true", "job_count": 1005, "cpu_limit": 1,
                            "memory_limit": 64 << 20}}}
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
    deadline = time.time() + 60
    while sum(len(n.running) for n in nodes) < 1005 and time.time() < deadline:
        for n in nodes:
            n.heartbeat()
        time.sleep(0.05)
    check(sum(len(n.running) for n in nodes) == 1005, "1,005 jobs running, got %d" % sum(len(n.running) for n in nodes))
    # finish some of them, a few at a time so finish times differ: 30 completed, 10 failed,
    # 5 aborted (by the node), the rest running
    ids = sorted(j for n in nodes for j in n.running)
    owner = {j: n for n in nodes for j in n.running}
    ends = [(j, "completed") for j in ids[100:130]] + [(j, "failed") for j in ids[200:210]] + \
           [(j, "aborted") for j in ids[300:305]]
    for k in range(0, len(ends), 5):
        for j, st in ends[k:k + 5]:
            owner[j].finish(j, st, **({"error": "boom"} if st == "failed" else {}))
        for n in nodes:
            n.heartbeat()
        time.sleep(0.02)
    for n in nodes:
        n.heartbeat()

    every = s.ok("list_jobs", {"operation_id": op})
    jobs = every["jobs"]
    # the failed and aborted jobs' work was started again: as many running as the nodes hold
    running = sum(len(n.running) for n in nodes)
    want_counts = {"running": running, "completed": 30, "failed": 10, "aborted": 5}
    total = running + 45
    check(running == 975 and len(jobs) == total and every["job_count"] == total,
          "/api/v1 lists every job by default: %d of %d (%d running)" % (len(jobs), total, running))
    check(every["state_counts"] == want_counts, "state_counts %s" % every["state_counts"])
    check([j["start_time"] for j in jobs] == sorted(j["start_time"] for j in jobs), "start order")
    page = lambda body: s.ok("list_jobs", dict(body, operation_id=op))
    ids_of = lambda r: [j["id"] for j in r["jobs"]]

    r = page({"state": "completed"})
    check(ids_of(r) == [j["id"] for j in jobs if j["state"] == "completed"] and r["job_count"] == 30,
          "state filter: the completed jobs in start order")
    check(r["state_counts"] == want_counts, "state_counts ignore the state filter: %s" % r["state_counts"])

    # sort keys worked out here; ties keep start order (Python's sort is stable)
    fin = lambda j: j.get("finish_time", float("inf"))
    idkey = lambda j: (len(j["id"]), j["id"])
    cases = [
        ({"sort_field": "finish_time", "sort_order": "descending", "state": "completed", "offset": 3, "limit": 7},
         sorted([j for j in jobs if j["state"] == "completed"], key=fin, reverse=True)[3:10]),
        ({"sort_field": "finish_time", "limit": 50}, sorted(jobs, key=fin)[:50]),
        ({"sort_field": "state", "offset": 955, "limit": 60}, sorted(jobs, key=lambda j: j["state"])[955:1015]),
        ({"sort_field": "address", "sort_order": "descending", "limit": 20},
         sorted(jobs, key=lambda j: j["node_id"], reverse=True)[:20]),
        ({"sort_field": "id", "sort_order": "descending", "offset": 1000}, sorted(jobs, key=idkey, reverse=True)[1000:]),
        ({"sort_order": "descending", "limit": 3}, jobs[::-1][:3]),
        ({"offset": 2000}, []),
        ({"limit": 0}, []),
    ]
    for body, want in cases:
        r = page(body)
        check(ids_of(r) == [j["id"] for j in want], "list_jobs %s: %s... vs %s..." % (json.dumps(body), ids_of(r)[:3], [j["id"] for j in want][:3]))
    # a stable descending sort keeps ties in start order, as the server does: python's
    # reverse=True does the same (it keeps the original order of equal keys)
    dur = page({"sort_field": "duration", "sort_order": "descending", "state": "failed"})
    d = [j["finish_time"] - j["start_time"] for j in dur["jobs"]]
    check(len(d) == 10 and d == sorted(d, reverse=True), "duration descending %s" % d)

    for body, words in [({"sort_field": "progress"}, ["sort_field", "progress", "finish_time"]),
                        ({"sort_order": "down"}, ["sort_order", "down", "descending"]),
                        ({"limit": -1}, ["limit", "-1"]), ({"offset": "x"}, ["offset"]),
                        ({"state": "runing"}, ["state", "runing", "completed"]),
                        ({"sort": "id"}, ["sort"])]:
        status, out = s.call("list_jobs", dict(body, operation_id=op))
        msg = out.get("message", "") if isinstance(out, dict) else str(out)
        check(status == 400 and all(w in msg for w in words), "refused %s: %d %s" % (body, status, msg))

    # get_job: one job as list_jobs shows it, a running one (in memory) and finished ones (out
    # of memory once stored: job_archive.h); another operation's job or an unknown id is 404
    time.sleep(0.3)
    for want in (jobs[0], next(j for j in jobs if j["state"] == "completed"),
                 next(j for j in jobs if j["state"] == "failed")):
        got = s.ok("get_job", {"operation_id": op, "job_id": want["id"]})
        check(got == want, "get_job %s (%s) is its list_jobs entry: %s" % (want["id"], want["state"], got))
    other = s.ok("start_op", {"operation_type": "vanilla", "spec": {"tasks": {"t": {"command": "true", "job_count": 1}}}})["operation_id"]
    for body in ({"operation_id": other, "job_id": jobs[0]["id"]}, {"operation_id": op, "job_id": "j-nope"}):
        status, out = s.call("get_job", body)
        check(status == 404 and "does not exist" in out.get("message", ""), "get_job %s: %d %s" % (body, status, out))

    # /api/v4: upstream's default limit 1,000; counts over every job
    def v4(params):
        status, out = s.raw("GET", "/api/v4/list_jobs?" + urllib.parse.urlencode(dict(params, operation_id=op)), token=s.admin)
        check(status == 200, "v4 list_jobs %s: %d %s" % (params, status, out[:200]))
        return json.loads(out)
    r = v4({})
    check(len(r["jobs"]) == 1000 and [j["id"] for j in r["jobs"]] == [j["id"] for j in jobs[:1000]],
          "v4 list_jobs: the first 1,000 by default, got %d" % len(r["jobs"]))
    check(r["state_counts"] == want_counts and r["type_counts"] == {"vanilla": total}
          and r["controller_agent_job_count"] == total, "v4 counts %s" % {k: r[k] for k in r if k != "jobs"})
    r = v4({"job_state": "failed", "sort_field": "start_time", "sort_order": "descending", "limit": 4, "offset": 2})
    want = sorted([j for j in jobs if j["state"] == "failed"], key=lambda j: j["start_time"], reverse=True)[2:6]
    check([j["id"] for j in r["jobs"]] == [j["id"] for j in want] and r["controller_agent_job_count"] == 10
          and r["state_counts"] == want_counts, "v4 failed jobs, newest first, page 2..6")
    done = next(j for j in jobs if j["state"] == "completed")
    status, out = s.raw("GET", "/api/v4/get_job?operation_id=%s&job_id=%s" % (op, done["id"]), token=s.admin)
    g = json.loads(out) if status == 200 else {}
    check(g.get("id") == done["id"] and g.get("state") == "completed" and g.get("address") == done["node_id"]
          and g.get("type") == "vanilla", "v4 get_job of a finished job: %d %s" % (status, out[:300]))
    status, out = s.raw("GET", "/api/v4/get_job?operation_id=%s&job_id=j-nope" % op, token=s.admin)
    check(status == 404 and json.loads(out).get("code") == 1918, "v4 get_job of no such job: 1918, %d %s" % (status, out[:200]))
    status, out = s.raw("GET", "/api/v4/list_jobs?operation_id=%s&sort_field=progress" % op, token=s.admin)
    check(status == 400 and "sort_field" in out, "v4 refuses an unknown sort field: %d %s" % (status, out[:200]))
finish()
EOF
