#!/usr/bin/env python3
"""Times reading //sys/scheduler/event_log back in pages, as `poolsched what-if` does
(docs/performance.md "Reading the record from the scheduler"), for one or more scheduler
binaries side by side: each gets a fresh data directory whose store holds ROWS job rows
(written into it while the scheduler is stopped, ~450 bytes each, 0.8 s apart), then each pages
back from the newest row with `until` and `limit` 10000, alternating binaries ROUNDS times.
Prints per binary the median and worst page (request to parsed reply), the first page after the
start (the first read of the log), a whole read, and the worst wait of a small request (a get of
//sys/pool_trees, which takes the scheduler's lock as heartbeats do) sent over and over from
another thread during the first round's first page and during every read.

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
import threading
import time
import urllib.request

LOG = "//sys/scheduler/event_log"


def start(binary, data, rows):
    log = open(data + ".log", "a")
    start_at = os.path.getsize(data + ".log")
    with open(data + ".json", "w") as f:   # a log that keeps all the rows and the state rows
        json.dump({"event_log_max_row_count": max(rows + 1000, 100000)}, f)
    proc = subprocess.Popen([binary, "scheduler", "--listen", "127.0.0.1:0", "--data-dir", data,
                             "--config", data + ".json"],
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


def request(port, token, body):
    req = urllib.request.Request("http://127.0.0.1:%d/api/v1/get" % port,
                                 data=json.dumps(body).encode(),
                                 headers={"Authorization": "OAuth " + token,
                                          "Content-Type": "application/json"})
    return json.load(urllib.request.urlopen(req))["value"]


class Prober(threading.Thread):
    """Gets //sys/pool_trees over and over until stopped: the worst wait."""

    def __init__(self, port, token):
        super().__init__()
        self.port, self.token, self.worst, self.stopped = port, token, 0.0, threading.Event()

    def run(self):
        while not self.stopped.is_set():
            t = time.time()
            request(self.port, self.token, {"path": "//sys/pool_trees"})
            self.worst = max(self.worst, time.time() - t)

    def stop(self):
        self.stopped.set()
        self.join()
        return self.worst


def read_back(port, token):
    """Pages back through the whole log; the page times and the rows read."""
    until, times, total = 2 ** 62, [], 0
    while True:
        t = time.time()
        page = request(port, token, {"path": LOG, "until": until, "limit": 10000})
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
            proc, _ = start(binary, data, rows)   # creates the store
            proc.terminate()
            proc.wait()
            fill(data, rows)
            proc, port = start(binary, data, rows)
            servers.append((binary, proc, port, open(data + "/admin_token").read().strip()))
        pages = {b: [] for b in binaries}
        reads = {b: [] for b in binaries}
        waits = {b: [] for b in binaries}
        first = {}
        for binary, _, port, token in servers:   # the first read of each: its first page
            prober = Prober(port, token)
            prober.start()
            time.sleep(0.2)
            t = time.time()
            request(port, token, {"path": LOG, "until": 2 ** 62, "limit": 10000})
            first[binary] = (time.time() - t, prober.stop())
        for _ in range(rounds):
            for binary, _, port, token in servers:
                prober = Prober(port, token)
                prober.start()
                t = time.time()
                times, total = read_back(port, token)
                reads[binary].append(time.time() - t)
                waits[binary].append(prober.stop())
                pages[binary] += times
                # the restart logs its state rows after the filled ones
                if not rows <= total <= rows + 8:
                    sys.exit("%s read %d rows of %d" % (binary, total, rows))
        for binary in binaries:
            p = pages[binary]
            print("%s: first page %.3f s (a small request waited up to %.3f s); page median "
                  "%.3f s, worst %.3f s; whole read median %.2f s (%d pages), a small request "
                  "waited up to %.3f s" %
                  (binary, first[binary][0], first[binary][1], statistics.median(p), max(p),
                   statistics.median(reads[binary]), len(p) // rounds, max(waits[binary])))
    finally:
        for _, proc, _, _ in servers:
            proc.terminate()
            proc.wait()
        subprocess.run(["rm", "-rf", work]) if not os.environ.get("KEEP") else print(work)


main()
