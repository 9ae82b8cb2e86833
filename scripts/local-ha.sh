#!/usr/bin/env bash
# `make run-ha` / `make stop-ha`: standby schedulers on one machine (docs/ha.md) — a throwaway
# PostgreSQL cluster (tests/scripts/lib/pg_cluster.bash, as an unprivileged user), two schedulers
# with --ha on it (127.0.0.1:9013 and :9014, each restarted by a supervisor loop when it steps
# down with exit 75), and two node agents that follow the leader (--scheduler A,B).
#
#   scripts/local-ha.sh start [BINARY]   state, logs and pid files under ./run-ha/
#   scripts/local-ha.sh stop
set -euo pipefail
cmd=${1:-start}
bin=${2:-build/poolsched}
run=${RUN_DIR:-run-ha}
here=$(cd "$(dirname "$0")/.." && pwd)
source "$here/tests/scripts/lib/pg_cluster.bash"
a=127.0.0.1:${POOLSCHED_PORT:-9013}
b=127.0.0.1:$(( ${POOLSCHED_PORT:-9013} + 1 ))

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() {
  for pidfile in "$run"/node-*.pid "$run"/super-*.pid "$run"/sched-*.pid; do
    [ -f "$pidfile" ] || continue
    if alive "$pidfile"; then
      kill -TERM "$(cat "$pidfile")" 2>/dev/null || true
      for _ in $(seq 1 300); do alive "$pidfile" || break; sleep 0.1; done
      alive "$pidfile" && kill -KILL "$(cat "$pidfile")" 2>/dev/null || true
    fi
    rm -f "$pidfile"
  done
  if [ -f "$run/pg/data/postmaster.pid" ]; then
    pg_cluster_attach "$(cd "$run/pg" && pwd)"
    pg_cluster_stop
  fi
  echo "HA cluster stopped (rm -rf $run to forget it)"
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: $0 start [BINARY] | stop" >&2; exit 2; }
[ -x "$bin" ] || { echo "error: $bin not found: run make build first" >&2; exit 1; }
alive "$run/super-a.pid" && { echo "an HA cluster is already running (make stop-ha first)"; exit 1; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
mkdir -p "$run/nodes"
chmod 755 "$run" "$run/nodes"
run=$(cd "$run" && pwd)

if [ -f "$run/pg/port" ]; then   # resumed: the same cluster again
  pg_cluster_attach "$run/pg"
  pg_cluster_launch || { echo "error: cannot restart PostgreSQL" >&2; exit 1; }
  store=postgresql://poolsched@127.0.0.1:$PG_PORT/poolsched
else
  pg_cluster_start "$run/pg"
  store=$(pg_cluster_createdb poolsched)
fi
echo '{"heartbeat_period": 1000, "fair_share_update_period": 500, "ha_lease": 2000}' > "$run/scheduler.json"

# One supervisor per instance: a scheduler that steps down (exit 75) comes back as a standby.
supervise() {
  local name=$1 listen=$2
  (
    trap 'kill -TERM "$(cat "$run/sched-$name.pid")" 2>/dev/null; exit 0' TERM
    while true; do
      "$bin" scheduler --ha --store "$store" --listen "$listen" --data-dir "$run/data-$name" \
        --config "$run/scheduler.json" >> "$run/scheduler-$name.log" 2>&1 &
      echo $! > "$run/sched-$name.pid"
      wait $! && break
      rc=$?
      [ $rc = 75 ] || { echo "scheduler $name exited $rc" >> "$run/scheduler-$name.log"; break; }
    done
  ) >/dev/null 2>&1 &
  echo $! > "$run/super-$name.pid"
}
supervise a "$a"
for _ in $(seq 1 100); do
  [ -s "$run/data-a/cluster_secret" ] && curl -sf "http://$a/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
# instances of one cluster share the data dir's secrets
[ -d "$run/data-b" ] || cp -r "$run/data-a" "$run/data-b"
supervise b "$b"

for id in node1 node2; do
  nohup "$bin" node --scheduler "http://$a,http://$b" --node-id "$id" --data-dir "$run/data-a" \
    --work-dir "$run/nodes/$id" --resources cpu=2,memory=4G,user_slots=4 \
    $([ "$(id -u)" = 0 ] && echo "--slot-uid-base $([ $id = node1 ] && echo 10000 || echo 10100)") \
    >> "$run/node-$id.log" 2>&1 &
  echo $! > "$run/node-$id.pid"
done
sleep 1
cat <<EOF

HA cluster running (state and logs in $run/)
  PostgreSQL  $store
  schedulers  http://$a  http://$b   (curl http://$a/readyz: 200 on the leader, 503 on the standby)
  nodes       node1, node2 (--scheduler http://$a,http://$b)

Try a failover:
  export POOLSCHED_PROXY=\$(curl -sf http://$a/readyz >/dev/null && echo $a || echo $b) POOLSCHED_DATA_DIR=$run/data-a
  build/poolsched vanilla --job-count 4 --command 'sleep 60'
  kill -9 \$(cat $run/sched-a.pid)      # the standby leads within ~2 s; jobs keep running
  curl -s http://$b/readyz

Stop it: make stop-ha
EOF
