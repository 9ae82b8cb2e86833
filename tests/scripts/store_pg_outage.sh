#!/usr/bin/env bash
# PostgreSQL going away under the scheduler (store_pg_outage.py): writes refused with 503
# "storage unavailable" and changing nothing while it is down, reads answered from memory,
# writes resuming by themselves once it is back, every acknowledged write kept.
# usage: store_pg_outage.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/pg_cluster.bash"
pg_test_setup "$@"
export POOLSCHED_STORE=$(pg_cluster_createdb outage)
PYTHONPATH="$src/tests/scripts" python3 "$src/tests/scripts/store_pg_outage.py" "$bin" "$work"
