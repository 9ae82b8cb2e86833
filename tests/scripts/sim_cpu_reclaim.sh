#!/usr/bin/env bash
# Scenario tests of the job CPU monitor in `poolsched simulate` (docs/simulate-resources.md):
#   1. reclaim on: a job using 0.5 of its 2 cores sees job_cpu_limit_changed events stepping
#      2 -> 1.94 -> 1.8818 -> ... -> 1 (min_cpu_limit), at the ticks a replay of semantics.md
#      4.2 gives (the first at the 12th tick, as in tests/data/vectors/job-cpu-monitor.json), and a
#      competing operation on the node gets the freed cores: 3 -> 5 running jobs of 0.5 core
#      (4 cores: the job's 2 + 3 x 0.5 leave 0.5 free, below min_spare_allocation_resources'
#      1 core; each job of b starts at the first heartbeat after the guarantee freed a core);
#      the job's statistics show smoothed ~50 and preemptible 100 (x100);
#   2. reclaim off: no event, the competitor stays at 3 jobs, the dry-run statistics still
#      show the soft limit moved (preemptible 100, aggregated_preempted 0);
#   3. no job_cpu_monitor section: no ticks, no CPU monitor statistics;
#   4. a bad key or value in job_cpu_monitor: exit 2 naming job_cpu_monitor/<key>.
# Usage: sim_cpu_reclaim.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: sim_cpu_reclaim.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" "$2" <<'PY'
import json, math, sys
from simlib import *
init(sys.argv)
vector = json.load(open(sys.argv[3] + "/vectors/job-cpu-monitor.json"))

def replay(usage, hard, ticks, cfg):
    """semantics.md 4.2 with the default config: (tick, old, new) of every decision."""
    soft, lo, smoothed, votes, out = hard, min(hard, cfg["min_cpu_limit"]), None, [], []
    for k in range(1, ticks + 1):
        smoothed = hard if smoothed is None else cfg["smoothing_factor"] * usage + (1 - cfg["smoothing_factor"]) * smoothed
        r = smoothed / soft
        votes.append(-1 if r < cfg["relative_lower_bound"] else 1 if r > cfg["relative_upper_bound"] else 0)
        if len(votes) >= cfg["vote_window_size"]:
            s, new = sum(votes), None
            if s > cfg["vote_decision_threshold"]:
                new = min(soft * cfg["increase_coefficient"], hard); votes = []
            elif s < -cfg["vote_decision_threshold"]:
                new = max(soft * cfg["decrease_coefficient"], lo); votes = []
            else:
                votes.pop(0)
            if new is not None and new != soft:
                out.append((k, soft, new)); soft = new
    return out

cfg = vector["config"]
expected = replay(0.5, 2.0, 160, cfg)
vec_first = next(t["tick"] for t in vector["trace"] if t["soft_limit"] != vector["cpu_limit"])
require(expected[0][0] == vec_first == 12, f"first decision at tick {expected[0][0]}, vector {vec_first}")
require([n for _, _, n in expected[:2]] == [1.94, 1.8818], f"first steps {expected[:2]}")
require(expected[-1][2] == 1.0 and len(expected) == 23, f"floor: {expected[-1]}, {len(expected)} steps")
for t in vector["trace"]:   # the replay is the vector's
    if t["tick"] > 0:
        soft = 2.0
        for k, _, n in expected:
            if k <= t["tick"]:
                soft = n
        require(soft == t["soft_limit"], f"tick {t['tick']}: replay {soft}, vector {t['soft_limit']}")

def cpu_scenario(monitor):
    a = op("a", 0, jobs=1, duration=150000, cpu=2, memory=0)
    a["tasks"][0]["cpu_usage"] = [[0, 0.5]]
    if monitor is not None:
        a["spec"]["job_cpu_monitor"] = monitor
    b = op("b", 1, jobs=20, duration=1000000, cpu=0.5, memory=0)
    return scenario([nodes("n", 1, cpu=4, slots=100)], {"physical": {}}, [a, b],
                    duration=200000, heartbeat=1000)

# 1. reclaim on
r = load(run("on", cpu_scenario({"enable_cpu_reclaim": True}))[0])
ch = r.of_type("job_cpu_limit_changed")
start = r.first_start("a")
require(all(e["job_id"] == "a/0/0/0" for e in ch), "changes of another job")
got = [(e["time"] - start, e["old_cpu_limit"], e["new_cpu_limit"]) for e in ch]
want = [(k * 1000, o, n) for k, o, n in expected]
require(got == want, f"job_cpu_limit_changed:\n got  {got[:4]}...\n want {want[:4]}...")
require([e["cpu_usage"] for e in ch] == [math.ceil(round(n * 100, 6)) / 100 for _, _, n in expected],
      "counted cpu is the guarantee rounded up to hundredths")
last = ch[-1]["time"]
before, after = r.running_at(start + 11000), r.running_at(start + 149000)
require(before == {"a": 1, "b": 3}, f"before reclaim: {before}")
require(after == {"a": 1, "b": 5}, f"after reclaim: {after}")
# b's 4th job: once a counts <= 1.5 cores (4 - 1.5 of b leaves 1 = min_spare); its 5th: at 1.
starts = [e["time"] - start for e in r.of_type("job_started") if e["operation_id"] == "b"]
t4 = next(k for k, _, n in expected if math.ceil(round(n * 100, 6)) <= 150) * 1000
t5 = expected[-1][0] * 1000
require(t4 <= starts[3] <= t4 + 1000 and t5 <= starts[4] <= t5 + 1000,
      f"b's starts {starts[3:5]}, guarantee freed a core at {t4}, {t5}")
done = [e for e in r.of_type("job_completed") if e["operation_id"] == "a"][0]["statistics"]
require(done["job_proxy/preemptible_cpu_x100"] == 100 and done["job_proxy/preemptable_cpu_x100"] == 100,
      f"preemptible {done}")
require(50 <= done["job_proxy/smoothed_cpu_usage_x100"] <= 51, f"smoothed {done}")
require(done["job_proxy/aggregated_preempted_cpu_x100"] == done["job_proxy/aggregated_preemptible_cpu_x100"] > 0,
      "aggregated preempted = preemptible with reclaim")
require(done["user_job/cpu/user"] == 75000, f"cpu time {done['user_job/cpu/user']}")
cm = r.summary["cpu_monitor"]
require(cm["jobs_monitored"] == 1 and cm["cpu_limit_changes"] == 23 and cm["ticks"] == 150, f"summary {cm}")
print(f"reclaim on: {len(ch)} changes 2 -> {ch[0]['new_cpu_limit']} -> {ch[1]['new_cpu_limit']} -> ... -> "
      f"{ch[-1]['new_cpu_limit']} (ticks {expected[0][0]}..{expected[-1][0]}); competitor {before['b']} -> {after['b']} jobs")

# 2. reclaim off (dry run)
r = load(run("off", cpu_scenario({"enable_cpu_reclaim": False}))[0])
require(r.of_type("job_cpu_limit_changed") == [], "no changes with reclaim off")
after = r.running_at(start + 149000)
require(after == {"a": 1, "b": 3}, f"reclaim off: {after}")
done = [e for e in r.of_type("job_completed") if e["operation_id"] == "a"][0]["statistics"]
require(done["job_proxy/preemptible_cpu_x100"] == 100 and done["job_proxy/aggregated_preempted_cpu_x100"] == 0,
      f"dry run {done}")
print(f"reclaim off: no changes; competitor stays at {after['b']} jobs; dry-run preemptible_cpu_x100 100")

# 3. no section: nothing
r = load(run("none", cpu_scenario(None))[0])
done = [e for e in r.of_type("job_completed") if e["operation_id"] == "a"][0]["statistics"]
require(not any(k.startswith("job_proxy/") and "cpu" in k for k in done), f"stats without monitor {done}")
require(r.summary["cpu_monitor"]["ticks"] == 0, "ticks without a monitor")

# 4. bad values refuse the scenario; a misspelled key is not an error (as upstream) but shows
#    in operation_started's unrecognized_spec, as in the service's alert
for monitor, text in [({"smoothing_factor": 2}, "job_cpu_monitor/smoothing_factor: "),
                      ({"enable_cpu_reclaim": 1}, "job_cpu_monitor/enable_cpu_reclaim: must be a boolean"),
                      ({"vote_window_size": 3}, "vote_decision_threshold is 3 but must be in [0, vote_window_size = 3)")]:
    _, err = run("bad", cpu_scenario(monitor), expect_rc=2)
    require("operations[0].spec: " in err and text in err, f"error for {monitor}: {err}")
r = load(run("typo", cpu_scenario({"check_perod": 10}))[0])
started = [e for e in r.of_type("operation_started") if e["operation_id"] == "a"][0]
require(started.get("unrecognized_spec") == {"job_cpu_monitor": {"check_perod": 10}},
      f"unrecognized job_cpu_monitor key: {started}")
print("sim_cpu_reclaim: ok")
PY
