#!/usr/bin/env bash
# Measures the web UI with a large state (docs/ui.md, docs/performance.md): a scheduler without
# nodes gets POOLS pools (10 top-level, the rest below them) and OPS vanilla operations (spread
# over the leaf pools) through the API, then headless Chromium opens the pools page and the
# operations page (all OPS listed) and refreshes each REFRESHES times. Prints the time to fetch
# and to render (window.psTimings) and the longest main-thread task (PerformanceObserver
# longtask) of each.
# usage: scripts/ui-measure.sh [BINARY] [POOLS] [OPS] [REFRESHES]    (needs chromium, node, npm)
set -euo pipefail
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
"$bin" scheduler --listen 127.0.0.1:0 --data-dir "$work/data" --config "$work/config.json" \
  > /dev/null 2> "$work/log" &
pid=$!
port=
for _ in $(seq 1 200); do
  port=$(grep -o 'event=scheduler_started listen=[0-9.]*:[0-9]*' "$work/log" 2>/dev/null | head -1 | sed 's/.*://') || true
  [ -n "$port" ] && break
  sleep 0.05
done
[ -n "$port" ] || { echo "the scheduler did not start"; cat "$work/log"; exit 1; }
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
NODE_PATH="$cache/node_modules" PS_CHROMIUM=$chromium PS_URL=http://127.0.0.1:$port PS_TOKEN=$token \
  PS_REFRESHES=$refreshes node "$src/tests/ui/measure.js"
