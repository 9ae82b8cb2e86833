#!/usr/bin/env bash
# The PostgreSQL store under the service: a throwaway cluster (lib/pg_cluster.bash), then a
# representative set of the service's own tests run unchanged against it, each on a fresh
# database chosen through $POOLSCHED_STORE (the scheduler's default for --store): crash safety
# (kill -9 under writes), restart recovery of history and of stored jobs, list_jobs from the
# archive, operations, the event log, and the store interface's unit test. Each run must have written to its
# database — a scheduler that ignored the setting and used SQLite fails here.
# usage: store_pg_services.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/pg_cluster.bash"
pg_test_setup "$@"

# the unit test of the store interface, on PostgreSQL
url=$(pg_cluster_createdb unit)
PS_TEST_PG_URL=$url "$(dirname "$bin")/test_store_iface" >"$work/unit.log" 2>&1 ||
  { cat "$work/unit.log"; fail "test_store_iface on PostgreSQL"; }
grep -q "postgresql" "$work/unit.log" || { cat "$work/unit.log"; fail "test_store_iface skipped PostgreSQL"; }
# the fence matters: weakened to FOR KEY SHARE, or removed, the same test must fail
for weak in key_share none; do
  url=$(pg_cluster_createdb "unit_$weak")   # fresh: a failed run leaves a live lease behind
  if PS_TEST_PG_URL=$url PS_TEST_WEAK_FENCE=$weak "$(dirname "$bin")/test_store_iface" \
       >"$work/unit_$weak.log" 2>&1; then
    fail "test_store_iface passed with the fence weakened to '$weak'"
  fi
  grep -A2 "ERROR" "$work/unit_$weak.log" | sed "s/^/  ($weak) /"
  grep -q "test_leader" <(grep FAILED "$work/unit_$weak.log") ||
    { cat "$work/unit_$weak.log"; fail "with fence '$weak', something other than test_leader failed"; }
  echo "ok a weakened fence ($weak) fails test_leader"
done

# --store and the config file's store select it; a bad value is one clear error, exit 2
url=$(pg_cluster_createdb flags)
"$bin" scheduler --listen 127.0.0.1:0 --data-dir "$work/flags" --store "$url" \
  2>"$work/flags.log" &
pid=$!
for _ in $(seq 100); do grep -q scheduler_started "$work/flags.log" 2>/dev/null && break; sleep 0.1; done
# a second scheduler on the same database is refused (one scheduler per database)
out=$("$bin" scheduler --listen 127.0.0.1:0 --data-dir "$work/flags2" --store "$url" 2>&1) &&
  fail "a second scheduler on one database started"
grep -q "in use by another scheduler" <<<"$out" || fail "second scheduler message: $out"
kill "$pid"; wait "$pid" || true
grep -q "store=postgresql://poolsched@127.0.0.1:$PG_PORT/flags" "$work/flags.log" ||
  { cat "$work/flags.log"; fail "--store did not select PostgreSQL"; }
out=$("$bin" scheduler --store mysql://x 2>&1) && fail "--store mysql:// accepted"
grep -q "not a postgresql://USER@HOST:PORT/DB URI" <<<"$out" || fail "--store message: $out"
echo '{"store": 5}' >"$work/bad.json"
out=$("$bin" scheduler --config "$work/bad.json" 2>&1) && fail "store: 5 accepted"
grep -q "store: must be a string" <<<"$out" || fail "config store message: $out"
echo "{\"store\": \"postgresql://nobody@127.0.0.1:1/none\", \"listen\": \"127.0.0.1:0\"}" >"$work/down.json"
out=$("$bin" scheduler --quiet --config "$work/down.json" --data-dir "$work/down" 2>&1) &&
  fail "an unreachable store accepted"
grep -q "store unavailable" <<<"$out" || fail "unreachable store message: $out"

# Tests whose schedulers share one data dir (restarts included) run unchanged: a fresh data dir
# there means a fresh database here. (server_regressions starts many schedulers on fresh data
# dirs, so it would share one database among them; server_stateful runs one seed for the same
# reason: each seed starts on a fresh data dir.)
export PS_STATEFUL_SEEDS=1
tests=${PS_PG_TESTS:-server_crash history_restart server_list_jobs server_operations server_cypress
                     server_stateful server_reconnection node_e2e_restart server_event_log}
for t in $tests; do
  url=$(pg_cluster_createdb "$t")
  start=$(date +%s)
  if ! POOLSCHED_STORE=$url bash "$src/tests/scripts/$t.sh" "$bin" "$data" "$src" >"$work/$t.log" 2>&1; then
    tail -40 "$work/$t.log"
    fail "$t on PostgreSQL"
  fi
  objects=$(PG_URL=$url pg_psql -At -c "SELECT count(*) FROM objects")
  [ "$objects" -gt 0 ] || fail "$t wrote nothing to PostgreSQL: the store setting was ignored"
  echo "ok $t on PostgreSQL ($objects objects, $(( $(date +%s) - start )) s)"
done
echo "PASS store_pg_services"
