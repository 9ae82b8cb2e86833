#!/usr/bin/env python3
"""Times reading //sys/scheduler/event_log back in pages, as `poolsched what-if` does
(docs/performance.md "Reading the record from the scheduler"), for one or more scheduler
binaries side by side: each gets a fresh data directory whose store holds ROWS job rows
(written into it while the scheduler is stopped, ~450 bytes each, 0.8 s apart), then each pages
back from the newest row with `until` and `limit` 10000, alternating binaries ROUNDS times.
Prints per binary the median and worst page (request to parsed reply) and a whole read.

usage: scripts/event-log-read-measure.py ROWS ROUNDS BINARY [BINARY...]
  e.g. scripts/event-log-read-measure.py 100000 3 /tmp/base/poolsched build/poolsched
"""
import json
import os
import re
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

LOG = "//sys/scheduler/event_log"


def start(binary, data):
    log = open(data + ".log", "a")
    start_at = os.path.getsize(data + ".log")
    proc = subprocess.Popen([binary, "scheduler", "--listen", "127.0.0.1:0", "--data-dir", data],
                            stdout=subprocess.DEVNULL, stderr=log)
    deadline = time.time() + 20
    while time.time() < deadline:
        with open(data + ".log") as f:
            f.seek(start_at)
            m = re.search(r"event=scheduler_started listen=[0-9.]+:(\d+)", f.read())
        if m:
            return proc, int(m.group(1))
        if proc.poll() is not None:
            sys.exit("scheduler exited: " + open(data + ".log").read()[-2000:])
        time.sleep(0.05)
    sys.exit("scheduler did not start")


def fill(data, rows):
    db = sqlite3.connect(data + "/poolsched.db")
    t0 = int(time.time() * 1000) - rows * 800
    batch = []
    for i in range(rows):
        r = {"timestamp": t0 + i * 800, "event_type": "job_completed" if i % 2 else "job_started",
             "operation_id": "bb8a5ca0-d1646055-138cb155-%08x" % (i // 50),
             "job_id": "j-d20cc917-%d" % i, "node_address": "node-%04d" % (i % 1000),
             "task_name": "main", "tree_id": "physical", "pool": "research",
             "resource_limits": {"cpu": 1.5, "memory": 1073741824, "user_slots": 1, "gpu": 0,
                                 "network": 0},
             "start_time": t0, "finish_time": t0 + 1000}
        batch.append(("event", "%020d" % i, json.dumps(r, separators=(",", ":"))))
    db.execute("DELETE FROM objects WHERE kind = 'event'")   # the state rows of the first start
    db.executemany("INSERT INTO objects(kind, key, value) VALUES (?, ?, ?)", batch)
    db.execute("INSERT OR REPLACE INTO objects(kind, key, value) VALUES ('meta', 'event_log', ?)",
               (json.dumps({"first": 0, "next": rows}),))
    db.commit()
    db.close()


def read_back(port, token):
    """Pages back through the whole log; the page times and the rows read."""
    until, times, total = 2 ** 62, [], 0
    while True:
        body = json.dumps({"path": LOG, "until": until, "limit": 10000}).encode()
        req = urllib.request.Request("http://127.0.0.1:%d/api/v1/get" % port, data=body,
                                     headers={"Authorization": "OAuth " + token,
                                              "Content-Type": "application/json"})
        t = time.time()
        page = json.load(urllib.request.urlopen(req))["value"]
        times.append(time.time() - t)
        total += len(page)
        if len(page) < 10000:
            return times, total
        until = page[0]["timestamp"] - 1


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    rows, rounds, binaries = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:]
    work = tempfile.mkdtemp()
    servers = []
    try:
        for k, binary in enumerate(binaries):
            data = "%s/data%d" % (work, k)
            proc, _ = start(binary, data)      # creates the store
            proc.terminate()
            proc.wait()
            fill(data, rows)
            proc, port = start(binary, data)
            servers.append((binary, proc, port, open(data + "/admin_token").read().strip()))
        pages = {b: [] for b in binaries}
        reads = {b: [] for b in binaries}
        for _ in range(rounds):
            for binary, _, port, token in servers:
                t = time.time()
                times, total = read_back(port, token)
                reads[binary].append(time.time() - t)
                pages[binary] += times
                # the restart logs its state rows after the filled ones
                if not rows <= total <= rows + 8:
                    sys.exit("%s read %d rows of %d" % (binary, total, rows))
        for binary in binaries:
            p = pages[binary]
            print("%s: page median %.3f s, worst %.3f s; whole read median %.2f s (%d pages)" %
                  (binary, statistics.median(p), max(p), statistics.median(reads[binary]),
                   len(p) // rounds))
    finally:
        for _, proc, _, _ in servers:
            proc.terminate()
            proc.wait()
        subprocess.run(["rm", "-rf", work])


main()
