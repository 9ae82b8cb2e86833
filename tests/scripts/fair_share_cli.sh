#!/usr/bin/env bash
# The `poolsched fair-share` command as users meet it: bad files give exit code 2, nothing on
# stdout and exactly one line `error: <file>: <path>: <why>` on stderr; good input gives JSON that
# is byte-identical from run to run (file or stdin); --format table and --help work.
# usage: fair_share_cli.sh BINARY DATA_DIR SOURCE_DIR
set -uo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
sh_test "$@"

# expect_error NAME JSON SUBSTRING... : the file NAME.json holding JSON must be refused.
expect_error() {
  local name=$1 json=$2; shift 2
  local file="$work/$name.json"
  printf '%s' "$json" > "$file"
  "$bin" fair-share "$file" > "$work/out" 2> "$work/err"
  local code=$?
  [ "$code" -eq 2 ] || check_fail "$name: exit code $code, expected 2"
  [ -s "$work/out" ] && check_fail "$name: wrote to stdout: $(head -c 200 "$work/out")"
  local lines
  lines=$(wc -l < "$work/err")
  [ "$lines" -eq 1 ] || check_fail "$name: $lines lines on stderr, expected 1: $(cat "$work/err")"
  local msg
  msg=$(cat "$work/err")
  case "$msg" in
    "error: $file: "*) ;;
    *) check_fail "$name: message does not start with 'error: $file: ': $msg" ;;
  esac
  for want in "$@"; do
    case "$msg" in
      *"$want"*) ;;
      *) check_fail "$name: message lacks '$want': $msg" ;;
    esac
  done
}

T='"total_resources": {"cpu": 10, "user_slots": 10, "memory": 1000}'
expect_error not-json '{"total_resources": {"cpu": 10},' 'not valid JSON at line 1'
expect_error empty '' 'the input is empty'
expect_error not-object '[]' 'the top level must be a JSON object'
expect_error typo "{$T, \"pools\": [{\"name\": \"a\", \"wieght\": 2}]}" \
  'pools[0].wieght: unknown key of the pool config' 'did you mean "weight"?'
expect_error weight "{$T, \"pools\": [{\"name\": \"a\", \"weight\": \"heavy\"}]}" \
  'pools[0].weight: must be a number' 'got "heavy"'
expect_error parent "{$T, \"pools\": [{\"name\": \"a\", \"parent\": \"b\"}]}" \
  'pools[0].parent: no pool named "b"'
expect_error cycle "{$T, \"pools\": [{\"name\": \"a\", \"parent\": \"b\"}, {\"name\": \"b\", \"parent\": \"a\"}]}" \
  'parents form a cycle' '"a" -> "b" -> "a"'
expect_error duplicate "{$T, \"pools\": [{\"name\": \"a\"}, {\"name\": \"a\"}]}" \
  'pools[1].name: duplicate pool name "a"'
expect_error formula "{$T, \"pools\": [{\"name\": \"a\", \"scheduling_tag_filter\": \"ssd &\"}]}" \
  'pools[0].scheduling_tag_filter: invalid formula "ssd &"' 'position 5'
expect_error resource "{\"total_resources\": {\"cpus\": 1}}" 'total_resources: unknown resource "cpus"'
expect_error missing-pool "{$T, \"operations\": [{\"id\": \"o\", \"pool\": \"x\"}]}" \
  'operations[0].pool: no pool named "x"'
expect_error newline-in-name "{$T, \"operations\": [{\"id\": \"o\", \"pool\": \"a\\nb\"}]}" \
  'no pool named "a\nb"'
expect_error both-totals '{"total_resources": {}, "nodes": []}' 'give either total_resources or nodes'
expect_error time "{$T, \"now\": 1, \"previous_update_time\": 2}" 'previous_update_time: must not be after now'

# Usage errors: exit 2 and one line.
expect_usage_error() {
  local name=$1; shift
  "$bin" fair-share "$@" > "$work/out" 2> "$work/err"
  local code=$?
  [ "$code" -eq 2 ] || check_fail "$name: exit code $code, expected 2"
  [ "$(wc -l < "$work/err")" -eq 1 ] || check_fail "$name: stderr is not one line: $(cat "$work/err")"
  grep -q '^error: ' "$work/err" || check_fail "$name: stderr does not start with 'error: '"
  [ -s "$work/out" ] && check_fail "$name: wrote to stdout"
}
expect_usage_error no-file
expect_usage_error missing-file "$work/does-not-exist.json"
expect_usage_error unknown-option --frobnicate "$work/x.json"
expect_usage_error bad-format --format yaml "$work/x.json"
expect_usage_error two-files "$work/a.json" "$work/b.json"

"$bin" fair-share --help > "$work/help" 2>&1 || check_fail "--help: non-zero exit"
grep -q 'usage: poolsched fair-share FILE' "$work/help" || check_fail "--help: no usage line"

# Good input: exit 0, JSON, byte-identical across runs and between a file and stdin.
example="$src/examples/fair-share/example.json"
[ -f "$example" ] || check_fail "no example at $example"
if "$bin" fair-share "$example" > "$work/run1.json" 2> "$work/err1"; then
  "$bin" fair-share "$example" > "$work/run2.json" 2>/dev/null || check_fail "second run failed"
  "$bin" fair-share - < "$example" > "$work/run3.json" 2>/dev/null || check_fail "stdin run failed"
  "$bin" fair-share --format=json "$example" > "$work/run4.json" 2>/dev/null || check_fail "--format=json failed"
  cmp -s "$work/run1.json" "$work/run2.json" || check_fail "two runs differ"
  cmp -s "$work/run1.json" "$work/run3.json" || check_fail "file and stdin outputs differ"
  cmp -s "$work/run1.json" "$work/run4.json" || check_fail "--format=json differs from the default"
  python3 - "$work/run1.json" <<'PY' || check_fail "output does not follow the contract"
import json, sys
out = json.load(open(sys.argv[1]))
pools, ops = out["pools"], out["operations"]
assert "<Root>" in pools, "no <Root>"
want_pools = {"<Root>", "prod", "prod-batch", "prod-services", "analytics", "research",
              "research-ml", "research-adhoc", "sandbox"}
assert set(pools) == want_pools, sorted(pools)
assert len(ops) == 7, sorted(ops)
assert isinstance(out["alerts"], list)
shares = ["demand_share", "usage_share", "limits_share", "strong_guarantee_share"]
for name, e in list(pools.items()) + list(ops.items()):
    for key in ["fair_share_ratio", "usage_ratio", "demand_ratio", "dominant_resource",
                "detailed_fair_share", "resource_limits", "accumulated_resource_ratio_volume",
                "accumulated_resource_volume", "integral_pool_capacity", "specified_burst_ratio",
                "specified_resource_flow_ratio", "total_burst_ratio", "total_resource_flow_ratio",
                "estimated_burst_usage_duration_seconds"] + shares:
        assert key in e, (name, key)
    d = e["detailed_fair_share"]
    for s in [d["total"], d["strong_guarantee"], d["integral_guarantee"],
              d["weight_proportional"]] + [e[k] for k in shares]:
        assert sorted(s) == sorted(["user_slots", "cpu", "gpu", "memory", "network"]), (name, s)
    assert e["fair_share_ratio"] == max(d["total"].values()), name
    assert e["demand_ratio"] == max(e["demand_share"].values()), name
PY
else
  check_fail "example: exit code $?: $(cat "$work/err1")"
fi

# The table.
if "$bin" fair-share "$example" --format table > "$work/table" 2> "$work/err"; then
  grep -q 'POOL / OPERATION' "$work/table" || check_fail "table: no header"
  grep -q '^<Root> ' "$work/table" || check_fail "table: no <Root> row"
  grep -q '^    prod-batch ' "$work/table" || check_fail "table: prod-batch not indented under prod"
  grep -q '^      etl-nightly ' "$work/table" || check_fail "table: operation not under its pool"
  grep -q '^total resources: user_slots 224, cpu 224, gpu 16' "$work/table" || check_fail "table: totals"
else
  check_fail "table: exit code $?: $(cat "$work/err")"
fi

finish "fair-share CLI: all checks passed"
