#!/usr/bin/env bash
# Reproducers of the failures the stateful random test (server_stateful.sh) found, each made
# deterministic and run against a real scheduler with a fake node:
#   1. a suspended operation that then ended kept suspended=true until a restart, which
#      answered false (the flag was restored only for active operations).
# usage: server_stateful_regressions.sh BINARY SHARED_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?usage: server_stateful_regressions.sh BINARY SHARED_DIR SOURCE_DIR}
src=${3:?}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PYTHONPATH="$src/tests/scripts" python3 - "$bin" "$work" <<'EOF'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
ORCHID = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/"


def scheduler(name):
    s = Scheduler(bin, work + "/" + name, {"fair_share_update_period": 100}).start()
    s.set("//sys/pool_trees/physical/@fair_share_update_period", 100)
    return s


def start(s, pool, jobs=1, token=None):
    spec = {"pool": pool, "tasks": {"t": {"command": "true", "job_count": jobs, "cpu_limit": 1}}}
    return s.ok("start_op", {"operation_type": "vanilla", "spec": spec}, token)["operation_id"]


def op(s, o):
    return s.ok("get_operation", {"operation_id": o})


def restart(s, hard):
    if hard:
        s.kill9()
    else:
        s.stop()
    return s.start()


# 1. the suspended flag of an operation that ended survives a restart
s = scheduler("suspended")
try:
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/a"})
    x, y = start(s, "a"), start(s, "a")
    for o in (x, y):
        s.ok("suspend_op", {"operation_id": o})
    s.ok("abort_op", {"operation_id": x})
    s.ok("complete_op", {"operation_id": y})
    before = [(op(s, o)["state"], op(s, o)["suspended"]) for o in (x, y)]
    check(before == [("aborted", True), ("completed", True)], "ended suspended: %s" % before)
    s = restart(s, hard=True)
    after = [(op(s, o)["state"], op(s, o)["suspended"]) for o in (x, y)]
    check(after == before, "after kill -9 and restart: %s, before %s" % (after, before))
finally:
    s.stop()

finish()
EOF
