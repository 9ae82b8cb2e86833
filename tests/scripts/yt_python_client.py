"""59 everyday steps of a YTsaurus user with the official Python client and the yt CLI, run by
yt_python_client.sh against a scheduler and a node (the client is not part of poolsched: the
test runs only when PS_YT_CLIENT points at a copy of its python tree).
usage: PYTHONPATH=<client tree> YT_PROXY=http://host:port YT_TOKEN=... python3 yt_python_client.py
Prints one line per step and "RESULT: N of 59 everyday steps work"; exits 1 when a step other
than the known ones (KNOWN below, docs/api.md) fails."""
import json
import os
import subprocess
import sys
import time

import yt.wrapper as yt

YT = [sys.executable, os.path.join(os.environ["PYTHONPATH"].split(":")[0], "yt/wrapper/bin/yt")]
# `yt list -l` reads account, resource_usage and modification_time, which pools do not have
# (nor do upstream's scheduler_pool objects): docs/api.md "The Python client and the yt CLI"
KNOWN = {"cli list -l"}
results = []
def step(name, fn):
    try:
        r = fn()
        ok = r is not False
        detail = "" if ok else "check failed"
    except BaseException as e:
        ok, detail = False, "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:160] if str(e) else "")
    results.append((name, ok, detail))
    print("%s %-50s %s" % ("ok  " if ok else "FAIL", name, detail), flush=True)
def cli(*args, ok=True):
    p = subprocess.run(YT + list(args), capture_output=True, text=True, timeout=120)
    if ok and p.returncode != 0:
        raise RuntimeError("exit %d: %s" % (p.returncode, p.stderr.strip().replace("\n", " | ")[:300]))
    return p
tasks = '{t={command="echo started >&2; sleep %s; echo done";job_count=1}}'
def vanilla_async(sleep="30"):
    return cli("vanilla", "--tasks", tasks % sleep, "--async").stdout.strip()
def wait_running(op):
    for _ in range(100):
        if yt.get_operation(op, attributes=["state"])["state"] == "running" and yt.list_jobs(op)["jobs"]:
            return
        time.sleep(0.2)
    raise RuntimeError("not running")
def eventually(fn, seconds=15):
    """A running job's stderr is the scheduler's as of the node's last heartbeat: retried."""
    deadline = time.time() + seconds
    while True:
        r = fn()
        if r or time.time() > deadline:
            return r
        time.sleep(0.3)
S = {}
# --- CLI: pools
step("cli list //sys/pools", lambda: cli("list", "//sys/pools"))
step("cli create scheduler_pool", lambda: cli("create", "scheduler_pool", "--attributes", '{name=clip;pool_tree=physical;weight=2}'))
step("cli exists", lambda: cli("exists", "//sys/pools/clip").stdout.strip() == "true")
step("cli get pool", lambda: cli("get", "//sys/pools/clip"))
step("cli set @weight", lambda: cli("set", "//sys/pools/clip/@weight", "3"))
step("cli get @weight", lambda: cli("get", "//sys/pools/clip/@weight").stdout.strip() in ("3", "3.", "3.0"))
step("cli get @ (all attributes)", lambda: "weight" in cli("get", "//sys/pools/clip/@").stdout)
step("cli list -l", lambda: "clip" in cli("list", "-l", "//sys/pools").stdout)
step("cli list --attribute weight", lambda: "weight" in cli("list", "--attribute", "weight", "//sys/pools", "--format", "<format=text>yson").stdout)
step("cli get --format json", lambda: json.loads(cli("get", "//sys/pools/clip/@weight", "--format", "json").stdout) == 3)
step("cli create child pool", lambda: cli("create", "scheduler_pool", "--attributes", '{name=clic;pool_tree=physical;parent_name=clip}'))
step("cli remove --force missing", lambda: cli("remove", "--force", "//sys/pools/nope"))
step("cli remove missing: resolve error", lambda: "500" in cli("remove", "//sys/pools/nope", ok=False).stderr)
step("cli orchid pool_trees/physical/pools", lambda: "clip" in cli("get", "//sys/scheduler/orchid/scheduler/pool_trees/physical/pools").stdout)
step("cli get @type", lambda: "scheduler_pool" in cli("get", "//sys/pools/clip/@type").stdout)
# --- CLI: operations
step("cli vanilla sync", lambda: cli("vanilla", "--tasks", tasks % "0"))
step("cli vanilla --async", lambda: S.__setitem__("op", vanilla_async()) or S["op"].count("-") == 3)
step("cli get-operation", lambda: "state" in cli("get-operation", S["op"]).stdout)
step("cli list-operations", lambda: S["op"] in cli("list-operations").stdout)
step("cli suspend-op", lambda: cli("suspend-op", S["op"]))
step("cli resume-op", lambda: cli("resume-op", S["op"]))
step("cli update-op-parameters", lambda: cli("update-op-parameters", S["op"], '{weight=2}'))
def cli_jobs():
    wait_running(S["op"]); out = cli("list-jobs", S["op"], "--format", "json").stdout
    S["job"] = json.loads(out)["jobs"][0]["id"]; return True
step("cli list-jobs", cli_jobs)
step("cli get-job", lambda: S["job"] in cli("get-job", "--job-id", S["job"], "--operation-id", S["op"]).stdout)
step("cli get-job-stderr (running)", lambda: eventually(lambda: "started" in cli("get-job-stderr", "--job-id", S["job"], "--operation-id", S["op"]).stdout))
step("cli abort-op", lambda: cli("abort-op", S["op"]))
step("cli complete-op", lambda: cli("complete-op", vanilla_async()))
step("cli vanilla failing: error shown", lambda: (lambda p: p.returncode != 0 and "boom" in p.stderr)(
    cli("vanilla", "--tasks", '{t={command="echo boom >&2; exit 3";job_count=1}}', ok=False)))
step("cli get-operation --attribute state", lambda: "state" in cli("get-operation", S["op"], "--attribute", "state").stdout)
step("cli map: clear YTsaurus error", lambda: (lambda p: p.returncode != 0 and "Traceback" not in p.stderr)(
    cli("map", "cat", "--src", "//tmp/a", "--dst", "//tmp/b", ok=False)))
# --- Python API: Cypress
step("py list", lambda: "clip" in yt.list("//sys/pools"))
step("py create scheduler_pool", lambda: yt.create("scheduler_pool", attributes={"name": "pyp", "pool_tree": "physical", "weight": 2}))
step("py exists", lambda: yt.exists("//sys/pools/pyp") == True)
step("py get @weight", lambda: yt.get("//sys/pools/pyp/@weight") == 2)
step("py set @weight", lambda: (yt.set("//sys/pools/pyp/@weight", 5), 1)[1] and yt.get("//sys/pools/pyp/@weight") == 5)
step("py get with attributes", lambda: yt.get("//sys/pools/pyp", attributes=["weight"]).attributes["weight"] == 5)
step("py list with attributes", lambda: any(str(x) == "pyp" and x.attributes.get("weight") == 5 for x in yt.list("//sys/pools", attributes=["weight"])))
step("py remove force missing", lambda: (yt.remove("//sys/pools/nope", force=True), True)[1])
def resolve():
    try: yt.get("//sys/pools/nope")
    except yt.YtResponseError as e: return e.is_resolve_error()
    return False
step("py YtResponseError resolve", resolve)
step("py get_user_name", lambda: yt.get_user_name() == "admin")
step("py orchid", lambda: "pyp" in yt.get("//sys/scheduler/orchid/scheduler/pool_trees/physical/pools"))
def batch():
    b = yt.create_batch_client(); r1 = b.get("//sys/pools/pyp/@weight"); r2 = b.exists("//sys/pools/nope"); b.commit_batch()
    return r1.get_result() == 5 and r2.get_result() == False
step("py execute_batch", batch)
# --- Python API: operations
def spec(cmd="echo hi >&2; sleep 0", **kw):
    return yt.VanillaSpecBuilder().task("t", {"command": cmd, "job_count": 1, **kw}).pool("pyp")
step("py run_operation sync", lambda: yt.run_operation(spec()) is not None)
def run_async():
    S["pop"] = yt.run_operation(spec("echo started >&2; sleep 30"), sync=False); return True
step("py run_operation async", run_async)
step("py op.get_state", lambda: str(S["pop"].get_state()) in ("running", "pending", "materializing", "initializing", "starting"))
step("py op.get_attributes", lambda: "state" in S["pop"].get_attributes())
step("py get_operation", lambda: yt.get_operation(S["pop"].id)["id"] == S["pop"].id)
step("py list_operations", lambda: any(o["id"] == S["pop"].id for o in yt.list_operations()["operations"]))
step("py suspend/resume", lambda: (yt.suspend_operation(S["pop"].id), yt.resume_operation(S["pop"].id)) and True)
step("py update_operation_parameters", lambda: yt.update_operation_parameters(S["pop"].id, {"weight": 2}) or True)
def pjobs():
    wait_running(S["pop"].id); S["pjob"] = yt.list_jobs(S["pop"].id)["jobs"][0]["id"]; return True
step("py list_jobs", pjobs)
step("py get_job job_id", lambda: yt.get_job(S["pop"].id, S["pjob"])["job_id"] == S["pjob"])
step("py get_job_stderr running", lambda: eventually(lambda: b"started" in yt.get_job_stderr(S["pop"].id, S["pjob"]).read()))
step("py jobs with stderr", lambda: eventually(lambda: len(S["pop"].get_jobs_with_error_or_stderr()) >= 1))
step("py abort_operation", lambda: yt.abort_operation(S["pop"].id) or True)
step("py complete_operation", lambda: yt.complete_operation(yt.run_operation(spec("sleep 30"), sync=False).id) or True)
def failed():
    try: yt.run_operation(spec("echo boom >&2; exit 3"))
    except yt.YtOperationFailedError as e: return "boom" in str(e) or any("boom" in (j.get("stderr") or "") for j in e.attributes.get("stderrs", []))
    return False
step("py YtOperationFailedError with stderr", failed)
def unknown_spec():
    b = yt.VanillaSpecBuilder().task("t", {"command": "true", "job_count": 1, "my_task_key": 1}).pool("pyp").spec({"my_spec_key": {"a": 1}})
    op = yt.run_operation(b)
    alerts = yt.get_operation(op.id, attributes=["alerts"]).get("alerts", {})
    return "unrecognized_spec" in alerts
step("py unknown spec keys: alert, runs", unknown_spec)
def table_op():
    try: yt.run_map("cat", "//tmp/a", "//tmp/b")
    except yt.YtError as e: return True
    return False
step("py run_map: YtError", table_op)
n = sum(1 for r in results if r[1])
print("RESULT: %d of %d everyday steps work" % (n, len(results)))
unexpected = [r[0] for r in results if not r[1] and r[0] not in KNOWN]
if unexpected:
    print("FAIL: " + ", ".join(unexpected))
    sys.exit(1)
