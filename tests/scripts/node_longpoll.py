#!/usr/bin/env python3
"""Long-poll heartbeats (docs/api.md, "Nodes"), on a real cluster at the default periods
(heartbeat_period 5 s, fair_share_update_period 1 s): python3 node_longpoll.py BINARY [CASE].

- a new job starts well within a second, not at the next 5 s heartbeat;
- a job that finishes while the node's heartbeat is held is reported at once;
- a heartbeat without wait_ms (an old agent, or YTsaurus's protocol) is answered at once with
  exactly the keys it had before, and an agent run with --no-long-poll works;
- a held heartbeat ends when work comes (the raw protocol);
- the scheduler killed while it holds a heartbeat: the agent reconnects to the restarted one;
- a reply the node never read (it gave the held request up just as the scheduler released it
  with a job): the job is sent again in the next reply, not lost and run again; also across a
  scheduler restart; a held heartbeat counts once in poolsched_node_heartbeats_total.
The cases and cluster come from node_e2e.py.
"""
import http.client
import json
import os
import re
import select
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import node_e2e as E  # noqa: E402  (reads BINARY from argv)
from checks import require  # noqa: E402
from node_e2e import task  # noqa: E402

DEFAULTS = {"heartbeat_period": 5000, "fair_share_update_period": 1000,
            "node_offline_timeout": 30000}


def out_dir(c):
    d = os.path.join(c.tmp, "out")
    if not os.path.isdir(d):
        os.mkdir(d)
        os.chmod(d, 0o1777)   # jobs run as slot uids when root
    return d


def timed_job(c, name, extra=""):
    """Starts a one-job operation whose job writes its start time; returns (op, submit time,
    start time)."""
    f = os.path.join(out_dir(c), name)
    t0 = time.time()
    op = c.op({"tasks": {"main": task("date +%%s.%%N > %s.tmp && mv %s.tmp %s%s" %
                                      (f, f, f, extra), 1)}})
    c.wait(lambda: os.path.exists(f), 20, "job %s to start" % name)
    return op, t0, float(open(f).read())


def registered(c, name):
    # the first job also waits out the registration
    op, _, _ = timed_job(c, "warmup-" + name)
    c.wait_op(op, 20)


def case_new_job_starts_at_once(c):
    c.node("a")
    registered(c, "a")
    worst = 0
    for i in range(4):
        time.sleep(0.3 + 0.4 * i)   # at other phases of the 5 s heartbeat period
        op, t0, started = timed_job(c, "j%d" % i)
        worst = max(worst, started - t0)
        c.wait_op(op, 20)
    print("submit-to-start, worst of 4: %.3f s" % worst)
    require(worst < 1.0, "a new job starts within 1 s at a 5 s heartbeat period (worst %.3f s)"
          % worst, c.node_log("a")[-2000:])


case_new_job_starts_at_once.config = DEFAULTS


def case_finish_reported_while_held(c):
    c.node("a")
    registered(c, "a")
    for i in range(2):
        op, _, started = timed_job(c, "f%d" % i, "; sleep 0.5")
        o = c.wait_op(op, 20)
        ended = time.time()
        print("job started to operation completed: %.3f s" % (ended - started))
        require(ended - started < 1.8, "a job finished while the heartbeat was held is reported "
              "at once (operation completed %.3f s after the 0.5 s job started)"
              % (ended - started), o, c.node_log("a")[-2000:])


case_finish_reported_while_held.config = DEFAULTS


OLD_REPLY_KEYS = {"heartbeat_period_ms", "node_offline_timeout_ms", "jobs_to_start",
                  "jobs_to_interrupt", "jobs_to_abort", "acknowledged"}


def case_old_style_heartbeats(c):
    s = c.sched
    body = {"node_id": "old-1", "tags": [], "jobs": [],
            "resource_limits": {"cpu": 2, "memory": 1 << 30, "user_slots": 2}}
    for _ in range(3):
        t0 = time.time()
        status, out = s.heartbeat(body)
        took = time.time() - t0
        require(status == 200 and set(out) == OLD_REPLY_KEYS,
              "a heartbeat without wait_ms gets the reply it always had", status, out)
        require(took < 0.5, "a heartbeat without wait_ms is answered at once (%.3f s)" % took)
    # with wait_ms and nothing to do: held for wait_ms, then the reply says wait_ms
    t0 = time.time()
    status, out = s.heartbeat(dict(body, wait_ms=600))
    took = time.time() - t0
    require(status == 200 and out.get("wait_ms") == 600 and not out["jobs_to_start"],
          "an idle long-poll heartbeat ends empty at its wait_ms", status, out)
    require(0.5 <= took < 2.0, "held for about wait_ms (%.3f s)" % took)
    status, out = s.heartbeat(dict(body, wait_ms="x"))
    require(status == 400 and "wait_ms" in out["message"], "a bad wait_ms is refused", status, out)
    # a held heartbeat ends as soon as there is a job for the node
    got = {}

    def held():
        t = time.time()
        got["reply"] = s.heartbeat(dict(body, wait_ms=5000))
        got["at"] = time.time()
        got["took"] = got["at"] - t
    th = threading.Thread(target=held)
    th.start()
    time.sleep(0.5)
    t_submit = time.time()
    c.op({"tasks": {"main": task("true", 1)}})
    th.join(10)
    status, out = got["reply"]
    require(status == 200 and len(out["jobs_to_start"]) == 1,
          "the held heartbeat brings the new job", status, out)
    require(got["at"] - t_submit < 1.0 and got["took"] < 4.0,
          "released %.3f s after the submission" % (got["at"] - t_submit))
    # a real agent without long-poll still works (YTsaurus's protocol, every period)
    c.node("b", extra=["--no-long-poll"])
    op, _, _ = timed_job(c, "old-agent")
    c.wait_op(op, 30)


case_old_style_heartbeats.config = DEFAULTS


def case_scheduler_killed_while_holding(c):
    c.node("a")
    registered(c, "a")
    time.sleep(1.0)   # the node's heartbeat is held now
    c.sched.kill9()
    time.sleep(0.5)
    c.sched.start()
    op, t0, started = timed_job(c, "after-restart")
    c.wait_op(op, 30)
    require(c.nodes["a"][0].poll() is None, "the agent kept running")
    log = c.node_log("a")
    require("heartbeat failed" in log and "heartbeats work again" in log,
          "the agent lost the scheduler and found it again", log[-2000:])


case_scheduler_killed_while_holding.config = DEFAULTS


def heartbeat_unread(s, body, what):
    """Sends a heartbeat on its own connection and waits until the scheduler has written the
    reply, then closes the connection without reading it: a node that gave the request up."""
    conn = http.client.HTTPConnection("127.0.0.1", s.port, timeout=10)
    conn.request("POST", "/internal/v1/node/heartbeat", json.dumps(body),
                 {"Authorization": "OAuth " + s.secret, "Content-Type": "application/json"})
    return conn


def abandon(conn, timeout, what):
    ready = select.select([conn.sock], [], [], timeout)[0]
    require(ready, "the scheduler answered the held heartbeat (%s)" % what)
    conn.sock.close()


def heartbeats_total(s):
    m = re.search(r"^poolsched_node_heartbeats_total (\d+)", s.raw("GET", "/metrics")[1], re.M)
    return int(m.group(1))


def case_reply_never_read(c):
    s = c.sched
    body = {"node_id": "race-1", "instance_id": "0123456789abcdef", "tags": [], "jobs": [],
            "resource_limits": {"cpu": 2, "memory": 1 << 30, "user_slots": 2},
            "last_reply_seq": 0}
    status, out = s.heartbeat(body)
    require(status == 200 and isinstance(out.get("reply_seq"), int),
          "a heartbeat with last_reply_seq gets a reply_seq", status, out)
    seen = out.get("reply_seq", 0)
    status, out = s.heartbeat(dict(body, last_reply_seq=-1))
    require(status == 400 and "last_reply_seq" in out["message"], "a bad last_reply_seq is "
          "refused, naming it", status, out)
    # an idle held heartbeat, released at its deadline and run again, is one heartbeat
    n0 = heartbeats_total(s)
    status, out = s.heartbeat(dict(body, last_reply_seq=seen, wait_ms=400))
    require(status == 200 and out.get("wait_ms") == 400, "held until its deadline", status, out)
    seen = out.get("reply_seq", seen)
    require(heartbeats_total(s) - n0 == 1, "a held heartbeat counts once in "
          "poolsched_node_heartbeats_total (%d)" % (heartbeats_total(s) - n0))

    def race(what, seen):
        """A held heartbeat released with the new job, whose reply the node never reads; the
        node's next heartbeat still says the last reply it read. Returns the job id."""
        held = heartbeat_unread(s, dict(body, last_reply_seq=seen, wait_ms=5000), what)
        time.sleep(0.5)   # held now
        op = c.op({"tasks": {"main": task("true", 1)}})
        abandon(held, 5, what)
        status, out = s.heartbeat(dict(body, last_reply_seq=seen))
        require(status == 200, "the next heartbeat is answered", status, out)
        jobs = c.jobs(op)
        require(len(jobs) == 1 and jobs[0]["state"] == "running",
              "%s: the job of the unread reply is still running, not lost" % what, jobs)
        started = [j["job_id"] for j in out["jobs_to_start"]]
        require(started == [jobs[0]["id"]], "%s: its start is sent again" % what, out, jobs)
        # the node starts it now; a start sent again for a job it reports is not sent
        run = [{"job_id": started[0], "state": "running", "cpu_guarantee": 0.5}]
        status, out = s.heartbeat(dict(body, jobs=run, last_reply_seq=out["reply_seq"]))
        require(status == 200 and not out["jobs_to_start"] and not out["jobs_to_abort"],
              "%s: the job reported running: nothing more to do" % what, status, out)
        return op, started[0], out["reply_seq"]

    op, jid, seen = race("race", seen)
    status, out = s.heartbeat(dict(body, last_reply_seq=seen,
                                   jobs=[{"job_id": jid, "state": "completed", "exit_code": 0}]))
    require(status == 200 and out["acknowledged"] == [jid], "the finish is acknowledged", out)
    seen = out["reply_seq"]
    c.wait_op(op, 10)
    jobs = c.jobs(op)
    require(len(jobs) == 1 and jobs[0]["state"] == "completed",
          "the operation ran its one job once", jobs)
    # after a restart (kill -9) the reply numbers go on above the ones the node has seen
    c.sched.kill9()
    c.sched.start()
    op, jid, seen = race("after a restart", seen)
    require("event=job_start_resent" in s.logtext(), "the scheduler logs job_start_resent")


case_reply_never_read.config = DEFAULTS


if __name__ == "__main__":
    cases = [case_new_job_starts_at_once, case_finish_reported_while_held,
             case_old_style_heartbeats, case_scheduler_killed_while_holding,
             case_reply_never_read]
    only = sys.argv[2] if len(sys.argv) > 2 else None   # one case by name
    E.GROUPS = {"longpoll": [f for f in cases if only in (None, f.__name__)]}
    E.GROUP = "longpoll"
    E.main()
