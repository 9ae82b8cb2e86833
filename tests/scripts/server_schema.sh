#!/usr/bin/env bash
# One schema per setting, seen from the HTTP API:
#   - an operation whose spec has unknown keys (`wieght`, the docs' spelling `job-cpu-monitor`,
#     a misspelled key inside job_cpu_monitor or a tree's options) starts, and get_operation and
#     list_operations show upstream's `unrecognized_spec` alert with the unknown subtree; a
#     clean spec has no alert;
#   - unknown request parameters and bad filter values (list_operations state=runing) are 400
#     naming the key, the value and the reason;
#   - two names of one key in one map (key and alias, or two aliases) are 400 naming both, for
#     operation specs and pool attributes;
#   - update_op_parameters refuses keys that are not run-time parameters;
#   - max_failed_job_count is a spec key with upstream's range.
# usage: server_schema.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_schema.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 120 "$@" <<'EOF'
import sys
from server_helper import Scheduler, check, finish

bin, work = sys.argv[1], sys.argv[2]
s = Scheduler(bin, work + "/data").start()

def tasks():
    return {"main": {"command": "sleep 100", "job_count": 1}}

def refused(command, body, *needles):
    st, out = s.call(command, body)
    msg = out.get("message", "") if isinstance(out, dict) else str(out)
    check(st == 400 and all(n in msg for n in needles) and "\n" not in msg,
          "%s %s: want 400 naming %s, got %d %s" % (command, body, needles, st, out))

with s:
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pools/research"})

    # unknown spec keys: the operation starts, with the alert
    spec = {"pool": "research", "wieght": 2, "job-cpu-monitor": {"enable_cpu_reclaim": True},
            "job_cpu_monitor": {"smoothing_factr": 0.5},
            "scheduling_options_per_pool_tree": {"physical": {"wieght": 3}},
            "tasks": tasks()}
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
    want = {"wieght": 2, "job-cpu-monitor": {"enable_cpu_reclaim": True},
            "job_cpu_monitor": {"smoothing_factr": 0.5},
            "scheduling_options_per_pool_tree": {"physical": {"wieght": 3}}}
    o = s.ok("get_operation", {"operation_id": op})
    alert = o.get("alerts", {}).get("unrecognized_spec")
    check(alert is not None and alert["attributes"]["unrecognized"] == want,
          "get_operation alert: %s" % o.get("alerts"))
    check(alert is not None and "unrecognized" in alert["message"], "alert message %s" % alert)
    check(o.get("unrecognized_spec") == want, "unrecognized_spec attribute %s" % o.get("unrecognized_spec"))
    check(o["state"] in ("pending", "running"), "the operation started: %s" % o["state"])
    check(o["resulting_spec"]["job_cpu_monitor"]["smoothing_factor"] == 0.1,
          "the misspelled key changed nothing: %s" % o["resulting_spec"]["job_cpu_monitor"])
    ops = s.ok("list_operations", {"user": "admin"})["operations"]
    listed = [x for x in ops if x["id"] == op]
    check(listed and listed[0].get("alerts", {}).get("unrecognized_spec", {}).get("attributes", {})
          .get("unrecognized") == want, "list_operations alert: %s" % (listed and listed[0].get("alerts")))
    clean = s.ok("start_op", {"spec": {"pool": "research", "max_failed_job_count": 0,
                                       "tasks": tasks()}})["operation_id"]
    o = s.ok("get_operation", {"operation_id": clean})
    check("alerts" not in o and "unrecognized_spec" not in o, "no alert for a clean spec: %s" % o.get("alerts"))
    check(o["resulting_spec"]["max_failed_job_count"] == 0, "max_failed_job_count from the spec")
    refused("start_op", {"spec": {"pool": "research", "max_failed_job_count": 10001, "tasks": tasks()}},
            "max_failed_job_count", "10001", "[0, 10000]")

    # unknown request parameters and bad filter values
    refused("list_operations", {"state": "runing"}, "state", '"runing"', "must be one of",
            "running")
    refused("list_operations", {"stat": "running"}, 'unknown parameter "stat"', "list_operations")
    refused("list_operations", {"limit": 0}, "limit", "got 0")
    refused("get_operation", {"operation_id": op, "verbose": True}, 'unknown parameter "verbose"')
    refused("start_op", {"spec": {"pool": "research", "tasks": tasks()}, "spek": {}},
            'unknown parameter "spek"')
    refused("get", {"path": "//sys/pools", "attributes": ["weight"]}, 'unknown parameter "attributes"')
    running = s.ok("list_operations", {"state": "running"})["operations"]
    check(all(x["state"] == "running" for x in running), "state filter still works")

    # two names of one key
    refused("start_op", {"spec": {"pool": "research", "scheduling_tag": "a",
                                  "scheduling_tag_filter": "b", "tasks": tasks()}},
            "scheduling_tag", "scheduling_tag_filter", "aliases")
    refused("start_op", {"spec": {"pool": "research", "max_unpreemptible_job_count": 1,
                                  "max_unpreemptable_job_count": 1, "tasks": tasks()}},
            "max_unpreemptible_job_count", "max_unpreemptable_job_count")
    refused("create", {"type": "scheduler_pool", "path": "//sys/pools/twice",
                       "attributes": {"strong_guarantee_resources": {"cpu": 1},
                                      "min_share_resources": {"cpu": 1}}},
            "strong_guarantee_resources", "min_share_resources")

    # run-time parameters only
    refused("update_op_parameters", {"operation_id": op, "parameters": {"wieght": 3}},
            "parameters/wieght", "runtime parameters")
    refused("update_op_parameters", {"operation_id": op, "parameters": {"is_gang": True}},
            "parameters/is_gang", "cannot be changed")
    s.ok("update_op_parameters", {"operation_id": op, "parameters": {"weight": 3}})
finish()
EOF
