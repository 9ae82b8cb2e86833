#!/usr/bin/env bash
# The YTsaurus face (/api/v3, /api/v4) driven by real YTsaurus clients: the official JavaScript
# wrapper (@ytsaurus/javascript-wrapper, pinned in tests/js/package.json and package-lock.json)
# runs every command in v3 and v4 (tests/js/yt_face.test.js), then the docs' curl forms, and
# /api/v1 still answering beside them.
# The npm packages are installed by js_modules (lib/sh_test.bash) with `npm ci` into a cache dir
# keyed by the lock file's hash (PS_JS_CACHE, default ~/.cache/poolsched-js), so only the first
# run needs the registry.
# usage: yt_js_wrapper.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
. "$(dirname "${BASH_SOURCE[0]}")/lib/scheduler_port.sh"
sh_test "$@"
for tool in node npm curl; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool missing: run scripts/deps.sh"; exit 1; }
done
js_modules "$src/tests/js"

pid=
test_cleanup() {
  if [ -n "$pid" ]; then kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; fi
}
"$bin" scheduler --listen 127.0.0.1:0 --data-dir "$work/data" >/dev/null 2>"$work/log" &
pid=$!
scheduler_port "$work/log"
TOKEN=$(cat "$work/data/admin_token")

failed=0
NODE_PATH="$js_modules" PS_PORT=$port PS_TOKEN=$TOKEN \
  PS_SECRET=$(cat "$work/data/cluster_secret") \
  node "$src/tests/js/yt_face.test.js" || failed=1

# The YTsaurus docs' curl forms.
passed=0
expect() {   # expect NAME WANT GOT
  if [ "$2" == "$3" ]; then passed=$((passed + 1)); echo "ok   curl $1"
  else failed=1; echo "FAIL curl $1: want [$2], got [$3]"; fi
}
H="Authorization: OAuth $TOKEN"
u=http://127.0.0.1:$port
expect "create (v4)" '{"node_id":' \
  "$(curl -s -X POST "$u/api/v4/create?path=//sys/pools/x&type=scheduler_pool" -H "$H" | cut -c1-11)"
expect "get (v4)" '{"value":{}}' "$(curl -s "$u/api/v4/get?path=//sys/pools/x" -H "$H")"
expect "set (v3, value in the body)" "200" \
  "$(curl -s -o /dev/null -w '%{http_code}' -X PUT "$u/api/v3/set?path=//sys/pools/x/@weight" -H "$H" \
     -H 'X-YT-Input-Format: json' --data-binary '4')"
expect "get, X-YT-Parameters and YSON output" '{"value"=4;}' \
  "$(curl -s "$u/api/v4/get" -H "$H" -H 'X-YT-Parameters: {"path": "//sys/pools/x/@weight"}' \
     -H 'X-YT-Output-Format: yson')"
expect "set with dry_run (v4): the diff, weight 4 -> 7" "True 4.0 7.0" \
  "$(curl -s -X PUT "$u/api/v4/set?path=//sys/pools/x/@weight&dry_run=true" -H "$H" \
     -H 'X-YT-Input-Format: json' --data-binary '7' | python3 -c '
import json, sys
d = json.load(sys.stdin)
x = d["pools"]["x"]
print(d["dry_run"], x["before"]["weight"], x["after"]["weight"])' 2>&1)"
expect "a dry run changes nothing" '{"value":4}' \
  "$(curl -s "$u/api/v4/get?path=//sys/pools/x/@weight" -H "$H")"
expect "get, YSON X-YT-Parameters (v3)" '4' \
  "$(curl -s "$u/api/v3/get" -H "$H" -H 'X-YT-Header-Format: yson' \
     -H 'X-YT-Parameters: {path="//sys/pools/x/@weight"}')"
expect "missing path: 404 and X-YT-Response-Code 500" "404 500" \
  "$(curl -s -D - -o /dev/null "$u/api/v4/get?path=//sys/pools/nope" -H "$H" |
     awk 'NR==1{s=$2} tolower($1)=="x-yt-response-code:"{c=$2} END{printf "%s %s", s, c}' | tr -d '\r')"
expect "no token: 401, code 900" '401 900' \
  "$(curl -s -w ' %{http_code}' "$u/api/v4/list?path=//sys/pools" |
     python3 -c 'import json,sys; b,s=sys.stdin.read().rsplit(" ",1); print(s, json.loads(b)["code"])')"
expect "reading command refuses POST: 405" "405" \
  "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$u/api/v4/get?path=//sys/pools" -H "$H")"
expect "list_operations shape" "failed_jobs_count incomplete operations pool_counts state_counts type_counts user_counts" \
  "$(curl -s "$u/api/v4/list_operations" -H "$H" |
     python3 -c 'import json,sys; print(" ".join(sorted(json.load(sys.stdin))))')"
expect "get_current_user (v4)" '{"user":"admin","role":"admin"}' "$(curl -s "$u/api/v4/get_current_user" -H "$H")"
expect "remove (v4)" "200" \
  "$(curl -s -o /dev/null -w '%{http_code}' -X POST "$u/api/v4/remove?path=//sys/pools/x" -H "$H")"
expect "/api/v1 beside them" '{"value":false}' \
  "$(curl -s -X POST "$u/api/v1/exists" -H "$H" -d '{"path": "//sys/pools/x"}')"
echo "curl: $passed passed"
# a clean stop exits 0 (sanitizer builds report leaks and errors with another code)
kill -TERM "$pid"
rc=0
wait "$pid" || rc=$?
pid=
if [ "$rc" -ne 0 ]; then failed=1; echo "FAIL: the scheduler exited $rc on SIGTERM"; tail -20 "$work/log"; fi
[ "$failed" -eq 0 ] || { echo "FAIL: see above"; exit 1; }
echo "yt_js_wrapper: ok"
