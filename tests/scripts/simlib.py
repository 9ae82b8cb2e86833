"""Helpers for the simulator's scenario tests (tests/scripts/sim_*.sh).

Each test writes a scenario, runs `poolsched simulate`, and asserts numbers read back from the
four outputs. Nothing here decides a result: it only runs and parses.
"""
import csv
import json
import os
import subprocess

# The harness (checks.py): the scripts take fail and require through `from simlib import *`.
from checks import fail, require  # noqa: F401

BIN = None          # set by init()
WORK = None
GIB = 1024 ** 3
# upstream's test_dynamic_cpu_reclaim.py SPEC_WITH_CPU_MONITOR: the spec of a job whose CPU
# monitor reclaims (the simulator's and the service's tests alike)
SPEC_WITH_CPU_MONITOR = {"job_cpu_monitor": {
    "check_period": 100, "increase_coefficient": 1.45, "decrease_coefficient": 0.7,
    "smoothing_factor": 0.2, "vote_window_size": 5, "vote_decision_threshold": 3,
    "min_cpu_limit": 0.1, "enable_cpu_reclaim": True}}


def init(argv):
    global BIN, WORK
    BIN, WORK = argv[1], argv[2]


def nodes(name, count, cpu=10, memory=100 * GIB, slots=10, tags=None, gpu=0):
    """A node group with every resource finite (an omitted one would be unlimited)."""
    g = {"name": name, "count": count,
         "resource_limits": {"cpu": cpu, "memory": memory, "user_slots": slots, "gpu": gpu, "network": 0}}
    if tags is not None:
        g["tags"] = tags
    return g


def op(id, start, pool=None, jobs=10, duration=10000, cpu=1, memory=GIB, user=None, **spec):
    if pool is not None:
        spec["pool"] = pool
    o = {"id": id, "start_time": start, "spec": spec,
         "tasks": [{"job_count": jobs, "duration": duration,
                    "resources": {"cpu": cpu, "memory": memory, "user_slots": 1}}]}
    if user is not None:
        o["user"] = user
    return o


def scenario(node_groups, trees, operations, duration=None, heartbeat=5000, fs=1000):
    s = {"heartbeat_period": heartbeat, "fair_share_update_period": fs}
    if duration is not None:
        s["duration"] = duration
    s.update({"node_groups": node_groups, "pool_trees": trees, "operations": operations})
    return s


def run(name, sc, *args, expect_rc=0):
    """Writes the scenario, runs the simulator into WORK/name; returns (outdir, stderr)."""
    path = os.path.join(WORK, name + ".json")
    with open(path, "w") as f:
        json.dump(sc, f, indent=1)
    out = os.path.join(WORK, name)
    p = subprocess.run([BIN, "simulate", path, "--output", out, *args],
                       capture_output=True, text=True)
    if p.returncode != expect_rc:
        fail(f"{name}: exit code {p.returncode}, expected {expect_rc}; stderr: {p.stderr.strip()}")
    return out, p.stderr


class Result:
    def __init__(self, out):
        self.out = out
        with open(os.path.join(out, "events.jsonl")) as f:
            self.events = [json.loads(line) for line in f]
        with open(os.path.join(out, "operations.csv")) as f:
            self.ops = {r["id"]: r for r in csv.DictReader(f)}
        with open(os.path.join(out, "pools.csv")) as f:
            self.pools = list(csv.DictReader(f))
        with open(os.path.join(out, "summary.json")) as f:
            self.summary = json.load(f)

    def of_type(self, t):
        return [e for e in self.events if e["event_type"] == t]

    def running_at(self, t):
        """Running jobs per operation after every event at time <= t."""
        run = {}
        for e in self.events:
            if e["time"] > t:
                break
            if e["event_type"] == "job_started":
                run[e["operation_id"]] = run.get(e["operation_id"], 0) + 1
            elif e["event_type"] in ("job_completed", "job_aborted", "job_failed"):
                run[e["operation_id"]] -= 1
        return run

    def first_start(self, op_id):
        for e in self.events:
            if e["event_type"] == "job_started" and e["operation_id"] == op_id:
                return e["time"]
        return None

    def pool_rows(self, pool, tree=None):
        return [r for r in self.pools if r["pool"] == pool and (tree is None or r["tree"] == tree)]

    def pool_at(self, pool, t, tree=None):
        """pools.csv's row of pool at the last fair share update at or before t ({} if none)."""
        rows = [x for x in self.pool_rows(pool, tree) if int(x["time"]) <= t]
        return rows[-1] if rows else {}

    def ratios(self, pool, t, tree=None):
        """(fair_share_ratio, usage_ratio) of pool at t (nan before its first row). For the only
        operation of its pool they are the operation's own."""
        x = self.pool_at(pool, t, tree)
        return float(x.get("fair_share_ratio", "nan")), float(x.get("usage_ratio", "nan"))

    def status_at(self, element, t=float("inf")):
        """A pool's or operation's starvation status after the updates at or before t."""
        s = [e["status"] for e in self.of_type("starvation_status_changed")
             if e["element"] == element and e["time"] <= t]
        return s[-1] if s else "non_starving"

    def summary_pool(self, pool, tree=None):
        for p in self.summary["pools"]:
            if p["pool"] == pool and (tree is None or p["tree"] == tree):
                return p
        fail(f"no pool {pool} in summary.json")


def almost(a, b, eps=1e-4):
    """YTsaurus's are_almost_equal (yt/python/yt/test_helpers): absolute error below 1e-4."""
    return abs(a - b) < eps


def load(out):
    return Result(out)
