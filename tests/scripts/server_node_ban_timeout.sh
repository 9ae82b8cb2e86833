#!/usr/bin/env bash
# A node banned for its node_error aborts comes back by itself after disable_jobs_timeout (as
# upstream's exec node re-enables scheduler jobs), and is banned again if it is still broken;
# max_consecutive_job_aborts 0 turns the ban off. (server_broken_node.sh covers the defaults.)
# usage: server_node_ban_timeout.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_node_ban_timeout.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 60 "$@" <<'EOF2'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]

def scenario(name, cfg):
    try:
        s = Scheduler(bin, work + "/" + name, cfg).start()
    except RuntimeError as e:
        check(False, "%s: scheduler refuses the config: %s" % (name, str(e)[-200:]))
        return None
    bad = FakeNode(s, "bad", cpu=2, slots=2)
    bad.heartbeat()
    s.update(0.3)
    spec = {"tasks": {"main": {"command": "true", "job_count": 50, "cpu_limit": 1}}}
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
    history = []   # (time, banned, jobs started in this heartbeat)
    t0 = time.time()
    with s:
        while time.time() - t0 < 4.0:
            out = bad.heartbeat()
            for jid in list(bad.running):
                bad.finish(jid, "aborted", abort_reason="node_error", stderr="no work dir")
            banned = s.get("//sys/cluster_nodes/bad/@banned")
            history.append((time.time() - t0, banned, len(out.get("jobs_to_start", []))))
            time.sleep(0.1)
        s.ok("abort_op", {"operation_id": op})
    return history

h = scenario("timeout", {"fair_share_update_period": 100, "max_consecutive_job_aborts": 2,
                         "disable_jobs_timeout": 1500})
if h is not None:
    flips = [b for i, (_, b, _) in enumerate(h) if i == 0 or b != h[i - 1][1]]
    check(flips[:4] == [False, True, False, True],
          "banned, back after disable_jobs_timeout, banned again: %s" % flips)
    check(all(n == 0 for _, b, n in h if b), "no job starts while banned: %s" % h)
h = scenario("off", {"fair_share_update_period": 100, "max_consecutive_job_aborts": 0})
if h is not None:
    check(not any(b for _, b, _ in h) and sum(n for _, _, n in h) > 4,
          "max_consecutive_job_aborts 0: never banned: %s" % h[-3:])
finish()
EOF2
