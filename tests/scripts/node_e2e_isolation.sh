#!/usr/bin/env bash
# A real cluster on 127.0.0.1, group "isolation" of node_e2e.py (issue 13): two users' jobs on
# one node run as distinct slot uids in 0700 sandboxes and cannot read or kill each other.
# Needs root (to switch users); skipped (77) otherwise. Bounded in time.
# Usage: bash node_e2e_isolation.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
    echo "skipped: needs root (jobs switch to slot uids only when the agent is root)"
    exit 77
fi
exec timeout -k 5 40 python3 "$3/tests/scripts/node_e2e.py" "$1" isolation
