#!/usr/bin/env bash
# The official YTsaurus Python client and yt CLI, unchanged, against a scheduler and a node
# agent: the 59 everyday steps of yt_python_client.py (pools, vanilla operations sync and async,
# their actions, jobs and stderr, the orchid, batches, errors). The client is not part of
# poolsched and is not fetched here: the test is skipped (77) unless PS_YT_CLIENT names a copy
# of its python tree (the directory holding yt/wrapper, with its yt/packages importable) and
# PS_YT_PYTHON (default python3) the interpreter that runs it. docs/api.md "The Python client
# and the yt CLI" tells how the measurement was made.
# usage: yt_python_client.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
. "$(dirname "${BASH_SOURCE[0]}")/lib/scheduler_port.sh"
sh_test "$@"
if [ -z "${PS_YT_CLIENT:-}" ] || [ ! -d "$PS_YT_CLIENT/yt/wrapper" ]; then
  echo "skipped: set PS_YT_CLIENT to the client's python tree"
  exit 77
fi
py=${PS_YT_PYTHON:-python3}
pids=()
test_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
}
echo '{"heartbeat_period": 500}' > "$work/config.json"   # running jobs' stderr comes sooner
"$bin" scheduler --listen 127.0.0.1:0 --data-dir "$work/data" --config "$work/config.json" \
  >/dev/null 2>"$work/log" &
pids+=($!)
scheduler_port "$work/log"
"$bin" node --scheduler "http://127.0.0.1:$port" --node-id "py$$" \
  --resources cpu=2,memory=2G,user_slots=4 --data-dir "$work/data" --work-dir "$work/node" \
  >/dev/null 2>"$work/node.log" &
pids+=($!)
PYTHONWARNINGS=ignore PYTHONPATH="$PS_YT_CLIENT" YT_PROXY="http://127.0.0.1:$port" \
  YT_TOKEN=$(cat "$work/data/admin_token") timeout 900 "$py" "$src/tests/scripts/yt_python_client.py"
