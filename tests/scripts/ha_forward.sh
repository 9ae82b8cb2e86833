#!/usr/bin/env bash
# A standby forwards clients to the leader (docs/ha.md), on real processes: two `--ha`
# schedulers on a throwaway PostgreSQL; a client that knows only the standby's address creates a
# pool, starts an operation (/api/v1 and the YTsaurus face /api/v4, X-YT-Parameters included)
# and reads them back; node heartbeats, /metrics, /readyz and a request already forwarded are
# not passed on; the leader killed, the standby's forward fails with 503 naming the leader until
# it takes over, then it serves directly. The orchid's scheduler/service names the leader; the
# web UI's header says leader or standby and the epoch (with chromium and ui_browser.sh's npm
# packages installed, else noted and not checked).
# usage: ha_forward.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/pg_cluster.bash"
pg_test_setup "$@"
url=$(pg_cluster_createdb fwd)
# the web UI's header in headless Chromium, where ui_browser.sh's packages are installed
chromium=${PS_CHROMIUM:-$(command -v chromium || command -v chromium-browser || true)}
if [ -n "$chromium" ] && js_modules_installed "$src/tests/ui" && command -v node > /dev/null; then
  export PS_CHROMIUM=$chromium PS_JS_MODULES=$js_modules
fi
PYTHONPATH="$src/tests/scripts" python3 "$src/tests/scripts/ha_forward.py" "$bin" "$work" "$url"
