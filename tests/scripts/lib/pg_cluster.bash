#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests and `make run-ha`: initdb in a directory of our own, a
# postmaster on a free loopback port, trust authentication for the superuser "poolsched", and a
# clean stop. initdb refuses to run as root, so under root the cluster belongs to an unprivileged
# user (postgres if it exists, else nobody).
#
# As a library (every PostgreSQL test sources it):
#   source tests/scripts/lib/pg_cluster.bash
#   pg_test_setup "$@"       # a test script's start (sh_test.bash's preamble), below
#   pg_cluster_start DIR     # or exits 77 (test skipped) when PostgreSQL is not installed;
#                            # sets PG_URL (postgresql://poolsched@127.0.0.1:PORT/postgres),
#                            # PG_PORT, PG_DIR
#   pg_cluster_createdb NAME # a fresh database; prints its URI
#   pg_cluster_kill9 / pg_cluster_restart   # faults: SIGKILL the postmaster, start it again
#   pg_cluster_stop          # stops the server (also from an EXIT trap)
#   pg_cluster_attach DIR    # another process's cluster in DIR: sets PG_DIR, PG_BIN, PG_OWNER, PG_PORT
# As a command:  bash pg_cluster.bash start DIR | stop DIR | kill9 DIR | restart DIR
pg_bin_dir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

# Runs a PostgreSQL program as the cluster's owner.
pg_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u "$PG_OWNER" -- "$@"
  else
    "$@"
  fi
}

. "$(dirname "${BASH_SOURCE[0]}")/scheduler_port.sh"   # free_port

pg_cluster_start() {
  PG_DIR=${1:?pg_cluster_start DIR}
  PG_BIN=$(pg_bin_dir) || { echo "PostgreSQL is not installed (scripts/deps.sh): skipped" >&2; exit 77; }
  PG_OWNER=$(id -un)
  if [ "$(id -u)" -eq 0 ]; then
    if id postgres >/dev/null 2>&1; then PG_OWNER=postgres; else PG_OWNER=nobody; fi
  fi
  mkdir -p "$PG_DIR"
  chmod 755 "$PG_DIR"
  # the owner must reach the directory through every parent (mktemp -d makes 0700 dirs)
  local p=$PG_DIR
  while [ "$p" != / ] && [ "$(id -u)" -eq 0 ]; do
    p=$(dirname "$p")
    [ "$p" = / ] || [ "$p" = /tmp ] || chmod o+x "$p" 2>/dev/null || true
  done
  mkdir -p "$PG_DIR/data" "$PG_DIR/sock"
  [ "$(id -u)" -ne 0 ] || chown "$PG_OWNER" "$PG_DIR/data" "$PG_DIR/sock"
  pg_as_owner "$PG_BIN/initdb" -D "$PG_DIR/data" -U poolsched --auth=trust -E UTF8 \
    --no-instructions >"$PG_DIR/initdb.log" 2>&1 || { cat "$PG_DIR/initdb.log" >&2; return 1; }
  local try
  for try in 1 2 3; do
    PG_PORT=$(free_port)
    if pg_cluster_launch; then
      PG_URL="postgresql://poolsched@127.0.0.1:$PG_PORT/postgres"
      export PG_URL PG_PORT PG_DIR PG_BIN PG_OWNER
      echo "$PG_PORT" >"$PG_DIR/port"
      return 0
    fi
  done
  echo "cannot start PostgreSQL:" >&2
  tail -20 "$PG_DIR/server.log" >&2
  return 1
}

# Starts the postmaster of $PG_DIR on $PG_PORT and waits until it accepts connections.
pg_cluster_launch() {
  [ "$(id -u)" -ne 0 ] || { touch "$PG_DIR/server.log"; chown "$PG_OWNER" "$PG_DIR/server.log"; }
  pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 30 \
    -o "-c listen_addresses=127.0.0.1 -p $PG_PORT -k $PG_DIR/sock -c max_connections=200" \
    start >/dev/null 2>&1
}

pg_psql() {
  "$PG_BIN/psql" -X -q -v ON_ERROR_STOP=1 -d "$PG_URL" "$@"
}

pg_cluster_createdb() {
  local name=${1:?pg_cluster_createdb NAME}
  pg_psql -c "CREATE DATABASE \"$name\"" >/dev/null || return 1
  echo "postgresql://poolsched@127.0.0.1:$PG_PORT/$name"
}

pg_postmaster_pid() {
  head -1 "$PG_DIR/data/postmaster.pid" 2>/dev/null
}

pg_cluster_kill9() {
  local pid
  pid=$(pg_postmaster_pid)
  [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
  # the backends exit when they notice the postmaster is gone
  for _ in $(seq 100); do
    pg_as_owner "$PG_BIN/pg_isready" -q -h 127.0.0.1 -p "$PG_PORT" || break
    sleep 0.1
  done
}

pg_cluster_restart() {
  # a killed postmaster leaves its backends behind for a moment: wait for the port to free up
  for _ in $(seq 50); do
    pg_cluster_launch && return 0
    sleep 0.2
  done
  return 1
}

# The start of every PostgreSQL test script, called with its arguments BINARY DATA_DIR
# SOURCE_DIR: sh_test's preamble (bin, data, src and work), then a cluster in $work/pg (exits 77
# where PostgreSQL is not installed), stopped at exit (test_cleanup) before $work is removed.
pg_test_setup() {
  . "$(dirname "${BASH_SOURCE[0]}")/sh_test.bash"
  sh_test "$@"
  test_cleanup() { pg_cluster_stop; }
  pg_cluster_start "$work/pg"
}

pg_cluster_stop() {
  [ -n "${PG_DIR:-}" ] && [ -f "$PG_DIR/data/postmaster.pid" ] || return 0
  pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
}

pg_cluster_attach() {
  PG_DIR=${1:?pg_cluster_attach DIR}
  PG_BIN=$(pg_bin_dir)
  PG_OWNER=$(stat -c %U "$PG_DIR/data")
  PG_PORT=$(cat "$PG_DIR/port")
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  case "${1:-}" in
    start) pg_cluster_start "${2:?start DIR}"; echo "$PG_URL" ;;
    stop) pg_cluster_attach "${2:?stop DIR}"; pg_cluster_stop ;;
    kill9) pg_cluster_attach "${2:?kill9 DIR}"; pg_cluster_kill9 ;;
    restart) pg_cluster_attach "${2:?restart DIR}"; pg_cluster_restart ;;
    *) echo "usage: pg_cluster.bash start DIR | stop DIR | kill9 DIR | restart DIR" >&2; exit 2 ;;
  esac
fi
