#!/usr/bin/env bash
# A real cluster on 127.0.0.1 (poolsched scheduler + poolsched node, real jobs), group "ops" of
# node_e2e.py. Bounded in time. Usage: bash node_e2e_ops.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
exec timeout -k 5 150 python3 "$3/tests/scripts/node_e2e.py" "$1" ops
