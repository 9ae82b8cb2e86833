#!/usr/bin/env python3
"""Figures for docs/faults.md: runs the fault scenarios of node_e2e.py against a binary and
reports what happened instead of stopping at the first failed check (so it can measure an old
binary too). Not a CI test. Usage: python3 faults_measure.py BINARY [ROUNDS]

kill9 / kill9-nocg: 3 marker jobs on agent a, agent b started, kill -9 of a.
stop: the same with SIGSTOP of a (SIGCONT once the reruns started).
dupid: a second agent with a's node id on the same scheduler.
For each: job indexes that had two attempts alive at once (the "ran twice" figure), seconds
until a's job processes were gone, seconds until the reruns started.
"""
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

BIN = sys.argv[1]
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 1
sys.argv = [sys.argv[0], BIN, "none"]
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import node_e2e as e  # noqa: E402


def gone_after(op, ids, t0, limit):
    while time.time() - t0 < limit:
        if not [p for p, (_, j) in e.job_procs(op).items() if j in ids]:
            return time.time() - t0
        time.sleep(0.01)
    return None


def scenario(kind):
    tmp = tempfile.mkdtemp(prefix="psfault-")
    os.chmod(tmp, 0o755)
    c = e.Cluster(tmp)
    res = {}
    try:
        n = 3
        extra = ("--no-cgroups",) if kind == "kill9-nocg" else ()
        marker = e.new_marker(c)
        node_id = c.node("a", extra=extra)
        op = c.op({"tasks": {"main": e.task(e.marker_job(marker, 5), n, cpu_limit=0.25)}})
        c.wait(lambda: len(e.marker_attempts(marker)) == n and len(e.job_procs(op)) >= 3 * n,
               20, "jobs on a")
        mon = e.Overlap(op)
        mon.start()
        on_a = {j for ids in e.marker_attempts(marker).values() for j in ids}
        if kind == "dupid":
            c.node("a2", node_id=node_id, work="a")
            time.sleep(4)
            res["second agent exited"] = c.nodes["a2"][0].poll() is not None
            c.stop_node("a2")
            o = c.wait_op(op, 30, states=("completed", "failed", "aborted"))
            res["aborted (lost etc.)"] = o["progress"].get("aborted")
        else:
            c.node("b", extra=extra)
            t0 = time.time()
            if kind == "stop":
                c.nodes["a"][0].send_signal(signal.SIGSTOP)
            else:
                c.stop_node("a", signal.SIGKILL)
            gone = []
            th = threading.Thread(target=lambda: gone.append(gone_after(op, on_a, t0, 8)))
            th.start()
            try:
                c.wait(lambda: all(len(v) == 2 for v in e.marker_attempts(marker).values()),
                       15, "reruns")
                res["reruns started after s"] = round(time.time() - t0, 2)
            except e.Fail:
                res["reruns started after s"] = None
            th.join()
            res["a's processes gone after s"] = None if gone[0] is None else round(gone[0], 3)
            if kind == "stop":
                c.nodes["a"][0].send_signal(signal.SIGCONT)
            c.wait_op(op, 30, states=("completed", "failed", "aborted"))
        bad = mon.finish()
        res["indexes run twice at once"] = len({b[1] for b in bad})
    finally:
        c.stop()
        for _, (_, _, nid) in c.nodes.items():
            e.kill_cgroup_leftovers(nid)
        shutil.rmtree(tmp, ignore_errors=True)
    return res


for r in range(ROUNDS):
    for kind in ("kill9", "kill9-nocg", "stop", "dupid"):
        print(kind, scenario(kind), flush=True)
