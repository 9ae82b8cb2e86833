#!/usr/bin/env bash
# The client commands against a fake scheduler (fake_scheduler.py on 127.0.0.1, ephemeral port):
# the exact requests they send (path, JSON body, Authorization header), what they print, and
# their exit codes for 200 (0), 4xx (1, the server's message shown), no server (1, a clear
# message) and usage errors (2, one line, nothing sent).
# usage: cli_fake_server.sh BINARY DATA_DIR SOURCE_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
sh_test "$@"
server_pid=
test_cleanup() { [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null; }

timeout 150 python3 "$src/tests/scripts/fake_scheduler.py" "$work/port" "$work/log" &
server_pid=$!
for _ in $(seq 100); do [ -s "$work/port" ] && break; sleep 0.05; done
[ -s "$work/port" ] || { echo "FAIL: the fake server did not start"; exit 1; }
port=$(cat "$work/port")

# The client reaches the fake through the environment, as a user's shell would.
export POOLSCHED_PROXY="127.0.0.1:$port" POOLSCHED_TOKEN=secret-token
unset POOLSCHED_DATA_DIR

# run EXPECTED_CODE ARGS...: runs the binary, keeps stdout/stderr in $work/out, $work/err.
run() {
  local want=$1; shift
  : > "$work/log.before"; cp "$work/log" "$work/log.before" 2>/dev/null
  "$bin" "$@" > "$work/out" 2> "$work/err" < /dev/null
  local code=$?
  [ "$code" -eq "$want" ] || check_fail "poolsched $*: exit code $code, expected $want; stderr: $(cat "$work/err")"
}
# The requests the last run sent, one compact JSON per line: path, auth, body (sorted keys).
sent() {
  python3 - "$work/log.before" "$work/log" <<'EOF'
import json, sys
before = open(sys.argv[1]).read().splitlines() if sys.argv[1] else []
try:
    lines = open(sys.argv[2]).read().splitlines()
except FileNotFoundError:
    lines = []
for line in lines[len(before):]:
    r = json.loads(line)
    print(json.dumps([r["path"], r["auth"], r["content_type"], r["body"]], sort_keys=True,
                     separators=(",", ":")))
EOF
}
expect_sent() {
  local got
  got=$(sent)
  [ "$got" = "$1" ] || check_fail "$2: sent
$got
expected
$1"
}
expect_out() { [ "$(cat "$work/out")" = "$1" ] || check_fail "$2: stdout
$(cat "$work/out")
expected
$1"; }
expect_err() { [ "$(cat "$work/err")" = "$1" ] || check_fail "$2: stderr
$(cat "$work/err")
expected
$1"; }
A='"OAuth secret-token","application/json"'

# ---- Cypress-like tree: the seed documents' commands, with poolsched in place of yt ----------
run 0 set //sys/pools/root-pool/burst/@integral_guarantees \
  '{guarantee_type=burst; resource_flow={cpu=1000}; burst_guarantee_resources={cpu=2000}}'
expect_sent '["/api/v1/set",'"$A"',{"path":"//sys/pools/root-pool/burst/@integral_guarantees","value":{"burst_guarantee_resources":{"cpu":2000},"guarantee_type":"burst","resource_flow":{"cpu":1000}}}]' "set burst"
expect_out '' "set prints nothing"

# the docs' hyphenated spelling goes to the server as written (it decides what it means)
run 0 set //sys/pools/root-pool/burst/@integral-guarantees/resource_flow "{cpu=100}"
expect_sent '["/api/v1/set",'"$A"',{"path":"//sys/pools/root-pool/burst/@integral-guarantees/resource_flow","value":{"cpu":100}}]' "set hyphenated"

# multi-line YSON as in the docs' listings, and JSON
run 0 set //sys/pools/root-pool/relaxed/@integral_guarantees "
    {
      guarantee_type=relaxed;
      resource_flow={cpu=1000}
    }"
expect_sent '["/api/v1/set",'"$A"',{"path":"//sys/pools/root-pool/relaxed/@integral_guarantees","value":{"guarantee_type":"relaxed","resource_flow":{"cpu":1000}}}]' "set relaxed"
run 0 set //sys/pool_trees/physical/a/@weight 2.5
expect_sent '["/api/v1/set",'"$A"',{"path":"//sys/pool_trees/physical/a/@weight","value":2.5}]' "set number"
printf '%s' '{"cpu": 4}' | "$bin" set //sys/pool_trees/physical/a/@resource_limits > "$work/out" 2> "$work/err" \
  || check_fail "set from stdin: $(cat "$work/err")"

run 0 get //sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/pool_name/integral_pool_capacity
expect_sent '["/api/v1/get",'"$A"',{"path":"//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/pool_name/integral_pool_capacity"}]' "get orchid"
expect_out '{
    "cpu" = 86400000.;
    "user_slots" = 0;
}' "get prints pretty YSON"
run 0 get //sys/pools/root-pool/burst/@integral_guarantees --format json
expect_out '{
  "guarantee_type": "burst",
  "resource_flow": {
    "cpu": 1000
  },
  "burst_guarantee_resources": {
    "cpu": 2000
  }
}' "get --format json"

run 0 list //sys/pool_trees
expect_out 'gpu
physical' "list"
run 0 list //sys/pool_trees --format json
[ "$(tr -d ' \n' < "$work/out")" = '["gpu","physical"]' ] || check_fail "list --format json: $(cat "$work/out")"
run 0 exists //sys/pool_trees/physical
expect_out 'true' "exists"
run 0 exists //sys/pool_trees/absent
expect_out 'false' "exists (absent)"
run 0 exists //sys/pool_trees/absent --format yson
expect_out '%false' "exists --format yson"

run 0 create scheduler_pool --attributes '{name=x; pool_tree=physical; parent_name=y}'
expect_sent '["/api/v1/create",'"$A"',{"attributes":{"name":"x","parent_name":"y","pool_tree":"physical"},"ignore_existing":false,"type":"scheduler_pool"}]' "create pool"
run 0 create scheduler_pool_tree --attributes '{name=gpu; config={nodes_filter=gpu}}'
expect_sent '["/api/v1/create",'"$A"',{"attributes":{"config":{"nodes_filter":"gpu"},"name":"gpu"},"ignore_existing":false,"type":"scheduler_pool_tree"}]' "create tree"
run 0 create scheduler_pool //sys/pool_trees/physical/research --attributes '{weight=2}' -i
expect_sent '["/api/v1/create",'"$A"',{"attributes":{"weight":2},"ignore_existing":true,"path":"//sys/pool_trees/physical/research","type":"scheduler_pool"}]' "create by path"
run 1 create scheduler_pool --attributes '{name=dup; pool_tree=physical}'
expect_err 'error: create: pool "dup" exists already (HTTP 409, already exists)' "create 409"

run 0 remove //sys/pool_trees/physical/research
expect_sent '["/api/v1/remove",'"$A"',{"path":"//sys/pool_trees/physical/research"}]' "remove"
run 1 remove //sys/pool_trees/physical/missing
expect_err 'error: remove: path //sys/pool_trees/physical/missing does not exist (HTTP 404, not found)' "remove 404"
run 0 remove //sys/pool_trees/physical/missing --force
expect_err '' "remove --force on 404"
run 1 remove //sys/pool_trees/physical/busy --force
expect_err 'error: remove: //sys/pool_trees/physical/busy has child pools (HTTP 409, wrong state)' "remove --force still fails on 409"
run 1 remove //sys/pool_trees/physical/html
expect_err "error: remove: HTTP 502 from http://127.0.0.1:$port/api/v1/remove: <html>bad gateway</html>" "non-JSON error"

# ---- remote errors: 4xx, message shown, exit 1 ---------------------------------------------
run 1 get //sys/pools/missing/@weight
expect_err 'error: get: path //sys/pools/missing/@weight does not exist (HTTP 404, not found)' "get 404"
[ -s "$work/out" ] && check_fail "get 404 wrote to stdout"
run 1 set //sys/pools/a/@weight -1
expect_sent '["/api/v1/set",'"$A"',{"path":"//sys/pools/a/@weight","value":-1}]' "set negative"
expect_err 'error: set: //sys/pools/a/@weight: must be a positive number, got -1 (HTTP 400, invalid argument)' "set 400"

# ---- token resolution: header from the variable, --token, the data dir's admin_token --------
POOLSCHED_TOKEN= run 1 exists //sys/pools --data-dir "$work/nowhere"
expect_sent '["/api/v1/exists",null,"application/json",{"path":"//sys/pools"}]' "no token"
expect_err "error: exists: authentication required: no token was sent (pass --token, set POOLSCHED_TOKEN, or point --data-dir or POOLSCHED_DATA_DIR at the scheduler's data dir: there is no $work/nowhere/admin_token)" "401 without a token names the ways to give one"
POOLSCHED_TOKEN= run 1 exists //sys/pools --token wrong
expect_sent '["/api/v1/exists","OAuth wrong","application/json",{"path":"//sys/pools"}]' "--token"
mkdir -p "$work/data"
printf 'secret-token\n' > "$work/data/admin_token"
chmod 600 "$work/data/admin_token"
POOLSCHED_TOKEN= POOLSCHED_DATA_DIR="$work/data" run 0 exists //sys/pools
expect_sent '["/api/v1/exists",'"$A"',{"path":"//sys/pools"}]' "token from POOLSCHED_DATA_DIR"
(cd "$work" && mkdir -p poolsched-data && cp data/admin_token poolsched-data/ &&
 POOLSCHED_TOKEN= "$bin" exists //sys/pools > /dev/null 2>&1) || check_fail "token from ./poolsched-data"
chmod 644 "$work/data/admin_token"
POOLSCHED_TOKEN= run 1 exists //sys/pools --data-dir "$work/data"
grep -q "admin_token" "$work/err" || check_fail "loose token file: $(cat "$work/err")"
expect_sent '' "nothing sent with a loose token file"

# ---- proxy: --proxy beats the variable; http:// URLs work ----------------------------------
run 0 exists //sys/pools --proxy "http://127.0.0.1:$port/"
POOLSCHED_PROXY=127.0.0.1:1 run 0 exists //sys/pools --proxy "127.0.0.1:$port"

# ---- no server: exit 1 and a clear message -------------------------------------------------
POOLSCHED_PROXY=127.0.0.1:1 run 1 get //sys/pools
expect_err 'error: get: cannot connect to http://127.0.0.1:1/api/v1/get: Connection refused (is the scheduler running? set --proxy or POOLSCHED_PROXY)' "connection refused"

# ---- operations --------------------------------------------------------------------------
run 0 vanilla --pool research --job-count 2 --command 'sleep 1' --cpu 1.5 --memory 2G --env A=1
# start_op, then where the operation went: its pools, and whether that pool is ephemeral (a
# pool that did not exist; vanilla then warns)
expect_sent '["/api/v1/start_op",'"$A"',{"operation_type":"vanilla","spec":{"pool":"research","tasks":{"task":{"command":"sleep 1","cpu_limit":1.5,"environment":{"A":"1"},"job_count":2,"memory_limit":2147483648}}}}]
["/api/v1/get_operation",'"$A"',{"operation_id":"op-1"}]
["/api/v1/get",'"$A"',{"path":"//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/research"}]' "vanilla"
expect_out 'op-1' "vanilla prints the id"

# an ephemeral pool already gone when asked (its operation ended at once): still a warning
run 0 vanilla --pool missing-pool --job-count 1 --command true
expect_out 'op-eph' "vanilla into a missing pool prints the id"
expect_err 'warning: vanilla: pool "missing-pool" does not exist in pool tree "physical": the operation runs in the ephemeral pool "missing-pool" under the default parent pool of user "alice" (it counts against max_ephemeral_pool_per_user)' \
  "vanilla warns of an ephemeral pool gone again"

run 0 vanilla --pool research --job-count 1 --command true --wait
expect_out 'op-1
operation op-1 completed' "vanilla --wait completed"
[ "$(sent | wc -l)" -eq 4 ] || check_fail "vanilla --wait: expected start_op, the pool check and two polls: $(sent)"
run 1 vanilla --pool failing --job-count 1 --command false --wait
expect_out 'op-fail
operation op-fail failed' "vanilla --wait failed"
expect_err 'error: operation: job task/0 failed: exit code 3' "vanilla --wait failed message"

run 0 vanilla --job-count 1 --command true --wait --format json
python3 -c '
import json, sys
text = open(sys.argv[1]).read()
first, end = json.JSONDecoder().raw_decode(text)
final = json.loads(text[end:])
assert first == {"operation_id": "op-1"} and final["state"] == "completed", text
' "$work/out" || check_fail "vanilla --wait --format json: $(cat "$work/out")"

printf '{pool=research; tasks={t={command="echo hi"; job_count=1}}}' > "$work/spec.yson"
run 0 start-op --spec "$work/spec.yson"
expect_sent '["/api/v1/start_op",'"$A"',{"operation_type":"vanilla","spec":{"pool":"research","tasks":{"t":{"command":"echo hi","job_count":1}}}}]
["/api/v1/get_operation",'"$A"',{"operation_id":"op-1"}]
["/api/v1/get",'"$A"',{"path":"//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/research"}]' "start-op"
run 2 start-op --spec "$work/no-such-file"
grep -q "no-such-file" "$work/err" || check_fail "start-op missing file: $(cat "$work/err")"

run 0 list-operations --pool research --state running --limit 5
expect_sent '["/api/v1/list_operations",'"$A"',{"limit":5,"pool":"research","state":"running"}]' "list-operations"
expect_out 'ID    STATE    USER   POOL      PROGRESS         START TIME            PENDING REASON
op-2  running  alice  research  0/2 (2 running)  2024-05-01T12:00:00Z  -
op-1  running  alice  research  0/2 (2 running)  2024-05-01T12:00:00Z  -' "list-operations table"
run 0 list-operations --format json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert [o["id"] for o in d["operations"]] == ["op-2","op-1"]' "$work/out" \
  || check_fail "list-operations --format json: $(cat "$work/out")"

# Global options before the command, as `yt` users type them (`yt --proxy H list ...`).
POOLSCHED_PROXY=127.0.0.1:1 POOLSCHED_TOKEN=wrong-token
run 0 --proxy "127.0.0.1:$port" --token secret-token list-operations --pool research
expect_sent '["/api/v1/list_operations",'"$A"',{"pool":"research"}]' "global --proxy/--token before the command"
POOLSCHED_PROXY="127.0.0.1:$port" POOLSCHED_TOKEN=secret-token
run 0 --format=json list-operations
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$work/out" || check_fail "global --format=json: $(cat "$work/out")"
run 1 --proxy 127.0.0.1:1 list-operations
grep -q "127.0.0.1:1" "$work/err" || check_fail "global --proxy is used: $(cat "$work/err")"
run 2 --proxy
grep -q -- "--proxy: needs a value" "$work/err" || check_fail "global option without value: $(cat "$work/err")"
run 2 --proxy "127.0.0.1:$port"
grep -q "a command is needed" "$work/err" || check_fail "global options without a command: $(cat "$work/err")"

run 1 get-operation op-missing
expect_err 'error: get-operation: no operation op-missing (HTTP 404, not found)' "get-operation 404"
run 0 get-operation op-x
expect_sent '["/api/v1/get_operation",'"$A"',{"operation_id":"op-x"}]' "get-operation"
head -1 "$work/out" | grep -q '^id  *op-x$' || check_fail "get-operation block: $(cat "$work/out")"
grep -q '^progress  *total 2, pending 0, running 2' "$work/out" || check_fail "get-operation progress: $(cat "$work/out")"

for c in abort suspend resume complete; do
  run 0 $c-op op-1
  expect_sent '["/api/v1/'$c'_op",'"$A"',{"operation_id":"op-1"}]' "$c-op"
done
run 1 abort-op op-missing
expect_err 'error: abort-op: no operation op-missing (HTTP 404, not found)' "abort-op 404"
run 0 update-op-parameters op-1 '{pool=other; scheduling_options_per_pool_tree={physical={weight=3}}}'
expect_sent '["/api/v1/update_op_parameters",'"$A"',{"operation_id":"op-1","parameters":{"pool":"other","scheduling_options_per_pool_tree":{"physical":{"weight":3}}}}]' "update-op-parameters"

run 0 list-jobs op-1 --state completed
expect_sent '["/api/v1/list_jobs",'"$A"',{"operation_id":"op-1","state":"completed"}]' "list-jobs"
expect_out 'ID  STATE      NODE  CPU LIMIT/GUARANTEE  MEMORY RESERVE/LIMIT  DURATION  ERROR
j1  completed  n1    1.00/1.00            256M/512M             5s        -' "list-jobs table"
run 0 list-jobs op-1 --state failed --sort-field finish_time --sort-order descending --offset 5 --limit 10
expect_sent '["/api/v1/list_jobs",'"$A"',{"limit":10,"offset":5,"operation_id":"op-1","sort_field":"finish_time","sort_order":"descending","state":"failed"}]' "list-jobs paged"
run 0 get-job-stderr --operation-id op-1 --job-id j1
expect_sent '["/api/v1/get_job_stderr",'"$A"',{"job_id":"j1","operation_id":"op-1"}]' "get-job-stderr"
expect_out 'line 1
line 2' "get-job-stderr output"
expect_err 'note: the beginning of the job'"'"'s stderr was cut' "get-job-stderr truncated"
run 0 get-job-stderr op-1 j1

# ---- usage errors: exit 2, one line, nothing sent -------------------------------------------
usage_error() {   # usage_error EXPECTED_LINE ARGS...
  local want=$1; shift
  run 2 "$@"
  expect_err "$want" "poolsched $*"
  [ -s "$work/out" ] && check_fail "poolsched $*: wrote to stdout"
  expect_sent '' "poolsched $* sent a request"
}
usage_error 'error: vanilla: --memory: "2X" is not a size (use bytes or K/M/G/T)' \
  vanilla --pool p --job-count 1 --command x --memory 2X
usage_error 'error: vanilla: --cpu: "0.001" is not a number of cores (> 0, at most 1000000, at most 2 decimals)' \
  vanilla --job-count 1 --command x --cpu 0.001
usage_error 'error: vanilla: --job-count is required (or give tasks.task.job_count in --spec)' \
  vanilla --command x
usage_error 'error: get: missing PATH (see poolsched get --help)' get
usage_error 'error: get: unexpected argument "b" (see poolsched get --help)' get //a b
usage_error 'error: get: unknown option "--poxy" (see poolsched get --help)' get //a --poxy x
usage_error 'error: get: --format: must be one of yson, json, got "xml" (see poolsched get --help)' \
  get //a --format xml
usage_error 'error: get: invalid path "sys/pools": a path must start with "//" (like //sys/pool_trees/...) at position 1' \
  get sys/pools
usage_error 'error: set: VALUE: invalid YSON at line 1, column 4: unexpected end of input, expected a value' \
  set //a/@b '{a='
usage_error 'error: create: --attributes: must be a map such as '"'"'{name=x; pool_tree=physical}'"'"' (see poolsched create --help)' \
  create scheduler_pool --attributes '[1]'
usage_error 'error: list-operations: --limit: must be an integer from 1 to 100000, got "0" (see poolsched list-operations --help)' \
  list-operations --limit 0
usage_error 'error: list-jobs: --offset: must be an integer from 0 to 1000000000000000, got "-1" (see poolsched list-jobs --help)' \
  list-jobs op-1 --offset -1
usage_error 'error: abort-op: missing OPERATION_ID (see poolsched abort-op --help)' abort-op
usage_error 'error: update-op-parameters: PARAMETERS: must be a map such as '"'"'{weight=2}'"'"' (see poolsched update-op-parameters --help)' \
  update-op-parameters op-1 5
usage_error 'error: get-job-stderr: missing JOB_ID (see poolsched get-job-stderr --help)' get-job-stderr op-1
usage_error 'error: start-op: --spec FILE is required (see poolsched start-op --help)' start-op
usage_error 'error: get: --proxy: "ftp://x" is not an http(s) URL or host:port' get //a --proxy ftp://x

# --help works for every client command and mentions the connection options
for c in get set list create remove exists vanilla start-op list-operations get-operation \
         abort-op suspend-op resume-op complete-op update-op-parameters list-jobs get-job-stderr; do
  run 0 $c --help
  grep -q "^usage: poolsched $c" "$work/out" || check_fail "$c --help: $(head -1 "$work/out")"
  grep -q "POOLSCHED_PROXY" "$work/out" || check_fail "$c --help does not explain --proxy"
done

finish
