#!/usr/bin/env python3
"""End-to-end tests of a real cluster on 127.0.0.1: `poolsched scheduler` plus real
`poolsched node` agents running real job processes. Run by node_e2e_*.sh:
python3 node_e2e.py BINARY GROUP.

Each case builds its own cluster in a temporary directory and stops every process it started
(scheduler and nodes; nodes abort their jobs on SIGTERM, and after a kill -9 the agent's guard
kills them; the runner still kills what is left in the cases' job cgroups, as a backstop).
"""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checks import Fail, Skip, require, run_group  # noqa: E402
from server_helper import NodeAgent, Scheduler, free_port  # noqa: E402

BIN = sys.argv[1]
GROUP = sys.argv[2] if len(sys.argv) > 2 else "all"
PREFIX = "e%d" % os.getpid()     # node ids (and so cgroups) never shared between parallel tests


class FixedPortScheduler(Scheduler):
    """The helper's scheduler on a fixed port, so that it can restart where nodes look for it."""

    def __init__(self, binary, data_dir, config, port):
        Scheduler.__init__(self, binary, data_dir, config)
        self.fixed_port = port

    def start(self):
        self.launch("127.0.0.1:%d" % self.fixed_port)
        self.port = self.fixed_port
        deadline = time.time() + 10
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise Fail("scheduler exited: " + open(self.log_path).read()[-3000:])
            try:
                if self.raw("GET", "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.05)
        else:
            raise Fail("scheduler did not answer /healthz")
        self.read_credentials()
        return self


class Cluster:
    def __init__(self, tmp, config=None):
        self.tmp = tmp
        cfg = {"heartbeat_period": 100, "fair_share_update_period": 100,
               "node_offline_timeout": 2000}
        cfg.update(config or {})
        self.sched = FixedPortScheduler(BIN, os.path.join(tmp, "data"), cfg, free_port()).start()
        self.nodes = {}    # name -> (process, log, node id)
        self.agents = {}   # name -> NodeAgent

    def url(self):
        return "http://127.0.0.1:%d" % self.sched.fixed_port

    def node(self, name, resources="cpu=2,memory=2G,user_slots=4", tags=None, node_id=None,
             work=None, sched=None, extra=()):
        node_id = node_id or "%s-%s" % (PREFIX, name)
        sched = sched or self.sched
        extra = list(extra) + (["--tags", tags] if tags else [])
        agent = NodeAgent(BIN, "http://127.0.0.1:%d" % sched.port, node_id, resources,
                          os.path.join(self.tmp, "work-" + (work or name)),
                          os.path.join(self.tmp, "node-%s.log" % name), data_dir=sched.data_dir,
                          extra=extra, mode="a")
        self.agents[name] = agent
        self.nodes[name] = (agent.proc, agent.log, node_id)
        return node_id

    def add_nodes(self, count, resources):
        """count nodes named n0, n1, ... with these resources, once the scheduler lists them all."""
        for i in range(count):
            self.node("n%d" % i, resources=resources)
        self.wait(lambda: len(self.sched.ok("get", {"path": "//sys/scheduler/orchid/scheduler/nodes"})
                              ["value"]) == count, 30, "%d nodes" % count)

    def node_log(self, name):
        return open(os.path.join(self.tmp, "node-%s.log" % name)).read()

    def stop_node(self, name, sig=signal.SIGTERM):
        return self.agents[name].stop(sig)

    def stop(self):
        for name in list(self.nodes):
            self.stop_node(name)
        self.sched.stop()

    def op(self, spec, token=None):
        return self.sched.ok("start_op", {"operation_type": "vanilla", "spec": spec},
                             token)["operation_id"]

    def get_op(self, op):
        return self.sched.ok("get_operation", {"operation_id": op})

    def jobs(self, op, state=None):
        body = {"operation_id": op}
        if state:
            body["state"] = state
        return self.sched.ok("list_jobs", body)["jobs"]

    def wait(self, pred, timeout, what):
        deadline = time.time() + timeout
        last = None
        while time.time() < deadline:
            last = pred()
            if last:
                return last
            time.sleep(0.1)
        raise Fail("timed out after %ss waiting for %s (last: %s)" % (timeout, what, last))

    def wait_op(self, op, timeout, states=("completed",)):
        o = self.wait(lambda: (lambda o: o if o["state"] in ("completed", "failed", "aborted")
                               else None)(self.get_op(op)), timeout, "operation %s to end" % op)
        require(o["state"] in states, "operation %s ended %s" % (op, o["state"]), o)
        return o


def task(command, count, **kw):
    t = {"command": command, "job_count": count, "cpu_limit": kw.pop("cpu_limit", 0.5),
         "memory_limit": kw.pop("memory_limit", 128 << 20)}
    t.update(kw)
    return t


def kill_cgroup_leftovers(node_id):
    """Kills processes left in a node's job cgroups (after a kill -9 of its agent), whether
    named poolsched-<node_id> or (per agent instance) poolsched-<node_id>-<16 hex>."""
    pattern = re.compile(r"/poolsched-%s(-[0-9a-f]{16})?/job-" % re.escape(node_id))
    for root in ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/memory", "/sys/fs/cgroup/unified",
                 "/sys/fs/cgroup"):
        if not os.path.isdir(root):
            continue
        for dirpath, dirnames, files in os.walk(root):
            if dirpath.count("/") > 12:
                dirnames[:] = []
            if pattern.search(dirpath + "/") and "cgroup.procs" in files:
                try:
                    for pid in open(os.path.join(dirpath, "cgroup.procs")).read().split():
                        try:
                            os.kill(int(pid), signal.SIGKILL)
                        except OSError:
                            pass
                except OSError:
                    pass


def run_cluster_test(name, prefix, config, body):
    """body(c, tmp) on a new Cluster(tmp, config) in a scratch directory: then `ok NAME`; on a
    Fail, `FAIL NAME: ...` with the tail of every log there, exit 1. The cluster and its jobs'
    cgroups are stopped, and the directory removed unless PS_KEEP is set."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix=prefix)
    os.chmod(tmp, 0o755)
    c = None
    try:
        c = Cluster(tmp, config)
        body(c, tmp)
        print("ok %s" % name)
    except Fail as e:
        print("FAIL %s: %s" % (name, e))
        for log in sorted(os.listdir(tmp)):
            if log.endswith(".log"):
                print("---- %s\n%s" % (log, open(os.path.join(tmp, log)).read()[-3000:]))
        sys.exit(1)
    finally:
        if c:
            c.stop()
            for _, (_, _, node_id) in c.nodes.items():
                kill_cgroup_leftovers(node_id)
        if not os.environ.get("PS_KEEP"):
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            print("kept", tmp)


# ---- cases -------------------------------------------------------------------------------

def case_operation_with_outputs(c):
    """An operation of N jobs completes; each job's stderr is retrievable."""
    c.node("a")
    c.node("b")
    n = 12
    op = c.op({"tasks": {"main": task("echo \"job $YT_JOB_INDEX of $YT_OPERATION_ID\" >&2; "
                                      "sleep 0.2", n)}})
    o = c.wait_op(op, 40)
    require(o["progress"]["completed"] == n and o["progress"]["failed"] == 0,
          "all %d jobs completed" % n, o["progress"])
    jobs = c.jobs(op, "completed")
    require(len(jobs) == n, "list_jobs shows %d completed" % n, jobs)
    seen = set()
    for j in jobs:
        out = c.sched.ok("get_job_stderr", {"operation_id": op, "job_id": j["id"]})
        want = "job %d of %s\n" % (j["job_index"], op)
        require(out["stderr"] == want and out["truncated"] is False, "stderr of job %s" % j["id"],
              out, want)
        require("user_job/max_memory" in j.get("statistics", {}), "statistics reach the scheduler",
              j)
        seen.add(j["node_id"])
    require(len(seen) == 2, "both nodes ran jobs", seen)


def case_registration_refused(c):
    """A node whose tags match two pool trees is refused and exits naming both trees."""
    c.sched.ok("create", {"type": "scheduler_pool_tree", "path": "//sys/pool_trees/gpu",
                          "attributes": {"nodes_filter": "gpu"}})
    c.node("g", tags="gpu")
    proc = c.nodes["g"][0]
    try:
        rc = proc.wait(15)
    except subprocess.TimeoutExpired:
        raise Fail("the node kept running although its tags match two trees")
    log = c.node_log("g")
    require(rc == 1 and "refused to register" in log and "physical" in log and "gpu" in log,
          "refused with the scheduler's message", rc, log)
    # with the trees split by the tag it registers and runs jobs
    c.sched.set("//sys/pool_trees/physical/@nodes_filter", "!gpu")
    c.node("g2", tags="gpu")
    op = c.op({"pool_trees": ["gpu"], "tasks": {"main": task("true", 2)}})
    c.wait_op(op, 30)
    require(all(j["node_id"].endswith("-g2") for j in c.jobs(op)), "gpu jobs ran on the gpu node")


def case_disk_request(c):
    """Jobs with a disk_request run only on the node that reports their medium
    (--disk-space-per-medium), one at a time when it has room for one."""
    c.node("a", extra=("--disk-space-per-medium", "default=1G,ssd_slots=1M"))
    c.node("b")
    op = c.op({"tasks": {"main": task("sleep 0.3", 3,
                                      disk_request={"disk_space": 1 << 20, "medium_name": "ssd_slots"})}})
    c.wait_op(op, 40)
    jobs = c.jobs(op, "completed")
    require(len(jobs) == 3 and all(j["node_id"].endswith("-a") for j in jobs),
          "every disk_request job ran on the node with the medium", jobs)
    spans = sorted((j["start_time"], j["finish_time"]) for j in jobs)
    require(all(spans[i][1] <= spans[i + 1][0] for i in range(len(spans) - 1)),
          "1 MiB of ssd_slots holds one job at a time", spans)


def case_memory_limit(c):
    c.node("a")
    op = c.op({"max_failed_job_count": 1, "tasks": {"hog": task(
        "python3 -c 'import time; x = bytearray(300 << 20); x[::4096] = b\"x\" * "
        "len(x[::4096]); time.sleep(10)'", 1, memory_limit=64 << 20)}})
    c.wait_op(op, 40, states=("failed",))
    jobs = c.jobs(op, "failed")
    require(jobs and jobs[0]["error"] == "Memory limit exceeded", "the job failed with Memory limit "
          "exceeded", jobs)


def case_cpu_reclaim(c):
    """A busy loop and an idle job under reclaim: the idle job's guarantee falls and the
    scheduler sees it; the cgroup weight follows where cgroups are usable."""
    node_id = c.node("a", resources="cpu=2,memory=2G,user_slots=4")
    mon = {"enable_cpu_reclaim": True, "check_period": 100, "increase_coefficient": 1.15,
           "decrease_coefficient": 0.85, "smoothing_factor": 0.2, "vote_window_size": 5,
           "vote_decision_threshold": 3, "min_cpu_limit": 0.1}
    op = c.op({"job_cpu_monitor": mon, "tasks": {
        "idle": task("sleep 7", 1, cpu_limit=1),
        "busy": task("timeout 7 sh -c 'while :; do :; done'; true", 1, cpu_limit=1)}})

    def idle_low():
        js = [j for j in c.jobs(op, "running") if j["task_name"] == "idle"]
        return js and js[0]["cpu_guarantee"] < 0.4 and js[0]
    idle = c.wait(idle_low, 20, "the scheduler to see the idle job's guarantee fall")
    print("idle job guarantee seen by the scheduler: %.3f" % idle["cpu_guarantee"])
    log = c.node_log("a")
    if "CPU guarantees as cgroup weights" in log:
        d = None
        for root in ("/sys/fs/cgroup/cpu", "/sys/fs/cgroup/unified", "/sys/fs/cgroup"):
            for dirpath, dirnames, _ in os.walk(root):
                if re.search(r"/poolsched-%s(-[0-9a-f]{16})?/job-%s$" % (
                        re.escape(node_id), re.escape(idle["id"])), dirpath):
                    d = dirpath
                if dirpath.count("/") > 12:
                    dirnames[:] = []
            if d:
                break
        require(d, "the idle job's cgroup")
        w = None
        for f in ("cpu.shares", "cpu.weight"):
            if os.path.exists(os.path.join(d, f)):
                w = int(open(os.path.join(d, f)).read())
                full = 1024 if f == "cpu.shares" else 100
        print("idle job's %s weight: %d (full core: %d)" % (d, w, full))
        require(w < full * 0.6, "the cgroup weight follows the guarantee", w)
    else:
        print("NOTE: no cgroup CPU weights here: the guarantee is reported but not enforced")
    o = c.wait_op(op, 30)
    busy = [j for j in c.jobs(op) if j["task_name"] == "busy"][0]
    st = busy.get("statistics", {})
    print("busy job: smoothed usage x100 %s, preemptible x100 %s" %
          (st.get("job_proxy/smoothed_cpu_usage_x100"), st.get("job_proxy/preemptible_cpu_x100")))


def case_preemption(c):
    """Two operations in two pools: the one in the pool with a guarantee preempts real jobs of
    the other, which are interrupted (SIGINT) and then killed."""
    s = c.sched
    t = "//sys/pool_trees/physical"
    for key, value in [("fair_share_starvation_timeout", 500), ("preemptive_scheduling_backoff", 100),
                       ("allocation_preemption_timeout", 1000), ("fair_share_starvation_tolerance", 0.9),
                       # upstream leaves an operation with at most 10 running allocations alone
                       ("max_unpreemptible_running_allocation_count", 0)]:
        s.set(t + "/@" + key, value)
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/guaranteed",
                    "attributes": {"strong_guarantee_resources": {"cpu": 2}}})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/other"})
    c.node("a", resources="cpu=2,memory=4G,user_slots=8")
    # whole-core jobs: a node takes a job only with a core free (min_spare_allocation_resources)
    greedy = c.op({"pool": "other", "tasks": {"main": task(
        "trap 'echo interrupted >&2; exit 1' INT; sleep 30 & wait", 2, cpu_limit=1)}})
    c.wait(lambda: len(c.jobs(greedy, "running")) == 2, 20, "the greedy operation to fill the node")
    time.sleep(0.5)
    urgent = c.op({"pool": "guaranteed", "tasks": {"main": task("sleep 1", 2, cpu_limit=1)}})
    o = c.wait_op(urgent, 40)
    require(o["progress"]["completed"] == 2, "the guaranteed operation completed", o["progress"])
    pre = c.jobs(greedy, "aborted")
    require(any(j.get("abort_reason") == "preemption" for j in pre), "greedy jobs were preempted",
          c.jobs(greedy))
    interrupted = [j for j in pre if "interrupted" in
                   c.sched.ok("get_job_stderr", {"operation_id": greedy, "job_id": j["id"]})["stderr"]]
    print("preempted jobs: %d, of which saw SIGINT: %d" % (len(pre), len(interrupted)))
    require(interrupted, "a preempted job got SIGINT before it was killed", pre)
    s.ok("abort_op", {"operation_id": greedy})


def case_node_loss(c):
    """A node killed mid-job: its jobs are aborted with node_offline and finish on another node;
    a node that was only silent (stopped) and comes back is told to drop its jobs."""
    c.node("a", resources="cpu=2,memory=2G,user_slots=2")
    op = c.op({"tasks": {"main": task("sleep 4", 2, cpu_limit=1)}})
    c.wait(lambda: len(c.jobs(op, "running")) == 2, 20, "two running jobs on a")
    node_a = c.nodes["a"][2]
    # the node dies with its agent (kill -9): its job processes are orphans now
    c.stop_node("a", signal.SIGKILL)
    kill_cgroup_leftovers(node_a)
    c.node("b", resources="cpu=2,memory=2G,user_slots=2")
    o = c.wait_op(op, 40)
    aborted = c.jobs(op, "aborted")
    require(len(aborted) == 2 and all(j["abort_reason"] == "node_offline" for j in aborted),
          "a's jobs were aborted with node_offline", aborted)
    done = c.jobs(op, "completed")
    require(len(done) == 2 and all(j["node_id"].endswith("-b") for j in done),
          "and completed on b", done)

    # a node silent for longer than the timeout (SIGSTOP), then back: told to drop its jobs
    op2 = c.op({"tasks": {"main": task("sleep 5; echo finished >&2", 2, cpu_limit=1)}})
    c.wait(lambda: len(c.jobs(op2, "running")) == 2, 20, "two running jobs on b")
    # started on b itself, not only sent: a reply that reaches b after the stop is too old to
    # act upon (docs/faults.md), so its jobs would never start there
    c.wait(lambda: c.node_log("b").count(": started (") == 4, 20, "b to start op2's jobs")
    proc_b = c.nodes["b"][0]
    c.node("c", resources="cpu=2,memory=2G,user_slots=2")
    proc_b.send_signal(signal.SIGSTOP)
    c.wait(lambda: len(c.jobs(op2, "aborted")) == 2, 20, "b's jobs aborted as node_offline")
    # back while its jobs still run (they sleep 5 s; the offline timeout is 2 s)
    proc_b.send_signal(signal.SIGCONT)
    # (since the jobs-must-not-run-twice fix it drops them itself, before reporting anything)
    c.wait(lambda: c.node_log("b").count("aborted: node_offline") == 2, 10, "b to kill them")
    o = c.wait_op(op2, 40)
    require(o["progress"]["completed"] == 2 and o["progress"]["aborted"] == 2,
          "op2 completed its two jobs elsewhere or later", o["progress"])


def case_scheduler_restart(c):
    """The scheduler is killed and restarted while jobs run: nodes keep the jobs, re-register,
    and the jobs re-attach; nothing is lost."""
    c.node("a")
    c.node("b")
    n = 6   # 3 half-core jobs per 2-core node (a node keeps a core spare for a new job)
    op = c.op({"tasks": {"main": task("sleep 3; echo done $YT_JOB_INDEX >&2", n, cpu_limit=0.5)}})
    # running on the nodes, not only in the scheduler's books: a reply cut by the kill would
    # leave jobs the nodes never got, which the restarted scheduler rightly declares lost
    c.wait(lambda: sum(c.node_log(x).count(": started (") for x in ("a", "b")) == n, 20,
           "all jobs started on the nodes")
    c.sched.kill9()
    time.sleep(1.0)
    c.sched.start()
    o = c.wait_op(op, 40)
    require(o["progress"]["completed"] == n and o["progress"]["aborted"] == 0 and
          o["progress"]["failed"] == 0, "every job completed once, none aborted", o["progress"])
    for j in c.jobs(op):
        out = c.sched.ok("get_job_stderr", {"operation_id": op, "job_id": j["id"]})
        require(out["stderr"] == "done %d\n" % j["job_index"], "stderr after the restart", out)
    for name in ("a", "b"):
        require(c.nodes[name][0].poll() is None, "node %s kept running" % name)
        log = c.node_log(name)
        require("heartbeat failed" in log and "heartbeats work again" in log,
              "node %s lost the scheduler and found it again" % name, log[-2000:])


# the scheduler is down for over a second: longer than the agent's self-abort deadline
# (node_offline_timeout minus a margin) with the default 2 s, so a longer timeout here
case_scheduler_restart.config = {"node_offline_timeout": 8000}


def jobs_in_memory(s):
    status, text = s.raw("GET", "/metrics")
    require(status == 200, "GET /metrics", status, text)
    for line in text.splitlines():
        if line.startswith("poolsched_jobs_in_memory "):
            return float(line.split()[1])
    raise Fail("no poolsched_jobs_in_memory in /metrics")


def case_job_retention(c):
    """Finished jobs leave the scheduler's memory once stored, and every answer about them stays
    the same: list_jobs (text for text), get_job_stderr, get_operation; after a restart too."""
    c.node("a", resources="cpu=2,memory=2G,user_slots=8")
    n = 40
    ok = c.op({"tasks": {"main": task("echo \"out $YT_JOB_INDEX\" >&2", n, cpu_limit=0.1,
                                      memory_limit=64 << 20)}})
    # fails at the scheduler's max_failed_job_count (10) failed jobs
    bad = c.op({"tasks": {"bad": task(
        "echo \"bad $YT_JOB_INDEX\" >&2; exit 3", 1, cpu_limit=0.1, memory_limit=64 << 20)}})
    c.wait_op(ok, 90)
    c.wait_op(bad, 60, states=("failed",))
    s = c.sched

    def answers():
        out = {}
        for op in (ok, bad):
            out["op " + op] = s.raw("POST", "/api/v1/get_operation",
                                    json.dumps({"operation_id": op}), s.admin)
            for state in (None, "completed", "failed", "aborted", "running"):
                body = {"operation_id": op}
                if state:
                    body["state"] = state
                out["jobs %s %s" % (op, state)] = s.raw("POST", "/api/v1/list_jobs",
                                                        json.dumps(body), s.admin)
            for j in json.loads(out["jobs %s None" % op][1])["jobs"]:
                out["stderr " + j["id"]] = s.raw("POST", "/api/v1/get_job_stderr", json.dumps(
                    {"operation_id": op, "job_id": j["id"]}), s.admin)
        return out

    # (a) every finished job with its output, whether or not it is still in memory
    first = answers()
    jobs = json.loads(first["jobs %s None" % ok][1])["jobs"]
    require(len(jobs) == n and all(j["state"] == "completed" for j in jobs),
          "list_jobs shows the %d completed jobs" % n, jobs)
    require(sorted(j["job_index"] for j in jobs) == list(range(n)), "every job index once", jobs)
    require([(j["start_time"], len(j["id"]), j["id"]) for j in jobs] ==
          sorted((j["start_time"], len(j["id"]), j["id"]) for j in jobs), "jobs in start order")
    for j in jobs:
        out = json.loads(first["stderr " + j["id"]][1])
        require(out == {"stderr": "out %d\n" % j["job_index"], "truncated": False},
              "stderr of %s" % j["id"], out)
    failed = json.loads(first["jobs %s failed" % bad][1])["jobs"]
    progress = json.loads(first["op " + bad][1])["progress"]
    require(len(failed) == 10 == progress["failed"] and all("code 3" in j["error"] for j in failed),
          "ten failed jobs", progress, failed)
    require(all(json.loads(first["stderr " + j["id"]][1])["stderr"] == "bad 0\n" for j in failed),
          "stderr of the failed jobs")
    # (b) memory is back to (near) zero once the final records are committed
    c.wait(lambda: jobs_in_memory(s) == 0, 20, "poolsched_jobs_in_memory to reach 0")
    after_sweep = answers()
    for k, v in first.items():
        require(after_sweep[k] == v, "same answer from the store: " + k, v, after_sweep[k])
    # (c) after a restart: nothing of the history is loaded, the answers are the same
    s.stop()
    s.start()
    log = s.logtext()
    require("event=state_loaded trees=1 operations=2 jobs=0" in log, "no job loaded at restart",
          log[-2000:])
    require(jobs_in_memory(s) == 0, "no job in memory after the restart")
    again = answers()
    for k, v in first.items():
        require(again[k] == v, "same answer after the restart: " + k, v, again[k])
    # the cluster still works: a new operation runs and its jobs leave memory too
    op3 = c.op({"tasks": {"main": task("echo again >&2", 3, cpu_limit=0.1, memory_limit=64 << 20)}})
    c.wait_op(op3, 60)
    c.wait(lambda: jobs_in_memory(s) == 0, 20, "poolsched_jobs_in_memory back to 0")
    require(len(c.jobs(op3, "completed")) == 3, "the new operation's jobs are listed")


# ---- jobs must not run twice (docs/faults.md) -----------------------------------------------

def job_procs(op):
    """Live (not zombie) processes of operation op: {pid: (job_index, job_id)}, found by the
    job environment every job's processes inherit."""
    out = {}
    want = ("YT_OPERATION_ID=" + op).encode()
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            env = open("/proc/%s/environ" % d, "rb").read().split(b"\0")
            if want not in env:
                continue
            if open("/proc/%s/stat" % d).read().rsplit(")", 1)[1].split()[0] in "ZX":
                continue
        except OSError:
            continue
        kv = dict(e.split(b"=", 1) for e in env if b"=" in e)
        out[int(d)] = (int(kv.get(b"YT_JOB_INDEX", b"-1")), kv.get(b"YT_JOB_ID", b"").decode())
    return out


class Overlap(threading.Thread):
    """Samples op's processes every 20 ms and records any moment at which two attempts (job
    ids) of one job index were alive together."""

    def __init__(self, op):
        threading.Thread.__init__(self, daemon=True)
        self.op, self.stop_flag, self.bad, self.samples = op, False, [], 0

    def run(self):
        while not self.stop_flag:
            by_index = {}
            for idx, jid in job_procs(self.op).values():
                by_index.setdefault(idx, set()).add(jid)
            for idx, ids in by_index.items():
                if len(ids) > 1 and len(self.bad) < 20:
                    self.bad.append((round(time.time(), 2), idx, sorted(ids)))
            self.samples += 1
            time.sleep(0.02)

    def finish(self):
        self.stop_flag = True
        self.join()
        return self.bad


def marker_job(marker, seconds):
    # one line per attempt; a child and a daemonised (setsid) grandchild that outlive the shell
    return ("echo \"$YT_JOB_INDEX $YT_JOB_ID\" >> %s; (setsid sleep %s &); sleep %s & wait"
            % (marker, seconds, seconds))


def new_marker(c):
    path = os.path.join(c.tmp, "marker")
    open(path, "w").close()
    os.chmod(path, 0o666)       # jobs run as nobody
    return path


def marker_attempts(path):
    out = {}
    for line in open(path).read().splitlines():
        idx, jid = line.split()
        out.setdefault(int(idx), []).append(jid)
    return out


def wait_gone(c, op, job_ids, timeout):
    """Seconds until no process of job_ids is alive, or Fail."""
    t0 = time.time()
    while time.time() - t0 < timeout:
        left = [p for p, (_, jid) in job_procs(op).items() if jid in job_ids]
        if not left:
            return time.time() - t0
        time.sleep(0.01)
    raise Fail("processes of jobs %s still alive %.1fs later: %s" % (
        sorted(job_ids), timeout, job_procs(op)))


def jobs_die_with_agent(c, extra):
    n = 3
    marker = new_marker(c)
    c.node("a", resources="cpu=2,memory=2G,user_slots=4", extra=extra)
    op = c.op({"tasks": {"main": task(marker_job(marker, 4), n, cpu_limit=0.25)}})
    c.wait(lambda: len(marker_attempts(marker)) == n and len(job_procs(op)) >= 3 * n, 20,
           "%d jobs (shell, child, daemon each) running on a" % n)
    mon = Overlap(op)
    mon.start()
    c.node("b", resources="cpu=2,memory=2G,user_slots=4", extra=extra)
    on_a = {j for ids in marker_attempts(marker).values() for j in ids}
    c.stop_node("a", signal.SIGKILL)
    gone = wait_gone(c, op, on_a, 2.0)
    print("kill -9 of the agent%s: its jobs' processes gone after %.3f s" %
          (" (--no-cgroups)" if extra else "", gone))
    o = c.wait_op(op, 30)
    bad = mon.finish()
    require(not bad, "never two attempts of one job index alive at once", bad)
    attempts = marker_attempts(marker)
    require(sorted(attempts) == list(range(n)) and all(len(v) == 2 for v in attempts.values()),
          "each index ran once on a, once on b", attempts)
    require(o["progress"]["completed"] == n, "all completed", o["progress"])
    aborted = c.jobs(op, "aborted")
    require(len(aborted) == n and all(j["abort_reason"] == "node_offline" for j in aborted),
          "a's jobs aborted with node_offline", aborted)


def case_agent_kill9(c):
    """kill -9 of an agent: its jobs (shell, child, daemonised grandchild) die at once, and
    the rerun elsewhere never overlaps them."""
    jobs_die_with_agent(c, ())


def case_agent_kill9_no_cgroups(c):
    """The same without cgroups: the parent-death signal and the guard's environment sweep."""
    jobs_die_with_agent(c, ("--no-cgroups",))


def agent_stopped(c, extra):
    n = 3
    marker = new_marker(c)
    c.node("a", resources="cpu=2,memory=2G,user_slots=4", extra=extra)
    op = c.op({"tasks": {"main": task(marker_job(marker, 5), n, cpu_limit=0.25)}})
    c.wait(lambda: len(marker_attempts(marker)) == n and len(job_procs(op)) >= 3 * n, 20,
           "%d jobs running on a" % n)
    mon = Overlap(op)
    mon.start()
    c.node("b", resources="cpu=2,memory=2G,user_slots=4", extra=extra)
    on_a = {j for ids in marker_attempts(marker).values() for j in ids}
    proc_a = c.nodes["a"][0]
    proc_a.send_signal(signal.SIGSTOP)
    t0 = time.time()
    c.wait(lambda: len(marker_attempts(marker)) == n and all(
        len(v) == 2 for v in marker_attempts(marker).values()), 15, "the reruns to start on b")
    rerun = time.time() - t0
    alive = [p for p, (_, jid) in job_procs(op).items() if jid in on_a]
    print("SIGSTOP: reruns started %.2f s after the stop; processes of a's jobs alive then: %d"
          % (rerun, len(alive)))
    require(not alive, "the stopped agent's jobs were dead before the reruns", job_procs(op))
    proc_a.send_signal(signal.SIGCONT)
    # its first accepted heartbeat: "heartbeats accepted again" when a aborted running jobs
    # itself, "heartbeats work again" when the guard's kills ended them first (they were
    # reaped as aborted, node_offline, and nothing was left running to abort), after a
    # heartbeat that was under way across the stop failed
    back = re.compile(r"heartbeats (accepted|work) again")
    c.wait(lambda: back.search(c.node_log("a")), 10, "a to come back after SIGCONT")
    log = c.node_log("a")
    # before its first accepted heartbeat a has ended each job as aborted (node_offline), or
    # is aborting those still there ("aborting K running jobs"), whichever came first
    before = log[:back.search(log).start()]
    m = re.search(r"aborting (\d+) running jobs", before)
    done = [j for j in on_a if "job %s: aborted: node_offline" % j in
            (before[:m.start()] if m else before)]
    require(len(done) + (int(m.group(1)) if m else 0) == n and
          not any("job %s: failed" % j in log for j in on_a),
          "a aborted its jobs itself before reporting anything", done, log[-3000:])
    require("retrying every tick" not in log, "the guard left the agent's cgroups alone",
          log[-3000:])
    o = c.wait_op(op, 30)
    bad = mon.finish()
    require(not bad, "never two attempts of one job index alive at once", bad)
    require(o["progress"]["completed"] == n, "all completed", o["progress"])
    require(proc_a.poll() is None, "a runs on")


def case_agent_stopped(c):
    """An agent stopped (SIGSTOP) past the offline timeout: its jobs die before the scheduler
    reruns them (the guard), and after SIGCONT the agent aborts them itself before it reports
    anything, then carries on."""
    agent_stopped(c, ())


def case_agent_stopped_no_cgroups(c):
    """The same without cgroups: the guard finds the jobs by their environment marker."""
    agent_stopped(c, ("--no-cgroups",))


def case_duplicate_node_id(c):
    """A second agent with the same node id is refused while the first lives, and neither it
    nor an agent with that id on another scheduler harms the first one's jobs."""
    n = 2
    marker = new_marker(c)
    node_id = c.node("a", resources="cpu=2,memory=2G,user_slots=4")
    op = c.op({"tasks": {"main": task(marker_job(marker, 6), n, cpu_limit=0.25)}})
    c.wait(lambda: len(marker_attempts(marker)) == n and len(job_procs(op)) >= 3 * n, 20,
           "%d jobs running on a" % n)
    before = job_procs(op)
    # the same id, the same work dir (as two agents with the default id and dir would)
    c.node("a2", node_id=node_id, work="a")
    proc = c.nodes["a2"][0]
    try:
        rc = proc.wait(10)
    except subprocess.TimeoutExpired:
        raise Fail("a second agent with node id %s kept running" % node_id, c.node_log("a2"))
    log2 = c.node_log("a2")
    require(rc == 1 and node_id in log2 and "held by another live agent" in log2,
          "the second agent exits with the scheduler's message", rc, log2)
    print("second agent: " + [l for l in log2.splitlines() if "error:" in l][0])
    require("event=node_id_conflict" in c.sched.logtext() or "node_id_conflict" in
          c.sched.logtext(), "the scheduler logged the conflict", c.sched.logtext()[-2000:])
    # another scheduler, an agent with the same id: its own cgroups, a's jobs untouched
    other = FixedPortScheduler(BIN, os.path.join(c.tmp, "data2"), {"heartbeat_period": 100},
                               free_port()).start()
    try:
        c.node("a3", node_id=node_id, work="a", sched=other)
        c.wait(lambda: "registered with" in c.node_log("a3"), 10, "a3 to register elsewhere")
        time.sleep(0.5)
    finally:
        c.stop_node("a3")
        other.stop()
    now = job_procs(op)
    require(set(before) <= set(now), "a's job processes all alive", before, now)
    o = c.wait_op(op, 30)
    require(o["progress"]["completed"] == n and o["progress"]["aborted"] == 0,
          "a's jobs completed, none aborted", o["progress"])
    require(all(len(v) == 1 for v in marker_attempts(marker).values()), "each job ran once")
    require(c.nodes["a"][0].poll() is None, "a runs on")


def case_node_id_taken_over(c):
    """An agent stopped past the offline timeout whose node id another agent has taken over
    meanwhile: after SIGCONT it is refused, and exits with its jobs dead."""
    marker = new_marker(c)
    node_id = c.node("a", resources="cpu=2,memory=2G,user_slots=4")
    op = c.op({"tasks": {"main": task(marker_job(marker, 6), 2, cpu_limit=0.25)}})
    c.wait(lambda: len(marker_attempts(marker)) == 2, 20, "2 jobs running on a")
    mon = Overlap(op)
    mon.start()
    proc_a = c.nodes["a"][0]
    proc_a.send_signal(signal.SIGSTOP)
    time.sleep(2.5)     # past node_offline_timeout (2 s)
    c.node("a2", node_id=node_id, work="a2")
    c.wait(lambda: "registered with" in c.node_log("a2"), 10, "a2 to take the id over")
    proc_a.send_signal(signal.SIGCONT)
    try:
        rc = proc_a.wait(10)
    except subprocess.TimeoutExpired:
        raise Fail("the old agent kept running after its id was taken over", c.node_log("a"))
    log = c.node_log("a")
    require(rc == 1 and "held by another live agent" in log, "the old agent exits with the "
          "scheduler's message", rc, log[-2000:])
    c.wait_op(op, 30)
    bad = mon.finish()
    require(not bad, "never two attempts of one job index alive at once", bad)
    require("event=node_instance_changed" in c.sched.logtext(), "the scheduler logged the "
          "takeover", c.sched.logtext()[-2000:])


def case_idle_agent_keeps_cgroups(c):
    """Two clusters on one machine with the same node ids: an agent started for the second one
    leaves the first one's agent's cgroups alone even while that agent is idle between jobs
    (instance locks, docs/platform-jobs.md), so the first agent's next jobs run."""
    node_id = c.node("a", resources="cpu=2,memory=2G,user_slots=4")
    op = c.op({"tasks": {"main": task("true", 1, cpu_limit=0.25)}})
    c.wait_op(op, 30)
    log = c.node_log("a")
    if "no usable cgroups" in log:
        raise Skip([l for l in log.splitlines() if "no usable cgroups" in l][0])
    # a idle now: its node cgroup holds no process
    other = FixedPortScheduler(BIN, os.path.join(c.tmp, "data2"), {"heartbeat_period": 100},
                               free_port()).start()
    try:
        c.node("b", node_id=node_id, work="b", sched=other)
        c.wait(lambda: "registered with" in c.node_log("b"), 10, "b to register elsewhere")
        require(c.nodes["b"][0].poll() is None, "b runs", c.node_log("b"))
        op2 = c.op({"tasks": {"main": task("true", 3, cpu_limit=0.25)}})
        o = c.wait_op(op2, 30)
        require(o["progress"]["completed"] == 3 and o["progress"]["aborted"] == 0,
              "a's jobs after b's start completed, none aborted", o["progress"],
              c.sched.logtext()[-2000:])
        jobs = [j for j in c.jobs(op2) if j.get("state") == "aborted"]
        require(not jobs, "no job aborted", jobs)
    finally:
        c.stop_node("b")
        other.stop()


def has_slot_uids():
    return "--slot-uid-base" in subprocess.run([BIN, "node", "--help"], capture_output=True,
                                               text=True).stdout


def case_isolation_between_users(c):
    """Issue 13: two users' jobs on one node run as different slot uids (base + slot index),
    each in a sandbox 0700 of its own uid; A's job cannot read B's sandbox or /proc environ,
    nor signal B's processes (kill -9 of B's group, kill -9 -1), and B's job completes."""
    # A base of our own: kill -9 -1 as a slot uid must not reach another test's agents' jobs
    # (agents on one machine need disjoint slot uid ranges). The old binary has no such flag:
    # it then runs as it always did (every job as nobody), which this case must catch.
    base = 20000 + (os.getpid() % 4000) * 8
    extra = ("--slot-uid-base", str(base)) if has_slot_uids() else ()
    if extra:
        # slot uids that are accounts (65534 is nobody) are refused at start
        c.node("bad", extra=("--slot-uid-base", "65533"))
        rc = c.nodes["bad"][0].wait(10)
        log = c.node_log("bad")
        require(rc == 1 and "slot uid 65534" in log and "choose another --slot-uid-base" in log,
              "a colliding uid range is refused", rc, log)
        c.node("root", extra=("--job-user", "root"))
        rc = c.nodes["root"][0].wait(10)
        require(rc == 1 and "is root" in c.node_log("root"), "--job-user root is refused", rc,
              c.node_log("root"))
    c.node("a", resources="cpu=2,memory=2G,user_slots=4", extra=extra)
    d = os.path.join(c.tmp, "x")
    os.mkdir(d)
    os.chmod(d, 0o1777)
    def me(name):   # the job's identity and its sandbox's mode and owner, written atomically
        return ("echo \"$(id -u) $(id -g) ${YT_SLOT_INDEX:--} $$ $(stat -c '%%a %%u' .) $PWD\" "
                "> %s/%s.tmp && mv %s/%s.tmp %s/%s" % (d, name, d, name, d, name))
    wait_for = "i=0; while [ ! -e %s/%%s ] && [ $i -lt 150 ]; do sleep 0.1; i=$((i+1)); done" % d
    job_b = ("echo secret-of-b > secret; chmod 644 secret; " + me("b") + "; " +
             wait_for % "attack-done" + "; [ -e %s/attack-done ]" % d)
    # A: waits for B, tries each attack and writes down which worked, then kills what it may
    job_a = (wait_for % "b" + "; read bu bg bs bpid bmode bowner bdir < %s/b; r=; " % d +
             "cat \"$bdir/secret\" >/dev/null 2>&1 && r=\"$r read-secret\"; "
             "ls \"$bdir\" >/dev/null 2>&1 && r=\"$r list-sandbox\"; "
             "[ -n \"$(cat /proc/$bpid/environ 2>/dev/null)\" ] && r=\"$r read-environ\"; "
             "kill -0 $bpid 2>/dev/null && r=\"$r signal\"; "
             "echo \"breaches:$r\" > %s/result.tmp; mv %s/result.tmp %s/result; " % (d, d, d) +
             me("a") + "; "
             "kill -9 -$bpid 2>/dev/null; kill -9 $bpid 2>/dev/null; "
             # kill -9 -1 hits every process of our uid: only where that is a slot uid of ours,
             # never nobody (the old binary), which would kill unrelated processes
             "[ \"$(id -u)\" -ge %d ] && [ \"$(id -u)\" -lt %d ] && kill -9 -1 2>/dev/null; "
             % (base, base + 4) +
             "sleep 0.3; touch %s/attack-done" % d)
    alice, bob = c.sched.token("alice"), c.sched.token("bob")
    op_b = c.sched.ok("start_op", {"operation_type": "vanilla", "spec": {
        "max_failed_job_count": 1, "tasks": {"b": task(job_b, 1, cpu_limit=0.25)}}},
        token=bob)["operation_id"]
    op_a = c.sched.ok("start_op", {"operation_type": "vanilla", "spec": {
        "max_failed_job_count": 1, "tasks": {"a": task(job_a, 1, cpu_limit=0.25)}}},
        token=alice)["operation_id"]
    c.wait(lambda: os.path.exists(os.path.join(d, "result")), 15, "A's attack")
    result = open(os.path.join(d, "result")).read().strip()
    print("A's attempts on B: %s" % (result if result != "breaches:" else "all refused"))
    require(result == "breaches:", "A could not read or signal B's job", result)
    ob = c.wait_op(op_b, 20, states=("completed", "failed", "aborted"))
    c.wait_op(op_a, 20, states=("completed", "failed", "aborted"))
    require(ob["state"] == "completed" and ob["progress"]["failed"] == 0,
          "B's job completed (not killed by A)", ob["progress"], c.node_log("a")[-2000:])
    a = open(os.path.join(d, "a")).read().split()
    b = open(os.path.join(d, "b")).read().split()
    print("A: uid %s gid %s slot %s sandbox %s owner %s; B: uid %s gid %s slot %s sandbox %s "
          "owner %s" % (a[0], a[1], a[2], a[4], a[5], b[0], b[1], b[2], b[4], b[5]))
    for who in (a, b):
        uid, gid, slot, mode, owner = who[0], who[1], who[2], who[4], who[5]
        require(slot.isdigit() and int(uid) == base + int(slot) and gid == uid,
              "uid = gid = slot uid base + YT_SLOT_INDEX", who)
        require(mode == "700" and owner == uid, "sandbox 0700 owned by the slot uid", who)
    require(a[0] != b[0] and a[2] != b[2], "concurrent jobs have distinct slots and uids", a, b)
    require("jobs run as slot uids %d..%d" % (base, base + 3) in c.node_log("a"),
          "the start log says who jobs run as", c.node_log("a")[:2000])


GROUPS = {
    "ops": [case_operation_with_outputs, case_memory_limit, case_registration_refused,
            case_disk_request],
    "reclaim": [case_cpu_reclaim],
    "preempt": [case_preemption],
    "nodeloss": [case_node_loss],
    "restart": [case_scheduler_restart],
    "retention": [case_job_retention],
    "agentkill": [case_agent_kill9, case_agent_kill9_no_cgroups],
    "agentstop": [case_agent_stopped, case_agent_stopped_no_cgroups],
    "dupid": [case_duplicate_node_id, case_node_id_taken_over],
    "cglock": [case_idle_agent_keeps_cgroups],
    "isolation": [case_isolation_between_users],
}


def run(case, tmp):
    """One case on a cluster of its own in tmp (checks.run_cases)."""
    c = None
    try:
        c = Cluster(tmp, getattr(case, "config", None))
        case(c)
    finally:
        if c:
            c.stop()
            for name, (_, _, node_id) in c.nodes.items():
                kill_cgroup_leftovers(node_id)


def run_on_cluster(case, config=None, setup=None):
    """One upstream case on a fresh cluster (its own temporary directory): setup(c) adds the
    nodes, then case(c); prints "ok"/"skip", the logs' tails on a failure (then raises), and
    always stops the cluster and its jobs' cgroups."""
    import shutil
    import tempfile
    tmp = tempfile.mkdtemp(prefix="psups-")
    os.chmod(tmp, 0o755)
    c = None
    t0 = time.time()
    try:
        c = Cluster(tmp, config)
        if setup:
            setup(c)
        case(c)
        print("ok   %s (%.1fs)" % (case.__name__, time.time() - t0), flush=True)
    except Skip as e:
        print("skip %s: %s" % (case.__name__, e), flush=True)
    except Exception:
        for f in sorted(os.listdir(tmp)):
            if f.endswith(".log"):
                print("---- %s\n%s" % (f, open(os.path.join(tmp, f)).read()[-4000:]))
        raise
    finally:
        if c:
            c.stop()
            for _, (_, _, node_id) in c.nodes.items():
                kill_cgroup_leftovers(node_id)
        shutil.rmtree(tmp, ignore_errors=True)


def main():
    run_group(GROUPS, GROUP, run, "pse2e-")


if __name__ == "__main__":
    main()
