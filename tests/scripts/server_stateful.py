#!/usr/bin/env python3
"""Stateful random test of `poolsched scheduler` (model-based, as a QuickCheck state machine).

A seeded random sequence of steps drives one real scheduler (the binary it is given; ctest's
sanitize build passes the ASan+UBSan one): pools are created, changed and removed, operations
started, aborted, suspended, resumed, completed and moved, fake nodes register and heartbeat,
their jobs complete or fail, and the scheduler is restarted (SIGTERM or kill -9, then started on
the same data dir). The driver is single-threaded, so every change the API acknowledged is known
to the model before the next step. After every step it checks:

  - the scheduler is alive and its log has no sanitizer report;
  - a reply is one of the codes the model allows (an outright success or refusal where the model
    knows the answer, never a 5xx);
  - a job id is started once, ever (across nodes and restarts), and only for an operation that
    is running and not suspended;
  - the jobs a heartbeat leaves on a node fit the node's resource_limits (cpu, user_slots);
  - a pool's and an operation's running jobs fit their resource_limits once the limit and the
    operation's pool have been unchanged for SETTLE seconds;
and every --check-every steps (and around restarts) the full state:
  - every operation is terminal, running, or pending with a pending reason; a terminal state
    never changes; completed / failed agree with the progress; aborted only by the model's
    abort; suspended as the model says; pool_per_tree as the model says;
  - orchid's operation_count and running_operation_count of every pool equal the operations'
    (subtree counts), pools are the model's, and a pending operation whose pools all have
    room (after SETTLE) is a failure;
  - the attributes the model set are what `get @attr` answers;
  - a restart gives the same state: pools and their attributes, operations' states, suspension,
    pools, progress (completed / failed).

usage: server_stateful.py BINARY [--steps N] [--seed S] [--work DIR] [--check-every K]
                          [--restart-every R] [--trace]
On failure it prints the seed, the step, the last steps and the scheduler's log tail, and exits 1.
`--seed S --steps N` replays the same draws; the scheduler's timing (fair share updates) can still
differ between runs, so a replay follows the same path until timing matters.
"""
import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TREE = "physical"
ORCHID = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/%s/fair_share_info/" % TREE
UPDATE_MS = 50          # fair share update period of the tree
SETTLE = 0.4            # seconds after a change before its effect is required
MAX_FAILED = 3          # service config max_failed_job_count
TERMINAL = ("completed", "failed", "aborted")
SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                       r"SUMMARY: UndefinedBehaviorSanitizer|ThreadSanitizer")
EPS = 1e-6


class Failure(Exception):
    def __init__(self, msg, crash=False):
        Exception.__init__(self, msg)
        self.crash = crash


def fail(msg, crash=False):
    """crash: the scheduler died, reported a sanitizer error or answered 5xx."""
    raise Failure(msg, crash)


# ---- the scheduler process ------------------------------------------------------------------

class Sched:
    def __init__(self, binary, data_dir):
        self.binary = binary
        self.data_dir = data_dir
        self.log_path = data_dir + ".log"
        self.cfg_path = data_dir + ".config.json"
        with open(self.cfg_path, "w") as f:
            json.dump({"fair_share_update_period": UPDATE_MS, "max_failed_job_count": MAX_FAILED,
                       "http_threads": 4}, f)
        self.proc = None
        self.conn = None
        self.log_pos = 0
        self.boots = 0

    def start(self):
        start = os.path.getsize(self.log_path) if os.path.exists(self.log_path) else 0
        log = open(self.log_path, "a")
        env = dict(os.environ)
        env.setdefault("ASAN_OPTIONS", "detect_leaks=1")
        env.setdefault("UBSAN_OPTIONS", "print_stacktrace=1")
        self.proc = subprocess.Popen([self.binary, "scheduler", "--listen", "127.0.0.1:0",
                                      "--data-dir", self.data_dir, "--config", self.cfg_path],
                                     stdout=subprocess.DEVNULL, stderr=log, env=env)
        log.close()
        self.port = None
        deadline = time.time() + 30
        while time.time() < deadline:
            with open(self.log_path, errors="replace") as f:
                f.seek(start)
                m = re.search(r"event=scheduler_started listen=[0-9.]+:(\d+)", f.read())
            if m:
                self.port = int(m.group(1))
                break
            if self.proc.poll() is not None:
                fail("scheduler exited at start with %s" % self.proc.returncode, True)
            time.sleep(0.01)
        if self.port is None:
            fail("scheduler did not start in 30 s")
        self.admin = open(os.path.join(self.data_dir, "admin_token")).read().strip()
        self.secret = open(os.path.join(self.data_dir, "cluster_secret")).read().strip()
        self.conn = None
        self.boots += 1

    def stop(self, hard):
        """SIGTERM (must exit 0: sanitizer builds exit otherwise on a leak) or kill -9."""
        if self.conn:
            self.conn.close()
            self.conn = None
        if not self.proc or self.proc.poll() is not None:
            return
        if hard:
            self.proc.kill()
            self.proc.wait()
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            code = self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            fail("scheduler did not stop within 60 s of SIGTERM", True)
        if code != 0:
            fail("scheduler exit code %d after SIGTERM" % code, True)

    def check_alive(self):
        if self.proc.poll() is not None:
            fail("scheduler died: exit code %s" % self.proc.returncode, True)
        with open(self.log_path, "rb") as f:
            f.seek(self.log_pos)
            data = f.read()
        # keep a tail in case a report straddles the read
        self.log_pos += max(0, len(data) - 200)
        if SANITIZER.search(data.decode("utf-8", "replace")):
            fail("sanitizer report in the scheduler's log", True)

    def request(self, method, path, body, token):
        data = json.dumps(body).encode()
        for attempt in range(2):
            if self.conn is None:
                self.conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
            try:
                self.conn.request(method, path, data, {"Authorization": "OAuth " + token,
                                                       "Content-Type": "application/json"})
                r = self.conn.getresponse()
                text = r.read().decode()
                if r.getheader("Connection", "").lower() == "close":
                    self.conn.close()
                    self.conn = None
                break
            except (ConnectionError, http.client.HTTPException, OSError) as e:
                self.conn.close()
                self.conn = None
                if attempt == 1 or self.proc.poll() is not None:
                    fail("%s %s: %s (scheduler exit code %s)" % (method, path, e, self.proc.poll()), True)
        try:
            out = json.loads(text)
        except ValueError:
            out = text
        if r.status >= 500:
            fail("%s %s %s -> %d %s" % (method, path, json.dumps(body)[:300], r.status, text[:300]), True)
        return r.status, out

    def call(self, command, body, token=None):
        return self.request("POST", "/api/v1/" + command, body, token or self.admin)

    def ok(self, command, body, token=None):
        st, out = self.call(command, body, token)
        if st != 200:
            fail("%s %s -> %d %s" % (command, json.dumps(body)[:300], st, out))
        return out

    def get(self, path):
        return self.ok("get", {"path": path})["value"]


# ---- the model --------------------------------------------------------------------------------

class Pool:
    def __init__(self, name, parent):
        self.name = name
        self.parent = parent          # None: the root
        self.attrs = {}
        self.limits_changed = 0.0     # time of the last change of its limits or of its subtree
        self.over_ok = False          # max_running_operation_count changed: running may exceed
                                      # it until it drops below (running ones are not stopped)


class Op:
    def __init__(self, oid, user, pool, jobs, limits):
        self.id = oid
        self.user = user
        self.pool = pool              # the pool_per_tree the service answered
        self.jobs = jobs
        self.limits = limits          # the operation's resource_limits (dict) or None
        self.state = "active"         # active (pending or running) or a terminal state
        self.by_model = None          # "aborted" / "completed" when the model ended it
        self.suspended = False
        self.suspended_at = 0.0
        self.changed = 0.0            # last pool / limits change by update_op_parameters (the
                                      # spec's limits hold from the first job on)
        self.started = time.time()


class FakeNode:
    def __init__(self, nid, limits, tags):
        self.id = nid
        self.limits = limits
        self.tags = tags
        self.running = {}             # job id -> start entry
        self.finished = {}            # job id -> report
        self.interrupted = set()


def pool_ancestors(model_pools, name):
    """The pool and its ancestors by name (root excluded), for explicit and ephemeral pools."""
    out = []
    seen = set()
    while name and name not in seen:
        seen.add(name)
        out.append(name)
        p = model_pools.get(name)
        if p is not None:
            name = p.parent
        elif "$" in name:
            name = name.split("$", 1)[0]
        else:
            name = None
    return out


def near(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return abs(a - b) <= 1e-6 * max(1.0, abs(a), abs(b))
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b and near(v, b[k]) for k, v in a.items())
    return a == b


class Test:
    def __init__(self, args):
        self.args = args
        self.rng = random.Random(args.seed)
        self.sched = Sched(args.binary, os.path.join(args.work, "data"))
        self.pools = {}
        self.ops = {}
        self.active = []              # ids of active operations (order of start)
        self.nodes = {}
        self.started_jobs = set()
        self.job_op = {}              # job id -> op id (running jobs only)
        self.tokens = {}
        self.step = 0
        self.history = []
        self.counts = {}
        self.pool_seq = 0

    # -- helpers
    def note(self, text):
        self.history.append("step %d: %s" % (self.step, text))
        if len(self.history) > 40:
            del self.history[0]
        if self.args.trace:
            print(self.history[-1], flush=True)

    def pool_path(self, name):
        parts = []
        while name is not None:
            parts.append(name)
            name = self.pools[name].parent
        return "//sys/pools/" + "/".join(reversed(parts))

    def subtree(self, name):
        out = {name}
        changed = True
        while changed:
            changed = False
            for p in self.pools.values():
                if p.parent in out and p.name not in out:
                    out.add(p.name)
                    changed = True
        return out

    def touch_pool(self, name):
        now = time.time()
        for a in pool_ancestors(self.pools, name):
            if a in self.pools:
                self.pools[a].limits_changed = now

    def user_token(self, user):
        return self.sched.admin if user == "admin" else self.tokens[user]

    # -- set-up
    def setup(self):
        self.sched.start()
        s = self.sched
        s.ok("set", {"path": "//sys/pool_trees/%s/@fair_share_update_period" % TREE, "value": UPDATE_MS})
        for u in ("alice", "bob"):
            self.tokens[u] = s.ok("issue_token", {"user": u})["token"]
        for k in range(3):
            self.register(self.new_node())

    def new_node(self):
        nid = "n%d" % len(self.nodes)
        node = FakeNode(nid, self.draw_node_limits(), self.draw_tags())
        self.nodes[nid] = node
        return node

    def draw_node_limits(self):
        return {"cpu": self.rng.choice([2, 4, 6, 8]), "memory": self.rng.choice([8, 16, 32]) << 30,
                "user_slots": self.rng.choice([2, 4, 8])}

    def draw_tags(self):
        return sorted(self.rng.sample(["ssd", "fast", "big"], self.rng.randint(0, 2)))

    # -- heartbeats
    def heartbeat(self, node):
        jobs = [{"job_id": j, "state": "running", "cpu_guarantee": e["cpu_limit"],
                 "cpu_usage_seconds": 0.1, "memory_bytes": 1 << 20} for j, e in node.running.items()]
        jobs += list(node.finished.values())
        st, out = self.sched.request("POST", "/internal/v1/node/heartbeat",
                                     {"node_id": node.id, "tags": node.tags,
                                      "resource_limits": node.limits, "jobs": jobs},
                                     self.sched.secret)
        if st != 200:
            fail("heartbeat of %s -> %d %s" % (node.id, st, out))
        for j in out["acknowledged"]:
            node.finished.pop(j, None)
        for a in out["jobs_to_abort"]:
            if a["job_id"] in node.running:
                del node.running[a["job_id"]]
                self.job_op.pop(a["job_id"], None)
                node.interrupted.discard(a["job_id"])
        for i in out["jobs_to_interrupt"]:
            if i["job_id"] in node.running:
                node.interrupted.add(i["job_id"])
        now = time.time()
        started_ops = set()
        for s in out["jobs_to_start"]:
            jid, oid = s["job_id"], s["operation_id"]
            if jid in self.started_jobs:
                fail("job %s started twice (now on %s)" % (jid, node.id))
            self.started_jobs.add(jid)
            op = self.ops.get(oid)
            if op is None:
                fail("job %s started for an unknown operation %s" % (jid, oid))
            if op.state != "active":
                fail("job %s started for operation %s, which is %s" % (jid, oid, op.state))
            if op.suspended:
                fail("job %s started for operation %s, suspended %.3f s before" %
                     (jid, oid, now - op.suspended_at))
            node.running[jid] = s
            self.job_op[jid] = oid
            started_ops.add(oid)
            self.counts["jobs_started"] = self.counts.get("jobs_started", 0) + 1
        if out["jobs_to_start"]:
            self.check_node_fit(node)
            self.check_limits(started_ops, now)
        return out

    def usage(self, jobs):
        cpu = sum(e["cpu_limit"] for e in jobs)
        return {"cpu": cpu, "user_slots": len(jobs)}

    def check_node_fit(self, node):
        u = self.usage(node.running.values())
        for k in ("cpu", "user_slots"):
            if u[k] > node.limits[k] + EPS:
                fail("node %s: jobs use %s %.2f above its limit %s (running %s)" %
                     (node.id, k, u[k], node.limits[k], sorted(node.running)))
        mem = sum(e["memory_reserve"] for e in node.running.values())
        if mem > node.limits["memory"]:
            fail("node %s: memory reserves %d above its limit %d" % (node.id, mem, node.limits["memory"]))

    def server_running(self, entries):
        """The entries whose jobs the service says are running."""
        running = set()
        for oid in sorted({e["operation_id"] for e in entries}):
            for j in self.sched.ok("list_jobs", {"operation_id": oid, "state": "running"})["jobs"]:
                running.add(j["id"])
        self.counts["_server_job_lookups"] = self.counts.get("_server_job_lookups", 0) + 1
        return [e for e in entries if e["job_id"] in running]

    def nodes_interrupted(self):
        return set().union(*(n.interrupted for n in self.nodes.values()))

    def all_running(self):
        for n in self.nodes.values():
            for jid, e in n.running.items():
                yield jid, e

    def check_limits(self, started_ops, now):
        """Pool and operation resource_limits hold for what just started, once settled."""
        pools_to_check = set()
        for oid in started_ops:
            op = self.ops[oid]
            if op.limits and now - op.changed > SETTLE:
                self.counts["_op_limit_checks"] = self.counts.get("_op_limit_checks", 0) + 1
                u = self.usage([e for _, e in self.all_running() if e["operation_id"] == oid])
                if any(u.get(k, 0) > v + EPS for k, v in op.limits.items()):
                    u = self.usage(self.server_running([e for _, e in self.all_running()
                                                        if e["operation_id"] == oid]))
                for k, v in op.limits.items():
                    if u.get(k, 0) > v + EPS:
                        fail("operation %s: running jobs use %s %.2f above its resource_limits %s" %
                             (oid, k, u[k], v))
            pools_to_check.update(pool_ancestors(self.pools, op.pool))
        for pname in pools_to_check:
            p = self.pools.get(pname)
            if p is None or "resource_limits" not in p.attrs or now - p.limits_changed <= SETTLE:
                continue
            self.counts["_pool_limit_checks"] = self.counts.get("_pool_limit_checks", 0) + 1
            members = []
            for _, e in self.all_running():
                op = self.ops[e["operation_id"]]
                if pname in pool_ancestors(self.pools, op.pool):
                    members.append(e)
            u = self.usage(members)
            if any(u.get(k, 0) > v + EPS for k, v in p.attrs["resource_limits"].items()):
                # jobs of other nodes that the service has ended since their last heartbeat
                # (their operation ended, ...) are still running in the model: ask the service
                members = self.server_running(members)
                u = self.usage(members)
            for k, v in p.attrs["resource_limits"].items():
                if u.get(k, 0) > v + EPS:
                    fail("pool %s: running jobs use %s %.2f above its resource_limits %s (limit set "
                         "%.3f s ago; jobs %s)" %
                         (pname, k, u[k], v, now - p.limits_changed,
                          [(e["job_id"], e["operation_id"][:8], self.ops[e["operation_id"]].pool,
                            e["cpu_limit"], e["job_id"] in self.nodes_interrupted()) for e in members]))

    # -- actions
    def act_create_pool(self):
        if len(self.pools) >= 12:
            return self.act_remove_pool()
        existing = list(self.pools)
        if existing and self.rng.random() < 0.1:
            name = self.rng.choice(existing)        # already exists: 409
        else:
            self.pool_seq += 1
            name = "p%d" % self.pool_seq
        parent = None
        if existing and self.rng.random() < 0.5:
            parent = self.rng.choice(existing)
            if len(pool_ancestors(self.pools, parent)) >= 3:
                parent = None
        path = (self.pool_path(parent) if parent else "//sys/pools") + "/" + name
        attrs = {}
        if self.rng.random() < 0.3:
            attrs["weight"] = self.rng.choice([1, 2, 5])
        if self.rng.random() < 0.3:
            attrs["resource_limits"] = {"user_slots": self.rng.randint(1, 4)}
        body = {"type": "scheduler_pool", "path": path}
        if attrs:
            body["attributes"] = attrs
        st, out = self.sched.call("create", body)
        self.note("create %s %s -> %d" % (path, attrs, st))
        if name in self.pools:
            if st != 409:
                fail("create of an existing pool %s -> %d %s" % (name, st, out))
            return
        if st == 200:
            p = Pool(name, parent)
            p.attrs.update(attrs)
            self.pools[name] = p
            self.touch_pool(name)
        elif st != 400:
            fail("create %s -> %d %s" % (path, st, out))

    def draw_attr(self):
        r = self.rng
        k = r.choice(["weight", "max_running_operation_count", "max_operation_count", "mode",
                      "resource_limits", "resource_limits", "strong_guarantee_resources",
                      "create_ephemeral_subpools", "max_running_operation_count"])
        if k == "weight":
            v = r.choice([0.5, 1, 2, 3, 10])
        elif k == "max_running_operation_count":
            v = r.randint(0, 3)
        elif k == "max_operation_count":
            v = r.randint(1, 8)
        elif k == "mode":
            v = r.choice(["fifo", "fair_share"])
        elif k == "resource_limits":
            v = {}
            if r.random() < 0.7:
                v["cpu"] = r.choice([1, 2, 3, 4, 8])
            if r.random() < 0.6 or not v:
                v["user_slots"] = r.randint(1, 6)
        elif k == "strong_guarantee_resources":
            v = {"cpu": r.choice([1, 2, 4])}
        else:
            v = r.random() < 0.5
        return k, v

    def act_set_pool(self):
        if not self.pools:
            return self.act_create_pool()
        name = self.rng.choice(sorted(self.pools))
        p = self.pools[name]
        k, v = self.draw_attr()
        path = self.pool_path(name) + "/@" + k
        if self.rng.random() < 0.15:
            st, out = self.sched.call("remove", {"path": path})
            self.note("reset %s -> %d" % (path, st))
            if st == 200:
                p.attrs.pop(k, None)
                p.over_ok = True
                if k == "resource_limits":
                    self.touch_pool(name)
                if k == "create_ephemeral_subpools":
                    self.flatten_subpools(name)
            elif st != 400:
                fail("remove %s -> %d %s" % (path, st, out))
            return
        st, out = self.sched.call("set", {"path": path, "value": v})
        self.note("set %s %s -> %d" % (path, json.dumps(v), st))
        if st == 200:
            p.attrs[k] = v
            p.over_ok |= k == "max_running_operation_count"
            if k == "resource_limits":
                self.touch_pool(name)
            if k == "create_ephemeral_subpools" and not v:
                self.flatten_subpools(name)
        elif st != 400:
            fail("set %s -> %d %s" % (path, st, out))

    def flatten_subpools(self, name):
        """create_ephemeral_subpools turned off: the operations of name's user subpools move
        into name (docs/api.md "Ephemeral subpools")."""
        for op in self.ops.values():
            if op.state == "active" and op.pool.startswith(name + "$"):
                op.pool = name

    def act_remove_pool(self):
        if not self.pools:
            return self.act_create_pool()
        name = self.rng.choice(sorted(self.pools))
        has_children = any(p.parent == name for p in self.pools.values())
        has_ops = any(name in pool_ancestors(self.pools, self.ops[o].pool) for o in self.active)
        path = self.pool_path(name)
        st, out = self.sched.call("remove", {"path": path})
        self.note("remove %s (children %s, ops %s) -> %d" % (path, has_children, has_ops, st))
        if has_children:
            if st != 409:
                fail("remove of %s with child pools -> %d %s" % (path, st, out))
            return
        # with operations it stays, ephemeral, until they end (docs/api.md); they keep its name
        if st != 200:
            fail("remove of the pool %s (operations %s) -> %d %s" % (path, has_ops, st, out))
        del self.pools[name]

    def act_move_pool(self):
        """move of a pool to another parent (or the top), sometimes under a new name."""
        if not self.pools:
            return self.act_create_pool()
        r = self.rng
        name = r.choice(sorted(self.pools))
        sub = self.subtree(name)
        parent = r.choice([None] + sorted(self.pools))
        new_name = name
        if r.random() < 0.3:
            if r.random() < 0.25:
                new_name = r.choice(sorted(self.pools))   # taken, or its own
            else:
                self.pool_seq += 1
                new_name = "p%d" % self.pool_seq
        dest = (self.pool_path(parent) if parent else "//sys/pools") + "/" + new_name
        in_sub = [o for o in self.active
                  if set(pool_ancestors(self.pools, self.ops[o].pool)) & sub]
        st, out = self.sched.call("move", {"source_path": self.pool_path(name),
                                           "destination_path": dest})
        self.note("move %s -> %s (ops below %d) -> %d" % (self.pool_path(name), dest,
                                                          len(in_sub), st))
        renamed = new_name != name
        if parent in sub:
            if st != 400:
                fail("move of %s under its own subtree (%s) -> %d %s" % (name, parent, st, out))
            return
        if renamed and new_name in self.pools:
            if st != 409:
                fail("move of %s to the taken name %s -> %d %s" % (name, new_name, st, out))
            return
        if renamed and st == 409 and in_sub:
            return   # operations name their pool: not renamed, nothing changed
        if st == 400:
            return   # a tree rule (guarantees, a FIFO parent, depth): nothing changed
        if st != 200:
            fail("move of %s to %s -> %d %s" % (name, dest, st, out))
        if renamed:
            # renamed: the operations the model thought below had ended (the service knew)
            for o in in_sub:
                g = self.sched.ok("get_operation", {"operation_id": o})
                if g["state"] not in TERMINAL:
                    fail("rename of %s with the %s operation %s -> 200" % (name, g["state"], o))
                self.learn_end(self.ops[o], g)
            p = self.pools.pop(name)
            p.name = new_name
            self.pools[new_name] = p
            for c in self.pools.values():
                if c.parent == name:
                    c.parent = new_name
        self.touch_pool(new_name)
        self.pools[new_name].parent = parent
        # counts move with the pool: its new ancestors may run more than they allow (as upstream)
        for a in pool_ancestors(self.pools, new_name):
            self.pools[a].over_ok = True
        self.touch_pool(new_name)

    def act_transfer(self):
        """transfer_pool_resources between two pools (or the root): all or nothing."""
        names = sorted(self.pools)
        if len(names) < 1:
            return self.act_create_pool()
        r = self.rng
        src, dst = r.choice(names + [None]), r.choice(names + [None])
        k = r.choice(["max_operation_count", "max_running_operation_count",
                      "strong_guarantee_resources"])
        n = r.randint(1, 3)
        delta = {k: {"cpu": n} if k == "strong_guarantee_resources" else n}
        st, out = self.sched.call("transfer_pool_resources", {
            "source_pool": src or "<Root>", "destination_pool": dst or "<Root>",
            "resource_delta": delta})
        self.note("transfer %s -> %s %s -> %d" % (src, dst, json.dumps(delta), st))
        if src == dst:
            if st != 400:
                fail("transfer from a pool to itself -> %d %s" % (st, out))
            return
        if st == 400:
            return   # the source has less, or a tree rule: nothing changed (the attrs check)
        if st != 200:
            fail("transfer %s -> %s -> %d %s" % (src, dst, st, out))
        up_src = pool_ancestors(self.pools, src) if src else []
        up_dst = pool_ancestors(self.pools, dst) if dst else []
        for names_, sign in ((up_src, -1), (up_dst, 1)):
            for name in names_:
                if name in up_src and name in up_dst:
                    break   # the common ancestor and above keep theirs
                p = self.pools[name]
                if k == "strong_guarantee_resources":
                    have = p.attrs.get(k, {}).get("cpu", 0)
                    p.attrs[k] = dict(p.attrs.get(k, {}), cpu=have + sign * n)
                else:
                    p.attrs[k] = p.attrs.get(k, 0) + sign * n
                    p.over_ok |= k == "max_running_operation_count"

    def act_start_op(self):
        if len(self.active) >= 24:
            return self.act_abort_op()
        r = self.rng
        user = r.choice(["admin", "alice", "bob"])
        names = sorted(self.pools)
        pool = r.choice(names) if names and r.random() < 0.9 else None
        spec = {"tasks": {"t": {"command": "true", "job_count": r.randint(1, 6),
                                "cpu_limit": r.choice([0.5, 1, 1, 2]),
                                "memory_limit": r.choice([256, 512, 1024]) << 20}}}
        if pool:
            spec["pool"] = pool
        if r.random() < 0.2:
            spec["weight"] = r.choice([0.5, 2, 4])
        limits = None
        if r.random() < 0.2:
            limits = {"user_slots": r.randint(1, 3)}
            spec["resource_limits"] = limits
        st, out = self.sched.call("start_op", {"operation_type": "vanilla", "spec": spec},
                                  self.user_token(user))
        self.note("start_op %s user %s pool %s jobs %d -> %d %s" %
                  ("" if st != 200 else out["operation_id"], user, pool,
                   spec["tasks"]["t"]["job_count"], st, "" if st == 200 else out))
        if st == 200:
            oid = out["operation_id"]
            g = self.sched.ok("get_operation", {"operation_id": oid})
            self.check_op_shape(g)
            op = Op(oid, user, g["pool_per_tree"].get(TREE), spec["tasks"]["t"]["job_count"], limits)
            if pool and op.pool not in (pool, pool + "$" + ("root" if user == "admin" else user)) \
                    and not op.pool.startswith(pool + "$"):
                fail("operation %s in pool %s, asked for %s" % (oid, op.pool, pool))
            self.ops[oid] = op
            self.active.append(oid)
        elif st not in (400, 409):
            fail("start_op -> %d %s" % (st, out))

    def pick_op(self, active=True):
        if active and self.active:
            return self.ops[self.rng.choice(self.active)]
        if self.ops and (not active or not self.active):
            # sometimes an operation that has ended
            return self.ops[self.rng.choice(list(self.ops)[-50:])]
        return None

    def end_op(self, op, state):
        op.state = state
        op.by_model = state
        if op.id in self.active:
            self.active.remove(op.id)
        for n in self.nodes.values():
            for jid in list(n.running):
                if n.running[jid]["operation_id"] == op.id:
                    pass   # the service aborts them; the node learns it in its next heartbeat

    def op_command(self, command, terminal_state=None):
        op = self.pick_op(active=self.rng.random() < 0.9)
        if op is None:
            self.act_start_op()
            return None, 0
        st, out = self.sched.call(command, {"operation_id": op.id}, self.user_token(op.user))
        self.note("%s %s (model %s%s) -> %d" % (command, op.id, op.state,
                                                ", suspended" if op.suspended else "", st))
        if op.state in TERMINAL or op.state == "?":
            if op.state in TERMINAL and st == 200 and terminal_state:
                fail("%s of %s operation %s -> 200" % (command, op.state, op.id))
            if st not in (200, 409):
                fail("%s of ended operation %s -> %d %s" % (command, op.id, st, out))
            return op, st
        if st == 409:
            # the operation may have ended through its jobs: learn it
            g = self.sched.ok("get_operation", {"operation_id": op.id})
            if g["state"] not in ("completed", "failed"):
                fail("%s of %s operation %s -> 409 %s" % (command, g["state"], op.id, out))
            self.learn_end(op, g)
            return op, st
        if st != 200:
            fail("%s %s -> %d %s" % (command, op.id, st, out))
        if terminal_state:
            self.end_op(op, terminal_state)
        return op, st

    def learn_end(self, op, g):
        self.check_end(op, g)
        op.state = g["state"]
        if op.id in self.active:
            self.active.remove(op.id)

    def act_abort_op(self):
        self.op_command("abort_op", "aborted")

    def act_complete_op(self):
        self.op_command("complete_op", "completed")

    def act_suspend_op(self):
        op, st = self.op_command("suspend_op")
        if st == 200 and op and op.state == "active":
            op.suspended = True
            op.suspended_at = time.time()

    def act_resume_op(self):
        op, st = self.op_command("resume_op")
        if st == 200 and op and op.state == "active":
            op.suspended = False

    def act_update_op(self):
        op = self.pick_op()
        if op is None or op.state != "active":
            return self.act_start_op()
        r = self.rng
        params = {}
        what = r.choice(["pool", "pool", "weight", "resource_limits"])
        if what == "pool" and self.pools:
            params["pool"] = r.choice(sorted(self.pools))
        elif what == "resource_limits":
            params["resource_limits"] = {"user_slots": r.randint(1, 4)} if r.random() < 0.8 else {}
        else:
            params["weight"] = r.choice([0.5, 1, 3])
        st, out = self.sched.call("update_op_parameters", {"operation_id": op.id, "parameters": params},
                                  self.user_token(op.user))
        self.note("update_op_parameters %s %s -> %d %s" % (op.id, json.dumps(params), st,
                                                           "" if st == 200 else out))
        if st == 200:
            g = self.sched.ok("get_operation", {"operation_id": op.id})
            if g["state"] in TERMINAL:
                self.learn_end(op, g)
                return
            old = op.pool
            op.pool = g["pool_per_tree"].get(TREE)
            if "pool" in params and op.pool != params["pool"] and not op.pool.startswith(params["pool"] + "$"):
                fail("operation %s moved to %s, asked for %s" % (op.id, op.pool, params["pool"]))
            if "resource_limits" in params:
                op.limits = params["resource_limits"] or None
            op.changed = time.time()
            self.touch_pool(old)
            self.touch_pool(op.pool)
        elif st == 409:
            g = self.sched.ok("get_operation", {"operation_id": op.id})
            if g["state"] in TERMINAL:
                self.learn_end(op, g)
        elif st != 400:
            fail("update_op_parameters -> %d %s" % (st, out))

    def act_register(self):
        r = self.rng
        if len(self.nodes) < 6 and r.random() < 0.3:
            node = self.new_node()
            self.note("register new node %s %s %s" % (node.id, node.limits, node.tags))
        else:
            node = self.nodes[r.choice(sorted(self.nodes))]
            if r.random() < 0.5:
                node.limits = self.draw_node_limits()
            else:
                node.tags = self.draw_tags()
            self.note("re-register %s %s %s" % (node.id, node.limits, node.tags))
        self.register(node)

    def register(self, node):
        self.heartbeat(node)

    def act_heartbeat(self):
        node = self.nodes[self.rng.choice(sorted(self.nodes))]
        # interrupted jobs mostly leave at once (SIGINT), sometimes they run to the deadline
        for jid in sorted(node.interrupted):
            if jid in node.running and self.rng.random() < 0.8:
                self.finish_job(node, jid, "aborted")
        out = self.heartbeat(node)
        self.note("heartbeat %s: +%d -%d ~%d" % (node.id, len(out["jobs_to_start"]),
                                                 len(out["jobs_to_abort"]), len(out["jobs_to_interrupt"])))

    def finish_job(self, node, jid, state):
        node.running.pop(jid)
        node.interrupted.discard(jid)
        self.job_op.pop(jid, None)
        rep = {"job_id": jid, "state": state}
        if state == "failed":
            rep["exit_code"] = 1
        if state == "aborted":
            rep["abort_reason"] = "preemption"
        node.finished[jid] = rep

    def act_finish_jobs(self):
        busy = [n for n in self.nodes.values() if n.running]
        if not busy:
            return self.act_heartbeat()
        node = self.rng.choice(sorted(busy, key=lambda n: n.id))
        jobs = sorted(node.running)
        for jid in self.rng.sample(jobs, self.rng.randint(1, len(jobs))):
            self.finish_job(node, jid, "failed" if self.rng.random() < 0.1 else "completed")
        out = self.heartbeat(node)
        self.note("finish jobs on %s, acked %d, +%d" % (node.id, len(out["acknowledged"]),
                                                        len(out["jobs_to_start"])))

    def act_restart(self):
        hard = self.rng.random() < 0.5
        before = self.snapshot()
        self.sched.stop(hard)
        self.note("restart (%s)" % ("kill -9" if hard else "SIGTERM"))
        self.sched.start()
        after = self.snapshot()
        for k in before:
            if not near(before[k], after.get(k)) or not near(after.get(k), before[k]):
                fail("restart (%s) changed %s: before %s, after %s" %
                     ("kill -9" if hard else "SIGTERM", k, json.dumps(before[k]),
                      json.dumps(after.get(k))))

    # -- full checks
    def snapshot(self):
        """What must survive a restart."""
        s = self.sched
        snap = {"pools": sorted(self.pool_names_server())}
        for name in self.pools:
            attrs = s.get(self.pool_path(name) + "/@")
            snap["pool " + name] = {k: v for k, v in attrs.items()}
        ids = list(self.active) + [o for o in list(self.ops)[-30:] if o not in self.active]
        for oid in ids:
            g = s.ok("get_operation", {"operation_id": oid})
            p = g["progress"]
            snap["op " + oid] = {"state": g["state"], "suspended": g["suspended"],
                                 "pool_per_tree": g["pool_per_tree"],
                                 "completed": p["completed"], "failed": p["failed"],
                                 "total": p["total"]}
        return snap

    def pool_names_server(self):
        out = []

        def walk(m):
            for k, v in m.items():
                out.append(k)
                if isinstance(v, dict):
                    walk(v)
        walk(self.sched.get("//sys/pools"))
        return out

    def check_op_shape(self, g):
        st = g["state"]
        if st not in ("pending", "running") + TERMINAL:
            fail("operation %s in state %r" % (g["id"], st))
        if st == "pending" and not g.get("pending_reason"):
            fail("pending operation %s without a pending reason: %s" % (g["id"], g))

    def check_end(self, op, g):
        """An operation the model did not end: completed or failed, as its progress says."""
        p = g["progress"]
        if op.by_model:
            if g["state"] != op.by_model:
                fail("operation %s: %s by the model, now %s" % (op.id, op.by_model, g["state"]))
            return
        if g["state"] == "completed" and p["completed"] != p["total"]:
            fail("operation %s completed with progress %s" % (op.id, p))
        elif g["state"] == "failed" and p["failed"] < MAX_FAILED:
            fail("operation %s failed with progress %s" % (op.id, p))
        elif g["state"] == "aborted":
            fail("operation %s aborted without an abort: %s" % (op.id, g.get("error")))

    def full_check(self):
        s = self.sched
        now = time.time()
        listed = {}
        for state in ("running", "pending"):
            for g in s.ok("list_operations", {"state": state, "limit": 10000})["operations"]:
                listed[g["id"]] = g
        for oid, g in listed.items():
            self.check_op_shape(g)
            op = self.ops.get(oid)
            if op is None:
                fail("unknown operation %s %s" % (oid, g["state"]))
            if op.state != "active":
                fail("operation %s is %s, the model has it %s" % (oid, g["state"], op.state))
            if g["suspended"] != op.suspended:
                fail("operation %s suspended=%s, model %s" % (oid, g["suspended"], op.suspended))
            if g["pool_per_tree"].get(TREE) != op.pool:
                fail("operation %s in pool %s, model %s" % (oid, g["pool_per_tree"], op.pool))
            p = g["progress"]
            if p["completed"] >= p["total"] or p["failed"] >= MAX_FAILED:
                fail("operation %s %s with progress %s" % (oid, g["state"], p))
        for oid in list(self.active):
            if oid not in listed:
                self.learn_end(self.ops[oid], s.ok("get_operation", {"operation_id": oid}))
        # a few ended operations keep their state
        ended = [o for o in list(self.ops)[-60:] if self.ops[o].state in TERMINAL]
        for oid in self.rng.sample(ended, min(2, len(ended))):
            g = s.ok("get_operation", {"operation_id": oid})
            if g["state"] != self.ops[oid].state:
                fail("ended operation %s was %s, now %s" % (oid, self.ops[oid].state, g["state"]))
        # orchid counts
        orchid = s.get(ORCHID + "pools")
        parents = {k: v.get("parent") for k, v in orchid.items()}
        for name in self.pools:
            if name not in orchid:
                fail("pool %s missing from orchid" % name)
            want = self.pools[name].parent or "<Root>"
            if parents[name] != want:
                fail("pool %s: orchid parent %s, model %s" % (name, parents[name], want))
        for name, e in orchid.items():
            if name != "<Root>" and name not in self.pools and not e.get("is_ephemeral"):
                fail("orchid has pool %s the model does not" % name)
        want_total = {k: 0 for k in orchid}
        want_running = {k: 0 for k in orchid}
        for oid, g in listed.items():
            name = g["pool_per_tree"].get(TREE)
            seen = set()
            while name and name not in seen:
                seen.add(name)
                if name not in want_total:
                    fail("operation %s in pool %s, which orchid does not have" % (oid, name))
                want_total[name] += 1
                if g["state"] == "running":
                    want_running[name] += 1
                name = parents.get(name)
        for name, e in orchid.items():
            if e["operation_count"] != want_total[name] or e["running_operation_count"] != want_running[name]:
                fail("orchid pool %s: operation_count %d running_operation_count %d, the operations "
                     "say %d and %d (orchid %s; operations %s)" %
                     (name, e["operation_count"], e["running_operation_count"], want_total[name],
                      want_running[name],
                      {k: (v["operation_count"], v["running_operation_count"], v.get("parent"))
                       for k, v in orchid.items()},
                      [(o, g["state"], g["pool_per_tree"].get(TREE)) for o, g in listed.items()]))
        # no operation starts in a pool at its max_running_operation_count
        for name, p in self.pools.items():
            e = orchid[name]
            if e["running_operation_count"] <= e["max_running_operation_count"]:
                p.over_ok = False
            elif not p.over_ok:
                fail("pool %s: %d running operations, max_running_operation_count %d" %
                     (name, e["running_operation_count"], e["max_running_operation_count"]))
        # a pending operation whose pools all have room
        for oid, g in listed.items():
            if g["state"] != "pending":
                continue
            op = self.ops[oid]
            chain = []
            name = op.pool
            while name:
                chain.append(name)
                name = parents.get(name)
            room = all(orchid[n]["running_operation_count"] < orchid[n]["max_running_operation_count"]
                       and orchid[n]["operation_count"] <= orchid[n]["max_operation_count"]
                       for n in chain if n in orchid)
            # the service starts pending operations synchronously (on a finish, a move, a
            # changed limit), so there is no delay to allow for
            self.counts["_pending_checks"] = self.counts.get("_pending_checks", 0) + 1
            if room:
                fail("operation %s pending (%s) while its pools %s have room" %
                     (oid, g.get("pending_reason"), chain))
        # one pool's attributes as the model set them
        if self.pools:
            name = self.rng.choice(sorted(self.pools))
            attrs = s.get(self.pool_path(name) + "/@")
            for k, v in self.pools[name].attrs.items():
                if k not in attrs or not near(v, attrs[k]):
                    fail("pool %s @%s is %s, set %s" % (name, k, attrs.get(k), json.dumps(v)))
        if set(self.pool_names_server()) - set(self.pools) or set(self.pools) - set(self.pool_names_server()):
            fail("pools %s, model %s" % (sorted(self.pool_names_server()), sorted(self.pools)))

    # -- the run
    ACTIONS = [("create_pool", 6), ("set_pool", 12), ("remove_pool", 3), ("move_pool", 3),
               ("transfer", 3), ("start_op", 12),
               ("abort_op", 3), ("suspend_op", 3), ("resume_op", 3), ("complete_op", 2),
               ("update_op", 6), ("register", 2), ("heartbeat", 24), ("finish_jobs", 20)]

    def run(self):
        a = self.args
        names = [n for n, _ in self.ACTIONS]
        weights = [w for _, w in self.ACTIONS]
        t0 = time.time()
        self.setup()
        for self.step in range(1, a.steps + 1):
            if a.restart_every and self.rng.random() < 1.0 / a.restart_every:
                action = "restart"
            else:
                action = self.rng.choices(names, weights)[0]
            self.counts[action] = self.counts.get(action, 0) + 1
            try:
                getattr(self, "act_" + action)()
                self.sched.check_alive()
                if self.step % a.check_every == 0 or action == "restart":
                    self.full_check()
                    self.sched.check_alive()
            except Failure as e:
                if e.crash or not a.crash_only:
                    raise
                # --crash-only: a broken model invariant is counted, the run goes on
                self.counts["_model_failures"] = self.counts.get("_model_failures", 0) + 1
                if "first_model_failure" not in self.counts:
                    self.counts["first_model_failure"] = self.step
                    print("model invariant broken at step %d (going on): %s" % (self.step, str(e)[:300]),
                          flush=True)
                if self.sched.proc.poll() is not None:
                    self.sched.check_alive()
            if a.progress and self.step % a.progress == 0:
                print("step %d (%.0f s): %d operations, %d jobs started, %d restarts" %
                      (self.step, time.time() - t0, len(self.ops), len(self.started_jobs),
                       self.sched.boots - 1), flush=True)
        self.full_check()
        self.sched.stop(hard=False)
        with open(self.sched.log_path, errors="replace") as f:
            if SANITIZER.search(f.read()):
                fail("sanitizer report in the scheduler's log")
        print("ok: seed %d, %d steps in %.1f s: %s; %d operations, %d jobs started, %d restarts; "
              "checked: %s" %
              (a.seed, a.steps, time.time() - t0,
               ", ".join("%s %d" % kv for kv in sorted(self.counts.items()) if not kv[0].startswith("_")),
               len(self.ops), len(self.started_jobs), self.sched.boots - 1,
               ", ".join("%s %d" % (k[1:], v) for k, v in sorted(self.counts.items()) if k.startswith("_"))))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("binary")
    ap.add_argument("--steps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--work", default=None)
    ap.add_argument("--check-every", type=int, default=10)
    ap.add_argument("--restart-every", type=int, default=150, help="mean steps between restarts (0: none)")
    ap.add_argument("--progress", type=int, default=0)
    ap.add_argument("--trace", action="store_true")
    ap.add_argument("--crash-only", action="store_true",
                    help="fail only on a crash (death, sanitizer report, 5xx); count the rest")
    ap.add_argument("--keep", action="store_true", help="keep the work dir")
    a = ap.parse_args()
    if a.seed is None:
        a.seed = random.SystemRandom().randrange(1 << 31)
    a.binary = os.path.abspath(a.binary)
    tmp = None
    if a.work is None:
        tmp = a.work = tempfile.mkdtemp(prefix="ps-stateful-")
    print("seed %d, %d steps, binary %s" % (a.seed, a.steps, a.binary), flush=True)
    t = Test(a)
    code = 0
    try:
        t.run()
    except Failure as e:
        code = 1
        print("FAIL at step %d (seed %d)%s: %s" % (t.step, a.seed, " (crash)" if e.crash else "", e))
        print("last steps:\n  " + "\n  ".join(t.history))
        try:
            with open(t.sched.log_path, errors="replace") as f:
                text = f.read()
            m = SANITIZER.search(text)
            if m:
                print("sanitizer report:\n" + text[max(0, m.start() - 200):m.start() + 6000])
            else:
                print("scheduler log tail:\n" + text[-3000:])
        except OSError:
            pass
        print("replay: %s %s --seed %d --steps %d" % (sys.argv[0], a.binary, a.seed, a.steps))
    finally:
        if t.sched.proc and t.sched.proc.poll() is None:
            t.sched.proc.kill()
            t.sched.proc.wait()
        if tmp and not a.keep and code == 0:
            shutil.rmtree(tmp, ignore_errors=True)
        elif tmp:
            print("work dir kept: %s" % tmp)
    sys.exit(code)


if __name__ == "__main__":
    main()
