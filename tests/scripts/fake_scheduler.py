#!/usr/bin/env python3
"""A tiny fake of the scheduler's HTTP API (docs/api.md) for cli_fake_server.sh.

usage: fake_scheduler.py PORT_FILE LOG_FILE

Listens on 127.0.0.1 on an ephemeral port, writes the port to PORT_FILE, and appends one JSON
line per request to LOG_FILE: {"method", "path", "auth", "content_type", "body"} (body parsed
as JSON, or the raw text when it is not JSON). Replies with canned answers chosen by the
request, including the error shapes of the contract. Exits after 120 s whatever happens, so a
broken test can never leave it running.
"""
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

port_file, log_file = sys.argv[1], sys.argv[2]
polls = {}

OPERATION = {
    "id": "op-1", "user": "alice", "state": "running", "start_time": 1714564800000,
    "pool_per_tree": {"physical": "research"}, "spec": {}, "resulting_spec": {},
    "progress": {"total": 2, "pending": 0, "running": 2, "completed": 0, "failed": 0,
                 "aborted": 0},
    "suspended": False,
}


CODES = {"invalid argument": -1, "not found": -3, "already exists": -4,
         "permission denied": -7, "wrong state": -8}


def error(status, name, message):
    return status, {"code": CODES[name], "error": name, "message": message}


def operation(op_id):
    if "missing" in op_id:
        return error(404, "not found", f"no operation {op_id}")
    n = polls[op_id] = polls.get(op_id, 0) + 1
    op = dict(OPERATION, id=op_id)
    if op_id == "op-eph":   # in a pool that did not exist, whose ephemeral pool is gone again
        op.update(pool_per_tree={"physical": "missing-pool"}, state="completed")
    if n >= 2 and op_id == "op-1":
        op.update(state="completed", finish_time=1714564860000)
    if n >= 2 and op_id == "op-fail":
        op.update(state="failed", error="job task/0 failed: exit code 3")
    return 200, op


def answer(command, body):
    path = body.get("path", "") if isinstance(body, dict) else ""
    if "missing" in path:
        return error(404, "not found", f"path {path} does not exist")
    if command == "get":
        if path.endswith("/integral_pool_capacity"):
            return 200, {"value": {"cpu": 86400000.0, "user_slots": 0}}
        if "/fair_share_info/pools/" in path:   # the pool an operation went to (vanilla asks)
            return 200, {"value": {"is_ephemeral": False, "parent": "<Root>"}}
        return 200, {"value": {"guarantee_type": "burst", "resource_flow": {"cpu": 1000},
                               "burst_guarantee_resources": {"cpu": 2000}}}
    if command == "list":
        return 200, {"value": ["gpu", "physical"]}
    if command == "exists":
        return 200, {"value": "absent" not in path}
    if command == "set":
        if path.endswith("/@weight") and body.get("value") == -1:
            return error(400, "invalid argument", f"{path}: must be a positive number, got -1")
        return 200, {}
    if command == "create":
        name = (body.get("attributes") or {}).get("name", "")
        if name == "dup" and not body.get("ignore_existing"):
            return error(409, "already exists", 'pool "dup" exists already')
        return 200, {}
    if command == "remove":
        if path.endswith("/busy"):
            return error(409, "wrong state", f"{path} has child pools")
        if path.endswith("/html"):
            return 502, "<html>bad gateway</html>"
        return 200, {}
    if command == "start_op":
        pool = body["spec"].get("pool")
        return 200, {"operation_id": {"failing": "op-fail", "missing-pool": "op-eph"}.get(pool, "op-1")}
    if command == "get_operation":
        return operation(body["operation_id"])
    if command == "list_operations":
        return 200, {"operations": [dict(OPERATION, id="op-2"), dict(OPERATION)]}
    if command in ("abort_op", "suspend_op", "resume_op", "complete_op",
                   "update_op_parameters"):
        status, op = operation(body["operation_id"])
        return (200, {}) if status == 200 else (status, op)
    if command == "list_jobs":
        return 200, {"jobs": [{"id": "j1", "operation_id": body["operation_id"],
                               "state": "completed", "node_id": "n1", "start_time": 0,
                               "finish_time": 5000, "cpu_limit": 1, "cpu_guarantee": 1,
                               "memory_limit": 536870912, "memory_reserve": 268435456}]}
    if command == "get_job_stderr":
        return 200, {"stderr": "line 1\nline 2\n", "truncated": True}
    return error(404, "not found", f"no command {command}")


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"     # keep-alive, as the real server

    def log_message(self, *args):
        pass

    def do_POST(self):
        raw = self.rfile.read(int(self.headers.get("Content-Length", "0"))).decode()
        try:
            body = json.loads(raw)
        except ValueError:
            body = raw
        auth = self.headers.get("Authorization")
        with open(log_file, "a") as f:
            f.write(json.dumps({"method": "POST", "path": self.path, "auth": auth,
                                "content_type": self.headers.get("Content-Type"),
                                "body": body}, sort_keys=True) + "\n")
        if auth is None:
            status, reply = error(401, "permission denied", "no token: set POOLSCHED_TOKEN")
        elif auth != "OAuth secret-token":
            status, reply = error(401, "permission denied", "unknown token")
        elif not self.path.startswith("/api/v1/") or not isinstance(body, dict):
            status, reply = error(400, "invalid argument", "expected POST /api/v1/<command> {...}")
        else:
            status, reply = answer(self.path[len("/api/v1/"):], body)
        data = (reply if isinstance(reply, str) else json.dumps(reply)).encode()
        self.send_response(status)
        self.send_header("Content-Type",
                         "text/html" if isinstance(reply, str) else "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


server = HTTPServer(("127.0.0.1", 0), Handler)
threading.Timer(120, server.shutdown).start()
with open(port_file + ".tmp", "w") as f:
    f.write(str(server.server_address[1]))
import os
os.rename(port_file + ".tmp", port_file)
server.serve_forever()
