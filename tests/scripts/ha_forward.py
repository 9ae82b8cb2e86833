"""A standby forwards clients to the leader (tests/scripts/ha_forward.sh starts PostgreSQL).

usage: ha_forward.py BINARY WORK_DIR STORE_URL
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.request

from server_helper import HaScheduler, check, finish, request

bin, work, store = sys.argv[1:4]
LEASE_MS = 3000
WAIT = 60   # seconds: what any condition may take under a sanitizer on a loaded machine
P = "//sys/pool_trees/physical"
FWD_TO = "X-Poolsched-Forwarded-To"


def http(inst, method, path, body=None, token=None, headers=None, timeout=WAIT):
    """(status, parsed body, headers) of one request to inst only."""
    return request(inst.url(path), method, body, token, headers, timeout)


def wait_ready(inst):
    deadline = time.time() + WAIT
    while time.time() < deadline:
        if http(inst, "GET", "/readyz", timeout=5)[0] == 200:
            return True
        time.sleep(0.05)
    return False


def wait_standby_of(inst, leader):
    """Polls inst's /readyz until it stands by for leader; its last (status, body)."""
    deadline = time.time() + WAIT
    while True:
        st, body, _ = http(inst, "GET", "/readyz", timeout=5)
        if (st == 503 and isinstance(body, dict) and body.get("leader") == leader.address
                or time.time() > deadline):
            return st, body
        time.sleep(0.05)


def stop_process(proc):
    """SIGSTOP proc and wait until every thread of it is stopped (state T in
    /proc/PID/task/TID/stat): the signal is delivered asynchronously, and a request sent before
    the stop takes effect would still be answered. True once stopped."""
    proc.send_signal(signal.SIGSTOP)
    deadline = time.time() + WAIT
    while time.time() < deadline:
        states = []
        for tid in os.listdir("/proc/%d/task" % proc.pid):
            try:
                with open("/proc/%d/task/%s/stat" % (proc.pid, tid)) as f:
                    states.append(f.read().rsplit(")", 1)[1].split()[0])
            except OSError:
                pass   # a thread that has just exited
        if states and all(s == "T" for s in states):
            return True
        time.sleep(0.01)
    return False


os.makedirs(work, exist_ok=True)
with open(os.path.join(work, "ha.json"), "w") as f:
    json.dump({"ha_lease": LEASE_MS}, f)
a, b = HaScheduler(bin, work, store, "a"), HaScheduler(bin, work, store, "b")
a.start()
check(wait_ready(a), "a leads")
admin = open(os.path.join(a.dir, "admin_token")).read().strip()
shutil.copytree(a.dir, b.dir)   # one cluster's secrets
b.start()
st, body = wait_standby_of(b, a)   # b has read the leader row (it polls every 200 ms)
check(st == 503 and body["role"] == "standby" and body["leader"] == a.address,
      "b is a standby that knows the leader: %d %s" % (st, body))

# ---- a client that knows only the standby -----------------------------------------------------
st, body, h = http(b, "GET", "/auth/whoami", token=admin)
check(st == 200 and h.get(FWD_TO) == a.address,
      "whoami through the standby: the leader answers (%s: %s): %d %s" % (FWD_TO, h.get(FWD_TO), st, body))
st, body, h = http(b, "POST", "/api/v1/create", {"type": "scheduler_pool", "path": P + "/fwd",
                   "attributes": {"weight": 3}}, admin)
check(st == 200 and h.get(FWD_TO) == a.address, "create a pool through the standby: %d %s" % (st, body))
spec = {"pool": "fwd", "tasks": {"t": {"command": "sleep 100", "job_count": 1}}}
st, body, h = http(b, "POST", "/api/v4/start_operation", {"operation_type": "vanilla", "spec": spec}, admin)
op = (body or {}).get("operation_id") if isinstance(body, dict) else None
check(st == 200 and op and h.get(FWD_TO) == a.address,
      "start_operation (/api/v4) through the standby: %d %s" % (st, body))
# reads: parameters in X-YT-Parameters (a YTsaurus client's reads), the pool in the query too
params = json.dumps({"operation_id": op, "attributes": ["state", "pool", "id"]})
st, body, h = http(b, "GET", "/api/v4/get_operation", headers={"X-YT-Parameters": params}, token=admin)
check(st == 200 and isinstance(body, dict) and body.get("id") == op,
      "get_operation with X-YT-Parameters through the standby: %d %s" % (st, body))
st, body, h = http(b, "GET", "/api/v4/get?path=" + urllib.request.quote(P + "/fwd/@weight"), token=admin)
check(st == 200 and body in ({"value": 3}, 3),
      "get with the path in the query through the standby: %d %s" % (st, body))
st, body, h = http(b, "POST", "/api/v1/get_operation", {"operation_id": op}, admin)
check(st == 200 and body.get("state") in ("pending", "running", "materializing"),
      "get_operation (/api/v1) through the standby: %d %s" % (st, body))
# the leader's refusals come back as they are: status, body, X-YT-* headers
st, body, h = http(b, "POST", "/api/v1/get", {"path": P + "/fwd"})
check(st == 401 and h.get(FWD_TO) == a.address, "no token: the leader's 401 through the standby: %d %s" % (st, body))
st, body, h = http(b, "GET", "/api/v4/get?path=//no/such", token=admin)
check(st >= 400 and h.get("X-YT-Response-Code") and h.get(FWD_TO) == a.address,
      "a YTsaurus error keeps its X-YT-* headers: %d %s %s" % (st, h.get("X-YT-Response-Code"), body))

# ---- the orchid shows who leads (read through the standby: the leader answers) ------------------
SVC = "//sys/scheduler/orchid/scheduler/service"
deadline = time.time() + WAIT   # the leader reads the standbys at each renewal (lease/4)
while True:
    st, body, h = http(b, "POST", "/api/v1/get", {"path": SVC}, admin)
    v = (body or {}).get("value", {}) if isinstance(body, dict) else {}
    if v.get("standbys") or time.time() > deadline:
        break
    time.sleep(0.1)
check(st == 200 and v.get("connected") is True and v.get("ha") is True and v.get("epoch") == 1
      and v.get("address") == a.address and v.get("standbys") == [b.address]
      and abs(v.get("last_connection_time", 0) / 1000 - time.time()) < 60 and v.get("hostname"),
      "orchid %s: the leader a, epoch 1, since when, standby b: %d %s" % (SVC, st, body))
st, body, h = http(b, "GET", "/api/v4/get?path=" + urllib.request.quote(SVC + "/epoch"), token=admin)
check(st == 200 and body in ({"value": 1}, 1), "orchid .../service/epoch on the YTsaurus face: %d %s" % (st, body))
st, body, h = http(b, "POST", "/api/v1/get", {"path": SVC + "/no_such"}, admin)
check(st == 404, "orchid .../service/no_such: 404: %d %s" % (st, body))

# ---- the web UI's header: leader or standby, the epoch (tests/ui/ha_header.test.js) --------------
if os.environ.get("PS_CHROMIUM") and os.environ.get("PS_JS_MODULES"):
    src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ui = subprocess.run(
        ["node", os.path.join(src, "tests/ui/ha_header.test.js")], capture_output=True, text=True,
        timeout=120, env=dict(os.environ, NODE_PATH=os.environ["PS_JS_MODULES"], PS_TOKEN=admin,
                              PS_LEADER_URL="http://" + a.address, PS_STANDBY_URL="http://" + b.address,
                              PS_LEADER=a.address, PS_STANDBY=b.address, PS_EPOCH="1"))
    print(ui.stdout, end="")
    check(ui.returncode == 0, "the web UI's header (ha_header.test.js): %s" % (ui.stdout + ui.stderr)[-2000:])
else:
    print("note: the web UI's header not checked (no chromium or no npm packages: ui_browser.sh installs them)")

# ---- what a standby does not pass on ----------------------------------------------------------
st, body, h = http(b, "POST", "/api/v1/get", {"path": P}, admin, headers={"X-Poolsched-Forwarded-By": "127.0.0.1:1"})
check(st == 503 and "not forwarded again" in body["message"] and h.get("X-Poolsched-Leader") == a.address,
      "a forwarded request is not forwarded again: %d %s" % (st, body))
st, body, h = http(b, "POST", "/internal/v1/node/heartbeat", {}, admin)
check(st == 503 and "not the leader" in body["message"], "node heartbeats are not forwarded: %d %s" % (st, body))
st, body, h = http(b, "GET", "/metrics")
check(st == 503 and FWD_TO not in h, "/metrics (this instance's) is not forwarded: %d" % st)
check(http(b, "GET", "/healthz")[0] == 200, "/healthz answers for the standby itself")

# ---- the leader gone: 503 naming it until the takeover, then the former standby serves ---------
# The lease left (at least 3/4 of it: the leader renews every lease/4) is the time the one
# refused connection below has before b takes over; once b leads it would answer itself.
a.proc.kill()
a.proc.wait()
t0 = time.time()
st, body, h = http(b, "POST", "/api/v1/get", {"path": P + "/fwd"}, admin)
check(st == 503 and isinstance(body, dict) and a.address in body["message"]
      and "cannot connect" in body["message"],
      "the leader unreachable, before the takeover: 503 naming it: %d %s" % (st, body))
check(wait_ready(b), "b took over")
st, body, h = http(b, "POST", "/api/v1/get", {"path": P + "/fwd/@weight"}, admin)
check(st == 200 and body == {"value": 3} and FWD_TO not in h,
      "the new leader serves directly what was written through it as a standby: %d %s" % (st, body))
st, body, h = http(b, "POST", "/api/v1/get_operation", {"operation_id": op}, admin)
check(st == 200 and FWD_TO not in h, "and the operation: %d %s" % (st, body))
st, body, h = http(b, "POST", "/api/v1/get", {"path": SVC}, admin)
v = (body or {}).get("value", {}) if isinstance(body, dict) else {}
check(st == 200 and v.get("epoch") == 2 and v.get("address") == b.address and v.get("standbys") == []
      and v.get("last_connection_time", 0) / 1000 >= t0 - 1,
      "orchid after the takeover: b leads epoch 2 since the takeover, no standby: %s" % body)

# ---- a forward waiting on a paused leader gives up when the standby takes over -------------------
a.start()   # back, as a standby of b
st, body = wait_standby_of(a, b)
check(st == 503 and body.get("leader") == b.address, "a stands by for b: %d %s" % (st, body))
st, body, h = http(a, "POST", "/api/v1/get", {"path": P + "/fwd/@weight"}, admin)
check(st == 200 and h.get(FWD_TO) == b.address, "a, now the standby, forwards to b: %d %s" % (st, body))
# b stopped for good before the request goes out (else b may still answer it), and within its
# lease (else a takes over first and answers itself): the forward then waits on the stopped b
# until a wins, not for the forward's own timeout (PS_HA_FORWARD_TIMEOUT_MS, "did not answer")
check(stop_process(b.proc), "b stopped (SIGSTOP: every thread in state T)")
st, body, h = http(a, "POST", "/api/v1/get", {"path": P + "/fwd/@weight"}, admin, timeout=WAIT)
check(st == 503 and isinstance(body, dict) and "leader changed" in body["message"],
      "a forward to the paused leader ends when the standby takes over: %d %s" % (st, body))
check(wait_ready(a), "a took over from the paused b")
st, body, h = http(a, "POST", "/api/v1/get", {"path": P + "/fwd/@weight"}, admin)
check(st == 200 and FWD_TO not in h, "a serves directly: %d %s" % (st, body))
b.proc.kill()
b.proc.wait()
a.proc.send_signal(signal.SIGTERM)
try:
    a.proc.wait(WAIT)
except subprocess.TimeoutExpired:
    a.proc.kill()
    a.proc.wait()

# ---- without --ha: the one scheduler serves, epoch 0 ---------------------------------------------
c = HaScheduler(bin, work, store, "c")
c.proc = subprocess.Popen([bin, "scheduler", "--listen", c.address, "--data-dir", c.dir],
                          stdout=subprocess.DEVNULL, stderr=open(c.log_path, "a"))
if check(wait_ready(c), "a scheduler without --ha starts"):
    token = open(os.path.join(c.dir, "admin_token")).read().strip()
    st, body, h = http(c, "POST", "/api/v1/get", {"path": SVC}, token)
    v = (body or {}).get("value", {}) if isinstance(body, dict) else {}
    check(st == 200 and v.get("connected") is True and v.get("ha") is False and v.get("epoch") == 0
          and v.get("standbys") == [] and v.get("last_connection_time", 0) > 0,
          "orchid without --ha: %d %s" % (st, body))
c.proc.send_signal(signal.SIGTERM)
c.proc.wait(WAIT)
finish()
