#!/usr/bin/env bash
# Connection exhaustion (issue 13), against a real scheduler on 127.0.0.1 started, as under a
# systemd default, with a soft fd limit of 1024:
#   1. N idle connections (2,000; POOLSCHED_HOSTILE_IDLE=10000 and the scheduler's soft fd limit
#      POOLSCHED_HOSTILE_SOFT_NOFILE=hard for the long form, `make hostile-long`) from 127.0.0.2, 127.0.0.3, ... (200 per address, under the per-address
#      limit): a new client from 127.0.0.1 is still answered within 1 s (the scheduler raises its
#      soft fd limit to the hard one and sizes its connection limit from it).
#   2. One address opening 400 connections keeps at most http_max_connections_per_ip (256).
#   3. Slowloris: a client sending one header byte every 0.5 s is cut off by the header timeout
#      (10 s default), and the idle connections of 1. are closed by it too.
# usage: server_hostile_conns.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_hostile_conns.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import os, resource, socket, statistics, sys, time
from server_helper import Scheduler, check, finish
from hostile import connect, healthz_latency, is_closed, open_idle, raise_nofile, request_head

bin, work = sys.argv[1], sys.argv[2]
N = int(os.environ.get("POOLSCHED_HOSTILE_IDLE", "2000"))
PER_SOURCE = 200
HEADER_TIMEOUT = 10.0

hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
SOFT = int(os.environ.get("POOLSCHED_HOSTILE_SOFT_NOFILE", "1024"))
resource.setrlimit(resource.RLIMIT_NOFILE, (min(SOFT, hard), hard))
s = Scheduler(bin, work + "/data").start()       # inherits the soft limit (1024 by default)
nofile = raise_nofile()
if nofile < N + 1000:
    # Both sides need a descriptor per connection; a hard limit this low cannot show the effect.
    print("skipped: the hard fd limit %d is below %d" % (nofile, N + 1000))
    s.stop()
    sys.exit(0)
idle = []
try:
    port = s.port
    quiet = [healthz_latency(port) for _ in range(5)]
    sources = ["127.0.0.%d" % (2 + i) for i in range((N + PER_SOURCE - 1) // PER_SOURCE)]
    t_open = time.monotonic()
    idle = open_idle(port, N, sources, PER_SOURCE)
    # Measure under N held connections, not during the connect burst: wait until the scheduler
    # has accepted them (its open descriptors).
    fd_dir = "/proc/%d/fd" % s.proc.pid
    while len(os.listdir(fd_dir)) < N and time.monotonic() - t_open < 6:
        time.sleep(0.1)
    print("scheduler holds %d descriptors %.1f s after the first connect"
          % (len(os.listdir(fd_dir)), time.monotonic() - t_open), flush=True)
    lat = [healthz_latency(port, timeout=5.0) for _ in range(10)]
    served = [x for x in lat if x is not None]
    print("new client from 127.0.0.1: idle %s ms, under %d idle connections from %d addresses:"
          " p50 %s ms, max %s ms, %d/10 answered"
          % ([round(x * 1000, 1) for x in quiet if x is not None], len(idle), len(sources),
             round(statistics.median(served) * 1000, 1) if served else None,
             round(max(served) * 1000, 1) if served else None, len(served)), flush=True)
    check(len(served) == 10 and max(served) < 1.0,
          "a new client is answered within 1 s under %d idle connections: %s" % (N, lat))

    # --- per-address limit ------------------------------------------------------------------
    greedy = open_idle(port, 400, ["127.0.0.250"], 400)
    t0 = time.monotonic()
    while True:   # those still in the listen backlog are refused once accepted
        time.sleep(0.5)
        open_now = sum(1 for c in greedy if not is_closed(c))
        if open_now <= 256 or time.monotonic() - t0 > 4:
            break
    print("one address opening 400 connections keeps %d" % open_now, flush=True)
    check(open_now <= 256, "one address holds at most 256 connections: %d" % open_now)
    for c in greedy:
        c.close()

    # --- slowloris ----------------------------------------------------------------------------
    slow = connect(port, "127.0.0.251")
    slow.sendall(b"GET /healthz HTTP/1.1\r\n")
    t0 = time.monotonic()
    cut = None
    trickle = b"X-Slow: " + b"a" * 200
    i = 0
    while time.monotonic() - t0 < HEADER_TIMEOUT + 4:
        try:
            slow.sendall(trickle[i % len(trickle):i % len(trickle) + 1])
        except OSError:
            cut = time.monotonic() - t0
            break
        if is_closed(slow):
            cut = time.monotonic() - t0
            break
        i += 1
        time.sleep(0.5)
    slow.close()
    print("slowloris cut off after %s s" % (cut and round(cut, 1)), flush=True)
    check(cut is not None and cut < HEADER_TIMEOUT + 3,
          "a client trickling header bytes is cut off by the header timeout: %s" % cut)
    # Connections that waited in the listen backlog were accepted (and their deadline started)
    # a little later: allow a few seconds beyond the timeout.
    while True:
        closed = sum(1 for c in idle if is_closed(c))
        if closed == len(idle) or time.monotonic() - t_open > HEADER_TIMEOUT + 8:
            break
        time.sleep(0.5)
    print("%d of %d idle connections closed %.1f s after they opened"
          % (closed, len(idle), time.monotonic() - t_open), flush=True)
    check(closed == len(idle), "idle connections that never send headers are closed by the "
          "header timeout: %d of %d" % (closed, len(idle)))
    check(healthz_latency(port) is not None, "served after the attack")
    check(s.proc.poll() is None, "scheduler alive at the end")
finally:
    for c in idle:
        c.close()
    s.stop()
finish()
EOF
