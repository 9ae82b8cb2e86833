# The fidelity's usage error of a what-if (docs/what-if.md "Fidelity"), computed again from the
# event log's rows and the no-change replay's pools.csv and compared with what-if.json: the
# window starting where the log's record does, 201 samples (one a ms in a window under 200 ms),
# every job attempt of the pool's subtree that covers a sample, the dominant share of the
# nodes known by then (registered, or in nodes_info). For what_if_offline.sh's logs (one tree,
# nodes that only join).
# Usage: what_if_fidelity_check.py LOG OUT_DIR SINCE UNTIL
import csv, json, sys
log, d, since, until = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
rows = json.load(open(log))
# the window starts no earlier than the record: its oldest row, or its first state rows (their
# operations_info row; in a log without any, its first pools_info row)
since = max(since, min(r["timestamp"] for r in rows),
            next((r["timestamp"] for r in rows if r["event_type"] == "operations_info"),
                 next(r["timestamp"] for r in rows if r["event_type"] == "pools_info")))
w = json.load(open(d + "/what-if.json"))
dur = until - since
parts = min(200, dur)
step, n = dur // parts, parts + 1
RES = ["user_slots", "cpu", "gpu", "memory", "network"]
def vec(m):
    return [float((m or {}).get(r) or 0) for r in RES]
def covers(frm, to, k):
    return frm <= k * step < to
total = [[0.0] * 5 for _ in range(n)]
seen = set()   # each node from its first row on (registration or the state's nodes_info; these
for r in rows:  # logs have no offline or updated node)
    nodes = ({r["node_address"]: r} if r["event_type"] == "node_registered" else
             r["nodes"] if r["event_type"] == "nodes_info" else {})
    for address, node in nodes.items():
        if address in seen:
            continue
        seen.add(address)
        for k in range(n):
            if k * step >= r["timestamp"] - since:
                total[k] = [a + b for a, b in zip(total[k], vec(node["resource_limits"]))]
pool_of = {r["operation_id"]: r["scheduling_info_per_tree"]["physical"]["pool"]
           for r in rows if r["event_type"] == "operation_started"}
for r in rows:   # the state rows' operations (their operation_started rows dropped)
    for op_id, op in (r["operations"].items() if r["event_type"] == "operations_info" else ()):
        pool_of.setdefault(op_id, op["scheduling_info_per_tree"]["physical"]["pool"])
parent = {p: v["parent"] for p, v in
          next(r for r in rows if r["event_type"] == "pools_info")["pools"]["physical"].items()}
last = {}
for r in rows:
    if r["event_type"].startswith("job_"):
        last[r["job_id"]] = r
use = {}
for j in last.values():
    if j["event_type"] == "job_started":
        frm, to = j["timestamp"] - since, dur + step
    else:
        frm, to = j["start_time"] - since, j["finish_time"] - since
    p = pool_of.get(j["operation_id"])   # none: its operation_started row was dropped
    while p and p != "<Root>":
        u = use.setdefault(p, [[0.0] * 5 for _ in range(n)])
        for k in range(n):
            if covers(frm, to, k):
                u[k] = [a + b for a, b in zip(u[k], vec(j["resource_limits"]))]
        p = parent.get(p)
share = {p: [0.0] * n for p in use}
for row in csv.DictReader(open(d + "/recorded/pools.csv")):
    if row["tree"] == "physical" and row["pool"] in share:
        t = int(row["time"])
        for k in range(n):
            if k * step >= t:
                share[row["pool"]][k] = float(row["usage_ratio"])
def dominant(u, t):
    return max([a / b for a, b in zip(u, t) if b > 0] or [0.0])
want = {p: sum(abs(dominant(use[p][k], total[k]) - share[p][k]) for k in range(n)) / n for p in use}
got = w["fidelity"]["usage_error"]
bad = [p for p in want if abs(want[p] - got.get(p, -1)) > 1e-9] + [p for p in got if p not in want]
mean = sum(want.values()) / len(want)
if bad or abs(mean - w["fidelity"]["usage_error_mean"]) > 1e-9 or w["since"] != since:
    sys.exit("FAIL: usage error of [%d, %d]: want %s (mean %s), got %s (mean %s), since %s" %
             (since, until, want, mean, got, w["fidelity"]["usage_error_mean"], w["since"]))
