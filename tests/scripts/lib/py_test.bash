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
# The arguments and WORK are sh_test.bash's: bin, data, src (absolute) and work are set for what
# the script does around the program. A script with more to set up or tear down defines, before
# calling py_test, either of
#   py_test_setup     run in the script's shell once WORK exists, before the program (e.g. a
#                     mount below WORK; it may exit 77 to skip the test);
#   test_cleanup      sh_test's: run at exit before WORK is removed (also with KEEP set; e.g. an
#                     unmount or stopping a cluster the program started).
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/sh_test.bash"

py_test() {
  local seconds=${1:?usage: py_test SECONDS BINARY DATA_DIR SOURCE_DIR [EXTRA...]}
  shift
  sh_test "${@:1:3}"
  shift 3
  if declare -F py_test_setup > /dev/null; then py_test_setup; fi
  local bound=()
  [ "$seconds" -eq 0 ] || bound=(timeout -k 5 "$seconds")
  PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$src/tests/scripts:$src/tests/upstream" \
    "${bound[@]}" python3 - "$bin" "$work" "$@"
}
