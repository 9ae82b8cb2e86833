#!/usr/bin/env bash
# Measures the web UI with a large state (docs/ui.md, docs/performance.md): a scheduler without
# nodes gets POOLS pools (10 top-level, the rest below them) and OPS vanilla operations (spread
# over the leaf pools) through the API, then headless Chromium opens the pools page and the
# operations page (all OPS listed) and refreshes each REFRESHES times. Prints the time to fetch
# and to render (window.psTimings) and the longest main-thread task (PerformanceObserver
# longtask) of each, and on the pools page the sorts, filters and scrolls of tests/ui/measure.js.
# With PS_BEFORE=OTHER_BINARY the same state is measured twice in one run: first served by
# OTHER_BINARY (e.g. a build of an older commit: the UI is embedded in the binary), then by
# BINARY restarted on the same data directory.
# usage: [PS_BEFORE=BIN] scripts/ui-measure.sh [BINARY] [POOLS] [OPS] [REFRESHES]
#        (needs chromium, node, npm; PS_PAGES as in tests/ui/measure.js)
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../tests/scripts/lib/scheduler_port.sh"
bin=$(cd "$(dirname "${1:-build/poolsched}")" && pwd)/$(basename "${1:-build/poolsched}")
pools=${2:-1000}
ops=${3:-10000}
refreshes=${4:-5}
src=$(cd "$(dirname "$0")/.." && pwd)
chromium=${PS_CHROMIUM:-$(command -v chromium || command -v chromium-browser)}
key=$(cat "$src/tests/ui/package.json" "$src/tests/ui/package-lock.json" | sha256sum | cut -c1-16)
cache=${PS_JS_CACHE:-${HOME:-/tmp}/.cache/poolsched-js}/$key
if [ ! -f "$cache/.installed" ]; then
  rm -rf "$cache" && mkdir -p "$cache"
  cp "$src/tests/ui/package.json" "$src/tests/ui/package-lock.json" "$cache/"
  (cd "$cache" && npm ci --no-audit --no-fund --loglevel=error)
  touch "$cache/.installed"
fi
work=$(mktemp -d)
pid=
cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
echo '{"commit_window": 5}' > "$work/config.json"
start_scheduler() {   # BINARY: starts it on $work/data, sets pid and port
  : > "$work/log"
  "$1" scheduler --listen 127.0.0.1:0 --data-dir "$work/data" --config "$work/config.json" \
    > /dev/null 2> "$work/log" &
  pid=$!
  scheduler_port "$work/log" 1200
}
stop_scheduler() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
start_scheduler "${PS_BEFORE:-$bin}"
token=$(cat "$work/data/admin_token")
start=$(date +%s.%N)
python3 - "$port" "$token" "$pools" "$ops" <<'PY'
import http.client, json, sys, concurrent.futures
port, token, npools, nops = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
def conn():
    return http.client.HTTPConnection("127.0.0.1", int(port))
def call(c, cmd, body):
    c.request("POST", f"/api/v1/{cmd}", json.dumps(body), {"Authorization": f"OAuth {token}"})
    r = c.getresponse(); data = r.read()
    if r.status != 200: raise SystemExit(f"{cmd}: {r.status} {data[:300]}")
top = [f"top{i}" for i in range(10)]
leaves = [f"pool{i}" for i in range(npools - len(top))]
c = conn()
call(c, "set", {"path": "//sys/pool_trees/physical/@max_operation_count", "value": nops + 10})
call(c, "set", {"path": "//sys/pool_trees/physical/@max_running_operation_count", "value": nops + 10})
for i, t in enumerate(top):
    call(c, "create", {"type": "scheduler_pool", "path": f"//sys/pool_trees/physical/{t}",
                       "attributes": {"weight": 1 + i % 3, "max_operation_count": nops,
                                      "max_running_operation_count": nops}})
for i, p in enumerate(leaves):
    call(c, "create", {"type": "scheduler_pool", "path": f"//sys/pool_trees/physical/{top[i % 10]}/{p}"})
def start(chunk):
    c = conn()
    for k in chunk:
        call(c, "start_op", {"operation_type": "vanilla", "spec": {"pool": leaves[k % len(leaves)],
             "tasks": {"t": {"command": "true", "job_count": 1 + k % 5}}}})
with concurrent.futures.ThreadPoolExecutor(4) as ex:
    list(ex.map(start, [range(i, nops, 4) for i in range(4)]))
PY
echo "populated $pools pools and $ops operations in $(echo "$(date +%s.%N) - $start" | bc) s"
sleep 2   # a fair share update with everything
measure() {
  NODE_PATH="$cache/node_modules" PS_CHROMIUM=$chromium PS_URL=http://127.0.0.1:$port PS_TOKEN=$token \
    PS_REFRESHES=$refreshes node "$src/tests/ui/measure.js"
}
if [ -n "${PS_BEFORE:-}" ]; then
  echo "== served by $PS_BEFORE"
  measure
  stop_scheduler
  start_scheduler "$bin"
  sleep 2
  echo "== served by $bin (the same data directory)"
fi
measure
