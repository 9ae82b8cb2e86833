# Sourced by the shell tests: the one preamble of tests/scripts/*.sh (py_test.bash builds on it).
#   set -euo pipefail                  # the script's own choice of shell options
#   . "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
#   sh_test "$@"
# sh_test BINARY DATA_DIR SOURCE_DIR sets bin, data and src to them, made absolute (a script may
# change directory), and work to a fresh directory, mode 755 (job users and PostgreSQL's owner
# enter it), removed when the script exits (kept, and named, when KEEP is set in the environment:
# for looking at a run's files). A script with more to tear down (processes it started, a mount)
# defines test_cleanup: run at exit before work is removed (also with KEEP set); its failures
# are ignored. Also gives check.bash's fail, check_fail, finish and check_json, and
#   js_modules DIR   npm ci of DIR's package.json and package-lock.json, once, into a cache dir
#                    keyed by their hash (PS_JS_CACHE, default ~/.cache/poolsched-js): only the
#                    first run needs the registry. Sets js_modules to its node_modules; exits 1
#                    when npm ci fails.
#   js_modules_installed DIR
#                    the same without installing: sets js_modules and succeeds when a run of
#                    js_modules installed them.
. "$(dirname "${BASH_SOURCE[0]}")/check.bash"

sh_test() {
  [ $# -eq 3 ] || { echo "usage: $(basename "$0") BINARY DATA_DIR SOURCE_DIR" >&2; exit 2; }
  bin=$1 data=$2 src=$3
  bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
  data=$(cd "$data" && pwd)
  src=$(cd "$src" && pwd)
  work=$(mktemp -d)
  [ -z "${KEEP:-}" ] || echo "kept $work"
  trap sh_test_exit EXIT
  chmod 755 "$work"
}

sh_test_exit() {
  if declare -F test_cleanup > /dev/null; then test_cleanup || true; fi
  [ -n "${KEEP:-}" ] || rm -rf "$work"
}

js_cache_dir() {
  local key
  key=$(cat "$1/package.json" "$1/package-lock.json" | sha256sum | cut -c1-16)
  echo "${PS_JS_CACHE:-${HOME:-/tmp}/.cache/poolsched-js}/$key"
}

js_modules_installed() {
  local cache
  cache=$(js_cache_dir "$1")
  js_modules=$cache/node_modules
  [ -f "$cache/.installed" ]
}

js_modules() {
  js_modules_installed "$1" && return 0
  local cache=${js_modules%/node_modules}
  rm -rf "$cache" && mkdir -p "$cache"
  cp "$1/package.json" "$1/package-lock.json" "$cache/"
  (cd "$cache" && npm ci --no-audit --no-fund --loglevel=error) || { echo "FAIL: npm ci"; exit 1; }
  touch "$cache/.installed"
}
