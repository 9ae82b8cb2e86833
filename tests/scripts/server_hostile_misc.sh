#!/usr/bin/env bash
# Careless clients and operators (issue 13), against a real scheduler on 127.0.0.1:
#   1. Node ids from heartbeats follow the agent's rule (core/node_id.h): "../../etc", "a/b",
#      " n1" and a 65-character id are 400; "node-1.rack_2" registers.
#   2. /metrics: on loopback with the default ("auto") no token is needed; with
#      metrics_require_token=true it is 401 without a token and 200 with a user token.
#   3. Listening beyond loopback without --allow-insecure-remote is refused (exit 2) before
#      anything is bound (192.0.2.1, TEST-NET: nothing listens beyond 127.0.0.0/8 here).
#   4. A 401 for an unknown token keeps the error shape and carries no data-dir path.
# usage: server_hostile_misc.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_hostile_misc.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import json, subprocess, sys
from server_helper import Scheduler, check, finish

bin, work = sys.argv[1], sys.argv[2]
LIMITS = {"cpu": 4, "memory": 8 << 30, "user_slots": 4}

with Scheduler(bin, work + "/a").start() as s:
    for bad in ["../../etc", "a/b", " n1", "n" * 65, ".."]:
        st, out = s.heartbeat({"node_id": bad, "resource_limits": LIMITS, "jobs": []})
        check(st == 400 and "node_id" in str(out),
              "heartbeat with node_id %r: 400 naming node_id, got %d %s" % (bad, st, str(out)[:160]))
    st, out = s.heartbeat({"node_id": "node-1.rack_2", "resource_limits": LIMITS, "jobs": []})
    check(st == 200, "heartbeat with node_id node-1.rack_2: 200, got %d %s" % (st, str(out)[:160]))
    st, text = s.raw("GET", "/metrics")
    check(st == 200 and "poolsched_nodes_online" in text,
          "GET /metrics on loopback without a token (default auto): %d" % st)
    st, out = s.call("list", {"path": "//sys/pool_trees"}, token="0" * 64)
    check(st == 401 and isinstance(out, dict) and out.get("code") == -7,
          "unknown token: 401 with the error shape: %d %s" % (st, out))
    check(work not in json.dumps(out), "no data-dir path in the 401: %s" % out)

with Scheduler(bin, work + "/b", config={"metrics_require_token": True}) as s:
    try:
        s.start()
    except RuntimeError as e:
        check(False, "scheduler starts with metrics_require_token=true: %s" % str(e)[-300:])
    else:
        st, text = s.raw("GET", "/metrics")
        check(st == 401 and json.loads(text).get("code") == -7,
              "GET /metrics without a token when required: 401, got %d %s" % (st, text[:160]))
        st, text = s.raw("GET", "/metrics", token=s.token("prometheus"))
        check(st == 200 and "poolsched_nodes_online" in text,
              "GET /metrics with a user token: 200, got %d" % st)
        st, text = s.raw("GET", "/healthz")
        check(st == 200, "GET /healthz needs no token: %d" % st)

p = subprocess.run([bin, "scheduler", "--listen", "192.0.2.1:0", "--data-dir", work + "/c"],
                   capture_output=True, text=True, timeout=20)
check(p.returncode == 2 and "--allow-insecure-remote" in p.stderr,
      "listen beyond loopback without the flag: exit 2 naming --allow-insecure-remote, got %d %s"
      % (p.returncode, p.stderr.strip()[-300:]))
finish()
EOF
