#!/usr/bin/env bash
# The web UI (/ui/, docs/ui.md) in Debian's headless Chromium, driven by playwright-core
# (pinned in tests/ui/package.json and package-lock.json) against the local example cluster
# (scripts/local-cluster.sh: a real scheduler, three real node agents, the example pool tree and
# operations). tests/ui/ui.test.js logs in with the admin token, checks the pools page against
# the orchid, edits a weight (preview, save, the share moves), sees a bad value refused, finds a
# reclaimed CPU guarantee on an operation's page, suspends and resumes it there, checks that a
# user is offered only what its permissions allow (no editor without write on the pool, the
# user-managed attributes only without administer, no operation actions without manage) and that
# the pool page shows the effective ACL, reads the nodes and the charts, and saves a
# screenshot of each page to PS_SCREENSHOTS; tests/ui/layout.test.js checks every page at 1280,
# 1400 and 1920 px with long values (no sideways scrolling, cut values titled) and the charts
# with an outlier; what_if.test.js the pool page's what-if form (and that a page asked for while the login answers renders once, keeping what is typed); report.test.js a simulation's report.html (default: a scratch directory removed at the end;
# `make screenshots` sets docs/screenshots/).
# Skipped (77) without chromium, unless CI is set. npm packages: js_modules (lib/sh_test.bash),
# `npm ci` into a cache keyed by the lock file (PS_JS_CACHE, default ~/.cache/poolsched-js).
# usage: ui_browser.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
. "$(dirname "${BASH_SOURCE[0]}")/lib/scheduler_port.sh"
sh_test "$@"
chromium=${PS_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -z "$chromium" ]; then
  if [ -n "${CI:-}" ]; then echo "FAIL: chromium missing (CI is set): run scripts/deps.sh"; exit 1; fi
  echo "SKIP: chromium missing (scripts/deps.sh installs it)"; exit 77
fi
for tool in node npm curl; do
  command -v "$tool" >/dev/null || { echo "FAIL: $tool missing: run scripts/deps.sh"; exit 1; }
done
js_modules "$src/tests/ui"

port=$(free_port)
# node ids of its own: script_local_cluster may run at the same time (ctest -j) with the plain ones
export POOLSCHED_PORT=$port RUN_DIR=$work/run NODE_PREFIX=ui-
test_cleanup() { bash "$src/scripts/local-cluster.sh" stop > /dev/null 2>&1; }
fail_context() { for f in "$RUN_DIR"/*.log; do echo "---- $f"; tail -20 "$f"; done; }
out=$(cd "$work" && timeout 60 bash "$src/scripts/local-cluster.sh" start "$bin") || fail "start: $out"
# shellcheck disable=SC1091
. "$RUN_DIR/examples"
export POOLSCHED_PROXY=127.0.0.1:$port POOLSCHED_DATA_DIR=$RUN_DIR/data
user_token=$("$bin" issue-token --user alice)
# The example pools' guarantees fit the tree, so there is no alert; the pools page's alerts are
# checked with one raised here: burst's burst guarantee to 3 cores (prod's strong 2 + 3 of 4).
"$bin" set //sys/pool_trees/physical/burst/@integral_guarantees/burst_guarantee_resources '{cpu=3}' ||
  fail "raising burst's guarantee"

# The files without a token, with their types; an unknown file is a 404 in the API's shape;
# get_history refuses a bad parameter naming it.
u=http://127.0.0.1:$port
[ "$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "$u/")" = "302 $u/ui/" ] || fail "GET / does not redirect to /ui/"
[ "$(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$u/ui/app.js")" = "200 text/javascript; charset=utf-8" ] ||
  fail "GET /ui/app.js: $(curl -s -o /dev/null -w '%{http_code} %{content_type}' "$u/ui/app.js")"
curl -s "$u/ui/vendor/uPlot.iife.min.js" | cmp -s - "$src/web/dist/uPlot.iife.min.js" || fail "vendored uPlot not served as committed"
got=$(curl -s --path-as-is -w ' %{http_code}' "$u/ui/../api/v1/get")
[ "${got##* }" = 404 ] || fail "GET /ui/../api/v1/get (only the embedded files are served): $got"
got=$(curl -s -w ' %{http_code}' -X POST "$u/api/v1/get_history" -H "Authorization: OAuth $(cat "$RUN_DIR/data/admin_token")" -d '{"pools": "prod"}')
[ "$got" = '{"code":-1,"error":"invalid argument","message":"pools: must be a list of pool names"} 400' ] || fail "get_history with a bad pools: $got"

# The pool editor offers a user with write but not administer the user-managed attributes: its
# list (web/src/pools.js) must be the server's (user_managed in src/server/api_cypress_write.c).
listed() { awk "/$2/{on=1} on{print} on&&/$3/{exit}" "$1" | grep -o "[\"'][a-z_]*[\"']" | tr -d "\"'" | sort; }
[ "$(listed "$src/web/src/pools.js" 'const USER_MANAGED' '];')" = \
  "$(listed "$src/src/server/api_cypress_write.c" 'static bool user_managed' '};')" ] ||
  fail "USER_MANAGED in web/src/pools.js differs from user_managed in src/server/api_cypress_write.c"
[ "$(listed "$src/web/src/pools.js" 'const USER_MANAGED' '];' | wc -l)" = 12 ] || fail "USER_MANAGED not found"

NODE_PATH="$js_modules" PS_CHROMIUM=$chromium PS_URL=http://127.0.0.1:$port \
  PS_TOKEN=$(cat "$RUN_DIR/data/admin_token") PS_USER_TOKEN=$user_token \
  PS_RELAXED_OP=$relaxed PS_GPU_OP=$gpu PS_SCREENSHOTS=${PS_SCREENSHOTS:-$work/screenshots} \
  node "$src/tests/ui/ui.test.js" || fail "browser checks"
# Every page at 1280, 1400 and 1920 px with long values (tests/ui/layout.test.js; after ui.test.js:
# it adds a pool with a long name to the example tree).
NODE_PATH="$js_modules" PS_CHROMIUM=$chromium PS_URL=http://127.0.0.1:$port \
  PS_TOKEN=$(cat "$RUN_DIR/data/admin_token") PS_GPU_OP=$gpu node "$src/tests/ui/layout.test.js" || fail "layout checks"

# The pool page's what-if form (tests/ui/what_if.test.js): a what-if task over the cluster's past.
NODE_PATH="$js_modules" PS_CHROMIUM=$chromium PS_URL=http://127.0.0.1:$port \
  PS_TOKEN=$(cat "$RUN_DIR/data/admin_token") node "$src/tests/ui/what_if.test.js" || fail "what-if checks"

# A simulation's report.html, opened from file:// (the same charts, inlined).
"$bin" simulate "$src/examples/simulate/preemption.json" --output "$work/sim" 2>/dev/null || fail "simulate"
"$bin" simulate "$src/examples/simulate/integral.json" --output "$work/sim-integral" 2>/dev/null || fail "simulate integral.json"
NODE_PATH="$js_modules" PS_CHROMIUM=$chromium PS_SIM_DIR=$work/sim PS_SIM_INTEGRAL_DIR=$work/sim-integral \
  PS_SCREENSHOTS=${PS_SCREENSHOTS:-$work/screenshots} node "$src/tests/ui/report.test.js" || fail "report checks"
