#!/usr/bin/env bash
# A real cluster on 127.0.0.1 (poolsched scheduler + poolsched node, real jobs), group "dupid" of
# node_e2e.py: jobs must not run twice (docs/faults.md). Bounded in time.
# Usage: bash node_e2e_dupid.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
exec timeout -k 5 60 python3 "$3/tests/scripts/node_e2e.py" "$1" dupid
