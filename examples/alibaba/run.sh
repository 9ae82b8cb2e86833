#!/usr/bin/env bash
# The whole Alibaba GPU trace (cluster-trace-gpu-v2023) through the simulator.
#
#   examples/alibaba/run.sh [--pods default|gpuspec33] [--bin BINARY] [--trace DIR] [--out DIR]
#
# 1. `poolsched trace import alibaba-gpu` turns the trace into a scenario (docs/alibaba-trace.md);
# 2. the scenario's `duration` (the trace end, which assumes no queueing) is dropped, so the
#    simulation runs until every operation has finished;
# 3. `poolsched simulate` replays it with pools.csv sampled every simulated hour (149 days at
#    one row per pool per second would be 6 GB);
# 4. the headline numbers of summary.json are printed, and every job is checked to be
#    accounted for (as many job starts as completions, one completed row per operation).
# Defaults: build/poolsched, ../shared/data/alibaba-gpu-2023 (or $PS_SHARED_DIR/data/...),
# output in examples/alibaba/out-<pods>. Needs python3 for steps 2 and 4.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
pods=default
bin="$root/build/poolsched"
trace="${PS_SHARED_DIR:-$root/../shared}/data/alibaba-gpu-2023"
out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --pods) pods=$2; shift 2 ;;
        --bin) bin=$2; shift 2 ;;
        --trace) trace=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
        *) echo "error: run.sh: unknown argument '$1'" >&2; exit 2 ;;
    esac
done
out=${out:-$here/out-$pods}
mkdir -p "$out"

echo "== import ($pods)"
"$bin" trace import alibaba-gpu "$trace" --pods "$pods" --output "$out/scenario.json" 2> "$out/import.log"
grep -E "^  (nodes|pods|trace end):" "$out/import.log" || true
python3 - "$out/scenario.json" <<'PY'
import json, sys
path = sys.argv[1]
s = json.load(open(path))
s.pop("duration", None)
json.dump(s, open(path, "w"))
PY

echo "== simulate"
start=$(date +%s.%N)
"$bin" simulate "$out/scenario.json" --output "$out" --pools-period 3600000
end=$(date +%s.%N)
python3 - "$out" "$start" "$end" <<'PY'
import csv, json, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
s = json.load(open(f"{out}/summary.json"))
rows = list(csv.DictReader(open(f"{out}/operations.csv")))
sc = json.load(open(f"{out}/scenario.json"))
jobs = sum(t["job_count"] for o in sc["operations"] for t in o["tasks"])
j, w = s["jobs"], s["job_wait_time"]
print(f"wall time            {end - start:.1f} s")
print(f"simulated            {s['simulated_time'] / 86400000:.1f} days ({s['end']})")
print(f"operations           {s['operations']}")
print(f"jobs                 {jobs} in the scenario; started {j['started']}, completed {j['completed']}, "
      f"running {j['running']}, pending {j['pending']}")
print(f"job wait (ms)        p50 {w.get('p50')}, p95 {w.get('p95')}, max {w.get('max')}, mean {w.get('mean', 0):.0f}")
print(f"scheduler            {s['scheduler']}")
reasons = {k: v for k, v in s["pending_reason_time"].items() if v}
print(f"pending time (op*ms) {reasons}")
for p in s["pools"]:
    print(f"pool {p['pool']:<11} delay {p['aggregated_delay']:10.1f} share*s, underserved "
          f"{p['underserved_periods']:5d} periods / {p['underserved_time'] / 1000:9.0f} s "
          f"(longest {p['longest_underserved_period'] / 1000:7.0f} s, "
          f"{p['underserved_periods_over_starvation_timeout']} over the starvation timeout), "
          f"mean fair share {p['mean_fair_share_ratio']:.4f}, usage {p['mean_usage_ratio']:.4f}")
ok = (len(rows) == len(sc["operations"]) and all(r["operation_state"] == "completed" for r in rows)
      and j["started"] == j["completed"] == jobs and j["running"] == j["pending"] == 0)
print("every job accounted for: " + ("yes" if ok else "NO"))
sys.exit(0 if ok else 1)
PY
