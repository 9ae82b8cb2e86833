"""PostgreSQL going away under the scheduler (tests/scripts/store_pg_outage.sh starts it; this
kills and restarts it with lib/pg_cluster.bash): while 4 writers create pools, the database is
killed (kill -9 of the postmaster) and restarted.

While it is down: writes are refused with 503 "storage unavailable" (never a 200) and change
nothing; reads answer 200 from memory — Cypress get/list/exists, list_operations,
get_operation, list_jobs (a finished job's record is in the store, not in memory), the orchid,
/metrics, the web UI's page — showing exactly the acknowledged writes; node heartbeats are
refused (503), and so is every command the YTsaurus face lists as volatile (its writes, which
are /api/v1's: api.c's one list). Once it is back writes resume by themselves (no scheduler restart), and after a
scheduler restart every acknowledged write is there while no refused one is.

usage: store_pg_outage.py BINARY WORK_DIR
"""
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

from server_helper import FakeNode, Scheduler, check, finish

bin, work = sys.argv[1], sys.argv[2]
PG_CLUSTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib", "pg_cluster.bash")
P = "//sys/pool_trees/physical"
WAIT = 60   # seconds: what any condition may take under a sanitizer on a loaded machine


def pg(action):
    """kill9 or restart the cluster (tests/scripts/lib/pg_cluster.bash as a command)."""
    subprocess.run(["bash", PG_CLUSTER, action, os.path.join(work, "pg")], check=True)


def wait_for(cond, what):
    deadline = time.time() + WAIT
    while not cond():
        if time.time() > deadline:
            check(False, "within %d s: %s" % (WAIT, what))
            return False
        time.sleep(0.05)
    return True


def yt_post(s, name, params, body=b""):
    """POST /api/v4/<name> with X-YT-Parameters: (status, the YTsaurus error or reply)."""
    req = urllib.request.Request(s.url("/api/v4/" + name), data=body, method="POST")
    req.add_header("Authorization", "OAuth " + s.admin)
    req.add_header("X-YT-Parameters", json.dumps(params))
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            st, text = r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        st, text = e.code, e.read().decode()
    try:
        return st, json.loads(text)
    except ValueError:
        return st, text


# what upstream's driver registers as volatile, of the commands the YTsaurus face serves
YT_WRITES = {"set", "create", "remove", "move", "transfer_pool_resources", "start_operation",
             "abort_operation", "suspend_operation", "resume_operation", "complete_operation",
             "update_operation_parameters", "add_member", "remove_member", "execute_batch"}


def check_yt_writes_refused(s, op, spec):
    """Every command the YTsaurus face lists as volatile (its writes) is refused while the store
    is down, as /api/v1's are; a write inside execute_batch too."""
    st, text = s.raw("GET", "/api/v4")
    listed = json.loads(text) if st == 200 else []
    writes = {c["name"] for c in listed if c.get("is_volatile")}
    check(YT_WRITES <= writes, "the YTsaurus face lists upstream's writes as volatile: missing %s"
          % sorted(YT_WRITES - writes))
    params = {"type": "scheduler_pool", "source_path": P + "/keep", "destination_path": P + "/moved",
              "operation_type": "vanilla", "spec": spec, "operation_id": op, "member": "root",
              "group": "superusers", "source_pool": "keep", "destination_pool": "moved",
              "pool_tree": "physical", "resource_delta": {"cpu": 1}, "parameters": {"weight": 4}}
    paths = {"set": P + "/keep/@weight", "remove": P + "/keep"}
    for name in sorted(writes - {"execute_batch"}):
        body = b"5" if name == "set" else b""   # set's value; the others take no body here
        st, out = yt_post(s, name, dict(params, path=paths.get(name, P + "/refused")), body)
        check(refused(st, out), "YTsaurus %s while the store is down: 503 storage unavailable: "
              "%d %s" % (name, st, str(out)[:300]))
    batch = {"requests": [{"command": "set", "parameters": {"path": P + "/keep/@weight"}, "input": 6}]}
    st, out = yt_post(s, "execute_batch", batch)
    error = (out.get("results") or [{}])[0].get("error", {}) if isinstance(out, dict) else {}
    check(st == 200 and "storage unavailable" in error.get("message", ""),
          "a set in execute_batch while the store is down is refused: %d %s" % (st, str(out)[:300]))


def writer_pools(s):
    return {p for p in s.get(P) if p.startswith("w")}


def value(s, path):
    """The value at path, or None when the read is refused (a failed check, not an exception)."""
    st, out = s.call("get", {"path": path})
    return out.get("value") if st == 200 and isinstance(out, dict) else None


def refused(st, out):
    return st == 503 and "storage unavailable" in (out.get("message", "") if isinstance(out, dict) else out)


lock = threading.Lock()
stop = threading.Event()
threads = []
s = Scheduler(bin, work + "/data").start()
try:
    # ---- before: a pool, an operation with a finished and a running job ----------------------
    s.ok("create", {"type": "scheduler_pool", "path": P + "/keep", "attributes": {"weight": 2}})
    spec = {"pool": "keep", "tasks": {"t": {"command": "sleep 100", "job_count": 2}}}
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
    fresh = s.token("late")   # issued now, first used during the outage
    node = FakeNode(s, "n1")
    wait_for(lambda: node.heartbeat() is not None and len(node.running) == 2, "both jobs started")
    done = sorted(node.running)[0]
    node.finish(done)
    wait_for(lambda: node.heartbeat() is not None and not node.finished, "the finished job acknowledged")

    acked, refusals, other = [], [], []   # acked: (name, sent at, answered at)

    def writer(k):
        i = 0
        while not stop.is_set():
            i += 1
            name = "w%d_%d" % (k, i)
            t0 = time.time()
            st, out = s.call("create", {"type": "scheduler_pool", "path": P + "/" + name})
            t1 = time.time()
            with lock:
                if st == 200:
                    acked.append((name, t0, t1))
                elif refused(st, out):
                    refusals.append(name)
                else:
                    other.append((name, st, out))
            if st != 200:
                time.sleep(0.02)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    wait_for(lambda: len(acked) > 5, "writes acknowledged before the outage")
    pg("kill9")
    wait_for(lambda: len(refusals) > 0, "a write refused once the store is gone")
    t_down = time.time()   # from now until the restart the store is down
    reloads_down = s.logtext().count("event=state_reloaded")

    # ---- while it is down: reads answer from memory, writes are refused -----------------------
    st, out = s.call("get", {"path": P})
    check(st == 200 and isinstance(out.get("value"), dict) and "keep" in out["value"],
          "get of the pool tree while the store is down: %d %s" % (st, str(out)[:300]))
    pools_down = {p for p in (out.get("value") or {}) if p.startswith("w")} if st == 200 else set()
    with lock:
        before = {n for n, _, answered in acked if answered < t_down}
    check(before <= pools_down, "while down, memory shows every write acknowledged before: "
          "missing %s" % sorted(before - pools_down)[:5])
    for command, body, want in [
            ("get", {"path": P + "/keep/@weight"}, lambda o: o.get("value") == 2),
            ("exists", {"path": P + "/keep"}, lambda o: o.get("value") is True),
            ("list", {"path": P}, lambda o: "keep" in (o.get("value") or [])),
            ("list_operations", {}, lambda o: op in str(o)),
            ("get_operation", {"operation_id": op}, lambda o: o.get("id") == op),
            ("list_jobs", {"operation_id": op},
             lambda o: sorted(j.get("id") for j in o.get("jobs", [])) == sorted([done] + list(node.running))),
            ("get", {"path": "//sys/scheduler/orchid/scheduler/service"},
             lambda o: o.get("value", {}).get("connected") is True)]:
        st, out = s.call(command, body)
        check(st == 200 and isinstance(out, dict) and want(out),
              "%s %s while the store is down: %d %s" % (command, body, st, str(out)[:300]))
    st, out = s.call("get", {"path": P}, token=fresh)
    check(refused(st, out), "a token not used before, while the store is down: 503 storage "
          "unavailable (it cannot be checked): %d %s" % (st, str(out)[:200]))
    st, text = s.raw("GET", "/metrics")
    check(st == 200 and "poolsched_" in text, "/metrics while the store is down: %d" % st)
    st, text = s.raw("GET", "/")
    check(st == 200 and "<html" in text.lower(), "the web UI's page while the store is down: %d" % st)
    for command, body in [
            ("set", {"path": P + "/keep/@weight", "value": 5}),
            ("create", {"type": "scheduler_pool", "path": P + "/refused"}),
            ("start_op", {"operation_type": "vanilla", "spec": spec}),
            ("abort_op", {"operation_id": op})]:
        st, out = s.call(command, body)
        check(refused(st, out), "%s while the store is down: 503 storage unavailable: %d %s"
              % (command, st, str(out)[:300]))
    check_yt_writes_refused(s, op, spec)
    st, out = s.heartbeat({"node_id": "n1", "tags": [], "resource_limits": node.limits, "jobs": []})
    check(refused(st, out), "a heartbeat while the store is down: %d %s" % (st, str(out)[:200]))
    st, out = s.call("get_operation", {"operation_id": op})
    check(value(s, P + "/keep/@weight") == 2 and value(s, P + "/refused") is None
          and st == 200 and out.get("state") not in ("aborted", "aborting"),
          "the refused writes changed nothing: %d %s" % (st, str(out)[:200]))
    # ---- back: writes resume by themselves ---------------------------------------------------
    # a write while the store is down is refused before it touches the state: the state is
    # not changed and rolled back (reloaded) for each, so no read can show a refused write
    reloads = s.logtext().count("event=state_reloaded") - reloads_down
    print("reloads during the outage: %d" % reloads)
    check(reloads <= 2, "writes refused while down without touching the state: %d reloads "
          "during the outage" % reloads)
    t_up = time.time()
    pg("restart")
    wait_for(lambda: any(sent > t_up for _, sent, _ in acked), "writes resumed after the store came back")
    stop.set()
    for t in threads:
        t.join()
    threads = []
    check(not other, "answers other than 200 or 503 storage unavailable: %s" % other[:3])
    down = [n for n, sent, answered in acked if sent > t_down and answered < t_up]
    check(not down, "writes acknowledged while the store was down: %s" % down[:5])
    acked = [n for n, _, _ in acked]
    check(pools_down <= set(acked), "while down, memory showed writes never acknowledged: %s"
          % sorted(pools_down - set(acked))[:5])
    check(writer_pools(s) == set(acked), "after the return, memory holds exactly the acknowledged writes")
    check(s.get(P + "/keep/@weight") == 2, "the refused set is absent after the return")
    node.heartbeat()
    s.set(P + "/keep/@weight", 3)

    s.stop()
    s.start()
    pools = writer_pools(s)
    missing = [p for p in acked if p not in pools]
    check(not missing, "acknowledged writes lost: %s" % missing[:5])
    back = [p for p in refusals if p in pools]
    check(not back, "refused writes present after all: %s" % back[:5])
    check(s.get(P + "/keep/@weight") == 3 and "refused" not in s.get(P),
          "after a restart: the write after the return is there, the refused create is not")
    print("acknowledged %d, refused %d, lost %d" % (len(acked), len(refusals), len(missing)))
finally:
    stop.set()
    for t in threads:
        t.join()
    s.stop()
finish()
