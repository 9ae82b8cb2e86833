"""Helpers of the service-side translations in tests/upstream/ (tests/upstream/README.md): a
scheduler per case with a 100 ms fair share update and fake nodes shaped as upstream's, vanilla
operations, orchid reads and polling waits. Tree "physical" stands for upstream's "default".
"""
import time

from server_helper import Scheduler, FakeNode, StopsAtExit, wait_beating

ORCHID = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical"
BIN = None    # the poolsched binary (set by the script)
WORK = None   # a scratch directory (set by the script)


class Env(StopsAtExit):
    def __init__(self, name, nodes=1, cpu=10, slots=10, tree=None, network=None, config=None,
                 tags=None):
        """config: the scheduler config; tags(i): node i's tags."""
        self.s = Scheduler(BIN, "%s/%s" % (WORK, name), config).start()
        self.s.set("//sys/pool_trees/physical/@fair_share_update_period", 100)
        for k, v in (tree or {}).items():
            self.s.set("//sys/pool_trees/physical/@" + k, v)
        self.nodes = [FakeNode(self.s, "n%d" % i, cpu=cpu, slots=slots, memory=100 << 30,
                               tags=tags(i) if tags else None)
                      for i in range(nodes)]
        for n in self.nodes:
            if network is not None:
                n.limits["network"] = network
        self.beat()

    def beat(self):
        for n in self.nodes:
            n.heartbeat()

    def pool(self, name, parent=None, **attrs):
        a = dict(attrs)
        a.update({"name": name, "pool_tree": "physical"})
        if parent:
            a["parent_name"] = parent
        self.s.ok("create", {"type": "scheduler_pool", "attributes": a})

    def op(self, jobs=1, cpu=1, token=None, **spec):
        spec["tasks"] = {"t": {"command": "sleep 1000", "job_count": jobs, "cpu_limit": cpu,
                               "memory_limit": 1 << 20}}
        return self.s.ok("start_op", {"operation_type": "vanilla", "spec": spec},
                         token)["operation_id"]

    def get(self, path, default=None):
        st, out = self.s.call("get", {"path": path})
        return out["value"] if st == 200 else default

    def pool_attr(self, pool, attr, default=None):
        return self.get("%s/fair_share_info/pools/%s/%s" % (ORCHID, pool, attr), default)

    def op_attr(self, op, attr, default=None):
        return self.get("%s/fair_share_info/operations/%s/%s" % (ORCHID, op, attr), default)

    def wait(self, cond, what, timeout=15.0):
        end = time.time() + timeout
        last = None
        while time.time() < end:
            self.beat()
            try:
                last = cond()
                if last is True:
                    return True
            except (KeyError, TypeError) as e:
                last = e
            time.sleep(0.05)
        raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))

    def stop(self):
        self.s.stop()


def check_running_jobs(env, op, n, what):
    """upstream's TestResourceUsage._check_running_jobs: the operation never runs more than n
    jobs, and runs exactly n at 10 looks 0.1 s apart (of at most 100)."""
    seen = 0
    for _ in range(100):
        time.sleep(0.1)
        env.beat()
        running = (env.op_attr(op, "resource_usage") or {}).get("user_slots", 0)
        if running > n:
            raise AssertionError("%s: %s jobs running, at most %d" % (what, running, n))
        seen += running == n
        if seen == 10:
            return
    raise AssertionError("%s: %d jobs running at only %d of 100 looks" % (what, n, seen))


def beat(nodes, seconds):
    """Heartbeats every fake node each 0.1 s for seconds."""
    end = time.time() + seconds
    while time.time() < end:
        for n in nodes:
            n.heartbeat()
        time.sleep(0.1)


def running(nodes, op):
    """The operation's jobs on the fake nodes (job id -> node id), without those interrupted
    (preempted, ending)."""
    return {j: n.id for n in nodes for j, st in n.running.items()
            if st.get("operation_id") == op and j not in n.interrupted}


def wait_for(nodes, what, cond, seconds=10):
    """server_helper.wait_beating with these cases' order of arguments and 10 s: heartbeats
    the nodes until cond() holds (True) or seconds pass (a failed check `what`, False)."""
    return bool(wait_beating(what, cond, nodes, seconds))


def near(a, b, eps=1e-4):
    """YTsaurus's are_almost_equal (yt/python/yt/test_helpers): absolute error below 1e-4."""
    return a is not None and abs(a - b) < eps


CASES = []   # the script's cases in order, registered by @case


def case(fn):
    """Registers a case (a function without arguments) for run."""
    CASES.append(fn)
    return fn


def run(cases, only, context=None):
    """Runs the cases (functions) named in only, or all. A case fails on an exception or on any
    check (server_helper.check) that failed while it ran; finish() then fails the test.
    With context, each case gets context(index, name) as its argument (e.g. names of its own
    trees on a shared scheduler)."""
    from checks import check, FAILURES
    names = [fn.__name__ for fn in cases]
    for name in only or ():
        check(name in names, "no case named %s (cases: %s)" % (name, " ".join(names)))
    for i, fn in enumerate(cases):
        if only and fn.__name__ not in only:
            continue
        t0 = time.time()
        failed = len(FAILURES)
        try:
            fn(context(i, fn.__name__)) if context else fn()
        except (AssertionError, RuntimeError) as e:
            check(False, "%s: %s" % (fn.__name__, e))
        if len(FAILURES) == failed:
            print("pass %s (%.1f s)" % (fn.__name__, time.time() - t0), flush=True)
        else:
            print("FAIL %s: %d check(s) failed (%.1f s)"
                  % (fn.__name__, len(FAILURES) - failed, time.time() - t0), flush=True)


def ok(s, command, body):
    """The reply of a command that must succeed on scheduler s."""
    st, out = s.call(command, body)
    if st != 200:
        raise AssertionError("%s %s -> %d %s" % (command, body, st, out))
    return out


def refused(s, command, body):
    """(status, reply) of a command that must be refused on scheduler s."""
    st, out = s.call(command, body)
    if st == 200:
        raise AssertionError("%s %s was accepted" % (command, body))
    return st, out


def shared(binary, work):
    """One scheduler for every case of a script (the Cypress cases, on trees of their own):
    (scheduler, ok, refused) with ok and refused bound to it."""
    s = Scheduler(binary, work + "/data").start()
    return s, (lambda command, body: ok(s, command, body)), \
        (lambda command, body: refused(s, command, body))


def state(env, op):
    return env.s.ok("get_operation", {"operation_id": op})["state"]


def try_op(env, token=None, **spec):
    """Starts a one-job vanilla operation; returns (status, reply)."""
    spec["tasks"] = {"t": {"command": "sleep 1000", "job_count": 1, "cpu_limit": 1,
                           "memory_limit": 1 << 20}}
    return env.s.call("start_op", {"operation_type": "vanilla", "spec": spec}, token)
