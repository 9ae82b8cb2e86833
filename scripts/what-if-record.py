#!/usr/bin/env python3
"""what-if-record.py OUT [--days D] [--nodes N] [--operations O] [--jobs J] [--seed S]

Writes a generated event log (one JSON row per line, the rows `poolsched what-if --event-log`
reads, docs/what-if.md) for timing what-if over a long record (docs/performance.md): N nodes
registered at 0 (a tenth with gpus), the pools of `bench simulate` in one pools_info row, then
for each of D days O operations with J jobs in all, drawn as `bench simulate` draws its day
(heavy-tailed job counts, 70% arriving in working hours, jobs of 5 min-4 h, a fifth with a
second, smaller task, gpu jobs in ml), each job started and completed in waves of 64 from 5 s
after its operation. Prints the what-if command for the whole window on stderr.
"""
import argparse
import json
import math
import random
import sys

GIB = 1 << 30
DAY_MS = 86400000
POOLS_OF = ["prod-web", "prod-web", "prod-etl", "prod-etl", "research", "research", "research",
            "research", "research", "batch", "batch", "batch", "batch", "batch", "ml", "ml",
            "adhoc", "adhoc", "prod-web", "research"]


def res(cores, memory, slots, gpu):
    return {"user_slots": slots, "cpu": float(cores), "gpu": gpu, "memory": memory, "network": 0}


def job_counts(rng, n, jobs):
    weight = [min(1.0 / (1.0 - rng.random()) ** 0.9, 1000.0) for _ in range(n)]
    total, rest = sum(weight), jobs - n
    count = [1 + int(rest * w / total) for w in weight]
    i, given = 0, sum(count)
    while given < jobs:
        count[i % n] += 1
        i, given = i + 1, given + 1
    return count


def operation(rng, index, day, count):
    start = 1000 + day * DAY_MS + (8 * 3600000 + rng.randrange(12 * 3600000)
                                   if rng.random() < 0.7 else rng.randrange(22 * 3600000))
    pool = rng.choice(POOLS_OF)
    gpu = pool == "ml"
    length = int(300.0 * math.exp(rng.random() * math.log(48.0)) * 1000)
    cores = 8 if gpu else rng.choice([1, 2, 2, 4, 4, 8])
    first = res(cores, cores * 4 * GIB, 1, 1 + rng.randrange(4) if gpu else 0)
    second = count // 4 if count >= 8 and rng.random() < 0.2 else 0
    tasks = [("map", count - second, length, first)]
    if second:
        tasks.append(("reduce", second, length // 2, res(2, 8 * GIB, 1, 0)))
    op, user = "op%06d" % index, "user%02d" % rng.randrange(30)
    row = {"timestamp": start, "event_type": "operation_started", "operation_id": op,
           "operation_type": "map", "authenticated_user": user,
           "pool": pool, "spec": {"pool": pool},
           "scheduling_info_per_tree": {"physical": {"pool": pool}},
           "tasks": [{"name": t[0], "job_count": t[1], "resource_limits": t[3]} for t in tasks]}
    return start, op, tasks, row


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--operations", type=int, default=1000, help="per day")
    ap.add_argument("--jobs", type=int, default=100000, help="per day")
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if a.jobs < a.operations or min(a.days, a.nodes, a.operations) < 1:
        sys.exit("what-if-record.py: need days, nodes, operations >= 1 and jobs >= operations")
    rng = random.Random(a.seed)
    out = open(a.out, "w")

    def write(row):
        out.write(json.dumps(row, separators=(",", ":")) + "\n")

    gpu_nodes = a.nodes // 10
    names = ["n%05d" % i for i in range(a.nodes)]
    for i, name in enumerate(names):
        gpu = i >= a.nodes - gpu_nodes
        write({"timestamp": 0, "event_type": "node_registered", "node_address": name,
               "tags": ["dc1", "gpu"] if gpu else ["dc1"],
               "resource_limits": res(64, 512 * GIB, 64, 8) if gpu else res(32, 128 * GIB, 32, 0)})
    total_cpu = 32.0 * (a.nodes - gpu_nodes) + 64.0 * gpu_nodes
    write({"timestamp": 0, "event_type": "pools_info", "pools": {"physical": {
        "prod": {"parent": "<Root>", "weight": 4,
                 "strong_guarantee_resources": {"cpu": math.floor(total_cpu / 4)}},
        "prod-web": {"parent": "prod", "weight": 2},
        "prod-etl": {"parent": "prod", "weight": 1, "mode": "fifo"},
        "research": {"parent": "<Root>", "weight": 2},
        "batch": {"parent": "<Root>", "weight": 1, "max_running_operation_count": 20},
        "ml": {"parent": "<Root>", "weight": 2, "scheduling_tag_filter": "gpu"},
        "adhoc": {"parent": "<Root>", "weight": 1}}}})
    rows, index, job = [], 0, 0
    for day in range(a.days):
        for count in job_counts(rng, a.operations, a.jobs):
            start, op, tasks, row = operation(rng, index, day, count)
            index += 1
            rows.append((start, 0, row))
            t0 = start + 5000
            for name, jobs, length, r in tasks:
                for k in range(jobs):
                    begin = t0 + (k // 64) * length
                    jid = "j%07d" % job
                    job += 1
                    node = names[job % a.nodes]
                    rows.append((begin, 1, {"timestamp": begin, "event_type": "job_started",
                                            "job_id": jid, "operation_id": op, "task_name": name,
                                            "node_address": node, "resource_limits": r}))
                    rows.append((begin + length, 2, {
                        "timestamp": begin + length, "event_type": "job_completed", "job_id": jid,
                        "operation_id": op, "task_name": name, "start_time": begin,
                        "finish_time": begin + length, "resource_limits": r}))
                t0 += (jobs + 63) // 64 * length
    rows.sort(key=lambda x: (x[0], x[1]))
    for _, _, row in rows:
        write(row)
    out.close()
    print("%d operations, %d jobs; time it with:\n  /usr/bin/time -f '%%U %%S' poolsched what-if "
          "--event-log %s --since 0 --until %d --set //sys/pool_trees/physical/batch/@weight=3 "
          "--out DIR" % (index, job, a.out, a.days * DAY_MS + 1000), file=sys.stderr)


if __name__ == "__main__":
    main()
