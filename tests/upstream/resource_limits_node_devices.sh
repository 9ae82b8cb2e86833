#!/usr/bin/env bash
# The node-resource cases of yt/yt/tests/integration/scheduler/test_scheduler_resource_limits.py
# (TestSchedulerGpu, TestPorts) on a real cluster on 127.0.0.1: poolsched scheduler + poolsched
# node agents running real jobs that print their environment (the helpers of
# tests/scripts/node_e2e.py). Upstream's map operations become vanilla operations (poolsched
# runs vanilla operations only): what the cases check is which GPU devices and ports the node
# gives a job, which does not depend on the operation type. Upstream's breakpoints become jobs
# that wait for a marker file.
# Usage: resource_limits_node_devices.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: resource_limits_node_devices.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 170 "$@" <<'PY'
import os, random, shutil, socket, sys, tempfile, time
BIN = sys.argv[1]
sys.argv = [sys.argv[0], BIN, "none"]
from checks import Skip, require as check
from node_e2e import run_on_cluster, task


def run_case(case):
    run_on_cluster(case)


def held_job(marker, text):
    """A job that prints text (shell-expanded) to stderr and runs until marker exists
    (upstream's with_breakpoint)."""
    return "echo %s >&2; while [ ! -e %s ]; do sleep 0.05; done" % (text, marker)


def running_job(c, op, timeout=40):
    """The one running job of op, once the scheduler has its stderr."""
    def one():
        jobs = c.jobs(op, "running")
        if len(jobs) != 1:
            return None
        out = c.sched.ok("get_job_stderr", {"operation_id": op, "job_id": jobs[0]["id"]})
        return (jobs[0], out["stderr"]) if out["stderr"] else None
    return c.wait(one, timeout, "a running job of %s with its stderr" % op)


def gpu_numbers(job):
    return sorted(d["device_number"]
                  for d in job.get("exec_attributes", {}).get("gpu_devices", []))


def node_gpu_limits(c, node_ids):
    """{node: @resource_limits/gpu} once every node has registered, else None."""
    out = {}
    for n in node_ids:
        status, body = c.sched.call("get", {"path": "//sys/cluster_nodes/%s/@resource_limits" % n})
        if status != 200:
            return None
        out[n] = body["value"].get("gpu", 0)
    return out


def node_gpu_usage(c, node_id):
    status, body = c.sched.call("get", {"path": "//sys/cluster_nodes/%s/@resource_usage" % node_id})
    return body["value"].get("gpu") if status == 200 else None


GPU_ENV = "\"gpus=$NVIDIA_VISIBLE_DEVICES cuda=$CUDA_VISIBLE_DEVICES\""


def gpu_cluster(c):
    """Upstream's TestSchedulerGpu: one node with 4 GPUs (test_gpu_count 4), main_resource gpu."""
    gpu_node = c.node("gpu", resources="cpu=4,memory=2G,user_slots=4,gpu=4")
    c.node("plain", resources="cpu=4,memory=2G,user_slots=4")
    c.sched.set("//sys/pool_trees/physical/@config/main_resource", "gpu")
    return gpu_node


def test_job_count(c):
    # upstream: test_scheduler_resource_limits::TestSchedulerGpu::test_job_count
    # Of the nodes, one has gpu resource_limits > 0; a job with gpu_limit 1 runs there.
    gpu_node = gpu_cluster(c)
    limits = c.wait(lambda: node_gpu_limits(c, [n[2] for n in c.nodes.values()]), 30,
                    "both nodes registered")
    check([n for n, g in limits.items() if g > 0] == [gpu_node], "exactly one node has gpus",
          limits)
    done = os.path.join(c.tmp, "release")
    op = c.op({"tasks": {"mapper": task(held_job(done, GPU_ENV), 1, gpu_limit=1)}})
    job, _ = running_job(c, op)
    check(job["node_id"] == gpu_node, "the gpu job runs on the gpu node", job)
    open(done, "w").close()
    c.wait_op(op, 40)


def test_packing(c):
    # upstream: test_scheduler_resource_limits::TestSchedulerGpu::test_packing
    # op1 (gpu_limit 1): node gpu usage 1, its job has device [0]; op2 (gpu_limit 2): usage 3,
    # devices [2, 3] (a pair of its own, not 1 and 2). Also here: each job's environment names
    # exactly its devices, and after they end two 2-GPU jobs hold disjoint pairs.
    gpu_node = gpu_cluster(c)
    done = os.path.join(c.tmp, "release")
    op1 = c.op({"tasks": {"mapper": task(held_job(done, GPU_ENV), 1, gpu_limit=1)}})
    c.wait(lambda: node_gpu_usage(c, gpu_node) == 1, 40, "node gpu usage 1")
    job1, err1 = running_job(c, op1)
    check(job1["node_id"] == gpu_node and gpu_numbers(job1) == [0], "op1's job has device 0",
          job1)
    check(err1 == "gpus=0 cuda=0\n", "op1's job sees device 0", err1)
    op2 = c.op({"tasks": {"mapper": task(held_job(done, GPU_ENV), 1, gpu_limit=2)}})
    c.wait(lambda: node_gpu_usage(c, gpu_node) == 3, 40, "node gpu usage 3")
    job2, err2 = running_job(c, op2)
    check(gpu_numbers(job2) == [2, 3], "op2's job has devices 2 and 3", job2)
    check(err2 == "gpus=2,3 cuda=2,3\n", "op2's job sees devices 2 and 3", err2)
    got = c.sched.ok("get_job", {"operation_id": op2, "job_id": job2["id"]})
    check(got["exec_attributes"]["gpu_devices"][0] == {"device_number": 2,
                                                        "device_name": "/dev/nvidia2"},
          "get_job names the devices", got)
    open(done, "w").close()
    c.wait_op(op1, 40)
    c.wait_op(op2, 40)
    check(gpu_numbers(c.jobs(op2, "completed")[0]) == [2, 3], "a finished job keeps them",
          c.jobs(op2))
    os.unlink(done)
    op3 = c.op({"tasks": {"mapper": task(held_job(done, GPU_ENV), 2, gpu_limit=2)}})
    both = c.wait(lambda: (lambda js: js if len(js) == 2 else None)(c.jobs(op3, "running")),
                  40, "two 2-GPU jobs running")
    check(sorted(gpu_numbers(j) for j in both) == [[0, 1], [2, 3]],
          "the two jobs hold disjoint devices", both)
    open(done, "w").close()
    c.wait_op(op3, 40)


def bindable_range(n):
    """A base port with n consecutive ports bindable now (upstream's fixed 20000 may be taken
    on a shared machine)."""
    for _ in range(200):
        base = random.randrange(30000, 60000 - n)
        socks = []
        try:
            for p in range(base, base + n):
                s = socket.socket(socket.AF_INET6)
                socks.append(s)
                s.bind(("::", p))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise Skip("no range of %d bindable ports" % n)


def ports_node(c):
    """Upstream's TestPorts node: start_port, port_count 3, user_slots 2, cpu 2."""
    base = bindable_range(3)
    c.node("a", resources="cpu=2,memory=2G,user_slots=2",
           extra=("--start-port", str(base), "--port-count", "3"))
    return base


def job_stderr(c, op):
    job = c.jobs(op, "completed")[0]
    return c.sched.ok("get_job_stderr", {"operation_id": op, "job_id": job["id"]})["stderr"]


PORTS_CMD = "echo $YT_PORT_0 >&2; echo $YT_PORT_1 >&2; if [ -n \"$YT_PORT_2\" ]; then echo 'FAILED' >&2; fi"


def test_simple(c):
    # upstream: test_scheduler_resource_limits::TestPorts::test_simple
    # port_count 2 on a node with 3 ports: the job sees YT_PORT_0 and YT_PORT_1, distinct and
    # in the range, and no YT_PORT_2. A second such job while the first runs has not enough
    # ports. Deviation: upstream's second operation (max_failed_job_count 1,
    # fail_on_job_restart) fails; poolsched has no fail_on_job_restart, so the check is what
    # upstream's node does to that job: it is aborted (waiting_timeout) and its operation goes
    # on, completing once the first job has returned its ports. Then another operation with
    # port_count 2 runs and gets ports of the range again.
    base = ports_node(c)
    done = os.path.join(c.tmp, "release")
    op = c.op({"tasks": {"mapper": task(PORTS_CMD + "; while [ ! -e %s ]; do sleep 0.05; done"
                                        % done, 1, port_count=2)}})
    running_job(c, op)
    other = c.op({"tasks": {"mapper": task("cat </dev/null", 1, port_count=2)}})
    aborted = c.wait(lambda: c.jobs(other, "aborted"), 40, "the second job aborted")
    check(aborted[0].get("abort_reason") == "waiting_timeout", "not enough ports", aborted)
    open(done, "w").close()
    c.wait_op(op, 40)
    for o in (op, c.op({"tasks": {"mapper": task(PORTS_CMD, 1, port_count=2)}})):
        if o != op:
            c.wait_op(o, 40)
        out = job_stderr(c, o)
        check("FAILED" not in out, "no YT_PORT_2", out)
        ports = [int(p) for p in out.split()]
        check(len(ports) == 2 and ports[0] != ports[1] and
              all(base <= p < base + 3 for p in ports), "two distinct ports of the range",
              out, base)
    c.wait_op(other, 40)


def test_preliminary_bind(c):
    # upstream: test_scheduler_resource_limits::TestPorts::test_preliminary_bind
    # Another process holds start_port + 1: three times a job with port_count 2 writes its
    # ports; the first two get start_port and start_port + 2, the third, after the holder
    # closed, start_port and start_port + 1 (ports do not get stuck inside the node).
    base = ports_node(c)
    holder = socket.socket(socket.AF_INET6)
    try:
        try:
            holder.bind(("::1", base + 1))
        except OSError as e:
            raise Skip("cannot bind port %d: %s" % (base + 1, e))
        for iteration in range(3):
            if iteration in (0, 1):
                expected = [base, base + 2]
            else:
                holder.close()
                expected = [base, base + 1]
            op = c.op({"tasks": {"mapper": task("echo \"$YT_PORT_0 $YT_PORT_1\" >&2", 1,
                                                port_count=2)}})
            c.wait_op(op, 40)
            ports = [int(p) for p in job_stderr(c, op).split()]
            check(ports == expected, "iteration %d: ports" % iteration, ports, expected)
    finally:
        holder.close()


run_case(test_job_count)
run_case(test_packing)
run_case(test_simple)
run_case(test_preliminary_bind)
PY
