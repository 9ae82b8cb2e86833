#!/usr/bin/env bash
# TestReplacementCpuToVCpu and TestVCpuDisableByDefault of
# yt/yt/tests/integration/scheduler/test_scheduler_node_interaction.py on a real cluster on
# 127.0.0.1 (poolsched scheduler + a poolsched node running a real job; the helpers of
# tests/scripts/node_e2e.py). As upstream, the node (--cpu-model, upstream's cpu_model) gets its
# factor from the nodes' dynamic config //sys/cluster_nodes/@config, which the scheduler gives
# it in heartbeat replies.
# Usage: node_interaction_vcpu.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: node_interaction_vcpu.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 120 "$@" <<'PY'
import os, subprocess, sys
BIN = sys.argv[1]
sys.argv = [sys.argv[0], BIN, "none"]
from checks import require as check
from node_e2e import run_on_cluster, task


def node_attr(c, node, attr):
    status, body = c.sched.call("get", {"path": "//sys/cluster_nodes/%s/@%s" % (node, attr)})
    return body["value"] if status == 200 else None


EPYC = "AMD EPYC 7702 64-Core Processor"


def update_nodes_dynamic_config(c, name, new_config, node, cpu):
    # upstream's update_nodes_dynamic_config: the "%true" config updated with new_config, then
    # waiting for the node to apply it (here: its log, for upstream's dynamic_config_manager
    # orchid), and for the scheduler to have the node's cpu limit from its next heartbeat
    current = c.sched.get("//sys/cluster_nodes/@config")
    current.setdefault("%true", {}).update(new_config)
    c.sched.set("//sys/cluster_nodes/@config", current)
    check(c.sched.get("//sys/cluster_nodes/@config") == current, "config stored")
    c.wait(lambda: "dynamic config version" in c.node_log(name) and
           "applied" in c.node_log(name), 30, "the node applying the dynamic config")
    orchid = "//sys/scheduler/orchid/scheduler/nodes/%s/resource_limits" % node

    def limits_cpu():   # the node may not have (re)registered yet
        st, out = c.sched.call("get", {"path": orchid})
        return st == 200 and out["value"]["cpu"] == cpu
    c.wait(limits_cpu, 30, "the scheduler's cpu limit %s" % cpu)


def init_dynamic_config(c, name, node):
    # upstream's _init_dynamic_config
    update_nodes_dynamic_config(c, name, {"job_resource_manager": {
        "enable_cpu_to_vcpu_factor": True, "cpu_model_to_cpu_to_vcpu_factor": {EPYC: 1.21}}},
        node, 23.35)


def test_cpu_to_vcpu_factor_enough_only_with_vcpu(c):
    # upstream: test_scheduler_node_interaction::TestReplacementCpuToVCpu::test_cpu_to_vcpu_factor_enough_only_with_vcpu
    # A node with cpu 19.3 and factor 1.21 (its cpu model's); a vanilla job with cpu_limit 23
    # (more than the node's cores, less than its vcpu) runs. The scheduler's orchid: resource_limits/cpu 23.35,
    # resource_usage/cpu 23.0; the node's attributes: resource_usage cpu 19.01 and vcpu 23.0,
    # resource_limits cpu 19.3 and vcpu 23.35. The operation completes with no aborted job.
    # Not checked: the node orchid's base_resource_usage / additional_resource_usage of the job
    # (poolsched's agent has no orchid; the node's resource_usage above is the same sum).
    node = c.node("a", resources="cpu=19.3,memory=4G,user_slots=4", extra=("--cpu-model", EPYC))
    init_dynamic_config(c, "a", node)
    done = os.path.join(c.tmp, "release")
    op = c.op({"tasks": {"task": task("while [ ! -e %s ]; do sleep 0.05; done" % done, 1,
                                      cpu_limit=23)}})
    c.wait(lambda: c.jobs(op, "running"), 40, "the job running")
    orchid = "//sys/scheduler/orchid/scheduler/nodes/%s" % node
    c.wait(lambda: c.sched.get(orchid + "/resource_usage")["cpu"] == 23.0, 30,
           "scheduler's usage 23 after the node's report")
    check(c.sched.get(orchid + "/resource_limits")["cpu"] == 23.35, "scheduler's limits",
          c.sched.get(orchid))
    # (the node's log is read until the line is there: it is written as the job starts)
    c.wait(lambda: ", cpu 19.01," in c.node_log("a"), 30, "the job running with 23 / 1.21 cores")
    usage = node_attr(c, node, "resource_usage")
    check(usage["cpu"] == 19.01 and usage["vcpu"] == 23.0, "node's resource_usage", usage)
    limits = node_attr(c, node, "resource_limits")
    check(limits["cpu"] == 19.3 and limits["vcpu"] == 23.35, "node's resource_limits", limits)
    open(done, "w").close()
    o = c.wait_op(op, 40)
    check(o["progress"]["aborted"] == 0 and o["progress"]["completed"] == 1, "progress",
          o["progress"])


def test_cpu_to_vcpu_factor_no_enough_cpu(c):
    # upstream: test_scheduler_node_interaction::TestReplacementCpuToVCpu::test_cpu_to_vcpu_factor_no_enough_cpu
    # cpu_limit 24 is more than the node's 23.35 vcpu: the operation fails with
    # NoOnlineNodeToScheduleJob ("No online node can satisfy the resource demand"); the
    # scheduler's orchid shows the node's resource_limits/cpu 23.35.
    node = c.node("b", resources="cpu=19.3,memory=4G,user_slots=4", extra=("--cpu-model", EPYC))
    init_dynamic_config(c, "b", node)
    op = c.op({"tasks": {"task": task("sleep 1", 1, cpu_limit=24)}})
    o = c.wait_op(op, 40, states=("failed",))
    check("No online node can satisfy the resource demand" in str(o.get("error")) and
          "cpu=24.00" in str(o.get("error")) and "cpu=23.35" in str(o.get("error")),
          "failed for the resource demand", o.get("error"))
    limits = c.sched.get("//sys/scheduler/orchid/scheduler/nodes/%s/resource_limits" % node)
    check(limits["cpu"] == 23.35, "scheduler's limits", limits)


def fails_for_demand(c, op, cpu):
    o = c.wait_op(op, 40, states=("failed",))
    check("No online node can satisfy the resource demand" in str(o.get("error")) and
          "cpu=%.2f" % cpu in str(o.get("error")), "failed for the resource demand",
          o.get("error"))


def test_factor_from_dynamic_config(c):
    # upstream: test_scheduler_node_interaction::TestReplacementCpuToVCpu::test_factor_from_dynamic_config
    # The node (cpu 19.3, cpu_model EPYC) gets enable_cpu_to_vcpu_factor with an explicit
    # cpu_to_vcpu_factor 1.21 and 10 for its cpu model: the explicit one wins, so cpu_limit 24
    # fails with NoOnlineNodeToScheduleJob and the scheduler's orchid shows cpu 23.35.
    node = c.node("c", resources="cpu=19.3,memory=4G,user_slots=4", extra=("--cpu-model", EPYC))
    update_nodes_dynamic_config(c, "c", {"job_resource_manager": {
        "enable_cpu_to_vcpu_factor": True, "cpu_to_vcpu_factor": 1.21,
        "cpu_model_to_cpu_to_vcpu_factor": {EPYC: 10}}}, node, 23.35)
    fails_for_demand(c, c.op({"tasks": {"task": task("sleep 1", 1, cpu_limit=24)}}), 24)
    limits = c.sched.get("//sys/scheduler/orchid/scheduler/nodes/%s/resource_limits" % node)
    check(limits["cpu"] == 23.35, "scheduler's limits", limits)


def test_one_cpu_to_vcpu_factor(c):
    # upstream: test_scheduler_node_interaction::TestVCpuDisableByDefault::test_one_cpu_to_vcpu_factor
    # cpu_model_to_cpu_to_vcpu_factor without enable_cpu_to_vcpu_factor: the factor stays 1, so
    # cpu_limit 23 fails with NoOnlineNodeToScheduleJob and the orchid shows cpu 19.3.
    node = c.node("d", resources="cpu=19.3,memory=4G,user_slots=4", extra=("--cpu-model", EPYC))
    update_nodes_dynamic_config(c, "d", {"job_resource_manager": {
        "cpu_model_to_cpu_to_vcpu_factor": {EPYC: 1.21}}}, node, 19.3)
    fails_for_demand(c, c.op({"tasks": {"task": task("sleep 1", 1, cpu_limit=23)}}), 23)
    limits = c.sched.get("//sys/scheduler/orchid/scheduler/nodes/%s/resource_limits" % node)
    check(limits["cpu"] == 19.3, "scheduler's limits", limits)


def test_config_errors(c):
    # A bad @config is refused naming the key, the value and the reason; nothing changes.
    good = {"%true": {"job_resource_manager": {"enable_cpu_to_vcpu_factor": True}}}
    c.sched.set("//sys/cluster_nodes/@config", good)
    for bad, msg in (
            ({"%true": {"job_resource_manager": {"cpu_to_vcpu_factor": 0}}},
             "%true/job_resource_manager/cpu_to_vcpu_factor: must be a number greater than 0, "
             "got 0"),
            ({"%true": {"job_resource_manager": {"cpu_model_to_cpu_to_vcpu_factor": {"m": "x"}}}},
             "cpu_model_to_cpu_to_vcpu_factor/m: must be a number greater than 0, got \"x\""),
            ({"tag": {}}, "tag: unsupported node filter")):
        st, out = c.sched.call("set", {"path": "//sys/cluster_nodes/@config", "value": bad})
        check(st == 400 and msg in str(out), "refused", bad, st, out)
    check(c.sched.get("//sys/cluster_nodes/@config") == good, "unchanged")
    check(c.sched.get("//sys/cluster_nodes/@config/%true/job_resource_manager") ==
          good["%true"]["job_resource_manager"], "a part of it")


def test_config_restart_and_change(c):
    # The config (and its version) survives a scheduler restart, and a change reaches a running
    # node: its cpu limit follows the new factor (an explicit cpu_to_vcpu_factor 2: 19.3 x 2 =
    # 38.6).
    node = c.node("e", resources="cpu=19.3,memory=4G,user_slots=4", extra=("--cpu-model", EPYC))
    init_dynamic_config(c, "e", node)
    stored = c.sched.get("//sys/cluster_nodes/@config")
    c.sched.stop()
    c.sched.start()
    check(c.sched.get("//sys/cluster_nodes/@config") == stored, "config after a restart",
          c.sched.get("//sys/cluster_nodes/@config"))
    update_nodes_dynamic_config(c, "e", {"job_resource_manager": {
        "enable_cpu_to_vcpu_factor": True, "cpu_to_vcpu_factor": 2}}, node, 38.6)
    c.wait(lambda: (node_attr(c, node, "resource_limits") or {}).get("vcpu") == 38.6, 30,
           "the node's vcpu limit 38.6")
    # each version reached the node once: a reply carries the config only when it changed
    c.wait(lambda: "config version 2 applied" in c.node_log("e"), 30, "version 2 applied")
    log = c.node_log("e")
    check(log.count("config version 1 applied") == 1 and
          log.count("config version 2 applied") == 1, "sent once per version", log)


def test_flag_errors():
    # A factor that is not greater than 0 is refused, naming the key (upstream's config check).
    for value in ("0", "-1", "x"):
        p = subprocess.run([BIN, "node", "--scheduler", "http://127.0.0.1:1",
                            "--cpu-to-vcpu-factor", value], capture_output=True, text=True,
                           timeout=10)
        check(p.returncode == 2 and "cpu_to_vcpu_factor must be greater than 0" in p.stderr,
              "--cpu-to-vcpu-factor %s refused" % value, p.returncode, p.stderr)
    print("ok   test_flag_errors", flush=True)


test_flag_errors()
# the controller's sanity checks from the start, every 100 ms
CONFIG = {"safe_scheduler_online_time": 0, "resource_demand_sanity_check_period": 100}
run_on_cluster(test_cpu_to_vcpu_factor_enough_only_with_vcpu, CONFIG)
run_on_cluster(test_cpu_to_vcpu_factor_no_enough_cpu, CONFIG)
run_on_cluster(test_factor_from_dynamic_config, CONFIG)
run_on_cluster(test_one_cpu_to_vcpu_factor, CONFIG)
run_on_cluster(test_config_errors, CONFIG)
run_on_cluster(test_config_restart_and_change, CONFIG)
PY
