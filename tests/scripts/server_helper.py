"""Helpers for the end-to-end tests of `poolsched scheduler` (tests/scripts/server_*.sh).

Starts real scheduler processes on 127.0.0.1 with an ephemeral port and a data dir under a
temporary directory, talks to them with urllib, and plays nodes that speak the heartbeat
protocol of docs/api.md. Every process started here is stopped by Scheduler.stop (the test
scripts call it in a finally block).
"""
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The harness (checks.py); the server tests import check and finish from here.
from checks import FAILURES, check, finish  # noqa: E402,F401


def free_port():
    """A loopback port free now (for a process that must be started on a known port)."""
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class StopsAtExit:
    """`with X(...) as x:` (or `with x:`) calls x.stop() when the block ends, also when it
    raises: in place of try/finally x.stop()."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()
        return False


class Scheduler(StopsAtExit):
    def __init__(self, binary, data_dir, config=None):
        self.binary = binary
        self.data_dir = data_dir
        self.config = config
        self.proc = None
        self.port = None
        self.log_path = data_dir + ".log"

    def launch(self, listen):
        """Starts the process listening on listen, its config (when given) written beside the
        data dir, its log appended to log_path from log_start on."""
        args = [self.binary, "scheduler", "--listen", listen, "--data-dir", self.data_dir]
        if self.config is not None:
            path = self.data_dir + ".config.json"
            with open(path, "w") as f:
                json.dump(self.config, f)
            args += ["--config", path]
        self.log = open(self.log_path, "a")
        self.log_start = os.path.getsize(self.log_path)
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.log)

    def read_credentials(self):
        """The admin token and cluster secret a started scheduler wrote into its data dir."""
        self.admin = open(os.path.join(self.data_dir, "admin_token")).read().strip()
        self.secret = open(os.path.join(self.data_dir, "cluster_secret")).read().strip()

    def start(self):
        self.launch("127.0.0.1:0")
        deadline = time.time() + 10
        while time.time() < deadline:
            with open(self.log_path) as f:
                f.seek(self.log_start)
                m = re.search(r"event=scheduler_started listen=[0-9.]+:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                raise RuntimeError("scheduler exited: " + open(self.log_path).read())
            time.sleep(0.02)
        if self.port is None:
            raise RuntimeError("scheduler did not start")
        self.read_credentials()
        return self

    def stop(self):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                code = self.proc.wait(20)
                # a clean stop exits 0 (sanitizer builds report leaks with another code)
                check(code == 0, "scheduler exit code %d after SIGTERM: %s" % (code, self.logtext()[-2000:]))
            except subprocess.TimeoutExpired:
                check(False, "scheduler did not stop within 20 s")
                self.proc.kill()
                self.proc.wait()
        self.proc = None

    def kill9(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        self.proc = None

    def logtext(self):
        return open(self.log_path).read()

    def url(self, path):
        return "http://127.0.0.1:%d%s" % (self.port, path)

    def raw(self, method, path, body=None, token=None, content_type="application/json"):
        data = body if isinstance(body, (bytes, type(None))) else body.encode()
        req = urllib.request.Request(self.url(path), data=data, method=method)
        if token:
            req.add_header("Authorization", "OAuth " + token)
        if data is not None:
            req.add_header("Content-Type", content_type)
        try:
            with urllib.request.urlopen(req, timeout=30) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as e:
            return e.code, e.read().decode()

    def call(self, command, body=None, token=None, raw_body=None):
        text = raw_body if raw_body is not None else json.dumps(body if body is not None else {})
        status, out = self.raw("POST", "/api/v1/" + command, text, token or self.admin)
        try:
            return status, json.loads(out)
        except ValueError:
            return status, out

    def ok(self, command, body=None, token=None):
        status, out = self.call(command, body, token)
        if status != 200:
            raise RuntimeError("%s %s -> %d %s" % (command, json.dumps(body), status, out))
        return out

    def get(self, path, token=None):
        return self.ok("get", {"path": path}, token)["value"]

    def set(self, path, value, token=None):
        return self.ok("set", {"path": path, "value": value}, token)

    def token(self, user, role="user"):
        return self.ok("issue_token", {"user": user, "role": role})["token"]

    def heartbeat(self, body, token=None):
        status, out = self.raw("POST", "/internal/v1/node/heartbeat", json.dumps(body),
                               token or self.secret)
        try:
            return status, json.loads(out)
        except ValueError:
            return status, out

    def update(self, wait=1.3):
        """Waits for a fair share update (the default period is 1 s)."""
        time.sleep(wait)


class NodeAgent:
    """A real `poolsched node` on the scheduler at url, heartbeating every heartbeat_period ms
    (tick 50 ms), its output in log_path (opened with mode: "a" keeps an earlier agent's lines). Every test
    that starts one stops it (stop, in a finally block)."""

    def __init__(self, binary, url, node_id, resources, work_dir, log_path, data_dir=None,
                 extra=(), env=None, mode="w", heartbeat_period=100):
        self.node_id = node_id
        self.log_path = log_path
        self.log = open(log_path, mode)
        args = [binary, "node", "--scheduler", url, "--node-id", node_id,
                "--resources", resources, "--work-dir", work_dir]
        if data_dir:
            args += ["--data-dir", data_dir]
        args += ["--heartbeat-period", str(heartbeat_period), "--tick", "50"] + list(extra)
        self.proc = subprocess.Popen(args, stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def stop(self, sig=signal.SIGTERM, timeout=15):
        """Sends sig (when it still runs), SIGKILL after timeout seconds; its exit code. After
        a failed check, prints the end of its log."""
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        if FAILURES:
            print("node %s's log:\n%s" % (self.node_id, self.text()[-3000:]))
        return self.proc.returncode

    def text(self):
        with open(self.log_path) as f:
            return f.read()


class HaScheduler:
    """One `poolsched scheduler --ha` (docs/ha.md) on a fixed loopback port (a free one unless
    given), data dir WORK/NAME, log WORK/NAME.log, config WORK/ha.json. start() again after it
    exited starts it on the same port and dir: as a standby, or the leader if it wins."""

    def __init__(self, binary, work, store, name, port=None):
        self.binary, self.store, self.name = binary, store, name
        self.port = port or free_port()
        self.address = "127.0.0.1:%d" % self.port
        self.dir = os.path.join(work, name)
        self.log_path = self.dir + ".log"
        self.config = os.path.join(work, "ha.json")
        self.proc = None

    def start(self, wait=60):
        self.log = open(self.log_path, "a")
        start = os.path.getsize(self.log_path)
        self.proc = subprocess.Popen(
            [self.binary, "scheduler", "--ha", "--store", self.store, "--listen", self.address,
             "--data-dir", self.dir, "--config", self.config],
            stdout=subprocess.DEVNULL, stderr=self.log)
        deadline = time.time() + wait
        while time.time() < deadline:
            with open(self.log_path) as f:
                f.seek(start)
                if re.search(r"event=(standby_started|scheduler_started)", f.read()):
                    return self
            if self.proc.poll() is not None:
                raise RuntimeError("%s exited: %s" % (self.name, open(self.log_path).read()[-2000:]))
            time.sleep(0.02)
        raise RuntimeError("%s did not start" % self.name)

    def alive(self):
        return self.proc is not None and self.proc.poll() is None

    def url(self, path):
        return "http://%s%s" % (self.address, path)


def request(url, method="GET", body=None, token=None, headers=None, timeout=30):
    """(status, parsed body, response headers) of one HTTP request; (0, {"message": why}, {})
    when nothing answered. body: bytes as they are, anything else sent as JSON."""
    data = None if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    req = urllib.request.Request(url, data=data, method=method)
    if token:
        req.add_header("Authorization", "OAuth " + token)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    for k, v in (headers or {}).items():
        req.add_header(k, v)

    def parse(text):
        try:
            return json.loads(text or "null")
        except ValueError:
            return text
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, parse(r.read().decode()), r.headers
    except urllib.error.HTTPError as e:
        return e.code, parse(e.read().decode()), e.headers
    except OSError as e:
        return 0, {"message": "no answer: %s" % e}, {}


class FakeNode:
    """A node that runs nothing: jobs stay running until the test finishes them."""

    def __init__(self, sched, node_id, cpu=4, memory=8 << 30, slots=8, tags=None, media=None):
        self.sched = sched
        self.id = node_id
        self.limits = {"cpu": cpu, "memory": memory, "user_slots": slots}
        self.tags = tags or []
        self.media = media     # disk_space_per_medium: medium -> bytes, or None
        self.running = {}      # job id -> start entry (plus cpu_guarantee)
        self.finished = {}     # job id -> report
        self.interrupted = {}
        self.last = None

    def heartbeat(self, expect=200):
        jobs = []
        for jid, j in self.running.items():
            entry = {"job_id": jid, "state": "running",
                     "cpu_guarantee": j.get("cpu_guarantee", j["cpu_limit"]),
                     "cpu_usage_seconds": 0.5, "memory_bytes": 1 << 20}
            if "statistics" in j:   # set by the test: what a node's CPU monitor reports
                entry["statistics"] = j["statistics"]
            jobs.append(entry)
        jobs += list(self.finished.values())
        body = {"node_id": self.id, "tags": self.tags, "resource_limits": self.limits, "jobs": jobs}
        if self.media is not None:
            body["disk_space_per_medium"] = self.media
        status, out = self.sched.heartbeat(body)
        self.last = out
        if status != expect:
            check(False, "heartbeat of %s: status %d, expected %d: %s" % (self.id, status, expect, out))
            return out
        if status != 200:
            return out
        for jid in out["acknowledged"]:
            self.finished.pop(jid, None)
        for s in out["jobs_to_start"]:
            self.running[s["job_id"]] = dict(s)
        for a in out["jobs_to_abort"]:
            if a["job_id"] in self.running:
                del self.running[a["job_id"]]
                self.finished[a["job_id"]] = {"job_id": a["job_id"], "state": "aborted",
                                              "abort_reason": a["reason"]}
        for i in out["jobs_to_interrupt"]:
            self.interrupted[i["job_id"]] = i
        return out

    def beat(self, seconds, period=0.1):
        """Heartbeats every period for seconds (a node that keeps reporting)."""
        end = time.time() + seconds
        while time.time() < end:
            self.heartbeat()
            time.sleep(period)

    def finish(self, jid, state="completed", **extra):
        self.running.pop(jid)
        rep = {"job_id": jid, "state": state}
        rep.update(extra)
        self.finished[jid] = rep

    def finish_all(self, state="completed", **extra):
        for jid in list(self.running):
            self.finish(jid, state, **extra)


def wait_beating(what, cond, nodes=(), seconds=60):
    """Polls cond, heartbeating the nodes between tries (jobs start and finish, and rows are
    committed, only as heartbeats run), until it returns something true, which it returns; a
    failed check `what` (and None) after seconds."""
    end = time.time() + seconds
    while time.time() < end:
        for n in nodes:
            n.heartbeat()
        got = cond()
        if got:
            return got
        time.sleep(0.1)
    check(False, what)
    return None


EVENT_LOG = "//sys/scheduler/event_log"


def event_log_rows(s, **filters):
    """The rows of //sys/scheduler/event_log that pass the filters (docs/api.md "Event log")."""
    return s.ok("get", dict(filters, path=EVENT_LOG))["value"]


def start_vanilla(s, jobs=1, command="sleep 1000", **spec):
    """Starts a vanilla operation of `jobs` jobs of 1 cpu and 100 MiB each (upstream's test
    nodes have 1 cpu and 1 slot) with the other spec keys given; its id."""
    spec["tasks"] = {"main": {"command": command, "job_count": jobs, "cpu_limit": 1,
                              "memory_limit": 100 << 20}}
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]


def op_state(s, op):
    return s.ok("get_operation", {"operation_id": op})["state"]


def op_jobs(s, op, state=None):
    """The operation's jobs (those in state, when given)."""
    return [j for j in s.ok("list_jobs", {"operation_id": op})["jobs"]
            if state is None or j["state"] == state]
