# Sourced by shell tests and scripts that start `poolsched scheduler` (or PostgreSQL) on loopback.
# scheduler_port LOG [TRIES]: waits (TRIES x 50 ms, default 600: 30 s, for loaded and sanitizer
# runs) for the scheduler_started line in LOG and sets `port` to the port it listens on; on a
# timeout prints LOG and exits 1.
# free_port: prints a loopback port that is free now, for a process that must be given one (a
# fixed --listen that survives a restart, PostgreSQL).
free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

scheduler_port() {
  local log=$1 tries=${2:-600}
  port=
  for _ in $(seq 1 "$tries"); do
    port=$(grep -o 'event=scheduler_started listen=[0-9.]*:[0-9]*' "$log" 2>/dev/null | head -1 |
           sed 's/.*://') || true
    [ -n "$port" ] && return 0
    sleep 0.05
  done
  echo "FAIL: the scheduler did not start"; cat "$log"; exit 1
}
