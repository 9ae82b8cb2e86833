#!/usr/bin/env bash
# Smoke test of `poolsched bench schedule` and `poolsched bench simulate` on tiny workloads: the
# shape of the JSON report, consistent counts, exit codes. No timing assertions (timings belong
# in docs/performance.md). Usage: bash bench_sim_smoke.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
sh_test "$@"

"$bin" bench --help | grep -q '^  schedule ' || fail "bench --help does not list schedule"
"$bin" bench --help | grep -q '^  simulate ' || fail "bench --help does not list simulate"

"$bin" bench schedule --nodes 200 --operations 50 --pools 20 --rounds 2 > "$work/s.json" || fail "bench schedule"
check_json "$work/s.json" \
  'r["benchmark"] == "schedule"' \
  'r["fill"]["heartbeats"] == 200 and r["steady"]["heartbeats"] == 400' \
  'r["fill"]["allocations"] > 200 and r["steady"]["allocations"] > 0' \
  'r["fill"]["heartbeats_per_s"] > 0 and r["steady"]["allocations_per_s"] > 0' \
  '"meets_heartbeat_target" not in r["steady"]' \
  'r["running_allocations_at_end"] > 0'

"$bin" bench simulate --nodes 20 --operations 30 --jobs 300 --keep "$work/sim" > "$work/m.json" || fail "bench simulate"
check_json "$work/m.json" \
  'r["benchmark"] == "simulate" and r["meets_target"] is None' \
  'r["workload"]["jobs"] == 300' \
  'r["simulation"]["job_starts"] == r["simulation"]["jobs_completed"] + r["simulation"]["jobs_running_at_end"] + r["simulation"]["jobs_aborted"]' \
  'r["simulation"]["operations_completed"] + r["simulation"]["operations_running"] + r["simulation"]["operations_pending"] == 30' \
  'all(v > 0 for v in r["output_bytes"].values())'
# The kept scenario replays to the same outputs with the command itself.
"$bin" simulate "$work/sim/scenario.json" --output "$work/again" 2> /dev/null || fail "simulate the kept scenario"
for f in events.jsonl pools.csv operations.csv summary.json; do
  cmp -s "$work/sim/$f" "$work/again/$f" || fail "$f of the bench differs from simulate's"
done
# --backlog: the two days alternated in one process; the ratio is their medians', and each day
# simulates what a run of it on its own does.
"$bin" bench simulate --backlog 3 --backlog-nodes 20,60 --operations 30 --jobs 300 > "$work/b.json" \
  || fail "bench simulate --backlog"
"$bin" bench simulate --nodes 60 --operations 30 --jobs 300 > "$work/m60.json" || fail "bench simulate --nodes 60"
python3 - "$work/b.json" "$work/m.json" "$work/m60.json" <<'EOF' || fail "the --backlog report"
import json, statistics, sys
b, small, large = (json.load(open(p)) for p in sys.argv[1:])
assert b["benchmark"] == "simulate" and b["mode"] == "backlog" and b["runs"] == 3, b
days = b["days"]
assert [d["workload"]["nodes"] for d in days] == [20, 60], days
for d in days:
    assert len(d["cpu_s"]) == 3 and d["cpu_s_median"] == statistics.median(d["cpu_s"]), d
assert days[0]["simulation"] == small["simulation"], (days[0]["simulation"], small["simulation"])
assert days[1]["simulation"] == large["simulation"], (days[1]["simulation"], large["simulation"])
ratio = days[0]["cpu_s_median"] / days[1]["cpu_s_median"]
assert abs(b["ratio"] - ratio) <= 1e-5 * ratio, (b["ratio"], ratio)   # printed to 6 digits
assert b["goal_ratio"] == 2.0 and b["meets_goal"] == (ratio <= 2.0), b
EOF
set +e
"$bin" bench simulate --jobs 5 --operations 10 > /dev/null 2> "$work/err"; rc=$?
"$bin" bench simulate --backlog 1 --nodes 300 > /dev/null 2> "$work/err2"; rc2=$?
"$bin" bench simulate --backlog 1 --backlog-nodes 20 > /dev/null 2> "$work/err3"; rc3=$?
set -e
[ $rc -eq 2 ] || fail "--jobs below --operations exits $rc, want 2"
grep -q "^error: bench simulate: --jobs 5" "$work/err" || fail "message: $(cat "$work/err")"
[ $rc2 -eq 2 ] && grep -q "^error: bench simulate: --backlog: --nodes does not apply" "$work/err2" \
  || fail "--backlog with --nodes: exit $rc2, $(cat "$work/err2")"
[ $rc3 -eq 2 ] && grep -q "^error: bench simulate: --backlog-nodes '20': two node counts" "$work/err3" \
  || fail "--backlog-nodes 20: exit $rc3, $(cat "$work/err3")"
echo "bench_sim_smoke: ok"
