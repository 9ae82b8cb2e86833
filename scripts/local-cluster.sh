#!/usr/bin/env bash
# `make run` / `make stop`: a local cluster on 127.0.0.1 — one scheduler, three node agents
# (one tagged gpu, in a pool tree of its own), an example pool tree with a strong-guarantee
# pool, a burst pool and a relaxed pool, and example vanilla operations in each.
#
#   scripts/local-cluster.sh start [BINARY]   start it (state, logs and pid files under ./run/)
#   scripts/local-cluster.sh stop             stop it (nodes first, so they report their jobs)
#
# Environment: POOLSCHED_PORT (default 9013), RUN_DIR (default ./run), NODE_PREFIX (default
# empty: prepended to the node ids, so that two clusters on one machine, e.g. tests run in
# parallel, do not share node ids, whose agents clear each other's idle cgroups).
set -euo pipefail
cmd=${1:-start}
bin=${2:-build/poolsched}
port=${POOLSCHED_PORT:-9013}
run=${RUN_DIR:-run}
proxy=127.0.0.1:$port

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() {
  local any=0
  for pidfile in "$run"/node-*.pid "$run"/scheduler.pid; do
    [ -f "$pidfile" ] || continue
    if alive "$pidfile"; then
      kill -TERM "$(cat "$pidfile")" 2>/dev/null || true
      any=1
      # nodes abort their jobs and send a last heartbeat; give each up to 30 s (a loaded
      # machine or a sanitizer build is slow) before killing it
      for _ in $(seq 1 300); do alive "$pidfile" || break; sleep 0.1; done
      if alive "$pidfile"; then kill -KILL "$(cat "$pidfile")" 2>/dev/null || true; fi
    fi
    rm -f "$pidfile"
  done
  if [ $any = 1 ]; then echo "local cluster stopped (state kept in $run/data; rm -rf $run to forget it)"
  else echo "no local cluster is running"; fi
}

if [ "$cmd" = stop ]; then stop; exit 0; fi
[ "$cmd" = start ] || { echo "usage: $0 start [BINARY] | stop" >&2; exit 2; }
[ -x "$bin" ] || { echo "error: $bin not found: run make build first" >&2; exit 1; }
if alive "$run/scheduler.pid"; then
  echo "a local cluster is already running (make stop first)"; exit 1
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
mkdir -p "$run/data" "$run/nodes"
# Jobs run as nobody when this runs as root: their sandboxes must be reachable.
chmod 755 "$run" "$run/nodes"
run=$(cd "$run" && pwd)
for dir in "$run" "$(dirname "$run")"; do
  [ "$(id -u)" = 0 ] && [ "$(stat -c %a "$dir" | cut -c3)" -lt 5 ] 2>/dev/null &&
    echo "warning: $dir is not readable by others: jobs (run as nobody) may not reach their sandboxes" >&2
done

cat > "$run/scheduler.json" <<EOF
{"heartbeat_period": 1000, "fair_share_update_period": 500, "node_offline_timeout": 15000}
EOF
nohup "$bin" scheduler --listen "$proxy" --data-dir "$run/data" --config "$run/scheduler.json" \
  >> "$run/scheduler.log" 2>&1 &
echo $! > "$run/scheduler.pid"
for _ in $(seq 1 100); do
  curl -sf "http://$proxy/healthz" > /dev/null 2>&1 && break
  alive "$run/scheduler.pid" || { echo "error: the scheduler exited:" >&2; tail -5 "$run/scheduler.log" >&2; exit 1; }
  sleep 0.1
done
curl -sf "http://$proxy/healthz" > /dev/null || { echo "error: no answer on $proxy/healthz" >&2; stop; exit 1; }

export POOLSCHED_PROXY=$proxy POOLSCHED_DATA_DIR=$run/data
ps() { "$bin" "$@" > /dev/null; }

# Pool trees: gpu nodes form a tree of their own, the rest the default tree "physical".
ps create scheduler_pool_tree //sys/pool_trees/gpu --attributes '{nodes_filter=gpu}' -i
ps set //sys/pool_trees/physical/@nodes_filter '"!gpu"'
# The example pools of the default tree. Their guarantees fit the tree's 4 cores (node1 and
# node2), so no update_fair_share alert is raised: strong 2 + burst 1.5 and strong 2 + resource
# flows 0.5 + 0.5 are at most 4.
ps create scheduler_pool //sys/pool_trees/physical/prod -i \
  --attributes '{strong_guarantee_resources={cpu=2}; weight=2}'
ps create scheduler_pool //sys/pool_trees/physical/burst -i \
  --attributes '{integral_guarantees={guarantee_type=burst; resource_flow={cpu=0.5}; burst_guarantee_resources={cpu=1.5}}}'
ps create scheduler_pool //sys/pool_trees/physical/relaxed -i \
  --attributes '{integral_guarantees={guarantee_type=relaxed; resource_flow={cpu=1}}}'
ps create scheduler_pool //sys/pool_trees/gpu/training -i

# Three nodes: two plain, one tagged gpu.
start_node() {
  local id=$1; shift
  nohup "$bin" node --scheduler "http://$proxy" --node-id "$id" --data-dir "$run/data" \
    --work-dir "$run/nodes/$id" "$@" >> "$run/node-$id.log" 2>&1 &
  echo $! > "$run/node-$id.pid"
}
# Three agents on one machine: as root each gets a uid range of its own for its slots.
slot_uids() { [ "$(id -u)" = 0 ] && echo "--slot-uid-base $1"; }
np=${NODE_PREFIX:-}
start_node "${np}node1" --resources cpu=2,memory=4G,user_slots=4 $(slot_uids 10000)
start_node "${np}node2" --resources cpu=2,memory=4G,user_slots=4 $(slot_uids 10100)
start_node "${np}gpu1" --resources cpu=2,memory=4G,user_slots=4 --tags gpu $(slot_uids 10200)
sleep 1.5
for id in "${np}node1" "${np}node2" "${np}gpu1"; do
  alive "$run/node-$id.pid" || { echo "error: node $id exited:" >&2; tail -5 "$run/node-$id.log" >&2; stop; exit 1; }
done

# Example operations, submitted once: a resumed cluster (make stop, make run) keeps its state and
# the operations of the first start (their ids are kept in $run/examples). Nodes long-poll, so an
# operation alone on the idle cluster fills it within milliseconds. The relaxed one goes first:
# its short jobs take the nodes at once and finish in seconds, and prod and burst, submitted
# together next, share the nodes as they free up. (Submitted after prod and burst, it would wait
# for its integral volume, starvation and preemption, or for burst's jobs to run out: minutes.)
# prod's four jobs ask for all 4 cores of physical for ten minutes (the web UI's test edits
# prod's weight and needs it to want more than it gets). Once relaxed's and burst's batches are
# done (one to two minutes), prod's jobs fill physical: a newcomer's operation there then starves
# for fair_share_starvation_timeout (30 s) and preemption takes its first job's core from prod. That
# needs one of prod's jobs to be preemptible: the usage of prod's older jobs (3 cores) must reach
# prod's fair share, i.e. relaxed's must pass 1 core. Relaxed's is a third of what prod's
# guarantee leaves (prod weighs 2) plus its integral share, which grows with the volume relaxed
# has accumulated (volume / (4 cores x 60 s)); it passes 1 core at 30 core-seconds. relaxed's
# resource flow of 1 core brings that by the time a newcomer starves: its own example job uses
# half a core of it. (With a flow of 0.5 its example would use it all, and a newcomer would wait
# a minute longer for the volume.) The newcomer must also ask for more than 1 core.
op() { "$bin" vanilla "$@"; }
if [ -s "$run/examples" ]; then
  # shellcheck disable=SC1091
  . "$run/examples"
  resumed=" (resumed: the example operations were submitted at the first start)"
else
  relaxed=$(op --pool relaxed --job-count 8 --cpu 0.5 --memory 128M --task-name crunch \
     --command 'i=0; while [ $i -lt 2000000 ]; do i=$((i+1)); done; echo "relaxed job $YT_JOB_INDEX done" >&2') || true
  op --pool prod --job-count 4 --cpu 1 --memory 256M --task-name serve \
     --command 'echo "prod job $YT_JOB_INDEX on $(hostname)" >&2; sleep 600' > "$run/op.prod" &
  p1=$!
  op --pool burst --job-count 4 --cpu 1 --memory 256M --task-name batch \
     --command 'echo "burst job $YT_JOB_INDEX" >&2; sleep 10' > "$run/op.burst" &
  p2=$!
  wait $p1 $p2 || true   # (not the scheduler's and nodes' pids: they never end here)
  prod=$(cat "$run/op.prod") burst=$(cat "$run/op.burst")
  rm -f "$run/op.prod" "$run/op.burst"
  [ -n "$prod" ] && [ -n "$burst" ] && [ -n "$relaxed" ] ||
    { echo "error: an example operation was not started" >&2; stop; exit 1; }
  gpu=$(op --pool training --pool-trees gpu --job-count 2 --cpu 1 --memory 256M --task-name train \
        --spec '{job_cpu_monitor={enable_cpu_reclaim=%true; check_period=500; decrease_coefficient=0.85; smoothing_factor=0.2; min_cpu_limit=0.1}}' \
        --command 'echo "gpu job $YT_JOB_INDEX (idle: its CPU guarantee will be reclaimed)" >&2; sleep 60')
  printf 'prod=%s\nburst=%s\nrelaxed=%s\ngpu=%s\n' "$prod" "$burst" "$relaxed" "$gpu" > "$run/examples"
  resumed=""
fi

p=$bin
[ "$bin" = "$(pwd)/build/poolsched" ] && p=build/poolsched
cat <<EOF

Local cluster running on http://$proxy (state and logs in $run/)$resumed
  scheduler   $run/scheduler.log
  nodes       ${np}node1, ${np}node2 (tree physical), ${np}gpu1 (tag gpu, tree gpu): $run/node-*.log

Example operations:
  prod     $prod   (pool prod: strong guarantee cpu=2)
  burst    $burst   (pool burst: burst integral guarantee)
  relaxed  $relaxed   (pool relaxed: relaxed integral guarantee)
  gpu      $gpu   (tree gpu, CPU reclaim on)

Watch them (the client finds the scheduler and the admin token through these):
  export POOLSCHED_PROXY=$proxy POOLSCHED_DATA_DIR=$run/data
  $p list-operations
  $p list-jobs $prod
  $p list-jobs $gpu             (watch CPU GUARANTEE fall below the limit)
  $p get-operation $burst
  $p get-job-stderr $relaxed JOB_ID
  $p get //sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/prod
  $p vanilla --pool relaxed --job-count 4 --command 'sleep 10' --wait
                (once relaxed's and burst's batches are done, one to two minutes after the
                 start, prod's jobs fill physical for ten minutes: this then waits about half
                 a minute for its first job, whose core preemption takes from prod)

Stop it: make stop
EOF
