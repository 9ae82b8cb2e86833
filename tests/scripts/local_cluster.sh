#!/usr/bin/env bash
# `make run` / `make stop` (scripts/local-cluster.sh) on a free port and a temporary run dir:
# the cluster starts, its four example operations run jobs on the right nodes, raise no alert
# and let a newcomer's operation through by preemption, and stop leaves no process behind.
# Usage: local_cluster.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
. "$(dirname "${BASH_SOURCE[0]}")/lib/scheduler_port.sh"
sh_test "$@"
port=$(free_port)
export POOLSCHED_PORT=$port RUN_DIR=$work/run
test_cleanup() { bash "$src/scripts/local-cluster.sh" stop > /dev/null 2>&1; }
fail_context() { for f in "$RUN_DIR"/*.log; do echo "---- $f"; tail -20 "$f"; done; }

out=$(cd "$work" && timeout 60 bash "$src/scripts/local-cluster.sh" start "$bin") || fail "start: $out"
echo "$out" | grep -q "Local cluster running on http://127.0.0.1:$port" || fail "banner: $out"
export POOLSCHED_PROXY=127.0.0.1:$port POOLSCHED_DATA_DIR=$RUN_DIR/data
# the id the start banner shows for an example operation (banner: the first start's by default)
example() { echo "${2:-$out}" | awk -v n="$1" '$1 == n {print $2}'; }
gpu_op=$(example gpu)
[ -n "$gpu_op" ] || fail "no gpu operation id in: $out"

# every example operation gets running jobs; the gpu one only on gpu1, the others never there.
# The operations are submitted before the nodes start, so the first fair share update with
# nodes shares them between all; the wait is generous for a sanitizer build on a busy machine.
ok=0
end=$((SECONDS + 150))
while [ $SECONDS -lt $end ]; do
  json=$("$bin" list-operations --format json)
  if python3 -c '
import json, sys
ops = json.loads(sys.argv[1])["operations"]
sys.exit(0 if len(ops) == 4 and all(o["progress"]["running"] + o["progress"]["completed"] > 0 for o in ops) else 1)
' "$json"; then ok=1; break; fi
  sleep 0.2
done
[ $ok = 1 ] || fail "not every example operation runs jobs: $json"
"$bin" list-jobs "$gpu_op" --format json | python3 -c '
import json, sys
jobs = json.load(sys.stdin)["jobs"]
assert jobs and all(j["node_id"] == "gpu1" for j in jobs), jobs
' || fail "gpu jobs not on gpu1"
for op in $(example prod) $(example burst) $(example relaxed); do
  "$bin" list-jobs "$op" --format json | python3 -c '
import json, sys
jobs = json.load(sys.stdin)["jobs"]
assert all(j["node_id"] in ("node1", "node2") for j in jobs if j.get("node_id")), jobs
' || fail "a physical job ran on gpu1"
done

# The example pools' guarantees fit the tree: no alert (issue 24: they raised one at once).
alerts=$("$bin" get //sys/scheduler/@alerts --format json)
[ "$alerts" = "[]" ] || fail "the example pools raise alerts: $alerts"
# The README's newcomer. Once relaxed's and burst's example batches are done, prod's four jobs
# fill physical (prod's jobs last ten minutes); a newcomer's operation in relaxed starves for
# fair_share_starvation_timeout and preemption takes its first job's core from prod's newest job.
# Two jobs: with one (1 core of demand) relaxed's fair share could not pass 1 core and prod's not
# fall below the 3 cores of its older jobs, so none of prod's jobs would be preemptible
# (scripts/local-cluster.sh says why). The newcomer must get its core from prod, not from a job
# of prod's that ended: prod's jobs last ten minutes.
prod_op=$(example prod)
ok=0
end=$((SECONDS + 240))
while [ $SECONDS -lt $end ]; do
  json=$("$bin" list-operations --format json)
  if python3 -c '
import json, sys
ops = {o["id"]: o for o in json.loads(sys.argv[1])["operations"]}
prod, burst, relaxed = sys.argv[2:]
sys.exit(0 if ops[burst]["state"] == "completed" and ops[relaxed]["state"] == "completed"
         and ops[prod]["progress"]["running"] == 4 else 1)
' "$json" "$prod_op" "$(example burst)" "$(example relaxed)"; then ok=1; break; fi
  sleep 0.5
done
[ $ok = 1 ] || fail "prod's jobs do not fill physical after the example batches: $json"
t0=$SECONDS
timeout 110 "$bin" vanilla --pool relaxed --job-count 2 --cpu 1 --memory 64M --command true \
  --wait > "$work/newcomer" || fail "a newcomer's operation did not complete: $(cat "$work/newcomer")"
echo "a newcomer's operation completed in $((SECONDS - t0)) s"
newcomer=$(head -n 1 "$work/newcomer")
grep -E "event=preemption .*operation=$prod_op .*for=$newcomer( |$)" "$RUN_DIR/scheduler.log" ||
  fail "the newcomer $newcomer did not get its core by preempting a job of prod ($prod_op)"

pids=$(cat "$RUN_DIR"/*.pid)
bash "$src/scripts/local-cluster.sh" stop | grep -q "local cluster stopped" || fail "stop"
for pid in $pids; do
  if kill -0 "$pid" 2>/dev/null; then fail "process $pid still running after stop"; fi
done
grep -q "aborted: node_shutdown" "$RUN_DIR"/node-node1.log || fail "node1 did not abort its jobs on stop"

# A second start resumes: logs are appended, the example operations are not submitted again.
log_lines=$(wc -l < "$RUN_DIR/scheduler.log")
out2=$(cd "$work" && timeout 60 bash "$src/scripts/local-cluster.sh" start "$bin") || fail "restart: $out2"
echo "$out2" | grep -q "resumed" || fail "restart banner does not say resumed: $out2"
[ "$(example gpu "$out2")" = "$gpu_op" ] || fail "restart shows other operation ids: $out2"
n=$("$bin" list-operations --format json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["operations"]))')
[ "$n" = 5 ] || fail "after restart $n operations, expected the 4 examples and the newcomer's"
[ "$(head -n "$log_lines" "$RUN_DIR/scheduler.log" | wc -l)" = "$log_lines" ] &&
  [ "$(wc -l < "$RUN_DIR/scheduler.log")" -gt "$log_lines" ] || fail "scheduler.log not appended"
grep -q "event=scheduler_started" <(head -n "$log_lines" "$RUN_DIR/scheduler.log") || fail "first run's log lost"
bash "$src/scripts/local-cluster.sh" stop | grep -q "local cluster stopped" || fail "second stop"
echo "ok"
