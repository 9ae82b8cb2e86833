#!/usr/bin/env bash
# The Alibaba GPU trace (cluster-trace-gpu-v2023, in examples/alibaba/data) through the
# simulator, loaded: submit times compressed, run times kept.
#
#   examples/alibaba/run.sh [--pods default|gpuspec33] [--compress C] [--window MIN]
#                           [--limit N] [--bin BINARY] [--trace DIR] [--out DIR]
#
# 1. `poolsched trace import alibaba-gpu --compress C` turns the trace into a scenario
#    (docs/alibaba-trace.md): the pods arrive C times closer together (default 30000: the
#    149 days of arrivals in 7.2 minutes; 1 replays the trace as recorded); --limit N takes
#    the first N pods only;
# 2. the loaded window: the scenario stopped after MIN minutes (default 60), pools.csv every
#    10 s; load.py prints how loaded the cluster was (cpu, memory, gpu utilization mean and
#    peak; mean fair share and usage per pool; how often demand exceeded the cluster and fair
#    share held a pool back), and report.html charts it;
# 3. the replay to the end: the scenario's `duration` (which assumes no queueing) is dropped,
#    `poolsched simulate` runs until every operation has finished (pools.csv every simulated
#    hour; a few pods run for months), and account.py checks that every job of the trace
#    finished exactly once, restarts (resource_overdraft, preemption) counted separately.
# Outputs in examples/alibaba/out-<pods>/ (the replay to the end) and .../window/ (the loaded
# window, its report.html). Needs python3. Exit 1 when a job is not accounted for.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pods=default
compress=30000
window=60
limit=""
bin="$root/build/poolsched"
trace="$here/data"
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --pods) pods=$2; shift 2 ;;
        --compress) compress=$2; shift 2 ;;
        --window) window=$2; shift 2 ;;
        --limit) limit=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --trace) trace=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
        *) echo "error: run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
case "$window" in
    ''|*[!0-9]*|0) echo "error: run.sh: --window: a positive number of minutes, got '$window'" >&2; exit 2 ;;
esac
out=${out:-$here/out-$pods}
mkdir -p "$out/window"

echo "== import ($pods, --compress $compress${limit:+, --limit $limit})"
"$bin" trace import alibaba-gpu "$trace" --pods "$pods" --compress "$compress" ${limit:+--limit "$limit"} \
    --output "$out/scenario.json" 2> "$out/import.log" || { cat "$out/import.log" >&2; exit 1; }
grep -E "^  (nodes|pods|trace end):" "$out/import.log" || true
# scenario.json runs to the end; window/scenario.json stops after the window.
python3 - "$out/scenario.json" "$out/window/scenario.json" "$window" <<'PY'
import json, sys
path, window_path, minutes = sys.argv[1], sys.argv[2], int(sys.argv[3])
s = json.load(open(path))
s.pop("duration", None)
json.dump(s, open(path, "w"))
s["duration"] = minutes * 60000
json.dump(s, open(window_path, "w"))
PY

echo "== the loaded window: the first $window minutes"
"$bin" simulate "$out/window/scenario.json" --output "$out/window" --pools-period 10000 \
    2> "$out/window/simulate.log" || { cat "$out/window/simulate.log" >&2; exit 1; }
python3 "$here/load.py" "$out/window/scenario.json" "$out/window"
echo "report               $out/window/report.html"

echo "== replay to the end"
start=$(date +%s.%N)
"$bin" simulate "$out/scenario.json" --output "$out" --pools-period 3600000 \
    2> "$out/simulate.log" || { cat "$out/simulate.log" >&2; exit 1; }
end=$(date +%s.%N)
python3 - "$out" "$start" "$end" <<'PY'
import json, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
s = json.load(open(f"{out}/summary.json"))
w = s["job_wait_time"]
print(f"wall time            {end - start:.1f} s")
print(f"simulated            {s['simulated_time'] / 86400000:.1f} days ({s['end']})")
print(f"job wait (ms)        p50 {w.get('p50')}, p95 {w.get('p95')}, max {w.get('max')}, mean {w.get('mean', 0):.0f}")
print(f"scheduler            {s['scheduler']}")
reasons = {k: v for k, v in s["pending_reason_time"].items() if v}
print(f"pending time (op*ms) {reasons}")
print("mean fair share      " + ", ".join(f"{p['pool']} {p['mean_fair_share_ratio']:.4f}" for p in s["pools"])
      + " (over the whole replay)")
PY
# Its exit status is the script's: 1 when a job is not accounted for.
python3 "$here/account.py" "$out/scenario.json" "$out"
