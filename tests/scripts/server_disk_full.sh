#!/usr/bin/env bash
# Full disk (issue 13, docs/faults.md "Full disk"): the scheduler's data dir on a small tmpfs that
# the test fills. Every write made while the disk is full must be refused with 507 (or 503) and
# a message saying "disk full", and must be absent from reads immediately, after space returns
# (the journal must not retry it later) and after a restart; a heartbeat that would start jobs
# is refused and starts none; reads keep answering; once space returns, writes succeed again
# without a restart.
# Needs root (mount); exits 77 (ctest SKIP) where tmpfs cannot be mounted.
# usage: server_disk_full.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_disk_full.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test_setup() {
    mkdir -p "$work/mnt"
    if [ "$(id -u)" != 0 ] || ! mount -t tmpfs -o size=8m,mode=0700 tmpfs "$work/mnt" 2>/dev/null; then
        echo "SKIP: cannot mount a tmpfs here (needs root and mount rights)"
        exit 77
    fi
}
test_cleanup() { umount -l "$work/mnt" 2>/dev/null || true; }
py_test 0 "$@" <<'EOF'
import os, subprocess, sys, threading, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
mnt = work + "/mnt"
s = Scheduler(bin, mnt + "/data", {"fair_share_update_period": 100})
s.log_path = work + "/scheduler.log"      # the log must not sit on the full disk
P = "//sys/pool_trees/physical"
fill = mnt + "/fill"

def fill_disk():
    # big blocks, then page-sized ones for the rest; dd stops at ENOSPC
    for bs in ("1M", "4k"):
        subprocess.run(["dd", "if=/dev/zero", "of=" + fill, "bs=" + bs, "oflag=append",
                        "conv=notrunc"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    st = os.statvfs(mnt)
    return st.f_bavail * st.f_frsize

def refused(what, st, out):
    msg = out.get("message", "") if isinstance(out, dict) else str(out)
    check(st in (503, 507) and "disk full" in msg,
          "%s on a full disk: expected 507/503 saying 'disk full', got %d %s" % (what, st, out))

def op_ids():
    return sorted(o["id"] for o in s.ok("list_operations", {"limit": 1000})["operations"])

def state_of(op):
    o = s.ok("get_operation", {"operation_id": op})
    return o["state"], o.get("suspended")

try:
    s.start()
    s.ok("create", {"type": "scheduler_pool", "path": P + "/keep"})
    s.ok("create", {"type": "scheduler_pool", "path": P + "/empty"})
    s.set(P + "/keep/@weight", 3)
    node = FakeNode(s, "n1", cpu=8, memory=16 << 30, slots=8)
    node.heartbeat()
    # running has one job on the node; waiting has jobs a heartbeat would start
    running = s.ok("start_op", {"spec": {"pool": "keep", "tasks": {"t": {"command": "x", "job_count": 1}}}})["operation_id"]
    time.sleep(0.4)
    node.heartbeat()
    check(len(node.running) == 1, "one job started before the disk fills: %s" % node.running)
    # waiting has jobs that the next heartbeat would start
    waiting = s.ok("start_op", {"spec": {"pool": "keep", "tasks": {"t": {"command": "y", "job_count": 4}}}})["operation_id"]
    time.sleep(0.4)
    ops_before = op_ids()
    jobs_before = s.ok("list_jobs", {"operation_id": running})["jobs"]

    left = fill_disk()
    print("disk filled, %d bytes left" % left, flush=True)
    t0 = time.time()
    # --- every kind of write, refused ---
    n_start = 20
    for i in range(n_start):
        st, out = s.call("start_op", {"spec": {"pool": "keep", "tasks": {"t": {"command": "x" * 2000, "job_count": 50}}}})
        refused("start_op %d" % i, st, out)
    st, out = s.call("issue_token", {"user": "alice"})
    refused("issue_token", st, out)
    st, out = s.call("create", {"type": "scheduler_pool", "path": P + "/newpool"})
    refused("create pool", st, out)
    st, out = s.call("create", {"type": "scheduler_pool_tree", "attributes": {"name": "newtree", "config": {"nodes_filter": "gpu"}}})
    refused("create pool tree", st, out)
    st, out = s.call("set", {"path": P + "/keep/@weight", "value": 7})
    refused("set @weight", st, out)
    st, out = s.call("remove", {"path": P + "/empty"})
    refused("remove pool", st, out)
    st, out = s.call("update_op_parameters", {"operation_id": running, "parameters": {"pool": "empty"}})
    refused("update_op_parameters", st, out)
    st, out = s.call("suspend_op", {"operation_id": running})
    refused("suspend_op", st, out)
    st, out = s.call("abort_op", {"operation_id": running})
    refused("abort_op", st, out)
    st, out = s.call("complete_op", {"operation_id": running})
    refused("complete_op", st, out)
    # a heartbeat that finishes the running job and would start waiting's jobs
    jid = sorted(node.running)[0]
    node.finish(jid)
    hb_status, hb_out = s.heartbeat({"node_id": "n1", "tags": [], "resource_limits": node.limits,
                                     "jobs": list(node.finished.values())})
    refused("heartbeat finishing a job", hb_status, hb_out)

    def check_absent(when):
        check(op_ids() == ops_before, "%s: operations changed: %s -> %s" % (when, ops_before, op_ids()))
        pools = s.get(P)
        check("newpool" not in pools, "%s: refused pool creation visible: %s" % (when, pools))
        check("empty" in pools, "%s: refused pool removal visible: %s" % (when, pools))
        check("newtree" not in s.get("//sys/pool_trees"), "%s: refused tree creation visible" % when)
        check(s.get(P + "/keep/@weight") == 3, "%s: refused set visible: weight %s" % (when, s.get(P + "/keep/@weight")))
        o = s.ok("get_operation", {"operation_id": running})
        check(o["state"] == "running" and not o.get("suspended"),
              "%s: refused abort/suspend/complete visible: %s %s" % (when, o["state"], o.get("suspended")))
        check(o["pool_per_tree"].get("physical") == "keep",
              "%s: refused update_op_parameters visible: %s" % (when, o["pool_per_tree"]))
        jobs = s.ok("list_jobs", {"operation_id": running})["jobs"]
        check([(j["id"], j["state"]) for j in jobs] == [(j["id"], j["state"]) for j in jobs_before],
              "%s: refused job finish visible: %s" % (when, [(j["id"], j["state"]) for j in jobs]))
        jobs = s.ok("list_jobs", {"operation_id": waiting})["jobs"]
        check(jobs == [], "%s: jobs whose start was refused exist: %s" % (when, [j["id"] for j in jobs]))

    # reads answer on the full disk, and show none of it
    check_absent("full disk")
    print("writes refused in %.1f s" % (time.time() - t0), flush=True)

    # --- space returns: nothing refused comes back, and writes work again ---
    os.unlink(fill)
    time.sleep(1.0)    # the journal must not be retrying the refused records
    check_absent("after space returned")
    st, out = s.call("create", {"type": "scheduler_pool", "path": P + "/after"})
    check(st == 200, "create after space returned: %d %s" % (st, out))
    after_op = None
    st, out = s.call("start_op", {"spec": {"pool": "after", "tasks": {"t": {"command": "x", "job_count": 1}}}})
    check(st == 200, "start_op after space returned: %d %s" % (st, out))
    if st == 200:
        after_op = out["operation_id"]
    # the node reports its finished job again and is acknowledged now
    time.sleep(0.4)
    out = node.heartbeat()
    check(jid in (out.get("acknowledged") or []), "finish acknowledged after space returned: %s" % out)
    check(len(out.get("jobs_to_start") or []) > 0, "jobs start after space returned: %s" % out)
    check(s.get(P + "/keep/@weight") == 3, "weight still 3")
    s.set(P + "/keep/@weight", 4)

    # --- restart: nothing half-applied survives ---
    s.stop()
    s.start()
    check(op_ids() == sorted(ops_before + ([after_op] if after_op else [])),
          "after restart: operations %s" % op_ids())
    pools = s.get(P)
    check("newpool" not in pools and "empty" in pools and "after" in pools,
          "after restart: pools %s" % sorted(pools))
    check("newtree" not in s.get("//sys/pool_trees"), "after restart: refused tree present")
    check(s.get(P + "/keep/@weight") == 4, "after restart: weight %s" % s.get(P + "/keep/@weight"))
    o = s.ok("get_operation", {"operation_id": running})
    check(not o.get("suspended") and o["state"] in ("running", "completed"),
          "after restart: running op %s suspended=%s" % (o["state"], o.get("suspended")))

    # --- a read during a doomed commit does not show its change ---
    # a 300 ms commit window holds start_op's records while list_operations runs
    s.stop()
    s.config = {"fair_share_update_period": 100, "commit_window": 300}
    s.start()
    ops_now = op_ids()
    fill_disk()
    res = {}
    def start():
        res["start"] = s.call("start_op", {"spec": {"pool": "keep", "tasks": {"t": {"command": "z", "job_count": 1}}}})
    th = threading.Thread(target=start)
    th.start()
    time.sleep(0.1)
    seen = op_ids()
    th.join()
    refused("start_op (commit window)", *res["start"])
    check(seen == ops_now, "a read during the refused start_op's commit showed it: %s" % seen)
    check(op_ids() == ops_now, "refused start_op visible after its refusal")
    os.unlink(fill)
finally:
    s.stop()
    if sys.modules["server_helper"].FAILURES:
        print("--- scheduler log (tail) ---\n" + open(s.log_path).read()[-3000:])
finish()
EOF
