#!/usr/bin/env bash
# The stored meta documents (persist.c ps_persist_meta_get: default_tree, scheduler_config,
# nodes_config, user_to_default_pool, event_log) are read back at start by one reader: a
# document that is not a map refuses the start with one message naming the document and the
# path it belongs to, instead of being taken for "never set". Each is checked alone on a copy of
# a store whose documents were all written by the service, and that store itself starts again.
# usage: server_meta_load.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_meta_load.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 240 "$@" <<'PY'
import os, shutil, sqlite3, subprocess, sys
from server_helper import Scheduler, check, finish

bin, work = sys.argv[1], sys.argv[2]
data = os.path.join(work, "data")
with Scheduler(bin, data).start() as s:
    s.set("//sys/scheduler/config/default_tentative_pool_trees", ["physical"])
    s.set("//sys/cluster_nodes/@config", {"%true": {}})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pool_trees/physical/team"})
    s.set("//sys/scheduler/user_to_default_pool", {"alice": "team"})
    s.ok("start_op", {"operation_type": "vanilla",
                      "spec": {"tasks": {"t": {"command": "true", "job_count": 1}}}})

WHERE = {"default_tree": "", "scheduler_config": "stored //sys/scheduler/config",
         "nodes_config": "stored //sys/cluster_nodes/@config",
         "user_to_default_pool": "stored //sys/scheduler/user_to_default_pool",
         "event_log": "cannot read the event log's bounds"}
db = sqlite3.connect(os.path.join(data, "poolsched.db"))
stored = {k for (k,) in db.execute("SELECT key FROM objects WHERE kind='meta'")}
db.close()
check(stored == set(WHERE), "the service wrote every meta document: %s" % sorted(stored))


def start(d):
    try:
        return subprocess.run([bin, "scheduler", "--listen", "127.0.0.1:0", "--data-dir", d],
                              capture_output=True, text=True, timeout=30)
    except subprocess.TimeoutExpired:
        return None   # it started and kept running


for key, where in WHERE.items():
    d = os.path.join(work, key)
    shutil.copytree(data, d)
    db = sqlite3.connect(os.path.join(d, "poolsched.db"))
    db.execute("UPDATE objects SET value='[1]' WHERE kind='meta' AND key=?", (key,))
    db.commit()
    db.close()
    p = start(d)
    want = "meta/%s: not a map" % key
    check(p is not None and p.returncode != 0 and want in p.stderr and where in p.stderr,
          "%s as a list: the start is refused naming %r (%s)" % (key, want, where),
          p.stderr if p else "it started")
s = Scheduler(bin, data).start()   # the store as the service wrote it starts
check(s.get("//sys/scheduler/user_to_default_pool") == {"alice": "team"}, "the map is back")
s.stop()
finish()
PY
