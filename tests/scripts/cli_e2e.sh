#!/usr/bin/env bash
# The client commands through a real `poolsched scheduler` on 127.0.0.1 (ephemeral port, its own
# data dir): pool tree and pool creation as yt spells it, the seed documents' commands, the
# orchid, and an operation's life without nodes (start, list, get, suspend/resume, update,
# abort), with the token taken from the data dir's admin_token. Also the remote errors (exit 1
# with the server's message). Jobs need a node agent and are not covered here.
# usage: cli_e2e.sh BINARY DATA_DIR SOURCE_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
. "$(dirname "${BASH_SOURCE[0]}")/lib/scheduler_port.sh"
sh_test "$@"
server_pid=
test_cleanup() {
  if [ -n "$server_pid" ]; then
    kill "$server_pid" 2>/dev/null
    wait "$server_pid" 2>/dev/null
  fi
}

timeout 120 "$bin" scheduler --listen 127.0.0.1:0 --data-dir "$work/data" 2> "$work/log" &
server_pid=$!
scheduler_port "$work/log"

# As a user would: the proxy and the data dir (whose admin_token is the token) in the environment.
export POOLSCHED_PROXY="127.0.0.1:$port" POOLSCHED_DATA_DIR="$work/data"
unset POOLSCHED_TOKEN

run() {   # run EXPECTED_CODE ARGS...
  local want=$1; shift
  "$bin" "$@" > "$work/out" 2> "$work/err" < /dev/null
  local code=$?
  [ "$code" -eq "$want" ] || check_fail "poolsched $*: exit code $code, expected $want; stderr: $(cat "$work/err")"
}
expect_out() { [ "$(cat "$work/out")" = "$1" ] || check_fail "$2: stdout
$(cat "$work/out")
expected
$1"; }
expect_err_has() {
  grep -qF -- "$1" "$work/err" || check_fail "$2: stderr lacks '$1': $(cat "$work/err")"
  [ "$(wc -l < "$work/err")" -eq 1 ] || check_fail "$2: not one line on stderr: $(cat "$work/err")"
}

# ---- trees and pools ----------------------------------------------------------------------
run 0 exists //sys/pool_trees/physical
expect_out true "default tree exists"
run 0 create scheduler_pool_tree --attributes '{name=gpu; nodes_filter=gpu}'
run 0 list //sys/pool_trees
expect_out 'gpu
physical' "list trees"
run 0 get //sys/pool_trees/gpu/@nodes_filter
expect_out '"gpu"' "tree attribute applied with the creation"
run 1 create scheduler_pool_tree --attributes '{name=gpu}'
expect_err_has 'error: create: ' "tree exists"
run 0 create scheduler_pool_tree --attributes '{name=gpu}' --ignore-existing
# YTsaurus puts the tree config under `config`
run 0 create scheduler_pool_tree --attributes '{name=ssd; config={nodes_filter=ssd; max_operation_count=7}}'
run 0 get //sys/pool_trees/ssd/@nodes_filter
expect_out '"ssd"' "config={nodes_filter=...} applied with the creation"
run 0 get //sys/pool_trees/ssd/@config/max_operation_count
expect_out '7' "@config/key reads a tree attribute"
run 0 set //sys/pool_trees/ssd/@config/nodes_filter '"ssd & !gpu"'
run 0 get //sys/pool_trees/ssd/@nodes_filter
expect_out '"ssd & !gpu"' "@config/key sets a tree attribute"
run 0 get //sys/pool_trees/ssd/@config --format json
python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); assert v["nodes_filter"] == "ssd & !gpu" and v["max_operation_count"] == 7, v' "$work/out" \
  || check_fail "@config is the whole tree config: $(cat "$work/out")"
run 0 exists //sys/pool_trees/ssd
expect_out true "tree created with config exists"
run 1 create scheduler_pool_tree --attributes '{name=dup; nodes_filter=a; config={nodes_filter=b}}'
expect_err_has 'nodes_filter' "a key both in config and flat"
run 1 create scheduler_pool_tree --attributes '{name=bad; config=gpu}'
expect_err_has 'config' "config must be a map"
run 0 exists //sys/pool_trees/dup
expect_out false "a refused create creates nothing"
run 0 remove //sys/pool_trees/ssd

run 0 create scheduler_pool --attributes '{name=root-pool; pool_tree=physical}'
run 0 create scheduler_pool --attributes '{name=burst; pool_tree=physical; parent_name=root-pool}'
run 0 create scheduler_pool //sys/pool_trees/physical/root-pool/relaxed --attributes '{weight=2}'
run 0 get //sys/pools
expect_out '{
    "root-pool" = {
        "burst" = {};
        "relaxed" = {};
    };
}' "pool hierarchy"
run 0 get //sys/pool_trees/physical/root-pool/relaxed/@weight --format json
expect_out '2' "weight applied with the creation"

# ---- the seed documents' commands ----------------------------------------------------------
run 0 set //sys/pools/root-pool/@strong_guarantee_resources '{cpu=10}'
run 0 set //sys/pools/root-pool/@integral_guarantees \
  '{resource_flow={cpu=2000}; burst_guarantee_resources={cpu=2000}}'
run 0 set //sys/pools/root-pool/burst/@integral_guarantees \
  '{guarantee_type=burst; resource_flow={cpu=1000}; burst_guarantee_resources={cpu=2000}}'
run 0 set //sys/pools/root-pool/relaxed/@integral_guarantees "
    {
      guarantee_type=relaxed;
      resource_flow={cpu=1000}
    }"
run 0 set //sys/pools/root-pool/burst/@integral_guarantees/resource_flow "{cpu=100}"
run 0 get //sys/pools/root-pool/burst/@integral_guarantees/resource_flow
expect_out '{
    "cpu" = 100;
}' "nested set and get"
run 0 get //sys/pools/root-pool/burst/@integral_guarantees/guarantee_type
expect_out '"burst"' "nested set keeps the siblings"
run 0 get //sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/burst/integral_pool_capacity --format json
python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); assert isinstance(v, dict) and "cpu" in v, v' "$work/out" \
  || check_fail "orchid integral_pool_capacity: $(cat "$work/out")"
run 0 exists //sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/burst
expect_out true "orchid pool exists"

# ---- remote errors: exit 1, the server's message, one line --------------------------------
run 1 get //sys/pool_trees/physical/nope/@weight
expect_err_has 'error: get: ' "get missing"
expect_err_has '(HTTP 404, not found)' "the error class of a 404"
# transfer-pool-resources: root-pool's cpu guarantee moves to burst, under it (burst gains, the
# common ancestor root-pool keeps its 10); more than the source has is refused, naming it
run 0 transfer-pool-resources --source-pool root-pool --destination-pool burst \
  --pool-tree physical --resource-delta '{strong_guarantee_resources={cpu=4}}'
run 0 get //sys/pools/root-pool/burst/@strong_guarantee_resources/cpu
expect_out '4' "transfer-pool-resources adds to the destination"
run 0 get //sys/pools/root-pool/@strong_guarantee_resources/cpu
expect_out '10' "the common ancestor keeps its guarantee"
run 1 transfer-pool-resources --source-pool burst --destination-pool relaxed \
  --resource-delta '{strong_guarantee_resources={cpu=5}}'
expect_err_has 'pool "burst" has less strong_guarantee_resources/cpu' "a transfer of too much"
run 0 transfer-pool-resources --source-pool burst --destination-pool root-pool \
  --resource-delta '{strong_guarantee_resources={cpu=4}}'
run 0 get //sys/pools/root-pool/burst/@strong_guarantee_resources/cpu
expect_out '0' "transferred back"
# move: a pool to another parent under another name, and back by its attributes
run 0 create scheduler_pool //sys/pool_trees/physical/mv-a
run 0 move //sys/pools/mv-a //sys/pools/root-pool/mv-b
run 0 get //sys/pools/root-pool/mv-b/@parent_name
expect_out '"root-pool"' "move puts the pool under its new parent"
run 1 move //sys/pools/root-pool //sys/pools/root-pool/mv-b/x
expect_err_has 'cannot be moved under itself or its descendant' "a move under a descendant"
run 0 set //sys/pools/root-pool/mv-b/@parent_name '"<Root>"'
run 0 set //sys/pools/mv-b/@name '"mv-c"'
run 0 remove //sys/pools/mv-c
run 0 set //sys/pools/root-pool/@weight 3
[ ! -s "$work/err" ] || fail "a pool setting warns: $(cat "$work/err")"
# a key that is no pool setting is stored as a custom attribute (as upstream); set says so
run 0 set //sys/pools/root-pool/@wieght 2
expect_err_has '"wieght" is not a pool setting; stored as a custom attribute; the scheduler does not read it' \
  "set of a custom attribute warns"
run 0 get //sys/pools/root-pool/@wieght
expect_out '2' "a custom attribute reads back"
run 0 remove //sys/pools/root-pool/@wieght
run 1 set //sys/pools/root-pool/@weight -1
expect_err_has 'error: set: ' "bad weight"
run 0 get //sys/pools/root-pool/@weight
expect_out '3' "a refused change changes nothing"
run 1 remove //sys/pool_trees/physical/root-pool
expect_err_has 'root-pool' "remove a pool with children"
run 1 list-operations --token wrong
expect_err_has '(HTTP 401, permission denied)' "wrong token"

# ---- tokens: issue-token, a user's rights, revoke-token -------------------------------------
run 0 issue-token --user bob
bob=$(cat "$work/out")
[ ${#bob} -ge 32 ] || check_fail "issue-token printed no token: $bob"
run 0 list-operations --token "$bob"
run 1 create scheduler_pool //sys/pool_trees/physical/bobs --token "$bob"
expect_err_has 'HTTP 403' "a user token cannot change pools"
run 1 issue-token --user eve --token "$bob"
expect_err_has 'HTTP 403' "a user token cannot issue tokens"
run 1 revoke-token "$bob" --token "$bob"
expect_err_has 'HTTP 403' "a user token cannot revoke tokens"
run 0 issue-token --user n9 --role node --format json
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["user"]=="n9" and d["role"]=="node"' "$work/out" \
  || check_fail "issue-token --format json: $(cat "$work/out")"
run 2 issue-token
expect_err_has '--user' "issue-token without --user"
run 0 revoke-token "$bob"
run 1 list-operations --token "$bob"
expect_err_has 'HTTP 401' "a revoked token is refused at once (the cache forgets it)"
run 1 revoke-token "$bob"
expect_err_has 'no such token' "revoking twice"

# ---- an operation's life (no nodes: it stays pending) --------------------------------------
run 0 vanilla --pool burst --job-count 2 --command 'sleep 1' --cpu 1.5 --memory 1G --env A=1
op=$(cat "$work/out")
[ -n "$op" ] || check_fail "vanilla printed no id"
[ -s "$work/err" ] && check_fail "vanilla into an explicit pool warns: $(cat "$work/err")"
run 0 list-operations --pool burst --format json
python3 -c '
import json, sys
ops = json.load(open(sys.argv[1]))["operations"]
assert [o["id"] for o in ops] == [sys.argv[2]], ops
t = ops[0]["spec"]["tasks"]["task"]
assert t["cpu_limit"] == 1.5 and t["memory_limit"] == 1 << 30 and t["job_count"] == 2, t
assert t["environment"] == {"A": "1"}, t
import time
st = ops[0]["start_time"]
assert type(st) is int and abs(st - time.time() * 1000) < 600000, st
' "$work/out" "$op" || check_fail "list-operations --format json: $(cat "$work/out")"
run 0 list-operations
sed -n 2p "$work/out" | grep -q "^$op  [a-z]*  *admin  *burst  *0/2 " || check_fail "list-operations table: $(cat "$work/out")"
run 0 get-operation "$op"
grep -q "^start time  *[0-9]\{4\}-[0-9][0-9]-[0-9][0-9]T[0-9][0-9]:[0-9][0-9]:[0-9][0-9]Z$" "$work/out" \
  || check_fail "get-operation shows the start time in ISO 8601 UTC: $(cat "$work/out")"
grep -q "^tasks  *task: 2 x 'sleep 1', cpu 1.50, memory 1G$" "$work/out" || check_fail "get-operation block: $(cat "$work/out")"
run 0 suspend-op "$op"
run 0 get-operation "$op" --format json
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["suspended"] is True' "$work/out" || check_fail "suspend-op"
run 0 resume-op "$op"
run 0 get-operation "$op"
grep -q "^weight  *1$" "$work/out" || check_fail "get-operation weight before an update: $(cat "$work/out")"
run 0 update-op-parameters "$op" '{weight=2}'
# upstream keeps the change in runtime_parameters, the spec as submitted; the text view shows
# the weight and pool in effect
run 0 get-operation "$op"
grep -q "^weight  *2$" "$work/out" && grep -q "^pool  *burst$" "$work/out" \
  || check_fail "get-operation shows the current weight: $(cat "$work/out")"
run 0 get-operation "$op" --format json
python3 -c '
import json, sys
o = json.load(open(sys.argv[1]))
assert "weight" not in o["spec"], o["spec"]
assert o["runtime_parameters"]["scheduling_options_per_pool_tree"]["physical"]["weight"] == 2, o
' "$work/out" || check_fail "update-op-parameters: runtime_parameters, not spec: $(cat "$work/out")"
run 0 list-jobs "$op"
expect_out 'ID  STATE  NODE  CPU LIMIT/GUARANTEE  MEMORY RESERVE/LIMIT  DURATION  ERROR' "no jobs without nodes"
run 0 abort-op "$op"
run 0 get-operation "$op"
sed -n 2p "$work/out" | grep -q '^state  *aborted$' || check_fail "aborted: $(cat "$work/out")"

# --wait: a progress line on a terminal (script(1) gives the command one), none in a pipe
script -qfec "$bin vanilla --pool burst --job-count 3 --command true --wait" "$work/tty" > /dev/null 2>&1 &
waiter=$!
wop=
for _ in $(seq 100); do
  wop=$(grep -o '^[0-9a-f]\{1,8\}-[0-9a-f-]*' "$work/tty" 2>/dev/null | head -1)
  [ -n "$wop" ] && grep -q "operation $wop running: running=0 completed=0 pending=3" "$work/tty" && break
  sleep 0.1
done
[ -n "$wop" ] || check_fail "vanilla --wait on a terminal printed no id: $(cat "$work/tty")"
"$bin" abort-op "$wop" > /dev/null 2>&1
wait "$waiter"
code=$?
[ $code -eq 1 ] || check_fail "vanilla --wait of an aborted operation exits 1, got $code"
grep -q "^( 0 min) operation $wop running: running=0 completed=0 pending=3 failed=0 aborted=0 total=3" "$work/tty" \
  || check_fail "--wait progress line on a terminal: $(cat "$work/tty")"
[ "$(grep -c "operation $wop running:" "$work/tty")" -eq 1 ] || check_fail "--wait prints a line per change only: $(cat "$work/tty")"
grep -q "operation $wop aborted" "$work/tty" || check_fail "--wait final state: $(cat "$work/tty")"
"$bin" vanilla --pool burst --job-count 1 --command true --wait > "$work/out" 2> "$work/err" &
waiter=$!
sleep 1.2
"$bin" abort-op "$(head -1 "$work/out")" > /dev/null 2>&1
wait "$waiter"
grep -q "min) operation" "$work/err" && check_fail "--wait prints no progress line when stderr is not a terminal: $(cat "$work/err")"
run 1 abort-op "$op"
expect_err_has 'error: abort-op: ' "abort twice"
run 1 get-operation no-such-op
expect_err_has 'error: get-operation: ' "get-operation missing"

printf '{pool=burst; tasks={t={command="echo hi"; job_count=1}}}' > "$work/spec.yson"
run 0 start-op --spec "$work/spec.yson"
op2=$(cat "$work/out")
run 0 complete-op "$op2"
run 0 get-operation "$op2" --format json
python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["state"] == "completed"' "$work/out" \
  || check_fail "complete-op: $(cat "$work/out")"

# a pool that does not exist: the operation runs in an ephemeral pool of that name under the
# user's default parent pool (upstream's behaviour); the client says so on submit
run 0 vanilla --pool nosuchpool --job-count 1 --command true
eop=$(cat "$work/out")
expect_err_has 'warning: vanilla: pool "nosuchpool" does not exist in pool tree "physical": the operation runs in the ephemeral pool "nosuchpool" under "<Root>", the default parent pool of user "admin"' \
  "vanilla into a missing pool"
run 0 abort-op "$eop"

# remove: the empty tree goes, and --force accepts what is gone
run 0 remove //sys/pool_trees/gpu
run 0 exists //sys/pool_trees/gpu
expect_out false "tree removed"
run 0 remove //sys/pool_trees/gpu --force

finish
