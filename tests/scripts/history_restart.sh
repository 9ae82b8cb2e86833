#!/usr/bin/env bash
# The charts' history (get_history, src/server/history.h) across a kill -9: a scheduler with
# 1-second buckets (config history_bucket) and one real node samples an integral pool whose
# volume grows; each closed bucket is saved with the engine loop's refresh. After SIGKILL and a
# restart on the same data directory, get_history still has the buckets from before the kill,
# each the mean of the samples that get_history returned for its second before the kill.
# usage: history_restart.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
. "$(dirname "${BASH_SOURCE[0]}")/lib/scheduler_port.sh"
sh_test "$@"
sched=; node=
test_cleanup() {
  for p in $node $sched; do kill -9 "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
}
fail_context() { tail -20 "$work/scheduler.log" 2>/dev/null; }
port=$(free_port)
echo '{"history_bucket": 1000, "fair_share_update_period": 200, "heartbeat_period": 1000}' > "$work/config.json"
start() {
  "$bin" scheduler --listen "127.0.0.1:$port" --data-dir "$work/data" --config "$work/config.json" \
    >> "$work/scheduler.log" 2>&1 &
  sched=$!
  for _ in $(seq 1 100); do
    curl -sf "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && return 0
    sleep 0.1
  done
  fail "the scheduler did not answer"
}
start
export POOLSCHED_PROXY=127.0.0.1:$port POOLSCHED_DATA_DIR=$work/data
"$bin" create scheduler_pool //sys/pool_trees/physical/relaxed \
  --attributes '{integral_guarantees={guarantee_type=relaxed; resource_flow={cpu=1}}}' > /dev/null
uids=; [ "$(id -u)" = 0 ] && uids="--slot-uid-base 10300"
# shellcheck disable=SC2086
"$bin" node --scheduler "http://127.0.0.1:$port" --node-id "hist$$" --data-dir "$work/data" \
  --work-dir "$work/node" --resources cpu=4,memory=4G,user_slots=4 $uids >> "$work/node.log" 2>&1 &
node=$!
history() {
  curl -sf -X POST "http://127.0.0.1:$port/api/v1/get_history" \
    -H "Authorization: OAuth $(cat "$work/data/admin_token")" -d '{"pools": ["relaxed"]}'
}
sleep 6
history > "$work/before.json" || fail "get_history before the kill"
sleep 0.5   # the last closed bucket's commit
kill -9 "$sched"; wait "$sched" 2>/dev/null || true
killed_ms=$(date +%s%3N)
kill -9 "$node"; wait "$node" 2>/dev/null || true; node=
start
grep -q 'event=history_loaded' "$work/scheduler.log" || fail "no history_loaded in the log"
sleep 0.5
history > "$work/after.json" || fail "get_history after the restart"
python3 - "$work/before.json" "$work/after.json" "$killed_ms" <<'PY'
import json, sys
before, after, killed = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3])
width = after["bucket_ms"]
assert width == 1000, f"bucket_ms {width}"
b = before["pools"]["relaxed"]
# the samples before the kill, by bucket
samples = {}
for i, t in enumerate(before["times"]):
    if b["integral_volume"][i] is not None:
        samples.setdefault(t - t % width, []).append((b["integral_volume"][i], b["integral_capacity"][i]))
last = max(before["times"])
a = after["pools"].get("relaxed")
assert a, f"relaxed has no history after the restart: {sorted(after['pools'])}"
restored = {t: (a["integral_volume"][i], a["integral_capacity"][i]) for i, t in enumerate(after["times"]) if t < killed}
# every bucket closed well before the kill (a sample of the next one came a second before it)
want = [t for t in sorted(samples) if t + 2 * width <= last]
assert len(want) >= 3, f"only {len(want)} closed buckets before the kill: {sorted(samples)}"
missing = [t for t in want if t not in restored]
assert not missing, f"buckets lost in the restart: {missing} (restored {sorted(restored)})"
near = lambda x, y: abs(x - y) <= 1e-4 * max(1.0, abs(y))
for t in want:
    vol = sum(v for v, _ in samples[t]) / len(samples[t])
    cap = sum(c for _, c in samples[t]) / len(samples[t])
    got = restored[t]
    assert near(got[0], vol) and near(got[1], cap), f"bucket {t}: restored {got}, the samples' means {vol}, {cap}"
# (a bucket from before the pool existed has none of its values; one before the node came, a
# capacity of 0: no cluster yet)
vols = [v for v, _ in restored.values() if v is not None]
caps = [c for _, c in restored.values() if c is not None]
assert any(v > 0 for v in vols) and any(c > 0 for c in caps) and all(c >= 0 for c in caps), \
    f"volumes and capacities: {restored}"
print(f"ok: {len(want)} buckets before the kill restored with their means (volume up to {max(vols):.3f} share*s)")
PY
