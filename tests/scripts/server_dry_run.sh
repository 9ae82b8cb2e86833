#!/usr/bin/env bash
# dry_run on set, create and remove (docs/api.md "Dry run"): the change is validated as the
# real one (same refusal), the fair share is computed on a copy of the tree, the reply is the
# before/after diff, and nothing is applied: not in memory, not in the orchid, not on disk
# (a restart shows the old value). Two pools 1:1 with equal demand: weight 3 on one shows
# 0.5 -> 0.75 and 0.5 -> 0.25. The CLI prints the diff as a table.
# usage: server_dry_run.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_dry_run.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 120 "$@" <<'EOF2'
import json, subprocess, sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
s = Scheduler(bin, work + "/data", {"fair_share_update_period": 100}).start()
node = FakeNode(s, "n1", cpu=4, slots=8)
ORCH = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/"

beat = node.beat

def fs(pool):
    return s.get(ORCH + pool + "/fair_share_ratio")

with s:
    s.set("//sys/pool_trees/physical/@fair_share_update_period", 100)
    for p in ("a", "b"):
        s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/" + p})
        spec = {"pool": p, "tasks": {"main": {"command": "sleep 100", "job_count": 8,
                                              "cpu_limit": 1, "memory_limit": 100 << 20}}}
        s.ok("start_op", {"operation_type": "vanilla", "spec": spec})
    beat(1.5)
    check(abs(fs("a") - 0.5) < 1e-3 and abs(fs("b") - 0.5) < 1e-3,
          "1:1 before: %s %s" % (fs("a"), fs("b")))

    # a dry run of weight 3 on a
    r = s.ok("set", {"path": "//sys/pools/a/@weight", "value": 3, "dry_run": True})
    check(r.get("dry_run") is True and r.get("pool_tree") == "physical", "reply: %s" % r)
    pa, pb = r["pools"]["a"], r["pools"]["b"]
    check(abs(pa["before"]["fair_share"]["total"] - 0.5) < 1e-3 and
          abs(pa["after"]["fair_share"]["total"] - 0.75) < 1e-3, "a: 0.5 -> 0.75: %s" % pa)
    check(abs(pb["before"]["fair_share"]["total"] - 0.5) < 1e-3 and
          abs(pb["after"]["fair_share"]["total"] - 0.25) < 1e-3, "b: 0.5 -> 0.25: %s" % pb)
    check(pa["before"]["weight"] == 1 and pa["after"]["weight"] == 3 and pa["changed"],
          "a's weight 1 -> 3: %s" % pa)
    check(abs(pa["after"]["fair_share"]["weight_proportional"] - 0.75) < 1e-3,
          "the weight-proportional part: %s" % pa["after"]["fair_share"])
    ops = r["operations"]
    check(len(ops) == 2 and all(o["changed"] for o in ops.values()),
          "both operations change: %s" % ops)
    # nothing applied
    check(s.get("//sys/pools/a/@weight") is None or s.get("//sys/pools/a/@weight") == 1,
          "get after shows the old weight: %s" % s.get("//sys/pools/a/@weight"))
    beat(0.5)
    check(abs(fs("a") - 0.5) < 1e-3 and abs(fs("b") - 0.5) < 1e-3,
          "fair shares unchanged: %s %s" % (fs("a"), fs("b")))

    # the same refusal as the real set
    bad = {"path": "//sys/pools/a/@weight", "value": -1}
    st1, real = s.call("set", bad)
    st2, dry = s.call("set", dict(bad, dry_run=True))
    check(st1 == st2 == 400 and real.get("message") == dry.get("message") and real.get("message"),
          "same refusal: %s %s / %s %s" % (st1, real, st2, dry))
    st, e = s.call("set", {"path": "//sys/pools/a/@weight", "value": 2, "dry_run": "yes"})
    check(st == 400 and "dry_run" in e.get("message", ""), "dry_run must be a boolean: %s" % e)

    # create and remove
    r = s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/c", "dry_run": True,
                        "attributes": {"strong_guarantee_resources": {"cpu": 2}}})
    check(r["pools"]["c"]["before"] is None and r["pools"]["c"]["after"] is not None,
          "create: c appears after: %s" % r["pools"].get("c"))
    check(s.call("exists", {"path": "//sys/pools/c"})[1]["value"] is False, "c was not created")
    r = s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/d", "dry_run": True})
    # a pool with a child pool is refused (a pool with only operations turns ephemeral)
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/a/a1"})
    st, e = s.call("remove", {"path": "//sys/pools/a", "dry_run": True})
    st2, e2 = s.call("remove", {"path": "//sys/pools/a"})
    check(st == st2 == 409 and e.get("message") == e2.get("message"),
          "remove of a pool with a child pool: same answer: %s / %s" % (e, e2))
    s.ok("remove", {"path": "//sys/pools/a/a1"})
    r = s.ok("remove", {"path": "//sys/pools/a/@weight", "dry_run": True})
    check("pools" in r, "remove of an attribute dry runs: %s" % r)
    # a tree attribute
    r = s.ok("set", {"path": "//sys/pool_trees/physical/@default_parent_pool", "value": "nope",
                     "dry_run": True})
    types = [a["attributes"]["alert_type"] for a in r["alerts"]["after"]]
    check("invalid_default_parent_pool" in types and not r["alerts"]["before"],
          "the dry run shows the alert it would raise: %s" % r["alerts"])
    check(s.get("//sys/scheduler/@alerts") == [], "and raised none")
    st, e = s.call("set", {"path": "//sys/pool_trees/@default_tree", "value": "physical",
                           "dry_run": True})
    check(st == 400 and "dry_run" in e.get("message", ""), "default_tree cannot be dry run: %s" % e)

    # the CLI: a table, --format json the reply
    env = {"POOLSCHED_PROXY": s.url("").rstrip("/"), "POOLSCHED_TOKEN": s.admin}
    def cli(*args):
        import os
        return subprocess.run([bin] + list(args), capture_output=True, text=True,
                              env=dict(os.environ, **env), timeout=30)
    out = cli("set", "--dry-run", "//sys/pools/a/@weight", "3")
    check(out.returncode == 0 and "dry run" in out.stdout and "0.5000 -> 0.7500" in out.stdout
          and "0.5000 -> 0.2500" in out.stdout, "CLI table:\n%s%s" % (out.stdout, out.stderr))
    # indented as the pool tree (fair-share --format table): the root, each pool under its
    # parent, each operation under its pool
    import re
    rows = [re.match(r"^[* ] ( *)(pool|op) (\S+)", l) for l in out.stdout.splitlines()[2:]]
    tree = [(len(m.group(1)) // 2, m.group(2), m.group(3)) for m in rows if m]
    opa = [k for k, v in r["operations"].items() if v["after"]["pool"] == "a"]
    check(tree[0] == (0, "pool", "<Root>") and tree[1] == (1, "pool", "a") and
          tree[2] == (2, "op", opa[0]) and tree[3] == (1, "pool", "b") and tree[4][:2] == (2, "op")
          and len(tree) == 5, "CLI table indented as the tree: %s\n%s" % (tree, out.stdout))
    out = cli("set", "--dry-run", "--format", "json", "//sys/pools/a/@weight", "3")
    check(out.returncode == 0 and json.loads(out.stdout)["dry_run"] is True,
          "CLI json: %s%s" % (out.stdout, out.stderr))
    out = cli("set", "--dry-run", "//sys/pools/a/@weight", "-1")
    check(out.returncode != 0 and real["message"] in out.stderr, "CLI refusal: %s" % out.stderr)
    check(s.get("//sys/pools/a/@weight") in (None, 1), "the CLI dry runs changed nothing")

    # a restart shows the old value: nothing was journalled
    s.stop()
    s.start()
    check(s.get("//sys/pools/a/@weight") in (None, 1), "after a restart: %s" % s.get("//sys/pools/a/@weight"))
    check(s.call("exists", {"path": "//sys/pools/c"})[1]["value"] is False, "no c after a restart")
    check(s.get("//sys/pool_trees/physical/@default_parent_pool") == "<Root>", "default parent kept")
    s.ok("set", {"path": "//sys/pools/a/@weight", "value": 2, "dry_run": False})
    check(s.get("//sys/pools/a/@weight") == 2, "dry_run false applies: %s" % s.get("//sys/pools/a/@weight"))
finish()
EOF2
