#!/usr/bin/env bash
# PostgreSQL going away under the scheduler: while 4 writers create pools, the database is
# killed (kill -9 of the postmaster) and restarted. Checks: writes are refused while it is down
# (503 "storage unavailable", never a 200), requests answer at once rather than hang (reads too:
# 503 as well, because the state is rolled back by reloading it from the store, docs/ha.md),
# writes resume by themselves once it is back (no scheduler restart), and after a scheduler
# restart every acknowledged write is there while no refused one is.
# usage: store_pg_outage.sh BINARY SHARED_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?usage: store_pg_outage.sh BINARY SHARED_DIR SOURCE_DIR}
src=${3:?}
work=$(mktemp -d)
source "$src/tests/scripts/pg_cluster.bash"
trap 'pg_cluster_stop; rm -rf "$work"' EXIT
pg_cluster_start "$work/pg"
export POOLSCHED_STORE=$(pg_cluster_createdb outage)
export PG_CLUSTER_LIB="$src/tests/scripts/pg_cluster.bash"
PYTHONPATH="$src/tests/scripts" python3 - "$bin" "$work" <<'EOF'
import os, subprocess, sys, threading, time
from server_helper import Scheduler, check, finish

bin, work = sys.argv[1], sys.argv[2]
P = "//sys/pool_trees/physical"

def pg(action):
    subprocess.run(["bash", "-c", 'source "$PG_CLUSTER_LIB"; PG_DIR=%s/pg; PG_BIN=$(pg_bin_dir); '
                    'PG_OWNER=$(stat -c %%U "$PG_DIR/data"); PG_PORT=$(cat "$PG_DIR/port"); %s'
                    % (work, action)], check=True)

s = Scheduler(bin, work + "/data").start()
try:
    acked, refused, other = [], [], []
    lock = threading.Lock()
    stop = threading.Event()

    def writer(k):
        i = 0
        while not stop.is_set():
            i += 1
            name = "w%d_%d" % (k, i)
            st, out = s.call("create", {"type": "scheduler_pool", "path": P + "/" + name})
            with lock:
                if st == 200:
                    acked.append(name)
                elif st == 503 and "storage unavailable" in out.get("message", ""):
                    refused.append(name)
                else:
                    other.append((name, st, out))
            if st != 200:
                time.sleep(0.02)

    threads = [threading.Thread(target=writer, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    time.sleep(1.0)
    before = len(acked)
    pg("pg_cluster_kill9")
    time.sleep(1.5)
    with lock:
        during_acked = len(acked)
    t1 = time.time()
    st, out = s.call("get", {"path": P})
    check(st == 503 and "storage unavailable" in out.get("message", ""),
          "a read while the store is down: %d %s" % (st, out))
    check(time.time() - t1 < 2, "a read while the store is down answered in %.1f s"
          % (time.time() - t1))
    time.sleep(0.5)
    with lock:
        check(len(acked) == during_acked, "no write acknowledged while the store is down: %d more"
              % (len(acked) - during_acked))
    pg("pg_cluster_restart")
    t0 = time.time()
    resumed = None
    while time.time() - t0 < 20:
        with lock:
            if len(acked) > during_acked:
                resumed = time.time() - t0
                break
        time.sleep(0.05)
    check(resumed is not None, "writes resumed after the store came back")
    time.sleep(0.5)
    stop.set()
    for t in threads:
        t.join()
    check(before > 5, "writes before the outage: %d" % before)
    check(len(refused) > 0, "writes refused while the store was down: %d" % len(refused))
    check(not other, "answers other than 200 or 503 store unavailable: %s" % other[:3])

    s.stop()
    s.start()
    pools = s.get(P)
    missing = [p for p in acked if p not in pools]
    check(not missing, "acknowledged writes lost: %s" % missing[:5])
    back = [p for p in refused if p in pools]
    check(not back, "refused writes present after all: %s" % back[:5])
    print("acknowledged %d, refused %d, lost %d, resumed %.1f s after the restart"
          % (len(acked), len(refused), len(missing), resumed or -1))
finally:
    s.stop()
finish()
EOF
