#!/usr/bin/env bash
# Autopilot-style figures of the memory reserve on a workload whose actual peaks vary per job
# (examples/simulate/memory-digest.json; docs/simulate.md "Memory reserve: figures").
#
# Prints, from summary.json: the relative slack (reserve - used) / reserve weighted by byte x
# seconds and as a mean per job, the share of job starts aborted for resource_overdraft, and
# which overdrafts hit the first wave (the reserve at the digest's default value).
#
# What is asserted, and why these bounds (they are not tuned to pass):
#   - the outputs are byte-identical over two runs (the per-job draws are pure);
#   - the mean per-job slack is within 0.03 of what the 0.95 quantile of a lognormal peak
#     gives per job, 1 - exp(s^2/2) / exp(1.645 s), averaged over the jobs (a model check:
#     the digest's 1% buckets and the first wave move it by about 0.01);
#   - Autopilot's aim is slack <= 25% with <= 1% overdraft aborts. The overdraft part is
#     reached on the example and on seeds 1..5 and is asserted (share <= 0.01). The slack part
#     is met on the example's seed (0.249) but not on seeds 1..5 (0.258..0.279): it is the
#     price of the 0.95 quantile on spreads of 0.1..0.3, so only slack in (0, 0.30) is
#     asserted and the test prints on how many seeds the 25% aim is met;
#   - with user_job_memory_digest_default_value 1.0 the first wave reserves the whole limit,
#     so no first-wave job can be aborted for overdraft (a peak above the limit fails
#     instead), and the slack is higher than with the default 0.5 (the trade-off).
# Usage: sim_memory_slack.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: sim_memory_slack.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" "$3/examples/simulate/memory-digest.json" <<'PY'
import copy, json, math, sys
from simlib import *
init(sys.argv)
example = json.load(open(sys.argv[3]))

def figures(name, sc):
    out, _ = run(name, sc)
    r = load(out)
    m = r.summary["memory"]
    require(r.summary["end"] == "all_operations_finished", f"{name}: {r.summary['end']}")
    first = later = 0
    for e in r.of_type("job_aborted"):
        if e["reason"] != "resource_overdraft":
            continue
        st = e["statistics"]
        default = [o["spec"].get("user_job_memory_digest_default_value", 0.5)
                   for o in sc["operations"] if o["id"] == e["operation_id"]][0]
        if st["user_job/memory_reserve_factor_x10000"] == round(default * 10000):
            first += 1
        else:
            later += 1
    print(f"{name}: relative slack {m['relative_slack']:.4f} (byte x s), "
          f"{m['mean_job_relative_slack']:.4f} (mean per job); overdraft aborts "
          f"{m['overdraft_aborts']} of {m['jobs_started']} starts "
          f"({100 * m['overdraft_abort_share']:.2f}%: {first} first wave, {later} later); "
          f"memory limit failures {m['memory_limit_failures']}")
    return m, first, out

# the model's floor of the per-job slack: lognormal peaks, reserve at the 0.95 quantile
jobs = floor = 0.0
for o in example["operations"]:
    for t in o["tasks"]:
        s = t["max_memory_spread"]
        floor += t["job_count"] * (1 - math.exp(s * s / 2) / math.exp(1.645 * s))
        jobs += t["job_count"]
floor /= jobs
print(f"0.95 quantile of lognormal peaks: mean per-job slack {floor:.4f}")

m, first, out = figures("example", example)
out2, _ = run("again", example)
for f in ("events.jsonl", "summary.json", "operations.csv"):
    require(open(f"{out}/{f}", "rb").read() == open(f"{out2}/{f}", "rb").read(), f"{f} differs")
require(0 < m["relative_slack"] < 0.30, f"slack {m['relative_slack']}")
require(abs(m["mean_job_relative_slack"] - floor) < 0.03,
      f"mean per-job slack {m['mean_job_relative_slack']} vs the model's {floor}")
require(m["overdraft_abort_share"] <= 0.01, f"overdraft share {m['overdraft_abort_share']}")
met = int(m["relative_slack"] <= 0.25)

for seed in range(1, 6):
    sc = copy.deepcopy(example)
    sc["seed"] = seed
    ms, _, _ = figures(f"seed{seed}", sc)
    require(0 < ms["relative_slack"] < 0.30, f"seed {seed}: slack {ms['relative_slack']}")
    require(ms["overdraft_abort_share"] <= 0.01, f"seed {seed}: overdraft {ms['overdraft_abort_share']}")
    met += ms["relative_slack"] <= 0.25
print(f"aim slack <= 25%: met on {met} of 6 seeds; overdraft <= 1%: met on 6 of 6")

sc = copy.deepcopy(example)
for o in sc["operations"]:
    o["spec"]["user_job_memory_digest_default_value"] = 1.0
m1, first1, _ = figures("default_1.0", sc)
require(first1 == 0, f"first-wave overdrafts with default 1.0: {first1}")
require(m1["relative_slack"] > m["relative_slack"], "a full first wave costs slack")
print("sim_memory_slack: ok")
PY
