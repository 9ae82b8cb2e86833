#!/usr/bin/env bash
# PostgreSQL going away under the scheduler (store_pg_outage.py): writes refused with 503
# "storage unavailable" and changing nothing while it is down, reads answered from memory,
# writes resuming by themselves once it is back, every acknowledged write kept.
# usage: store_pg_outage.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?usage: store_pg_outage.sh BINARY DATA_DIR SOURCE_DIR}
src=${3:?}
work=$(mktemp -d)
source "$src/tests/scripts/pg_cluster.bash"
trap 'pg_cluster_stop; rm -rf "$work"' EXIT
pg_cluster_start "$work/pg"
export POOLSCHED_STORE=$(pg_cluster_createdb outage)
export PG_CLUSTER_LIB="$src/tests/scripts/pg_cluster.bash"
PYTHONPATH="$src/tests/scripts" python3 "$src/tests/scripts/store_pg_outage.py" "$bin" "$work"
