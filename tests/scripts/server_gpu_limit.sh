#!/usr/bin/env bash
# A vanilla task's gpu_limit (upstream's TUserJobSpec key, integer >= 0, default 0): each job of
# the task asks for that many gpus, so the jobs run only on nodes that report gpus, as many at
# once as the nodes' gpus allow; the start entry and the resulting spec carry the value; a bad
# value is a 400 naming the key. The same for port_count (upstream's key, [0, 50]: the node gives
# each job that many ports) and for a node's cpu_to_vcpu_factor (must be greater than 0).
# usage: server_gpu_limit.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_gpu_limit.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
with Scheduler(bin, work + "/data", {"fair_share_update_period": 200}).start() as s:
    s.set("//sys/pool_trees/physical/@fair_share_update_period", 200)
    plain = FakeNode(s, "plain", cpu=8, slots=8)
    gpu = FakeNode(s, "gpu", cpu=8, slots=8)
    gpu.limits["gpu"] = 2
    plain.heartbeat()
    gpu.heartbeat()
    time.sleep(0.4)

    task = {"command": "nvidia-smi", "job_count": 3, "cpu_limit": 1, "gpu_limit": 1,
            "memory_limit": 100 << 20}
    st, out = s.call("start_op", {"operation_type": "vanilla", "spec": {"tasks": {"t": task}}})
    check(st == 200, "gpu_limit accepted: %d %s" % (st, out))
    op = out["operation_id"] if st == 200 else None
    if op:
        o = s.ok("get_operation", {"operation_id": op})
        check(o["resulting_spec"]["tasks"]["t"].get("gpu_limit") == 1,
              "resulting spec gpu_limit %s" % o["resulting_spec"]["tasks"]["t"])
        time.sleep(0.4)
        for _ in range(3):
            plain.heartbeat()
            gpu.heartbeat()
            time.sleep(0.3)
        check(len(plain.running) == 0, "no gpu job on a node without gpus: %s" % plain.running)
        check(len(gpu.running) == 2, "2 gpu jobs on a 2-gpu node, got %d" % len(gpu.running))
        check(all(j.get("gpu_limit") == 1 for j in gpu.running.values()),
              "start entries carry gpu_limit: %s" % list(gpu.running.values()))
        o = s.ok("get_operation", {"operation_id": op})
        check(o["progress"]["running"] == 2 and o["progress"]["pending"] == 1,
              "progress %s" % o["progress"])
        # a finished job frees its gpu for the third
        gpu.finish_all()
        for _ in range(3):
            gpu.heartbeat()
            time.sleep(0.3)
        o = s.ok("get_operation", {"operation_id": op})
        check(o["progress"].get("completed") == 2 and o["progress"]["running"] == 1,
              "third job after the first two: %s" % o["progress"])
    # the default is 0: a task without gpu_limit runs on the plain node
    task0 = {"command": "true", "job_count": 1, "cpu_limit": 1, "memory_limit": 100 << 20}
    op0 = s.ok("start_op", {"operation_type": "vanilla", "spec": {"tasks": {"t": task0}}})["operation_id"]
    o = s.ok("get_operation", {"operation_id": op0})
    check(o["resulting_spec"]["tasks"]["t"].get("gpu_limit") == 0, "default gpu_limit 0")
    for bad in (-1, 1.5, "1"):
        task["gpu_limit"] = bad
        st, out = s.call("start_op", {"operation_type": "vanilla", "spec": {"tasks": {"t": task}}})
        check(st == 400 and "gpu_limit" in str(out), "gpu_limit %r refused naming the key: %d %s"
              % (bad, st, out))
    # port_count: in the start entry and the resulting spec; bad values refused naming the key
    task = {"command": "true", "job_count": 1, "cpu_limit": 1, "memory_limit": 100 << 20,
            "port_count": 2}
    opp = s.ok("start_op", {"operation_type": "vanilla", "spec": {"tasks": {"t": task}}})["operation_id"]
    o = s.ok("get_operation", {"operation_id": opp})
    check(o["resulting_spec"]["tasks"]["t"].get("port_count") == 2, "resulting spec port_count")
    for bad in (-1, 51, 1.5, "2"):
        task["port_count"] = bad
        st, out = s.call("start_op", {"operation_type": "vanilla", "spec": {"tasks": {"t": task}}})
        check(st == 400 and "port_count" in str(out) and "[0, 50]" in str(out),
              "port_count %r refused naming the key: %d %s" % (bad, st, out))
    # a node's cpu_to_vcpu_factor must be a number greater than 0
    for bad in (0, -1.5, "2"):
        st, out = s.heartbeat({"node_id": "vf", "tags": [], "jobs": [], "cpu_to_vcpu_factor": bad,
                               "resource_limits": {"cpu": 2, "memory": 1 << 30, "user_slots": 2}})
        check(st == 400 and "cpu_to_vcpu_factor: must be a number greater than 0" in str(out),
              "cpu_to_vcpu_factor %r refused: %d %s" % (bad, st, out))
finish()
EOF
