#!/usr/bin/env python3
"""Every job of a simulated scenario accounted for, attempt by attempt.

    account.py SCENARIO OUT_DIR

SCENARIO is the scenario `poolsched simulate` ran, OUT_DIR its --output directory. A job is
`<operation>/<task index>/<job index>`; each run of it is an attempt, `<job>/<attempt>` in
events.jsonl (docs/simulate.md). The replay accounts for every job when:
  - each job of the scenario (job_count per task) finished exactly once: one job_completed,
    on its last attempt;
  - every earlier attempt is a restart: it ended job_aborted (resource_overdraft, preemption,
    ...) or job_failed, and the next attempt number followed it; no attempt is started twice,
    ends twice, ends without a start, or is still running; no job outside the scenario ran;
  - operations.csv has one row per scenario operation, in order, each completed in the
    timeframe, and events.jsonl one operation_completed per operation and no operation_failed;
  - summary.json agrees: total = completed = the scenario's jobs, started = jobs + restarts,
    aborted + failed = restarts, nothing running or pending, end all_operations_finished.
Prints the counts, restarts by reason, and `every job accounted for: yes` (exit 0) or the first
problems and `every job accounted for: NO` (exit 1). examples/alibaba/run.sh and
tests/scripts/sim_alibaba.sh use it; the test also feeds it broken outputs.
"""
import csv
import json
import sys
from collections import Counter


def account(scenario_path, out):
    sc = json.load(open(scenario_path))
    problems = []

    def problem(msg):
        problems.append(msg)

    ops = [o["id"] for o in sc["operations"]]
    jobs = {f"{o['id']}/{t}/{j}" for o in sc["operations"]
            for t, task in enumerate(o["tasks"]) for j in range(task["job_count"])}

    started = {}        # attempt id -> job
    ended = {}          # attempt id -> ("completed" | "aborted: reason" | "failed")
    attempts = {}       # job -> [attempt numbers in start order]
    op_events = Counter()
    for n, line in enumerate(open(f"{out}/events.jsonl"), 1):
        e = json.loads(line)
        kind = e["event_type"]
        if kind in ("operation_completed", "operation_failed"):
            op_events[kind, e["operation_id"]] += 1
            if kind == "operation_failed":
                problem(f"events.jsonl:{n}: operation {e['operation_id']} failed: {e['error']}")
            continue
        if kind not in ("job_started", "job_completed", "job_aborted", "job_failed"):
            continue
        attempt = e["job_id"]
        job, _, number = attempt.rpartition("/")
        if kind == "job_started":
            if job not in jobs:
                problem(f"events.jsonl:{n}: {attempt} is no job of the scenario")
            if attempt in started:
                problem(f"events.jsonl:{n}: {attempt} started twice")
            started[attempt] = job
            attempts.setdefault(job, []).append(int(number))
            continue
        if attempt not in started:
            problem(f"events.jsonl:{n}: {attempt} ended ({kind}) but never started")
        if attempt in ended:
            problem(f"events.jsonl:{n}: {attempt} ended twice ({ended[attempt]}, then {kind})")
        ended[attempt] = {"job_completed": "completed",
                          "job_aborted": f"aborted: {e.get('reason')}",
                          "job_failed": "failed"}[kind]

    restarts = Counter()
    finished = 0
    for job in sorted(jobs):
        numbers = attempts.get(job, [])
        if numbers != list(range(len(numbers))):
            problem(f"{job}: attempts {numbers[:5]}, expected 0, 1, ... in order")
        ends = [ended.get(f"{job}/{k}") for k in range(len(numbers))]
        if not numbers or ends[-1] != "completed":
            problem(f"{job}: never finished (attempts ended {ends[:5]})")
        else:
            finished += 1
        for k, how in enumerate(ends[:-1]):
            if how is None or how == "completed":
                problem(f"{job}/{k}: {'completed' if how else 'still running'} but attempt "
                        f"{k + 1} followed")
            else:
                restarts[how] += 1
    restart_count = sum(restarts.values())
    attempt_count = len(started)

    rows = list(csv.DictReader(open(f"{out}/operations.csv")))
    if [r["id"] for r in rows] != ops:
        problem(f"operations.csv: {len(rows)} rows are not the scenario's {len(ops)} operations "
                "in order")
    bad = [r["id"] for r in rows if r["operation_state"] != "completed" or r["in_timeframe"] != "true"]
    if bad:
        problem(f"operations.csv: {len(bad)} operations not completed in the timeframe, e.g. {bad[0]}")
    for op in ops:
        if op_events["operation_completed", op] != 1:
            problem(f"events.jsonl: operation {op} completed {op_events['operation_completed', op]} times")
            break

    s = json.load(open(f"{out}/summary.json"))
    j = s["jobs"]
    want = {"total": len(jobs), "completed": len(jobs), "started": attempt_count,
            "running": 0, "pending": 0}
    for key, value in want.items():
        if j[key] != value:
            problem(f"summary.json: jobs.{key} {j[key]}, expected {value}")
    if attempt_count != len(jobs) + restart_count:
        problem(f"{attempt_count} attempts started, expected {len(jobs)} jobs + {restart_count} restarts")
    if j["aborted"] + j["failed"] != restart_count:
        problem(f"summary.json: jobs.aborted {j['aborted']} + failed {j['failed']}, "
                f"expected the {restart_count} restarts")
    if s["end"] != "all_operations_finished" or s["operations"]["completed"] != len(ops):
        problem(f"summary.json: end {s['end']}, {s['operations']['completed']} of {len(ops)} "
                "operations completed")

    print(f"operations           {len(ops)} in the scenario, {sum(1 for r in rows if r['operation_state'] == 'completed')} completed")
    print(f"jobs                 {len(jobs)} in the scenario, {finished} finished exactly once")
    print(f"restarts             {restart_count}" +
          (" (" + ", ".join(f"{how} {n}" for how, n in sorted(restarts.items())) + ")"
           if restarts else "") + f"; {attempt_count} attempts started")
    for msg in problems[:10]:
        print("  problem: " + msg)
    if len(problems) > 10:
        print(f"  ... and {len(problems) - 10} more problems")
    ok = not problems
    print("every job accounted for: " + ("yes" if ok else "NO"))
    return ok


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: account.py SCENARIO OUT_DIR")
    sys.exit(0 if account(sys.argv[1], sys.argv[2]) else 1)
