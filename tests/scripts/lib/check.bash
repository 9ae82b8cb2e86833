# Sourced by the shell tests: the one harness of tests/scripts/*.sh.
#   fail MSG     the test fails now: "FAIL: MSG" on stderr, then whatever the script's
#                fail_context function prints (logs, when the script defines one), exit 1.
#   check_fail MSG
#                a failed check; the test goes on, and finish fails it at the end.
#   finish [OK-LINE]
#                exit 1 after "N failure(s)" when a check failed; else prints OK-LINE ("ok").
#   check_json FILE PYTHON-EXPRESSION...
#                each expression must be true of the JSON object `r` in FILE; else "FAIL: ..."
#                with the report, and exit status 1 (a script under set -e stops).
failures=0

fail() {
  echo "FAIL: $*" >&2
  if declare -F fail_context > /dev/null; then
    fail_context >&2
  fi
  exit 1
}

check_fail() {
  echo "FAIL: $*"
  failures=$((failures + 1))
}

finish() {
  if [ "$failures" -ne 0 ]; then
    echo "$failures failure(s)"
    exit 1
  fi
  echo "${1:-ok}"
}

check_json() {
  local file=$1; shift
  python3 - "$file" "$@" <<'PY'
import json, sys
with open(sys.argv[1]) as f:
    text = f.read()
try:
    r = json.loads(text)
except ValueError as e:
    sys.exit(f"FAIL: not one JSON object: {e}\n{text}")
for expr in sys.argv[2:]:
    try:
        ok = eval(expr, {"r": r})
    except Exception as e:
        sys.exit(f"FAIL: {expr}: {e!r}")
    if not ok:
        sys.exit(f"FAIL: {expr}\n{json.dumps(r, indent=2)}")
PY
}
