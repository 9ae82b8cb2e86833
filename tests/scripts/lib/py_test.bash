# Sourced by the shell tests whose body is a Python program in a here-document: the one
# preamble of those tests (arguments, a work directory removed at exit, the helpers' path).
#   source "${3:?usage: NAME.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
#   py_test SECONDS "$@" [EXTRA...] <<'PY'
#   bin, work = sys.argv[1], sys.argv[2]
#   ...
#   PY
# py_test SECONDS BINARY DATA_DIR SOURCE_DIR [EXTRA...] runs the program on its stdin as
# `python3 - BINARY WORK [EXTRA...]` with tests/scripts and tests/upstream on PYTHONPATH
# (server_helper.py, node_fake.py, checks.py, upslib.py, ...; no bytecode is written into the
# source tree). WORK is a fresh directory, mode 755 (job users enter the sandboxes below it),
# removed when the script exits (kept, and named, when KEEP is set in the environment: for
# looking at a run's files). SECONDS bounds the run (SIGTERM, and SIGKILL 5 s later); 0 leaves
# it to ctest. The test's exit status is the program's.
# Sets bin, data, src and work for what the script does around it.
set -euo pipefail

py_test() {
  local seconds=${1:?usage: py_test SECONDS BINARY DATA_DIR SOURCE_DIR [EXTRA...]}
  bin=${2:?usage: py_test SECONDS BINARY DATA_DIR SOURCE_DIR [EXTRA...]}
  data=${3:?usage: py_test SECONDS BINARY DATA_DIR SOURCE_DIR [EXTRA...]}
  src=${4:?usage: py_test SECONDS BINARY DATA_DIR SOURCE_DIR [EXTRA...]}
  shift 4
  work=$(mktemp -d)
  if [ -n "${KEEP:-}" ]; then
    echo "kept $work"
  else
    trap 'rm -rf "$work"' EXIT
  fi
  chmod 755 "$work"
  local bound=()
  [ "$seconds" -eq 0 ] || bound=(timeout -k 5 "$seconds")
  PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$src/tests/scripts:$src/tests/upstream" \
    "${bound[@]}" python3 - "$bin" "$work" "$@"
}
