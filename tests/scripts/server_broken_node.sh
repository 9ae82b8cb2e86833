#!/usr/bin/env bash
# Issue 13, "a broken node must not eat the cluster": a node that aborts every job with
# node_error (its work dir unreachable, say) is banned after max_consecutive_job_aborts of them
# in a row — no further jobs go to it, //sys/cluster_nodes/<node>/@banned is true with the
# alert, //sys/scheduler/@alerts and the orchid show it, and each aborted job's error carries
# the node's message — while a good node beside it completes the operation. The ban survives a
# restart; only an admin may lift it (set @banned false), after which the node gets jobs again.
# A completed job resets the count: a node that fails now and then is never banned.
# usage: server_broken_node.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_broken_node.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 60 "$@" <<'EOF2'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
MAX = 10   # max_consecutive_job_aborts, the default (docs/faults.md)
MSG = "cannot enter the work dir /srv/poolsched/slots/3: Permission denied"
cfg = {"fair_share_update_period": 100}
s = Scheduler(bin, work + "/data", cfg).start()
bad = FakeNode(s, "bad", cpu=4, slots=4)
good = FakeNode(s, "good", cpu=4, slots=4)
sent_to_bad = []

def node_error(node):
    for jid in list(node.running):
        node.finish(jid, "aborted", abort_reason="node_error", exit_code=-1, stderr=MSG + "\n")

def beat(pattern=None):
    """One round: the bad node aborts (or follows pattern), the good node completes its jobs."""
    out = bad.heartbeat()
    sent_to_bad.extend(j["job_id"] for j in out.get("jobs_to_start", []))
    if pattern is None:
        node_error(bad)
    else:
        for jid in list(bad.running):
            what = pattern.pop(0) if pattern else "completed"
            if what == "completed":
                bad.finish(jid, "completed", exit_code=0)
            else:
                bad.finish(jid, "aborted", abort_reason="node_error", stderr=MSG)
    good.heartbeat()
    good.finish_all("completed", exit_code=0)

def run_op(count):
    spec = {"tasks": {"main": {"command": "true", "job_count": count, "cpu_limit": 1}}}
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]

def wait_op(op, pattern=None, seconds=15):
    end = time.time() + seconds
    while time.time() < end:
        beat(pattern)
        if s.ok("get_operation", {"operation_id": op})["state"] != "running":
            break
        time.sleep(0.05)
    for _ in range(3):   # deliver the last reports
        beat(pattern)
    return s.ok("get_operation", {"operation_id": op})

def attr(node, name):
    return s.get("//sys/cluster_nodes/%s/@%s" % (node, name))

with s:
    beat()
    s.update(0.3)
    op = run_op(20)
    info = wait_op(op)
    check(info["state"] == "completed", "the operation completes on the good node: %s" % info)
    check(attr("bad", "banned") is True, "the bad node is banned")
    aborted_on_bad = len(sent_to_bad)
    print("jobs sent to the bad node before its ban: %d" % aborted_on_bad, flush=True)
    check(MAX <= aborted_on_bad <= MAX + 3,
          "the bad node got %d jobs; banned after %d aborts (4 slots)" % (aborted_on_bad, MAX))
    # no further jobs go to it
    op2 = run_op(8)
    info = wait_op(op2)
    check(info["state"] == "completed", "a second operation completes: %s" % info)
    check(len(sent_to_bad) == aborted_on_bad,
          "no job goes to a banned node: %d more" % (len(sent_to_bad) - aborted_on_bad))
    # the job errors say why
    jobs = s.ok("list_jobs", {"operation_id": op})["jobs"]
    mine = [j for j in jobs if j["node_id"] == "bad"]
    # (a job still running there when the ban came is aborted by it: node_with_disabled_jobs)
    errs = [j for j in mine if j.get("abort_reason") == "node_error"]
    check(len(errs) >= MAX and all(MSG in (j.get("error") or "") for j in errs) and
          all(j["state"] == "aborted" and j.get("abort_reason") in
              ("node_error", "node_with_disabled_jobs") for j in mine),
          "the jobs aborted on the bad node carry its message: %s" %
          [(j["state"], j.get("abort_reason"), j.get("error")) for j in mine])
    # alerts: node attribute, scheduler alerts, orchid
    alerts = s.get("//sys/scheduler/@alerts")
    check(len(alerts) == 1 and alerts[0]["attributes"]["node"] == "bad" and
          "consecutive" in alerts[0]["message"] and MSG in alerts[0]["attributes"]["last_abort_error"],
          "a scheduler alert names the node: %s" % alerts)
    check(alerts and alerts[0].get("code") == 1 and
          alerts[0]["attributes"].get("alert_type") == "node_jobs_disabled",
          "the ban alert has the error shape of the other alerts (alerts.h): %s" % alerts)
    check(len(attr("bad", "alerts")) == 1, "the node lists its alert")
    check("node_error" in attr("bad", "ban_message"), "ban message: %s" % attr("bad", "ban_message"))
    check(attr("good", "banned") is False, "the good node is not banned")
    orchid = s.get("//sys/scheduler/orchid/scheduler/nodes/bad")
    check(orchid["banned"] is True, "orchid shows the ban: %s" % orchid)
    check(sorted(s.ok("list", {"path": "//sys/cluster_nodes"})["value"]) == ["bad", "good"],
          "//sys/cluster_nodes lists the nodes")
    # the ban survives a restart
    s.stop()
    s.start()
    check(attr("bad", "banned") is True, "the ban survives a restart")
    # a user may not lift it; an admin may
    user = s.token("alice")
    st, _ = s.call("set", {"path": "//sys/cluster_nodes/bad/@banned", "value": False}, user)
    check(st == 403, "a user cannot unban a node: %d" % st)
    st, _ = s.call("set", {"path": "//sys/cluster_nodes/bad/@banned", "value": "no"})
    check(st == 400, "@banned takes a boolean: %d" % st)
    s.set("//sys/cluster_nodes/bad/@banned", False)
    check(attr("bad", "banned") is False and s.get("//sys/scheduler/@alerts") == [],
          "unbanned: no alert left")
    # back in scheduling; a node that fails now and then (a completed job between) stays in
    before = len(sent_to_bad)
    op3 = run_op(16)
    pattern = ["abort", "abort", "completed"] * 20
    info = wait_op(op3, pattern)
    check(info["state"] == "completed", "third operation completes: %s" % info)
    check(len(sent_to_bad) > before, "the unbanned node gets jobs again")
    check(attr("bad", "banned") is False and attr("bad", "consecutive_job_aborts") < MAX,
          "a completed job resets the count: banned %s, count %s" %
          (attr("bad", "banned"), attr("bad", "consecutive_job_aborts")))
    # an admin ban of a node with running jobs aborts them
    op4 = run_op(4)
    good.limits["user_slots"] = 0
    for _ in range(5):
        bad.heartbeat()
        good.heartbeat()
        time.sleep(0.1)
    check(len(bad.running) > 0, "the bad node runs jobs of op4")
    s.set("//sys/cluster_nodes/bad/@banned", True)
    bad.heartbeat()
    check(not bad.running, "an admin ban aborts the node's jobs: %s" % list(bad.running))
    jobs = s.ok("list_jobs", {"operation_id": op4})["jobs"]
    check(any(j.get("abort_reason") == "node_banned" for j in jobs), "reason node_banned")
    check(s.get("//sys/scheduler/@alerts") == [], "an admin ban is not a scheduler alert")
    s.ok("abort_op", {"operation_id": op4})
finish()
EOF2
