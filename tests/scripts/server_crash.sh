#!/usr/bin/env bash
# Crash safety: kill -9 the scheduler during a burst of writes (pool creations, attribute sets,
# operation starts, heartbeats finishing jobs) from several threads, restart it on the same data
# dir, and check that every acknowledged write, operation and job finish is there, that running
# jobs re-attach (the node's next heartbeat is not told to abort them) and that running
# operations continue to completion.
# usage: server_crash.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_crash.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import os, sys, threading, time, random
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
with Scheduler(bin, work + "/data", {"fair_share_update_period": 100}).start() as s:
    P = "//sys/pool_trees/physical"
    s.set(P + "/@fair_share_update_period", 100)
    node = FakeNode(s, "n1", cpu=64, memory=64 << 30, slots=64)
    node.heartbeat()
    # a long operation whose jobs run across the crash
    longop = s.ok("start_op", {"spec": {"tasks": {"t": {"command": "sleep", "job_count": 4}}}})["operation_id"]
    time.sleep(0.3)
    node.heartbeat()
    check(len(node.running) == 4, "long op started 4 jobs: %d" % len(node.running))

    acked = {"pools": [], "weights": {}, "ops": []}
    lock = threading.Lock()
    stop = threading.Event()

    def writer(k):
        i = 0
        while not stop.is_set():
            i += 1
            name = "p%d_%d" % (k, i)
            try:
                st, _ = s.call("create", {"type": "scheduler_pool", "path": P + "/" + name})
                if st == 200:
                    with lock:
                        acked["pools"].append(name)
                st, _ = s.call("set", {"path": P + "/" + name + "/@weight", "value": i})
                if st == 200:
                    with lock:
                        acked["weights"][name] = i
                st, out = s.call("start_op", {"spec": {"pool": name, "tasks": {"t": {"command": "x", "job_count": 2}}}})
                if st == 200:
                    with lock:
                        acked["ops"].append(out["operation_id"])
            except Exception:
                return   # the server died

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    # finish some jobs of the long operation during the burst
    time.sleep(0.5)
    done_ids = sorted(node.running)[:2]
    for jid in done_ids:
        node.finish(jid)
    out = node.heartbeat()
    acked_finish = set(out["acknowledged"])
    check(acked_finish == set(done_ids), "finishes acknowledged %s" % acked_finish)
    time.sleep(0.5)
    s.kill9()
    stop.set()
    for t in threads:
        t.join()
    check(len(acked["pools"]) > 5 and len(acked["ops"]) > 5, "burst made progress: %d pools, %d ops"
          % (len(acked["pools"]), len(acked["ops"])))

    s.start()
    pools = s.get(P)
    missing = [p for p in acked["pools"] if p not in pools]
    check(not missing, "acknowledged pools lost: %s" % missing[:5])
    wrong = [p for p, w in acked["weights"].items() if s.get(P + "/" + p + "/@weight") != w]
    check(not wrong, "acknowledged weights lost: %s" % wrong[:5])
    lost = [o for o in acked["ops"] if s.call("get_operation", {"operation_id": o})[0] != 200]
    check(not lost, "acknowledged operations lost: %s" % lost[:5])
    lost_total = len(missing) + len(wrong) + len(lost)
    o = s.ok("get_operation", {"operation_id": longop})
    check(o["progress"]["completed"] == 2 and o["progress"]["running"] == 2,
          "long op after restart: %s" % o["progress"])
    # the node still runs two jobs: they re-attach, nothing is aborted
    out = node.heartbeat()
    check(out["jobs_to_abort"] == [], "re-attached jobs not aborted: %s" % out["jobs_to_abort"])
    node.finish_all()
    node.heartbeat()
    check(s.ok("get_operation", {"operation_id": longop})["state"] == "completed", "long op completes after restart")
    # the restored operations keep running: their jobs get scheduled on the freed node
    # (a fair share update must run first: heartbeat until one does, within a deadline)
    ops = set(acked["ops"])
    deadline = time.time() + 60
    mine = []
    while not mine and time.time() < deadline:
        node.heartbeat()
        mine = [j for j in node.running.values() if j["operation_id"] in ops]
        if not mine:
            time.sleep(0.2)
    check(len(mine) > 0, "restored operations run jobs after the restart")
    check(s.ok("exists", {"path": "//sys/pool_trees/@default_tree"})["value"], "default tree")

    # More rounds (POOLSCHED_CRASH_ROUNDS, `make faults` runs 20): a burst, kill -9, restart,
    # and every write acknowledged in any round so far is there.
    rounds = int(os.environ.get("POOLSCHED_CRASH_ROUNDS", "1"))
    for r in range(1, rounds):
        stop.clear()
        base = len(acked["pools"])
        threads = [threading.Thread(target=writer, args=(100 * r + k,)) for k in range(4)]
        for t in threads:
            t.start()
        time.sleep(random.uniform(0.2, 0.8))
        s.kill9()
        stop.set()
        for t in threads:
            t.join()
        s.start()
        pools = s.get(P)
        missing = [p for p in acked["pools"] if p not in pools]
        check(not missing, "round %d: acknowledged pools lost: %s" % (r, missing[:5]))
        wrong = [p for p, w in acked["weights"].items()
                 if p in pools and s.get(P + "/" + p + "/@weight") != w]
        check(not wrong, "round %d: acknowledged weights lost: %s" % (r, wrong[:5]))
        lost = [o for o in acked["ops"][-200:] if s.call("get_operation", {"operation_id": o})[0] != 200]
        check(not lost, "round %d: acknowledged operations lost: %s" % (r, lost[:5]))
        lost_total += len(missing) + len(wrong) + len(lost)
        check(len(acked["pools"]) > base, "round %d made progress" % r)
    writes = len(acked["pools"]) + len(acked["weights"]) + len(acked["ops"]) + len(acked_finish)
    print("scheduler kill -9 x %d: %d acknowledged writes, %d lost" % (rounds, writes, lost_total))
finish()
EOF
