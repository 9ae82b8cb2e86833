#!/usr/bin/env python3
"""How loaded a simulated cluster was, and what fair share gave each pool.

    load.py SCENARIO OUT_DIR

Over the simulated time of OUT_DIR (summary.json's simulated_time, from 0):
  - utilization of cpu, memory and gpu: the resources of running jobs (job_started to its
    job_completed/job_aborted/job_failed in events.jsonl) over the scenario's node totals,
    exact time-weighted mean and peak;
  - per pool (summary.json, exact): mean fair share and mean usage (dominant share), the
    aggregated delay, underserved periods and preemptions;
  - from pools.csv (its rows, so as fine as --pools-period): the share of rows in which the
    tree's demand exceeded the cluster, and per pool the share in which its fair share was
    below its demand (fair share held it back).
"""
import csv
import json
import sys

RESOURCES = ("cpu", "memory", "gpu")


def utilization(sc, out, end):
    total = dict.fromkeys(RESOURCES, 0)
    for g in sc["node_groups"]:
        for r in RESOURCES:
            total[r] += g["resource_limits"].get(r, 0) * g["count"]
    running = {}
    use = dict.fromkeys(RESOURCES, 0)
    area = dict.fromkeys(RESOURCES, 0)
    peak = dict.fromkeys(RESOURCES, (0, 0))   # (value, time)
    last = 0
    for line in open(f"{out}/events.jsonl"):
        e = json.loads(line)
        kind = e["event_type"]
        if kind not in ("job_started", "job_completed", "job_aborted", "job_failed"):
            continue
        t = min(e["time"], end)
        for r in RESOURCES:
            area[r] += use[r] * (t - last)
        last = t
        if kind == "job_started":
            running[e["job_id"]] = e["resources"]
            sign, res = 1, e["resources"]
        else:
            sign, res = -1, running.pop(e["job_id"])
        for r in RESOURCES:
            use[r] += sign * res.get(r, 0)
            if use[r] > peak[r][0]:
                peak[r] = (use[r], e["time"])
    for r in RESOURCES:
        area[r] += use[r] * (end - last)
    return {r: (area[r] / end / total[r] if end and total[r] else 0.0,
                peak[r][0] / total[r] if total[r] else 0.0, peak[r][1]) for r in RESOURCES}


def main(scenario_path, out):
    sc = json.load(open(scenario_path))
    s = json.load(open(f"{out}/summary.json"))
    end = s["simulated_time"]
    starts = [o["start_time"] for o in sc["operations"]]
    print(f"window               0 .. {end / 60000:.1f} min of virtual time "
          f"(submissions 0 .. {max(starts, default=0) / 60000:.1f} min)")
    for r, (mean, peak, at) in utilization(sc, out, end).items():
        print(f"{r + ' utilization':<20} mean {mean:6.1%}, peak {peak:6.1%} at {at / 60000:.1f} min")

    rows = list(csv.DictReader(open(f"{out}/pools.csv")))
    over = {}
    held = {}
    times = set()
    for row in rows:
        times.add(row["time"])
        if row["pool"] == "<Root>":
            over[row["time"]] = float(row["demand_ratio"]) > 1.0 + 1e-9
        if float(row["fair_share_ratio"]) < float(row["demand_ratio"]) - 1e-6:
            held[row["pool"]] = held.get(row["pool"], 0) + 1
    n = len(times) or 1
    print(f"demand over cluster  in {sum(over.values())} of {len(times)} pools.csv samples "
          f"({sum(over.values()) / n:.1%})")
    for p in s["pools"]:
        pre = sum(p["preemptions"].values())
        print(f"pool {p['pool']:<11} mean fair share {p['mean_fair_share_ratio']:.4f}, usage "
              f"{p['mean_usage_ratio']:.4f}; fair share below demand in "
              f"{held.get(p['pool'], 0) / n:5.1%} of samples; delay "
              f"{p['aggregated_delay']:8.1f} share*s; underserved {p['underserved_periods']} "
              f"periods, longest {p['longest_underserved_period'] / 1000:.0f} s, "
              f"{p['underserved_periods_over_starvation_timeout']} over the starvation timeout; "
              f"{pre} preempted")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: load.py SCENARIO OUT_DIR")
    main(sys.argv[1], sys.argv[2])
