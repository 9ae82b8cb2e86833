#!/usr/bin/env bash
# list-nodes against a real scheduler with fake nodes: a node's state, address, tree, tags,
# resources in use of its limits and running jobs; a node going offline (no heartbeat past
# node_offline_timeout) and coming back; json output with every attribute.
# usage: server_list_nodes.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_list_nodes.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import json, re, subprocess, sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
s = Scheduler(bin, work + "/data", {"node_offline_timeout": 1000, "fair_share_update_period": 200}).start()


def cli(*args):
    p = subprocess.run([bin, "--proxy", "127.0.0.1:%d" % s.port, "--token", s.admin] + list(args),
                       capture_output=True, text=True, timeout=30)
    check(p.returncode == 0, "list-nodes exit %d: %s" % (p.returncode, p.stderr))
    return p.stdout


def row(table, node):
    for line in table.splitlines():
        if line.split()[:1] == [node]:
            return line.split()
    return None


with s:
    s.set("//sys/pool_trees/physical/@fair_share_update_period", 200)
    s.ok("create", {"type": "scheduler_pool_tree", "path": "//sys/pool_trees/gpu",
                    "attributes": {"config": {"nodes_filter": "gpu"}}})
    s.set("//sys/pool_trees/physical/@nodes_filter", "!gpu")
    a = FakeNode(s, "alpha", cpu=4, memory=8 << 30, slots=4)
    g = FakeNode(s, "gamma", cpu=2, memory=4 << 30, slots=2, tags=["gpu", "ssd"])
    a.heartbeat()
    g.heartbeat()
    spec = {"tasks": {"t": {"command": "true", "job_count": 3, "cpu_limit": 1, "memory_limit": 1 << 30}}}
    s.ok("start_op", {"operation_type": "vanilla", "spec": spec})
    time.sleep(0.4)
    a.heartbeat()
    check(len(a.running) == 3, "alpha runs 3 jobs: %d" % len(a.running))

    t = cli("list-nodes")
    lines = t.splitlines()
    check(lines[0].split() == ["ID", "STATE", "ADDRESS", "TREE", "TAGS", "CPU", "MEMORY", "SLOTS",
                               "JOBS", "LAST", "HEARTBEAT"], "header: %s" % lines[0])
    r = row(t, "alpha")
    check(r is not None and r[1:6] == ["online", "127.0.0.1", "physical", "-", "3.00/4.00"],
          "alpha row: %s" % r)
    check(r is not None and r[7:9] == ["3/4", "3"], "alpha slots and jobs: %s" % r)
    r = row(t, "gamma")
    check(r is not None and r[1:6] == ["online", "127.0.0.1", "gpu", "gpu,ssd", "0.00/2.00"],
          "gamma row: %s" % r)
    check([l.split()[0] for l in lines[1:]] == ["alpha", "gamma"], "rows in id order: %s" % t)

    # gamma stops heartbeating: offline after node_offline_timeout, back with its next heartbeat
    for _ in range(6):
        time.sleep(0.4)
        a.heartbeat()
    r = row(cli("list-nodes"), "gamma")
    check(r is not None and r[1] == "offline", "gamma offline after the timeout: %s" % r)
    check(r is not None and r[3] == "-", "an offline node is in no tree: %s" % r)
    g.heartbeat()
    r = row(cli("list-nodes"), "gamma")
    check(r is not None and r[1:4] == ["online", "127.0.0.1", "gpu"], "gamma back online: %s" % r)

    d = json.loads(cli("list-nodes", "--format", "json"))
    al = d.get("alpha", {})
    check(al.get("resource_limits", {}).get("user_slots") == 4 and
          al.get("resource_usage", {}).get("user_slots") == 3 and al.get("running_job_count") == 3,
          "json attributes: %s" % al)
    check(isinstance(al.get("last_heartbeat_time"), int) and
          abs(al["last_heartbeat_time"] - time.time() * 1000) < 60000, "last_heartbeat_time: %s" % al)
finish()
EOF
