#!/usr/bin/env bash
# Slices of the Alibaba GPU trace (examples/alibaba/data) through the simulator, and the
# example's accounting check (examples/alibaba/account.py) held to account itself.
#
# 1. The first 400 pods of both lists, imported and simulated until every operation has
#    finished; account.py must find every job finished exactly once. Jobs peak at their memory
#    request (no max_memory in the trace) while the memory digest starts at half of it, so some
#    attempts are aborted for resource_overdraft on full nodes and retried: the slices must have
#    such restarts (the check used to count them as missing jobs). Every job of a pod with a
#    gpu_spec runs on a node of an allowed model.
# 2. examples/alibaba/run.sh itself on a compressed slice: it prints the load of the window
#    and "every job accounted for: yes".
# 3. account.py on broken copies of the outputs must say NO: restarted attempts dropped, a job
#    finished twice, a restart never retried, an operation missing from operations.csv, the
#    summary's count of attempts off by one.
# The whole trace is examples/alibaba/run.sh. Usage: sim_alibaba.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
sh_test "$@"
trace="$src/examples/alibaba/data"
account="$src/examples/alibaba/account.py"
[ -f "$trace/openb_pod_list_default.csv" ] || fail "no trace in $trace"

# 1. Two slices.
for pods in default gpuspec33; do
    "$bin" trace import alibaba-gpu "$trace" --pods $pods --limit 400 --output "$work/$pods.json" 2> /dev/null \
        || fail "import $pods"
    python3 - "$work/$pods.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
del s["duration"]
json.dump(s, open(sys.argv[1], "w"))
PY
    "$bin" simulate "$work/$pods.json" --output "$work/$pods" --pools-period 3600000 2> /dev/null \
        || fail "simulate $pods"
    python3 "$account" "$work/$pods.json" "$work/$pods" > "$work/$pods.account" \
        || { cat "$work/$pods.account"; fail "$pods: account.py"; }
    grep -q "^jobs  *400 in the scenario, 400 finished exactly once$" "$work/$pods.account" \
        || { cat "$work/$pods.account"; fail "$pods: not 400 jobs"; }
    grep -qE "^restarts +[1-9][0-9]* \(aborted: resource_overdraft [1-9]" "$work/$pods.account" \
        || { cat "$work/$pods.account"; fail "$pods: no restart to account for"; }
    python3 - "$work/$pods.json" "$work/$pods" <<'PY'
import json, sys
sc = json.load(open(sys.argv[1]))
out = sys.argv[2]
filters = {o["id"]: o["spec"].get("scheduling_tag_filter") for o in sc["operations"]}
groups = {g["name"]: g["tags"] for g in sc["node_groups"]}
for line in open(f"{out}/events.jsonl"):
    e = json.loads(line)
    if e["event_type"] == "job_started" and filters[e["operation_id"]]:
        tag = groups[e["node_id"].rsplit("-", 1)[0]][0]
        if tag not in filters[e["operation_id"]].split("|"):
            sys.exit(f"FAIL: job of {e['operation_id']} ({filters[e['operation_id']]}) on a {tag} node")
PY
done
grep -q "scheduling_tag_filter" "$work/gpuspec33.json" || fail "the gpuspec33 slice has no gpu_spec to check"

# 2. The example on a compressed slice (the first 1000 pods arrive within 11 minutes).
bash "$src/examples/alibaba/run.sh" --bin "$bin" --limit 1000 --compress 30000 --window 20 \
    --out "$work/example" > "$work/example.log" 2>&1 || { cat "$work/example.log"; fail "run.sh"; }
for want in "^gpu utilization +mean +[0-9.]+%, peak +[0-9.]+% at" "^pool ls +mean fair share 0\.[0-9]+" \
        "^report +.*/window/report.html$" "^jobs +1000 in the scenario, 1000 finished exactly once$" \
        "^every job accounted for: yes$"; do
    grep -qE "$want" "$work/example.log" || { cat "$work/example.log"; fail "run.sh printed no '$want'"; }
done
[ -s "$work/example/window/report.html" ] || fail "run.sh wrote no window/report.html"

# 3. Broken outputs. Each copy of the default slice's outputs gets one break.
break_copy() {   # NAME PYTHON: copy the outputs to $work/NAME, run PYTHON there, expect NO
    local name=$1 code=$2
    cp -r "$work/default" "$work/$name"
    (cd "$work/$name" && python3 -c "$code") || fail "break $name"
    if python3 "$account" "$work/default.json" "$work/$name" > "$work/$name.account"; then
        cat "$work/$name.account"; fail "account.py accepted outputs with $name"
    fi
    grep -q "^every job accounted for: NO$" "$work/$name.account" || fail "$name: no NO"
}
EVENTS='import json
lines = open("events.jsonl").read().splitlines()
ev = [json.loads(l) for l in lines]
def write(keep):
    open("events.jsonl", "w").write("".join(l + "\n" for l, e in zip(lines, ev) if keep(e)))
'
# every attempt after the first, and the aborts that caused them: as if no job restarted
break_copy restarts_dropped "$EVENTS
write(lambda e: not (e['event_type'].startswith('job_') and not e['job_id'].endswith('/0'))
      and e['event_type'] != 'job_aborted')"
# only the restarted attempts' starts dropped: their completions have no start
break_copy restart_starts_dropped "$EVENTS
write(lambda e: not (e['event_type'] == 'job_started' and not e['job_id'].endswith('/0')))"
# a completion repeated
break_copy completed_twice "$EVENTS
done = next(l for l, e in zip(lines, ev) if e['event_type'] == 'job_completed')
lines.append(done); ev.append(json.loads(done))
write(lambda e: True)"
# an abort whose job never started again (its later attempts gone, the summary left alone)
break_copy restart_not_retried "$EVENTS
job = next(e['job_id'] for e in ev if e['event_type'] == 'job_aborted').rsplit('/', 1)[0]
write(lambda e: not (e.get('job_id', '').startswith(job + '/') and not e['job_id'].endswith('/0')))"
break_copy operation_row_missing 'rows = open("operations.csv").read().splitlines(True)
open("operations.csv", "w").write("".join(rows[:1] + rows[2:]))'
break_copy summary_started_off 'import json
s = json.load(open("summary.json")); s["jobs"]["started"] -= 1
json.dump(s, open("summary.json", "w"))'
echo "sim_alibaba: ok"
