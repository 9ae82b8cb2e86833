#!/usr/bin/env bash
# The official YTsaurus Python client (ytsaurus-client, yt/python/yt/wrapper) and its `yt` CLI
# against a real scheduler and a real `poolsched node` agent: this test replays the client's
# requests as the client sends them (method, path, headers, parameters: facts read from its
# http_driver.py, http_helpers.py, cypress_commands.py, operation_commands.py, spec_builders.py,
# job_commands.py; the client itself is not used here) and checks the replies field by field,
# one group per item of docs/api.md "The Python client and the yt CLI". Standard library only.
# The client sends X-YT-Header-Format: <format=text>yson, its parameters as YSON text in
# X-YT-Parameters (reads) or in the body (writes), output_format="json" (pure-Python YSON) or,
# from the CLI, output_format=<format=pretty;...>"yson".
# usage: yt_python_contract.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: yt_python_contract.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import json, os, sys, time, urllib.error, urllib.request
from server_helper import NodeAgent, Scheduler, check, finish

bin, work = sys.argv[1], sys.argv[2]
s = Scheduler(bin, work + "/data", {"heartbeat_period": 200}).start()
node = NodeAgent(bin, s.url(""), "c%d" % os.getpid(), "cpu=2,memory=2G,user_slots=4",
                 work + "/node", work + "/node.log", data_dir=work + "/data",
                 extra=["--disk-space-per-medium", "default=1G"], heartbeat_period=200)
HF = "<format=text>yson"          # the client's X-YT-Header-Format (http_driver.make_request)
PRETTY = ('<"ignore_inner_attributes"=%false;"always_create_attributes"=%false;"format"="pretty";'
          '"lazy"=%false;"sort_keys"=%false;>"yson"')   # `yt get`'s output_format
BINARY = PRETTY.replace('"pretty"', '"binary"')     # `yt set`'s input_format


def http(method, path, headers=None, body=None, token=True):
    req = urllib.request.Request(s.url(path), data=body.encode() if body is not None else None,
                                 method=method)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    if token:
        req.add_header("Authorization", "OAuth " + s.admin)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, dict(r.headers), r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read().decode()


def read(command, params):
    """A reading command as the client sends it: GET, parameters in X-YT-Parameters."""
    return http("GET", "/api/v4/" + command, {"X-YT-Header-Format": HF, "X-YT-Parameters": params})


def write(command, params):
    """A volatile command without input: POST, parameters as YSON text in the body."""
    return http("POST", "/api/v4/" + command,
                {"X-YT-Header-Format": HF, "Content-Type": "application/x-yt-yson-text"}, params)


def js(text):
    try:
        return json.loads(text)
    except ValueError:
        return None


def jd(text):
    """The reply as a map, or {} (an old or broken reply must fail a check, not the test)."""
    v = js(text)
    return v if isinstance(v, dict) else {}


def yt_error(st, hdr, body, status, code):
    e = jd(body)
    return st == status and e.get("code") == code and hdr.get("X-YT-Response-Code") == str(code) \
        and js(hdr.get("X-YT-Error", "")) == e and isinstance(e.get("inner_errors"), list)


try:
    # 1. the command list: GET /api/v4 (and v3) before any token (http_helpers.get_api_commands)
    for v in ("v3", "v4"):
        st, _, body = http("GET", "/api/" + v, token=False)
        cmds = {c.get("name"): c for c in js(body) if isinstance(c, dict)} \
            if isinstance(js(body), list) else {}
        check(st == 200 and cmds.get("get", {}).get("is_volatile") is False and
              cmds.get("start_operation", {}).get("is_volatile") is True and
              cmds.get("set", {}).get("input_type") == "structured",
              "1 GET /api/%s without a token: 200 and the commands, got %d %s" % (v, st, body[:120]))
    st, hdr, body = http("GET", "/api/v4/list?path=//sys/pools", token=False)
    check(yt_error(st, hdr, body, 401, 900), "1 a command still needs the token: %d %s" % (st, body[:100]))

    st, _, body = write("create", '{"type"="scheduler_pool";"recursive"=%false;"ignore_existing"=%false;'
                        '"attributes"={"name"="cp";"pool_tree"="physical";"weight"=2;};"force"=%false;'
                        '"output_format"="json";"mutation_id"="1-2-3-4";"retry"=%false;}')
    check(st == 200 and "node_id" in jd(body), "create scheduler_pool: %d %s" % (st, body))

    # 2. YSON with attributes in X-YT-Parameters: `yt get` (pretty YSON out), `yt set` (binary in)
    st, hdr, body = read("get", '{"suppress_transaction_coordinator_sync"=%false;"path"="//sys/pools/cp/@weight";'
                         '"max_size"=65535;"return_only_value"=%true;"output_format"=' + PRETTY + ';}')
    check(st == 200 and body == "2" and "yson" in hdr.get("Content-Type", ""),
          "2 yt get with output_format=<format=pretty>yson: %d %r" % (st, body))
    st, _, body = read("get", '{"path"="//sys/pools/cp";"return_only_value"=%true;"output_format"=' + PRETTY + ';}')
    check(st == 200 and body == "{}", "2 pretty YSON of an empty map: %r" % body)
    st, _, body = http("PUT", "/api/v4/set", {"X-YT-Header-Format": HF, "X-YT-Parameters":
                       '{"path"="//sys/pools/cp/@weight";"input_format"=' + BINARY +
                       ';"recursive"=%false;"force"=%false;"mutation_id"="5-6-7-8";"retry"=%false;}'}, "4")
    check(st == 200 and body == "", "2 yt set with input_format=<format=binary>yson: %d %r" % (st, body))

    # 4. return_only_value=%true: get and list answer the bare value
    st, _, body = read("get", '{"path"="//sys/pools/cp/@weight";"max_size"=65535;"return_only_value"=%true;"output_format"="json";}')
    check(st == 200 and js(body) == 4, "4 get return_only_value: %r" % body)
    st, _, body = read("get", '{"path"="//sys/pools/cp/@weight";"output_format"="json";}')
    check(st == 200 and js(body) == {"value": 4}, "4 get without it keeps {value}: %r" % body)
    st, _, body = read("list", '{"path"="//sys/pools";"max_size"=65535;"return_only_value"=%true;"output_format"="json";}')
    check(st == 200 and js(body) == ["cp"], "4 list return_only_value: %r" % body)
    st, _, body = read("list", '{"path"="//sys/pools";"attributes"=["weight";];"return_only_value"=%true;"output_format"="json";}')
    check(js(body) == [{"$attributes": {"weight": 4}, "$value": "cp"}], "4 list with attributes: %r" % body)

    # 4b. `yt list -l //sys/pools`: list with the long format's attributes (yt_binary.py
    # LONG_FORMAT_ATTRIBUTES and modification_time), each printed with its type, account, disk
    # space (resource_usage) and date; `yt.get(p, attributes=...)` of a pool: only the attributes
    # the pool has set, on every pool of the subtree
    st, _, body = read("list", '{"path"="//sys/pools";"attributes"=["type";"target_path";"account";'
                       '"resource_usage";"modification_time";];"return_only_value"=%true;"output_format"="json";}')
    items = js(body) if isinstance(js(body), list) else []
    a = items[0].get("$attributes", {}) if items else {}
    check(st == 200 and len(items) == 1 and a.get("type") == "scheduler_pool" and a.get("account") == "sys"
          and a.get("resource_usage", {}).get("disk_space") == 0 and "target_path" not in a
          and "T" in str(a.get("modification_time")) and str(a.get("modification_time")).endswith("Z"),
          "4b list -l: %d %r" % (st, body))
    st, _, body = write("create", '{"type"="scheduler_pool";"attributes"={"name"="cp_child";"parent_name"="cp";'
                        '"pool_tree"="physical";"max_operation_count"=2;};"output_format"="json";}')
    st, _, body = read("get", '{"path"="//sys/pools";"attributes"=["weight";"max_operation_count";'
                       '"max_running_operation_count";"owner";];"return_only_value"=%true;"output_format"="json";}')
    got = js(body) if isinstance(js(body), dict) else {}
    cp = got.get("$value", {}).get("cp", {})
    child = cp.get("$value", {}).get("cp_child", {})
    check(st == 200 and cp.get("$attributes") == {"weight": 4, "owner": "root"} and
          child.get("$attributes") == {"max_operation_count": 2, "owner": "root"},
          "4b get with attributes: only those set, on every pool: %d %r" % (st, body))
    write("remove", '{"path"="//sys/pools/cp/cp_child";"output_format"="json";}')

    # 5. //sys/@local_mode_proxy_address (local_mode.py, every operation run): a resolve error
    for attr in ("local_mode_proxy_address", "local_mode_fqdn"):
        st, hdr, body = read("get", '{"path"="//sys/@%s";"read_from"="cache";"return_only_value"=%%true;"output_format"="json";}' % attr)
        check(yt_error(st, hdr, body, 404, 500), "5 get //sys/@%s: resolve error 500, got %d %s" % (attr, st, body[:120]))

    # 6. remove with force=%true on a missing path succeeds; without force: resolve error
    st, _, body = write("remove", '{"path"="//sys/pools/nope";"recursive"=%false;"force"=%true;"mutation_id"="a-b-c-d";"retry"=%false;}')
    check(st == 200 and body == "", "6 remove force missing: %d %s" % (st, body))
    st, hdr, body = write("remove", '{"path"="//sys/pools/nope";"recursive"=%false;"force"=%false;}')
    check(yt_error(st, hdr, body, 404, 500), "6 remove missing without force: %d %s" % (st, body[:100]))

    # 7. the orchid at upstream's current layout
    st, _, body = read("get", '{"path"="//sys/scheduler/orchid/scheduler/pool_trees/physical/pools";"return_only_value"=%true;"output_format"="json";}')
    pools = jd(body)
    check(st == 200 and "cp" in pools and "<Root>" in pools and "fair_share_ratio" in pools["cp"],
          "7 orchid pool_trees/physical/pools: %d %s" % (st, body[:160]))
    st, _, body = read("get", '{"path"="//sys/scheduler/orchid/scheduler/pool_trees/physical/pools/cp/fair_share_ratio";"return_only_value"=%true;"output_format"="json";}')
    check(st == 200 and isinstance(js(body), (int, float)), "7 orchid pool_trees/physical/pools/cp/fair_share_ratio: %r" % body)

    # 11. `yt list -l`: //sys/pools/cp&/@ (do not follow links) and @type
    st, _, body = read("get", '{"path"="//sys/pools/cp&/@";"max_size"=65535;"return_only_value"=%true;"output_format"="json";}')
    check(st == 200 and jd(body).get("weight") == 4, "11 get //sys/pools/cp&/@: %d %s" % (st, body[:120]))
    st, _, body = read("get", '{"path"="//sys/pools/cp&/@type";"return_only_value"=%true;"output_format"="json";}')
    check(js(body) == "scheduler_pool", "11 @type of a pool: %r" % body)

    # 12. /auth/whoami (http_helpers.get_user_name: POST, no body)
    st, _, body = http("POST", "/auth/whoami")
    check(st == 200 and jd(body).get("login") == "admin", "12 POST /auth/whoami: %d %s" % (st, body))
    st, hdr, body = http("POST", "/auth/whoami", token=False)
    check(yt_error(st, hdr, body, 401, 900), "12 whoami without a token: %d %s" % (st, body[:100]))
    # execute_batch as batch_execution.py sends it (the batch client: get, exists, set with
    # its input, a failing get, list): results in order, outputs or error objects
    st, _, body = write("execute_batch", '{"requests"=[{"command"="get";"parameters"={"path"="//sys/pools/cp/@weight";"max_size"=65535;"return_only_value"=%true;};};'
                        '{"command"="exists";"parameters"={"path"="//sys/pools/nope";};};'
                        '{"command"="set";"parameters"={"path"="//sys/pools/cp/@weight";"recursive"=%false;};"input"=5;};'
                        '{"command"="get";"parameters"={"path"="//sys/pools/nope";"return_only_value"=%true;};};'
                        '{"command"="list";"parameters"={"path"="//sys/pools";"return_only_value"=%true;};};];'
                        '"concurrency"=50;"output_format"="json";"mutation_id"="9-9-9-9";"retry"=%false;}')
    res = jd(body).get("results") or [{}] * 5
    check(st == 200 and res[0] == {"output": 4} and res[1] == {"output": {"value": False}} and
          res[2] == {"output": {}} and res[3].get("error", {}).get("code") == 500 and
          res[4] == {"output": ["cp"]}, "12 execute_batch: %d %s" % (st, body[:300]))
    st, _, body = read("get", '{"path"="//sys/pools/cp/@weight";"return_only_value"=%true;"output_format"="json";}')
    check(js(body) == 5, "12 the batch's set was applied: %r" % body)

    # table operations: a clear YTsaurus error, no crash
    st, hdr, body = write("start_operation", '{"operation_type"="map";"spec"={"mapper"={"command"="cat";};'
                          '"input_table_paths"=["//tmp/a";];"output_table_paths"=["//tmp/b";];};}')
    e = jd(body)
    check(st == 400 and isinstance(e.get("code"), int) and "vanilla" in e.get("message", "") and
          hdr.get("X-YT-Response-Code") == str(e.get("code")),
          "12 a map operation: a YTsaurus error naming vanilla, got %d %s" % (st, body[:160]))

    # 3. start_operation as run_operation sends it (spec_builders.VanillaSpecBuilder): task
    # title, use_yamr_descriptors, check_input_fully_consumed; top-level title and started_by;
    # plus unknown keys at every depth: the operation runs with the unrecognized_spec alert
    spec = ('{"started_by"={"hostname"="h";"pid"=1;"command"=["yt";];"wrapper_version"="0.13";"user"="u";};'
            '"tasks"={"t"={"command"="echo started >&2; sleep 30";"job_count"=1;"title"="t";'
            '"use_yamr_descriptors"=%false;"check_input_fully_consumed"=%false;"my_task_key"=1;'
            '"disk_request"={"disk_space"=1;"my_disk_key"=2;};'
            '"environment"={"YT_ALLOW_HTTP_REQUESTS_TO_YT_FROM_JOB"="0";};};};'
            '"pool"="cp";"title"="Tasks[T]";"my_spec_key"={"a"=1;};}')
    st, _, body = write("start_operation", '{"operation_type"="vanilla";"spec"=' + spec +
                        ';"output_format"="json";"mutation_id"="e-f-a-b";"retry"=%false;}')
    op = jd(body).get("operation_id")
    check(st == 200 and op, "3 start_operation with the client's keys: %d %s" % (st, body[:200]))
    if op:
        st, _, body = read("get_operation", '{"operation_id"="%s";"attributes"=["alerts";"unrecognized_spec";"brief_spec";];"output_format"="json";}' % op)
        o = jd(body)
        want = {"my_spec_key": {"a": 1}, "tasks": {"t": {"title": "t", "my_task_key": 1,
                                                          "disk_request": {"my_disk_key": 2}}}}
        check(o.get("unrecognized_spec") == want, "3 unrecognized_spec: %s" % o.get("unrecognized_spec"))
        alert = o.get("alerts", {}).get("unrecognized_spec", {})
        check(alert.get("attributes", {}).get("unrecognized") == want, "3 the alert: %s" % alert)
        check(o.get("brief_spec", {}).get("title") == "Tasks[T]", "3 title kept: %s" % o.get("brief_spec"))

        # 8. list_jobs / get_job as the client reads them; 10. stderr of a running job
        jobs = []
        deadline = time.time() + 30
        while time.time() < deadline and not jobs:
            st, _, body = http("GET", "/api/v4/list_jobs", {"X-YT-Header-Format": HF, "X-YT-Accept-Framing": "1",
                               "X-YT-Parameters": '{"operation_id"="%s";"include_cypress"=%%false;"include_runtime"=%%false;"include_archive"=%%false;"output_format"="json";}' % op})
            jobs = [j for j in jd(body).get("jobs", []) if j.get("state") == "running"]
            time.sleep(0.2)
        check(len(jobs) == 1 and jobs[0].get("address") and jobs[0].get("type") == "vanilla",
              "8 list_jobs: one running job with address and type, got %s" % body[:200])
        if jobs:
            jid = jobs[0]["id"]
            st, _, body = read("get_job", '{"operation_id"="%s";"job_id"="%s";"output_format"="json";}' % (op, jid))
            j = jd(body)
            check(st == 200 and j.get("job_id") == jid and j.get("operation_id") == op and
                  j.get("state") == "running", "8 get_job has job_id: %s" % body[:200])
            # 10. a running job's stderr so far (as of its node's last heartbeat), asked with the
            # job id as get_jobs_with_error_or_stderr passes it: with its address attribute
            body, deadline = "", time.time() + 15
            while time.time() < deadline and body != "started\n":
                st, _, body = read("get_job_stderr", '{"operation_id"="%s";"job_id"=<"address"="%s";>"%s";}' % (op, jobs[0]["address"], jid))
                time.sleep(0.2)
            check(st == 200 and body == "started\n", "10 get_job_stderr of a running job: %d %r" % (st, body[:120]))
        write("abort_operation", '{"operation_id"="%s";"mutation_id"="1-1-1-1";"retry"=%%false;}' % op)

    # 9. a failing operation: the job's error is an error object, stderr_size is set and
    # with_stderr finds it, the operation's result.error is an error object
    st, _, body = write("start_operation", '{"operation_type"="vanilla";"spec"={"max_failed_job_count"=1;'
                        '"tasks"={"t"={"command"="echo boom >&2; exit 3";"job_count"=1;};};};}')
    fop = jd(body).get("operation_id")
    state = None
    deadline = time.time() + 30
    while fop and time.time() < deadline and state not in ("failed", "completed", "aborted"):
        st, _, body = read("get_operation", '{"operation_id"="%s";"attributes"=["state";];"output_format"="json";}' % fop)
        state = jd(body).get("state")
        time.sleep(0.2)
    check(state == "failed", "9 the failing operation failed: %s" % state)
    st, _, body = read("get_operation", '{"operation_id"="%s";"attributes"=["result";];"output_format"="json";}' % fop)
    err = jd(body).get("result", {}).get("error", {})
    check(isinstance(err.get("code"), int) and err["code"] != 0 and err.get("message"),
          "9 result.error is an error object: %s" % body[:200])
    st, _, body = read("list_jobs", '{"operation_id"="%s";"include_cypress"=%%true;"include_archive"=%%true;'
                       '"include_runtime"=%%false;"with_stderr"=%%true;"job_state"="failed";"output_format"="json";}' % fop)
    jobs = jd(body).get("jobs", [])
    check(len(jobs) == 1 and jobs[0].get("stderr_size") == 5, "8 list_jobs with_stderr: stderr_size 5: %s" % body[:300])
    if jobs:
        e = jobs[0].get("error")
        e = e if isinstance(e, dict) else {"as given": e}
        check(e.get("code") == 1205 and e.get("message") == "User job failed" and
              (e.get("inner_errors") or [{}])[0].get("message") == "Process exited with code 3" and
              e.get("attributes") == {}, "9 the job's error object: %s" % e)
        st, _, body = read("get_job_stderr", '{"operation_id"="%s";"job_id"=<"address"="%s";"error"={"code"=1205;};>"%s";}'
                           % (fop, jobs[0]["address"], jobs[0]["id"]))
        check(st == 200 and body == "boom\n", "9 the failed job's stderr: %d %r" % (st, body))
    st, _, body = read("list_jobs", '{"operation_id"="%s";"with_stderr"=%%false;"output_format"="json";}' % fop)
    check(st == 200 and jd(body).get("jobs") == [], "8 with_stderr=%%false: no job: %s" % body[:200])
finally:
    node.stop()
    s.stop()
finish()
EOF
