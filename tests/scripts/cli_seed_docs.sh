#!/usr/bin/env bash
# The seed documents' commands, verbatim, through the CLI against a real `poolsched scheduler`
# (`poolsched` in place of `yt`): every `yt ...` command of the document integral-guarantees.txt,
# kept verbatim in tests/data/seed-docs/integral-guarantees.commands, is run by bash as written (both
# spellings, @integral-guarantees and @integral_guarantees), the orchid attributes the document
# lists are read with the numbers its definitions give, and every pool and pool tree attribute
# of pool-characteristics.txt (and //sys/pool_trees/@default_tree) is set and read back.
# A fake node (heartbeat protocol, docs/api.md) gives the cluster 10000 cores, so that
# ratios and volumes are not all zero.
# usage: cli_seed_docs.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: cli_seed_docs.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" "$2/seed-docs" <<'EOF'
import json, os, re, subprocess, sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work, ref = sys.argv[1], sys.argv[2], sys.argv[3]
ORCHID = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/fair_share_info/pools/"
CPU = 10000         # cores on the cluster: ratios 0.1 and 0.2 for 1000 and 2000 cores


def doc_commands(name):
    """The `yt ...` commands kept from a reference document, each up to where its quotes close."""
    cmds, cur = [], None
    for line in open(os.path.join(ref, name)):
        line = line.rstrip("\n")
        if cur is None and line.strip().startswith("yt "):
            cur = line.strip()
        elif cur is not None:
            cur += "\n" + line
        if cur is not None and cur.count('"') % 2 == 0:
            cmds.append(cur)
            cur = None
    check(cur is None, "%s: unterminated command %r" % (name, cur))
    return cmds


def sh(cmd, want=0):
    """Runs a command line as a user types it, `yt` meaning poolsched; returns stdout."""
    p = subprocess.run(["bash", "-c", 'yt() { "$PS_BIN" "$@"; }\n' + cmd], env=env,
                       stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60)
    check(p.returncode == want, "%s: exit %d, expected %d; stderr: %s"
          % (cmd, p.returncode, want, p.stderr.strip()))
    return p.stdout


def get(path):
    out = sh("yt get %s --format json" % path)
    try:
        return json.loads(out)
    except ValueError:
        check(False, "get %s: not JSON: %r" % (path, out))
        return None


def set_and_read(path, yson, want):
    sh("yt set %s '%s'" % (path, yson))
    got = get(path)
    check(got == want, "%s: set %s, read back %r, expected %r" % (path, yson, got, want))


def near(a, b, what):
    ok = isinstance(a, (int, float)) and abs(a - b) <= 1e-6 * max(1.0, abs(b))
    check(ok, "%s: %r, expected %r" % (what, a, b))


with Scheduler(bin, work + "/data").start() as s:
    env = dict(os.environ, PS_BIN=bin, POOLSCHED_PROXY="127.0.0.1:%d" % s.port,
               POOLSCHED_DATA_DIR=work + "/data")
    env.pop("POOLSCHED_TOKEN", None)
    node = FakeNode(s, "n1", cpu=CPU, memory=4000 << 30, slots=1000)
    node.heartbeat()

    # ---- the pools the commands need: root-pool/{burst,relaxed} and the placeholder pool_name
    sh("yt create scheduler_pool --attributes '{name=root-pool; pool_tree=physical}'")
    # an administrator's setup: the children's integral guarantees fit in the parent's
    sh("yt set //sys/pools/root-pool/@integral_guarantees "
       "'{resource_flow={cpu=2000}; burst_guarantee_resources={cpu=2000}}'")
    sh("yt create scheduler_pool --attributes '{name=burst; pool_tree=physical; parent_name=root-pool}'")
    sh("yt create scheduler_pool --attributes '{name=relaxed; pool_tree=physical; parent_name=root-pool}'")
    sh("yt create scheduler_pool --attributes '{name=pool_name; pool_tree=physical; "
       "integral_guarantees={guarantee_type=relaxed; resource_flow={cpu=250}}}'")

    # ---- integral-guarantees.txt, verbatim, in the document's order
    cmds = doc_commands("integral-guarantees.commands")
    check(len(cmds) == 4, "integral-guarantees.txt has 4 yt commands, found %d: %s" % (len(cmds), cmds))
    outputs = [sh(c) for c in cmds]
    check(cmds[0].startswith('yt set //sys/pools/root-pool/burst/@integral-guarantees/resource_flow'),
          "first command %r" % cmds[0])
    check("integral_pool_capacity" in cmds[3], "last command %r" % cmds[3])

    # what the sets left, read through both spellings
    burst = {"guarantee_type": "burst", "resource_flow": {"cpu": 1000},
             "burst_guarantee_resources": {"cpu": 2000}}
    relaxed = {"guarantee_type": "relaxed", "resource_flow": {"cpu": 1000}}
    for spelling in ("integral_guarantees", "integral-guarantees"):
        g = get("//sys/pools/root-pool/burst/@%s" % spelling)
        check(g is not None and all(g.get(k) == v for k, v in burst.items()),
              "burst @%s: %r" % (spelling, g))
        g = get("//sys/pools/root-pool/relaxed/@%s" % spelling)
        check(g is not None and all(g.get(k) == v for k, v in relaxed.items()),
              "relaxed @%s: %r" % (spelling, g))
        check(sh("yt exists //sys/pools/root-pool/burst/@%s/resource_flow" % spelling) == "true\n",
              "exists @%s/resource_flow" % spelling)
    # the first command alone, read back (the burst config then replaced resource_flow)
    sh('yt set //sys/pools/root-pool/burst/@integral-guarantees/resource_flow "{cpu=100}"')
    check(get("//sys/pools/root-pool/burst/@integral-guarantees/resource_flow") == {"cpu": 100},
          "resource_flow {cpu=100} read back")
    check(get("//sys/pools/root-pool/burst/@integral_guarantees/guarantee_type") == "burst",
          "a nested set keeps the siblings")
    # the burst and relaxed sets with the underscore spelling, read back with the hyphen
    sh('yt set //sys/pools/root-pool/burst/@integral_guarantees "{guarantee_type=burst; '
       'resource_flow={cpu=1000}; burst_guarantee_resources={cpu=2000}}"')
    sh('yt set //sys/pools/root-pool/relaxed/@integral_guarantees "{guarantee_type=relaxed; '
       'resource_flow={cpu=1000}}"')
    check(get("//sys/pools/root-pool/burst/@integral-guarantees") == get("//sys/pools/root-pool/burst/@integral_guarantees"),
          "both spellings read the same attribute")
    check(get("//sys/pools/root-pool/burst/@integral-guarantees/resource_flow") == {"cpu": 1000},
          "@integral_guarantees set, @integral-guarantees read")
    # refusals still name the key
    sh('yt set //sys/pools/root-pool/relaxed/@integral-guarantees/guarantee_type "sometimes"', want=1)

    # ---- the orchid attributes of integral-guarantees.txt, by their definitions
    s.update(2.5)
    for attempt in range(40):
        b = get(ORCHID + "burst")
        if b and b.get("specified_resource_flow_ratio"):
            break
        time.sleep(0.25)
    flow, burst_ratio = 1000 / CPU, 2000 / CPU
    for name in ("burst", "relaxed", "root-pool", "pool_name"):
        for attr in ("accumulated_resource_ratio_volume", "accumulated_resource_volume",
                     "integral_pool_capacity", "specified_burst_ratio",
                     "specified_resource_flow_ratio", "total_burst_ratio",
                     "total_resource_flow_ratio", "estimated_burst_usage_duration_seconds"):
            v = get(ORCHID + name + "/" + attr)
            whole = get(ORCHID + name)[attr]
            if "accumulated" in attr or "duration" in attr:
                # volumes grow between two reads (an update may run in between)
                check(type(v) is type(whole), "orchid %s/%s: %r" % (name, attr, v))
            else:
                check(v is not None and v == whole,
                      "orchid %s/%s (%r) is the pool map's value %r" % (name, attr, v, whole))
    b = get(ORCHID + "burst")
    r = get(ORCHID + "relaxed")
    rp = get(ORCHID + "root-pool")
    near(b["specified_resource_flow_ratio"], flow, "burst specified_resource_flow_ratio")
    near(b["specified_burst_ratio"], burst_ratio, "burst specified_burst_ratio")
    near(r["specified_resource_flow_ratio"], flow, "relaxed specified_resource_flow_ratio")
    near(r["specified_burst_ratio"], 0, "relaxed specified_burst_ratio")
    # totals: the pool itself plus its descendants
    near(b["total_resource_flow_ratio"], flow, "burst total_resource_flow_ratio")
    near(b["total_burst_ratio"], burst_ratio, "burst total_burst_ratio")
    near(rp["total_resource_flow_ratio"], rp["specified_resource_flow_ratio"] + 2 * flow,
         "root-pool total_resource_flow_ratio")
    near(rp["total_burst_ratio"], rp["specified_burst_ratio"] + burst_ratio,
         "root-pool total_burst_ratio")
    # capacity: k = 86400 s (a day) of resource_flow; the volume in cpu x seconds
    for name, cores in (("burst", 1000), ("relaxed", 1000), ("pool_name", 250)):
        cap = get(ORCHID + name + "/integral_pool_capacity")
        near(cap["cpu"], 86400 * cores, name + " integral_pool_capacity/cpu")
        out = sh("yt get " + ORCHID + name + "/integral_pool_capacity --format json")
        check(json.loads(out) == cap, "the document's get of integral_pool_capacity for " + name)
    # Listing 4 as written (pool_name): the capacity, YSON, of 250 cores for a day, once a fair
    # share update has computed it (its first run above may come before the pool's first update)
    listing4 = sh(cmds[3])
    check(re.search(r'"cpu" = 21600000\.?0*;', listing4) is not None,
          "Listing 4 prints pool_name's capacity: %r" % listing4)
    # volumes: the dict is the ratio volume times the cluster; the burst estimate per its formula
    for name, p in (("burst", b), ("relaxed", r)):
        near(p["accumulated_resource_volume"]["cpu"], p["accumulated_resource_ratio_volume"] * CPU,
             name + " accumulated_resource_volume/cpu")
        check(p["accumulated_resource_ratio_volume"] > 0, name + " accumulates volume")
    near(b["estimated_burst_usage_duration_seconds"],
         b["accumulated_resource_ratio_volume"] / (burst_ratio - flow),
         "burst estimated_burst_usage_duration_seconds")

    # ---- pool-characteristics.txt: every pool attribute, set and read back
    sh("yt create scheduler_pool --attributes '{name=chars; pool_tree=physical}'")
    P = "//sys/pools/chars/@"
    for attr, yson, want in [
            ("weight", "2", 2),
            ("max_share_ratio", "0.5", 0.5),
            ("strong_guarantee_resources", "{user_slots=5; cpu=10; memory=1073741824}",
             {"user_slots": 5, "cpu": 10, "memory": 1073741824}),
            ("resource_limits", "{user_slots=10; cpu=20.5; memory=2147483648}",
             {"user_slots": 10, "cpu": 20.5, "memory": 2147483648}),
            ("mode", "fifo", "fifo"),
            ("fifo_sort_parameters", "[pending_job_count; start_time]",
             ["pending_job_count", "start_time"]),
            ("mode", "fair_share", "fair_share"),
            ("max_operation_count", "10", 10),
            ("max_running_operation_count", "4", 4),
            ("forbid_immediate_operations", "%true", True),
            ("create_ephemeral_subpools", "%true", True),
            ("ephemeral_subpool_config",
             "{mode=fifo; resource_limits={cpu=5}; max_running_operation_count=2; max_operation_count=3}",
             {"mode": "fifo", "resource_limits": {"cpu": 5}, "max_running_operation_count": 2,
              "max_operation_count": 3})]:
        set_and_read(P + attr, yson, want)
    sh("yt set %sweight -1" % P, want=1)
    check(get(P + "weight") == 2, "a refused set changes nothing")

    # ---- pool-characteristics.txt: every pool tree attribute, set and read back
    sh("yt create scheduler_pool_tree --attributes '{name=other; config={nodes_filter=other}}'")
    sh("yt create scheduler_pool --attributes '{name=research; pool_tree=other}'")
    T = "//sys/pool_trees/other/@"
    for attr, yson, want in [
            ("nodes_filter", '"other & !gpu"', "other & !gpu"),
            ("max_operation_count", "100", 100),
            ("max_operation_count_per_pool", "20", 20),
            ("max_running_operation_count", "50", 50),
            ("max_running_operation_count_per_pool", "10", 10),
            ("default_parent_pool", "research", "research"),
            ("enable_pool_starvation", "%false", False),
            ("forbid_immediate_operations_in_root", "%false", False),
            ("max_ephemeral_pool_per_user", "3", 3),
            ("fair_share_preemption_timeout", "20000", 20000),
            ("min_share_preemption_timeout", "10000", 10000),
            ("fair_share_starvation_tolerance", "0.7", 0.7),
            ("non_preemptible_resource_usage_threshold", "{user_slots=3; cpu=2}",
             {"user_slots": 3, "cpu": 2})]:
        set_and_read(T + attr, yson, want)
    # the docs' aliases reach the canonical keys
    check(get(T + "max_ephemeral_pools_per_user") == 3, "max_ephemeral_pool_per_user is an alias")
    check(get(T + "fair_share_starvation_timeout") == 20000, "fair_share_preemption_timeout is an alias")
    set_and_read("//sys/pool_trees/@default_tree", "other", "other")
    check(sh("yt list //sys/pools") == "research\n", "//sys/pools follows @default_tree")
    set_and_read("//sys/pool_trees/@default_tree", "physical", "physical")
finish()
EOF
