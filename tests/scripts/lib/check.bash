# Sourced by the shell tests: the one harness of tests/scripts/*.sh.
#   fail MSG     the test fails now: "FAIL: MSG" on stderr, then whatever the script's
#                fail_context function prints (logs, when the script defines one), exit 1.
#   check_fail MSG
#                a failed check; the test goes on, and finish fails it at the end.
#   finish [OK-LINE]
#                exit 1 after "N failure(s)" when a check failed; else prints OK-LINE ("ok").
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
