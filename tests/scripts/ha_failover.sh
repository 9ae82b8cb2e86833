#!/usr/bin/env bash
# Standby schedulers on PostgreSQL (docs/ha.md), on real processes: two schedulers with --ha on
# one database, 8 writers creating pools through whichever answers 200, and a fake node with
# running jobs. Rounds of faults on the leader:
#   cut         its connections to PostgreSQL blackholed by a loopback TCP proxy (a partition):
#               it must step down (exit 75) and write nothing after the takeover;
#   kill -9     the standby takes over: time from the kill to the first write the new leader
#               accepts (p50, max; goal <= 5 s), the killed one restarts as a standby;
#   SIGSTOP     past its lease, then SIGCONT: the old leader must write nothing after the
#               takeover (rows of its epoch committed after the takeover's transaction: 0) and
#               step down (exit 75), then restart as a standby.
# At the end every acknowledged write is there exactly once, and the jobs that ran across the
# failovers were never started twice (each job id is started once on the node).
# HA_ROUNDS (default 2) kill -9 rounds and HA_STOP_ROUNDS (default 1) SIGSTOP rounds; `make
# ha-faults` runs the long form (20 and 3) and prints the figures for docs/ha.md.
# usage: ha_failover.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/pg_cluster.bash"
pg_test_setup "$@"
url=$(pg_cluster_createdb ha)
PYTHONPATH="$src/tests/scripts" python3 "$src/tests/scripts/ha_faults.py" "$bin" "$work" "$url" \
  "$PG_BIN/psql" "${HA_ROUNDS:-2}" "${HA_STOP_ROUNDS:-1}"
