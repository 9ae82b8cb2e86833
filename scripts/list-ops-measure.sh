#!/usr/bin/env bash
# Times the YTsaurus face's list_operations (GET /api/v4/list_operations, docs/performance.md)
# with OPS vanilla operations over 100 pools, for one or more scheduler binaries side by side: a
# scheduler per binary (no nodes) gets the same operations through the API, then the requests
# alternate between them ROUNDS times. Prints each binary's median and worst time at limit 100
# and limit 1000 and the reply's size.
# usage: scripts/list-ops-measure.sh OPS ROUNDS BINARY [BINARY...]
#   e.g. scripts/list-ops-measure.sh 10000 20 /tmp/base/build/poolsched build/poolsched
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/../tests/scripts/lib/scheduler_port.sh"
ops=${1:?usage: list-ops-measure.sh OPS ROUNDS BINARY [BINARY...]}
rounds=${2:?usage: list-ops-measure.sh OPS ROUNDS BINARY [BINARY...]}
shift 2
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
servers=()
i=0
for bin in "$@"; do
  mkdir -p "$work/$i"
  echo '{"commit_window": 5}' > "$work/$i/config.json"
  "$bin" scheduler --listen 127.0.0.1:0 --data-dir "$work/$i/data" --config "$work/$i/config.json" \
    > /dev/null 2> "$work/$i/log" &
  pids+=($!)
  scheduler_port "$work/$i/log"
  servers+=("$bin=$port=$(cat "$work/$i/data/admin_token")")
  i=$((i + 1))
done
python3 - "$ops" "$rounds" "${servers[@]}" <<'PY'
import http.client, json, statistics, sys, time, concurrent.futures
nops, rounds = int(sys.argv[1]), int(sys.argv[2])
servers = [s.rsplit("=", 2) for s in sys.argv[3:]]
def call(port, token, cmd, body):
    c = http.client.HTTPConnection("127.0.0.1", int(port))
    c.request("POST", f"/api/v1/{cmd}", json.dumps(body), {"Authorization": f"OAuth {token}"})
    r = c.getresponse(); data = r.read()
    if r.status != 200: raise SystemExit(f"{cmd}: {r.status} {data[:300]}")
def populate(server):
    _, port, token = server
    for k in ("max_operation_count", "max_running_operation_count"):
        call(port, token, "set", {"path": f"//sys/pool_trees/physical/@{k}", "value": nops + 10})
    for p in range(100):
        call(port, token, "create", {"type": "scheduler_pool", "path": f"//sys/pool_trees/physical/pool{p}",
                                     "attributes": {"max_operation_count": nops, "max_running_operation_count": nops}})
    def start(chunk):
        c = http.client.HTTPConnection("127.0.0.1", int(port))
        for k in chunk:
            body = json.dumps({"operation_type": "vanilla", "spec": {"pool": f"pool{k % 100}", "title": f"job {k}",
                               "tasks": {"t": {"command": "true", "job_count": 1 + k % 5}}}})
            c.request("POST", "/api/v1/start_op", body, {"Authorization": f"OAuth {token}"})
            r = c.getresponse(); data = r.read()
            if r.status != 200: raise SystemExit(f"start_op: {r.status} {data[:300]}")
    with concurrent.futures.ThreadPoolExecutor(4) as ex:
        list(ex.map(start, [range(i, nops, 4) for i in range(4)]))
t0 = time.time()
with concurrent.futures.ThreadPoolExecutor(len(servers)) as ex:
    list(ex.map(populate, servers))
print(f"populated {nops} operations in each of {len(servers)} schedulers in {time.time() - t0:.1f} s")
time.sleep(2)
def timed(port, token, limit):
    c = http.client.HTTPConnection("127.0.0.1", int(port))
    t = time.perf_counter()
    c.request("GET", f"/api/v4/list_operations?limit={limit}", headers={"Authorization": f"OAuth {token}"})
    r = c.getresponse(); data = r.read()
    dt = (time.perf_counter() - t) * 1000
    if r.status != 200: raise SystemExit(f"list_operations: {r.status} {data[:300]}")
    return dt, len(data)
for limit in (100, 1000):
    times = {s[0]: [] for s in servers}
    sizes = {}
    for _ in range(rounds):
        for bin_, port, token in servers:   # alternate: the same load for each
            dt, n = timed(port, token, limit)
            times[bin_].append(dt)
            sizes[bin_] = n
    for bin_ in times:
        t = sorted(times[bin_])
        print(f"limit {limit:4}: {bin_}: median {statistics.median(t):7.1f} ms, worst {t[-1]:7.1f} ms, "
              f"reply {sizes[bin_] / 1024:.0f} KiB ({rounds} requests)")
PY
