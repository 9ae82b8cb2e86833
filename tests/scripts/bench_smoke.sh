#!/usr/bin/env bash
# Smoke test of `poolsched bench`: tiny workloads, checks the shape of the JSON report and the
# exit codes. No timing assertions: timings belong in benchmarks (docs/performance.md), not tests.
# Usage: bash bench_smoke.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
sh_test "$@"

# The listing and the usage errors.
"$bin" bench --help > "$work/help" || fail "bench --help exits non-zero"
grep -q '^  fair-share ' "$work/help" || fail "bench --help does not list fair-share"
set +e
"$bin" bench > /dev/null 2> "$work/err"; rc=$?
[ $rc -eq 2 ] || fail "bench without a benchmark exits $rc, want 2"
grep -q 'fair-share' "$work/err" || fail "bench without a benchmark does not list the benchmarks"
"$bin" bench no-such-bench > /dev/null 2> "$work/err"; rc=$?
[ $rc -eq 2 ] || fail "unknown benchmark exits $rc, want 2"
grep -q "^error: bench: unknown benchmark 'no-such-bench'" "$work/err" || fail "unknown benchmark message: $(cat "$work/err")"
"$bin" bench fair-share --pools two > /dev/null 2> "$work/err"; rc=$?
[ $rc -eq 2 ] || fail "--pools two exits $rc, want 2"
grep -q "^error: bench fair-share: --pools: 'two' is not an integer" "$work/err" || fail "bad --pools message: $(cat "$work/err")"
"$bin" bench fair-share --pools 2 > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--pools 2 exits $rc, want 2"
"$bin" bench fair-share --runs > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--runs without a value exits $rc, want 2"
"$bin" bench fair-share --frobnicate > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "an unknown option exits $rc, want 2"
"$bin" bench fair-share --isa sse9 > /dev/null 2> "$work/err"; rc=$?
[ $rc -eq 2 ] || fail "--isa sse9 exits $rc, want 2"
grep -q "^error: bench fair-share: --isa: 'sse9' is not one of base, avx2, avx512" "$work/err" \
  || fail "bad --isa message: $(cat "$work/err")"
"$bin" bench fair-share --isa > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || fail "--isa without a value exits $rc, want 2"
set -e
"$bin" bench fair-share --help | grep -q -- '--large' || fail "bench fair-share --help does not describe --large"

# A tiny custom workload: every key of the report, sane values, no target.
"$bin" bench fair-share --pools 20 --operations 200 --runs 3 --seed 7 > "$work/a.json" \
  || fail "bench fair-share (tiny) exits non-zero"
check_json "$work/a.json" \
  'r["benchmark"] == "fair-share"' \
  'r["workload"]["name"] == "custom"' \
  'r["workload"]["pools"] == 20 and r["workload"]["operations"] == 200' \
  'r["workload"]["elements"] == 221 and r["workload"]["levels"] == 3' \
  'sum(r["workload"]["pools_per_level"]) == 20' \
  'r["workload"]["seed"] == 7 and r["workload"]["resources"] == 5' \
  'r["workload"]["strong_guarantee_pools"] >= 2' \
  'r["workload"]["burst_pools"] >= 1 and r["workload"]["relaxed_pools"] >= 1' \
  'all(0 < v <= 0.96 for k, v in r["workload"]["usage_ratio"].items() if k in ("cpu", "memory"))' \
  'r["runs"] == 3 and r["warmup_runs"] == 1' \
  'r["median_ms"] > 0 and r["min_ms"] <= r["median_ms"] <= r["p99_ms"] <= r["max_ms"]' \
  'r["p99_ms"] == r["max_ms"]' \
  'r["per_element_ns"] > 0 and r["first_run_ms"] > 0 and r["build_ms"] >= 0' \
  'r["target_ms"] is None and r["meets_target"] is None' \
  'r["cpu_ms"]["median"] > 0 and r["cpu_per_element_ns"] > 0' \
  'r["memory"]["element_bytes"] > 0 and r["memory"]["elements_bytes"] == 221 * r["memory"]["element_bytes"]' \
  'r["memory"]["peak_rss_bytes"] is None or r["memory"]["peak_rss_bytes"] > 0' \
  '0 <= r["memory"]["runs_with_heap_growth"] <= 3' \
  'isinstance(r["alerts"], int) and isinstance(r["alert_examples"], list)' \
  'len(r["checksum"]) == 16' \
  '"scaling" not in r'

# The same seed builds the same tree and the engine is deterministic: same fair shares.
"$bin" bench fair-share --pools 20 --operations 200 --runs 1 --seed 7 > "$work/b.json"
"$bin" bench fair-share --pools 20 --operations 200 --runs 1 --seed 8 > "$work/c.json"
python3 - "$work/a.json" "$work/b.json" "$work/c.json" <<'PY' || fail "checksums do not follow the seed"
import json, sys
a, b, c = (json.load(open(p)) for p in sys.argv[1:])
# a ran 3 timed updates and b one: integral volumes differ, but the tree is the same.
assert a["workload"] == b["workload"], "same seed, different workload"
assert b["checksum"] != c["checksum"], "different seeds, same fair shares"
assert b["workload"] != c["workload"], "different seeds, same workload"
PY
"$bin" bench fair-share --pools 20 --operations 200 --runs 1 --seed 7 > "$work/d.json"
cmp -s <(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["checksum"])' "$work/b.json") \
       <(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["checksum"])' "$work/d.json") \
  || fail "two identical runs give different fair shares"

# The scaling check runs n, 2n and 4n.
"$bin" bench fair-share --pools 10 --operations 50 --runs 1 --scaling > "$work/s.json" \
  || fail "bench fair-share --scaling exits non-zero"
check_json "$work/s.json" \
  '[s["pools"] for s in r["scaling"]["sizes"]] == [10, 20, 40]' \
  '[s["operations"] for s in r["scaling"]["sizes"]] == [50, 100, 200]' \
  'all(s["per_element_ns"] > 0 and s["cpu_per_element_ns"] > 0 for s in r["scaling"]["sizes"])' \
  'all("per_element_growth" in s and s["nlogn_growth"] > 1 for s in r["scaling"]["sizes"][1:])' \
  'isinstance(r["scaling"]["grows_no_faster_than_nlogn"], bool)'

# The default workload carries its target (one timed run only: this is not a measurement).
"$bin" bench fair-share --runs 1 > "$work/n.json" || fail "bench fair-share (default) exits non-zero"
check_json "$work/n.json" \
  'r["workload"]["name"] == "normal" and r["workload"]["pools"] == 1000' \
  'r["workload"]["operations"] == 10000 and r["workload"]["pools_per_level"] == [10, 100, 890]' \
  'r["target_ms"] == 20 and isinstance(r["meets_target"], bool)' \
  '90 <= r["workload"]["strong_guarantee_pools"] <= 110' \
  'r["workload"]["burst_pools"] == 50 and r["workload"]["relaxed_pools"] == 50' \
  'r["workload"]["fifo_pools"] > 0 and r["workload"]["gang_operations"] > 0' \
  'r["workload"]["idle_pools"] > 0 and r["workload"]["saturated_pools"] > 0' \
  'r["workload"]["strong_guarantee_cpu_ratio"] + r["workload"]["burst_guarantee_cpu_ratio"] <= 1'

# bench http's heartbeats with --job-statistics: the running jobs' CPU statistics reach the
# root's job metrics (and nothing does without the option).
"$bin" bench http --nodes 20 --clients 2 --seconds 1 --job-statistics > "$work/h0.json" \
  || fail "bench http --job-statistics exits non-zero"
check_json "$work/h0.json" \
  'r["job_statistics"] is True and r["errors"] == 0 and r["heartbeats"] > 0' \
  'r["running_jobs_at_start"] == 80 and r["root_aggregated_smoothed_cpu_usage_x100"] > 0'
"$bin" bench http --nodes 20 --clients 2 --seconds 1 > "$work/h0.json" \
  || fail "bench http exits non-zero"
check_json "$work/h0.json" \
  'r["job_statistics"] is False and r["root_aggregated_smoothed_cpu_usage_x100"] == 0'

# bench http's start-op and combined modes on a tiny scale: the report's shape, the paced
# rates (every heartbeat and API request due before the deadline is sent), jobs finishing.
"$bin" bench http --mode start-op --seconds 1 --clients 2 --pools 200 > "$work/h1.json" \
  || fail "bench http --mode start-op exits non-zero"
check_json "$work/h1.json" \
  'r["mode"] == "start-op" and r["pools"] == 200' \
  'all(r[k]["operations"] > 0 and r[k]["errors"] == 0 for k in ("concurrent_clients", "one_client_kept_alive"))' \
  'r["concurrent_clients"]["clients"] == 2 and r["one_client_kept_alive"]["clients"] == 1' \
  'all(1 <= r[k]["commits"] <= r[k]["operations"] + 5 for k in ("concurrent_clients", "one_client_kept_alive"))' \
  'r["concurrent_clients"]["latency"]["count"] == r["concurrent_clients"]["operations"]'
"$bin" bench http --mode combined --nodes 20 --heartbeat-period-ms 500 --operations 10 --pools 2 \
  --churn 20 --seconds 2 --reads 5 --writes 3 --clients 4 > "$work/h2.json" \
  || fail "bench http --mode combined exits non-zero"
check_json "$work/h2.json" \
  'r["mode"] == "combined" and r["errors"] == 0 and r["operations"] == 11' \
  'r["heartbeat"]["count"] == 20 * 4 and r["heartbeat_send_late"]["count"] == 80' \
  'r["heartbeat_with_finished_jobs"]["count"] + r["heartbeat_without_finished_jobs"]["count"] == 80' \
  'r["heartbeat_with_finished_jobs"]["count"] > 0' \
  'r["requested"]["heartbeats_per_second"] == 40' \
  'r["api_read"]["count"] == 10 and r["api_write"]["count"] == 6' \
  'r["achieved"]["jobs_per_second"] > 0 and r["running_jobs_at_start"] == 80' \
  'r["update"]["count"] > 0 and r["update"]["mean_ms"] > 0' \
  '0 < r["load_generator_cpu_percent"] and 0 < r["process_cpu_percent"]'
set +e
"$bin" bench http --mode bogus > /dev/null 2> "$work/err"; rc=$?
set -e
[ $rc -eq 2 ] || fail "bench http --mode bogus exits $rc, want 2"
grep -q "^error: bench http: --mode: unknown mode 'bogus'" "$work/err" || fail "bad --mode message: $(cat "$work/err")"
set +e
"$bin" bench http --mode start-op --job-statistics > /dev/null 2> "$work/err"; rc=$?
set -e
[ $rc -eq 2 ] || fail "bench http --mode start-op --job-statistics exits $rc, want 2"
grep -q "^error: bench http: --mode start-op: unknown option '--job-statistics'" "$work/err" \
  || fail "bad --job-statistics message: $(cat "$work/err")"

# That every vector level gives the same bits is fair_share_isa_levels.sh's.
echo "bench smoke: ok"
