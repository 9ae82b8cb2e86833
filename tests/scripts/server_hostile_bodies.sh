#!/usr/bin/env bash
# Hostile clients and request bodies (issue 13), against a real scheduler on 127.0.0.1:
#   1. 40 connections without a token announce 15 MB bodies: each gets 401 on its headers,
#      before sending any body byte, and pushing the bodies anyway leaves the scheduler's peak
#      RSS (VmHWM) within 50 MB of where it was (the campaign saw 27 MB -> 642 MB).
#   2. A 100 MB chunked body with a valid token gets 413 and the JSON error shape, not a dropped
#      connection.
#   3. Body limits per endpoint: 2 MiB to /api/v1/get is 413 on the headers (limit 1 MiB);
#      2 MiB to start_op (limit 16 MiB) is read and answered by the command (400).
# usage: server_hostile_bodies.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_hostile_bodies.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import json, socket, sys, threading, time
from server_helper import Scheduler, check, finish
from hostile import connect, read_response, request_head, vm_kb, raise_nofile

bin, work = sys.argv[1], sys.argv[2]
raise_nofile()
with Scheduler(bin, work + "/data").start() as s:
    port = s.port
    # --- 1. unauthenticated bodies ------------------------------------------------------
    s.ok("list", {"path": "//sys/pool_trees"})
    base_kb = vm_kb(s.proc.pid, "VmRSS")
    BODY = 15 * 1000 * 1000
    socks = []
    for i in range(40):
        c = connect(port)
        c.sendall(request_head("POST", "/api/v1/start_op",
                               {"Content-Length": BODY, "Content-Type": "application/json"}))
        socks.append(c)
    time.sleep(1.0)
    early = [read_response(c, timeout=0.2) for c in socks]
    n401 = sum(1 for r in early if r and r[0] == 401)
    check(n401 == 40, "401 on the headers, before any body byte, for 40 tokenless uploads: got %d (%s)"
          % (n401, [r and r[0] for r in early][:5]))
    if early[0]:
        body = json.loads(early[0][2])
        check(body.get("code") == -7 and body.get("error") == "permission denied",
              "401 body has the error shape: %s" % body)
    # Push the bodies anyway (the server may have closed: ignore resets).
    chunk = b"x" * (1 << 20)

    errors = []

    def push(c):
        sent = 0
        try:
            c.settimeout(20)
            while sent < BODY:
                c.sendall(chunk[:min(len(chunk), BODY - sent)])
                sent += len(chunk)
        except OSError as e:
            errors.append("%s after %d MB" % (e, sent >> 20))
    ts = [threading.Thread(target=push, args=(c,)) for c in socks]
    t0 = time.monotonic()
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    for c in socks:
        c.close()
    time.sleep(0.3)
    hwm_kb = vm_kb(s.proc.pid, "VmHWM")
    print("unauthenticated 40 x 15 MB: RSS before %d kB, peak %d kB (+%d MB), %.1f s, "
          "%d uploads cut off (%s)" % (base_kb, hwm_kb, (hwm_kb - base_kb) // 1024,
                                       time.monotonic() - t0, len(errors), errors[:2]), flush=True)
    check(hwm_kb - base_kb < 50 * 1024,
          "peak RSS grows by less than 50 MB under 40 unauthenticated 15 MB bodies: +%d MB"
          % ((hwm_kb - base_kb) // 1024))
    check(s.proc.poll() is None, "scheduler alive after the unauthenticated uploads")

    # --- 2. 100 MB chunked body with a token ----------------------------------------------
    c = connect(port, timeout=30)
    c.sendall(request_head("POST", "/api/v1/get",
                           {"Authorization": "OAuth " + s.admin, "Transfer-Encoding": "chunked",
                            "Content-Type": "application/json"}))
    piece = b"%x\r\n" % len(chunk) + chunk + b"\r\n"
    err = None
    try:
        for _ in range(100):
            c.sendall(piece)
        c.sendall(b"0\r\n\r\n")
    except OSError as e:
        err = e
    r = read_response(c, timeout=30)
    c.close()
    check(err is None, "the 100 MB chunked body was read to its end, not cut off: %s" % err)
    check(r is not None and r[0] == 413, "100 MB chunked body: 413, got %s" % (r and r[:2],))
    if r and r[0] == 413:
        body = json.loads(r[2])
        check(body.get("code") == -5 and body.get("error") == "limit exceeded" and
              "limit" in body.get("message", ""), "413 body has the error shape: %s" % body)

    # --- 3. per-endpoint limits -------------------------------------------------------------
    big = b'{"path": "' + b"a" * (2 << 20) + b'"}'
    c = connect(port)
    c.sendall(request_head("POST", "/api/v1/get", {"Authorization": "OAuth " + s.admin,
                                                   "Content-Length": len(big)}))
    r = read_response(c, timeout=5)
    c.close()
    check(r is not None and r[0] == 413, "2 MiB to get (limit 1 MiB): 413 on the headers, got %s"
          % (r and r[:2],))
    spec = {"operation_type": "vanilla", "spec": {"pool": "p", "filler": "a" * (2 << 20)}}
    st, out = s.call("start_op", spec)
    check(st == 400 and "tasks" in json.dumps(out),
          "2 MiB start_op (limit 16 MiB) reaches the command: %d %s" % (st, str(out)[:200]))
    check(s.proc.poll() is None, "scheduler alive at the end")
finish()
EOF
