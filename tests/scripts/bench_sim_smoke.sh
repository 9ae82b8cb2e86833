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
set +e
"$bin" bench simulate --jobs 5 --operations 10 > /dev/null 2> "$work/err"; rc=$?
set -e
[ $rc -eq 2 ] || fail "--jobs below --operations exits $rc, want 2"
grep -q "^error: bench simulate: --jobs 5" "$work/err" || fail "message: $(cat "$work/err")"
echo "bench_sim_smoke: ok"
