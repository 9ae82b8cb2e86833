"""The fault suite of standby schedulers (tests/scripts/ha_failover.sh starts PostgreSQL and runs
this; docs/ha.md has the design and the figures).

usage: ha_faults.py BINARY WORK_DIR STORE_URL PSQL KILL_ROUNDS STOP_ROUNDS
"""
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time

from server_helper import HaScheduler, check, finish, free_port, request

bin, work, store, psql = sys.argv[1:5]
kill_rounds, stop_rounds = int(sys.argv[5]), int(sys.argv[6])
LEASE_MS = 2000
P = "//sys/pool_trees/physical"


def sql(query):
    out = subprocess.run([psql, "-X", "-At", "-d", store, "-c", query], check=True,
                         capture_output=True, text=True).stdout
    return out.strip()


class Proxy:
    """A loopback TCP proxy to PostgreSQL that can blackhole: while cut, it keeps every
    connection open and forwards nothing (a partition, not a reset)."""

    def __init__(self, target_port):
        self.target = target_port
        self.cut = threading.Event()
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            c, _ = self.sock.accept()
            u = socket.create_connection(("127.0.0.1", self.target))
            threading.Thread(target=self.pipe, args=(c, u), daemon=True).start()
            threading.Thread(target=self.pipe, args=(u, c), daemon=True).start()

    def pipe(self, src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                while self.cut.is_set():
                    time.sleep(0.05)   # held, never delivered while cut
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def Instance(name, port, store_url=None):
    return HaScheduler(bin, work, store_url or store, name, port)


def http(inst, method, path, body=None, token=None, timeout=5, headers_out=None):
    """(status, parsed body or None when nothing answered); headers_out, a dict, gets the
    response's headers."""
    st, out, h = request(inst.url(path), method, body, token, timeout=timeout)
    if headers_out is not None:
        headers_out.update(h)
    return st, out if st else None


os.makedirs(work, exist_ok=True)
with open(os.path.join(work, "ha.json"), "w") as f:
    json.dump({"ha_lease": LEASE_MS, "fair_share_update_period": 100}, f)
# a reaches PostgreSQL through a proxy that the cut round blackholes; b directly
pg_port = int(re.search(r":(\d+)/", store).group(1))
proxy = Proxy(pg_port)
insts = [Instance("a", free_port(), re.sub(r":\d+/", ":%d/" % proxy.port, store)),
         Instance("b", free_port())]
insts[0].start()
deadline = time.time() + 10
while http(insts[0], "GET", "/readyz")[0] != 200 and time.time() < deadline:
    time.sleep(0.05)
check(http(insts[0], "GET", "/readyz")[0] == 200, "the first instance leads")
admin = open(os.path.join(insts[0].dir, "admin_token")).read().strip()


def operator_view(inst):
    """(standbys gauge, leader epoch gauge, alert types) of a leader."""
    st, text = http(inst, "GET", "/metrics")
    gauges = dict(re.findall(r"^(poolsched_standbys|poolsched_leader_epoch) (\S+)$", text or "", re.M))
    st, out = http(inst, "POST", "/api/v1/get", {"path": "//sys/scheduler/@alerts"}, admin)
    types = [a["attributes"]["alert_type"] for a in (out or {}).get("value", [])]
    return float(gauges.get("poolsched_standbys", -1)), float(gauges.get("poolsched_leader_epoch", -1)), types


time.sleep(1.2)   # a renewal or two
standbys, epoch_gauge, alerts = operator_view(insts[0])
check(standbys == 0 and "no_standby_scheduler" in alerts and epoch_gauge == 1,
      "a leader alone: poolsched_standbys 0, alert no_standby_scheduler, epoch 1: %s %s %s"
      % (standbys, alerts, epoch_gauge))
# instances of one cluster share the data dir's secrets
shutil.copytree(insts[0].dir, insts[1].dir)
insts[1].start()
time.sleep(1.2)
standbys, epoch_gauge, alerts = operator_view(insts[0])
check(standbys == 1 and "no_standby_scheduler" not in alerts,
      "with a standby: poolsched_standbys 1, no alert: %s %s" % (standbys, alerts))
secret = open(os.path.join(insts[0].dir, "cluster_secret")).read().strip()
st, body = http(insts[1], "GET", "/readyz")
check(st == 503 and body["role"] == "standby", "the second is a standby: %d %s" % (st, body))
check(http(insts[1], "GET", "/healthz")[0] == 200, "a standby is live (/healthz 200)")
h = {}
st, body = http(insts[1], "POST", "/api/v1/get", {"path": P}, admin, headers_out=h)
check(st == 200 and h.get("X-Poolsched-Forwarded-To") == "127.0.0.1:%d" % insts[0].port,
      "a standby forwards API calls to the leader: %d %s %s" % (st, body, h))

lock = threading.Lock()
acked = {}        # pool name -> (instance name, time acknowledged)
stop = threading.Event()


def leader():
    for i in insts:
        if i.alive() and http(i, "GET", "/readyz", timeout=1)[0] == 200:
            return i
    return None


def writer(k):
    i = 0
    target = insts[0]
    while not stop.is_set():
        i += 1
        name = "w%d_%d" % (k, i)
        h = {}
        st, _ = http(target, "POST", "/api/v1/create",
                     {"type": "scheduler_pool", "path": P + "/" + name}, admin, timeout=10,
                     headers_out=h)
        if st == 200:
            # acknowledged by the leader a standby forwarded it to, or by the target itself
            fwd = h.get("X-Poolsched-Forwarded-To")
            by = next((x for x in insts if fwd == "127.0.0.1:%d" % x.port), target)
            with lock:
                acked[name] = (by.name, time.time())
        else:
            target = insts[1] if target is insts[0] else insts[0]
            time.sleep(0.02)


# a node with running jobs that must be adopted, never started again, across the failovers
started = {}      # job id -> times it was given to the node
running = {}      # job id -> its start entry
node_stop = threading.Event()


def node():
    target = insts[0]
    while not node_stop.is_set():
        jobs = [{"job_id": j, "state": "running", "cpu_guarantee": e.get("cpu_limit", 1),
                 "cpu_usage_seconds": 0.1, "memory_bytes": 1 << 20}
                for j, e in sorted(running.items())]
        body = {"node_id": "n1", "tags": [], "jobs": jobs,
                "resource_limits": {"cpu": 64, "memory": 64 << 30, "user_slots": 64}}
        st, out = http(target, "POST", "/internal/v1/node/heartbeat", body, secret, timeout=10)
        if st == 200:
            for s in out["jobs_to_start"]:
                started[s["job_id"]] = started.get(s["job_id"], 0) + 1
                running[s["job_id"]] = s
            for a in out["jobs_to_abort"]:
                running.pop(a["job_id"], None)
        else:
            target = insts[1] if target is insts[0] else insts[0]
        time.sleep(0.1)


threads = [threading.Thread(target=writer, args=(k,)) for k in range(8)]
threads.append(threading.Thread(target=node))
for t in threads:
    t.start()
st, out = http(insts[0], "POST", "/api/v1/start_op",
               {"spec": {"tasks": {"t": {"command": "sleep", "job_count": 4}}}}, admin)
check(st == 200, "a long operation starts: %d %s" % (st, out))
time.sleep(1.5)
check(len(running) == 4, "its 4 jobs run on the node: %d" % len(running))


def first_write_after(t0, by):
    """Seconds from t0 to the first write acknowledged by instance `by` after t0."""
    deadline = time.time() + 30
    while time.time() < deadline:
        with lock:
            times = [at for (who, at) in acked.values() if who == by.name and at > t0]
        if times:
            return min(times) - t0
        time.sleep(0.02)
    return None


def stepped_down_cleanly(old, what, old_epoch, since):
    try:
        code = old.proc.wait(15)
    except subprocess.TimeoutExpired:
        code = None
    check(code == 75, "%s: the deposed leader stepped down (exit 75): %s" % (what, code))
    with lock:
        late = [n for n, (who, at) in acked.items() if who == old.name and at > since]
    check(not late, "%s: writes acknowledged by the deposed leader after the takeover: %s"
          % (what, late[:5]))
    xid = int(sql("SELECT takeover_xid FROM leader"))
    rows = int(sql("SELECT count(*) FROM objects WHERE epoch = %d AND xmin::text::bigint > %d"
                   % (old_epoch, xid % (1 << 32))))
    check(rows == 0, "%s: %d rows of epoch %d written after the takeover" % (what, rows, old_epoch))
    if code is None:
        old.proc.kill()
        old.proc.wait()
    return rows


# the leader's connections to PostgreSQL blackholed (a partition between it and the database)
cut_late = cut_takeover = None
if leader() is insts[0]:
    old, new = insts[0], insts[1]
    old_epoch = http(old, "GET", "/readyz")[1]["epoch"]
    t0 = time.time()
    proxy.cut.set()
    took = first_write_after(t0, new)
    check(took is not None, "cut: %s took over from the cut-off %s" % (new.name, old.name))
    cut_takeover = took
    cut_late = stepped_down_cleanly(old, "cut", old_epoch, t0 + (took or 0))
    proxy.cut.clear()
    old.start()
else:
    check(False, "cut: a (behind the proxy) should lead at first")

takeovers = []
for r in range(kill_rounds):
    old = leader()
    if not check(old is not None, "round %d: a leader" % r):
        break
    new = insts[1] if old is insts[0] else insts[0]
    time.sleep(0.5)
    t0 = time.time()
    old.proc.kill()
    old.proc.wait()
    took = first_write_after(t0, new)
    check(took is not None, "round %d: %s took over after kill -9 of %s" % (r, new.name, old.name))
    if took is not None:
        takeovers.append(took)
    old.start()   # back as a standby

stopped_late = []
for r in range(stop_rounds):
    old = leader()
    if not check(old is not None, "stop round %d: a leader" % r):
        break
    new = insts[1] if old is insts[0] else insts[0]
    old_epoch = http(old, "GET", "/readyz")[1]["epoch"]
    t0 = time.time()
    old.proc.send_signal(signal.SIGSTOP)
    took = first_write_after(t0, new)
    check(took is not None, "stop round %d: %s took over from the paused %s" % (r, new.name, old.name))
    # clients that still believe in the paused leader: their writes wait in its socket backlog
    # and reach it the moment it resumes, racing its own discovery that it was deposed
    stale_stop = threading.Event()

    def stale(k):
        i = 0
        while not stale_stop.is_set():
            i += 1
            name = "stale%d_%d_%d" % (r, k, i)
            st, _ = http(old, "POST", "/api/v1/create",
                         {"type": "scheduler_pool", "path": P + "/" + name}, admin, timeout=10)
            if st == 200:
                with lock:
                    acked[name] = (old.name, time.time())
            elif st == 0:
                return
    stales = [threading.Thread(target=stale, args=(k,)) for k in range(8)]
    for t in stales:
        t.start()
    time.sleep(0.5)
    takeover_at = time.time()
    old.proc.send_signal(signal.SIGCONT)
    try:
        code = old.proc.wait(10)
    except subprocess.TimeoutExpired:
        code = None
    check(code == 75, "stop round %d: the deposed leader stepped down (exit 75): %s" % (r, code))
    stale_stop.set()
    for t in stales:
        t.join()
    with lock:
        late = [n for n, (who, at) in acked.items() if who == old.name and at > takeover_at]
    check(not late, "stop round %d: writes acknowledged by the deposed leader after the takeover: %s"
          % (r, late[:5]))
    xid = int(sql("SELECT takeover_xid FROM leader"))
    rows = int(sql("SELECT count(*) FROM objects WHERE epoch = %d AND xmin::text::bigint > %d"
                   % (old_epoch, xid % (1 << 32))))
    stopped_late.append(rows)
    check(rows == 0, "stop round %d: %d rows of epoch %d written after the takeover"
          % (r, rows, old_epoch))
    if code is None:
        old.proc.kill()
        old.proc.wait()
    old.start()

time.sleep(1.0)
stop.set()
node_stop.set()
for t in threads:
    t.join()

lead = leader()
check(lead is not None, "a leader at the end")
if lead:
    st, pools = http(lead, "POST", "/api/v1/get", {"path": P}, admin, timeout=30)
    pools = pools["value"] if st == 200 else {}
    missing = [n for n in acked if n not in pools]
    check(not missing, "acknowledged writes lost: %d, e.g. %s" % (len(missing), missing[:5]))
    # the CLI with both addresses, the standby first (POOLSCHED_PROXY=A,B)
    standby = insts[1] if lead is insts[0] else insts[0]
    env = dict(os.environ, POOLSCHED_PROXY="127.0.0.1:%d,127.0.0.1:%d" % (standby.port, lead.port),
               POOLSCHED_TOKEN=admin)
    cli = subprocess.run([bin, "get", "//sys/pool_trees"], env=env, capture_output=True, text=True)
    check(cli.returncode == 0 and "physical" in cli.stdout,
          "the CLI with POOLSCHED_PROXY=standby,leader reaches the leader: %d %s %s"
          % (cli.returncode, cli.stdout, cli.stderr))
twice = {j: n for j, n in started.items() if n > 1}
check(not twice, "jobs started twice: %s" % twice)
check(len(started) == 4, "jobs started in all: %d (4 expected: adopted, not started again)"
      % len(started))
epoch = int(sql("SELECT epoch FROM leader"))
figures = {
    "kill_rounds": len(takeovers),
    "takeover_s_p50": round(statistics.median(takeovers), 2) if takeovers else None,
    "takeover_s_max": round(max(takeovers), 2) if takeovers else None,
    "cut_takeover_s": round(cut_takeover, 2) if cut_late is not None and cut_takeover else None,
    "cut_old_epoch_rows_after_takeover": cut_late,
    "stop_rounds": len(stopped_late),
    "old_epoch_rows_after_takeover": sum(stopped_late),
    "writes_acknowledged": len(acked),
    "writes_lost": len(missing) if lead else None,
    "jobs_started_twice": len(twice),
    "final_epoch": epoch,
    "lease_ms": LEASE_MS,
}
print(json.dumps(figures))
if takeovers:
    check(max(takeovers) <= 5.0 * (1 if os.environ.get("HA_STRICT") else 3),
          "takeover max %.2f s" % max(takeovers))
for i in insts:
    if i.alive():
        i.proc.send_signal(signal.SIGTERM)
        try:
            i.proc.wait(20)
        except subprocess.TimeoutExpired:
            i.proc.kill()
            i.proc.wait()
import server_helper
if server_helper.FAILURES:
    for i in insts:
        lines = [l for l in open(i.log_path) if re.search(
            r"level=(error|warning)|leader_|standby_following|scheduler_started|exited", l)]
        print("--- %s (port %d), last events:\n%s" % (i.name, i.port, "".join(lines[-25:])))
keep = os.environ.get("HA_KEEP_LOGS")
if keep:
    for i in insts:
        shutil.copy(i.log_path, keep)
finish()
