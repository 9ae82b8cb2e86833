#!/usr/bin/env bash
# Users, groups and ACLs on a real scheduler (docs/api.md "Users, groups and ACLs"): three users
# in two nested groups, a matrix of command x user -> allow/deny (deny wins, nested groups,
# inheritance cut by inherit_acl), refused writes change nothing in memory or after a restart,
# users, groups and ACLs survive a restart, the CLI's check-permission, and an old database
# whose pool acl is a list of user names. Runs on SQLite and, when PostgreSQL is installed, on
# PostgreSQL (the same scenario through $POOLSCHED_STORE).
# usage: server_acl.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
source "$(dirname "${BASH_SOURCE[0]}")/lib/pg_cluster.bash"
sh_test "$@"
test_cleanup() { pg_cluster_stop; }

scenario() {   # scenario DATA_DIR BACKEND
  PYTHONDONTWRITEBYTECODE=1 PYTHONPATH="$src/tests/scripts" python3 - "$bin" "$1" "$2" <<'PYEOF'
import json, os, sqlite3, subprocess, sys
from server_helper import Scheduler, check, finish

binary, data, backend = sys.argv[1:4]
s = Scheduler(binary, data).start()
P = "//sys/pool_trees/physical"


def ace(action, subjects, perms):
    return {"action": action, "subjects": subjects, "permissions": perms,
            "inheritance_mode": "object_and_descendants"}


def call(tok, command, body):
    return s.call(command, body, token=tok)


with s:
    for u in ("alice", "bob", "carol"):
        s.ok("create", {"type": "user", "attributes": {"name": u}})
    for g in ("devs", "leads"):
        s.ok("create", {"type": "group", "attributes": {"name": g}})
    s.ok("add_member", {"member": "alice", "group": "devs"})
    s.ok("add_member", {"member": "bob", "group": "leads"})
    s.ok("add_member", {"member": "leads", "group": "devs"})   # bob is in devs through leads
    st, out = s.call("add_member", {"member": "devs", "group": "leads"})
    check(st == 400 and "would produce a cycle" in out.get("message", ""), "cycle: %d %s" % (st, out))
    st, out = s.call("create", {"type": "user", "attributes": {"name": "devs"}})
    check(st == 409, "a user named as a group: %d %s" % (st, out))
    tok = {u: s.token(u) for u in ("alice", "bob", "carol")}
    check(s.get("//sys/groups/devs/@members") == ["alice", "leads"], "members")
    check(s.ok("list", {"path": "//sys/users"})["value"] == ["root", "admin", "alice", "bob", "carol"],
          "users: %s" % s.ok("list", {"path": "//sys/users"}))
    check(s.ok("list", {"path": "//sys/groups"})["value"] == ["everyone", "users", "superusers", "devs", "leads"],
          "groups: %s" % s.ok("list", {"path": "//sys/groups"}))
    for path in ("//sys/users/admin", "//sys/groups/superusers", "//sys/groups/users"):
        st, out = s.call("remove", {"path": path})
        check(st == 400 and "built in" in out.get("message", ""), "remove %s: %d %s" % (path, st, out))
    st, out = s.call("remove_member", {"member": "admin", "group": "superusers"})
    check(st == 400 and "always a member" in out.get("message", ""), "admin stays: %d %s" % (st, out))

    team_acl = [ace("allow", ["devs"], ["write", "use", "modify_children"]),
                ace("deny", ["bob"], ["write"])]
    s.ok("create", {"type": "scheduler_pool", "path": P + "/team",
                    "attributes": {"inherit_acl": False, "acl": team_acl}})
    spec = {"pool": "team", "tasks": {"t": {"command": "true", "job_count": 1}}}
    matrix = [   # (what, command, body, {user: allowed})
        ("use", "start_op", {"operation_type": "vanilla", "spec": spec},
         {"alice": True, "bob": True, "carol": False}),
        ("write", "set", {"path": P + "/team/@weight", "value": 3},
         {"alice": True, "bob": False, "carol": False}),
        ("modify_children", "create", {"type": "scheduler_pool", "path": P + "/team/sub_%s"},
         {"alice": True, "bob": True, "carol": False}),
        ("administer", "set", {"path": P + "/team/@enable_aggressive_starvation", "value": True},
         {"alice": False, "bob": False, "carol": False}),
        ("acl", "set", {"path": P + "/team/@acl", "value": []},
         {"alice": False, "bob": False, "carol": False}),
        ("tree", "set", {"path": P + "/@max_operation_count", "value": 7},
         {"alice": False, "bob": False, "carol": False}),
        ("root acl", "set", {"path": "//sys/pool_trees/@acl", "value": []},
         {"alice": False, "bob": False, "carol": False}),
        ("new tree", "create", {"type": "scheduler_pool_tree", "attributes": {"name": "t_%s"}},
         {"alice": False, "bob": False, "carol": False}),
        ("users", "create", {"type": "user", "attributes": {"name": "eve_%s"}},
         {"alice": False, "bob": False, "carol": False}),
    ]

    def run_matrix(label):
        before = s.get(P + "/team/@")
        for what, command, body, expect in matrix:
            for user, allowed in expect.items():
                b = json.loads(json.dumps(body).replace("%s", user))
                st, out = call(tok[user], command, b)
                if allowed:
                    check(st == 200, "%s: %s %s as %s: %d %s" % (label, what, command, user, st, out))
                else:
                    msg = out.get("message", "") if isinstance(out, dict) else ""
                    check(st == 403 and user in msg,
                          "%s: %s %s as %s must be denied: %d %s" % (label, what, command, user, st, out))
        after = s.get(P + "/team/@")
        before["weight"] = 3   # alice's allowed write
        check(after == before, "%s: refused writes changed the pool: %s -> %s" % (label, before, after))
        check(s.get(P + "/@max_operation_count") != 7, "%s: refused tree write" % label)
        check(not s.ok("exists", {"path": "//sys/users/eve_carol"})["value"], "%s: eve" % label)
        check(not s.ok("exists", {"path": P + "/team/sub_carol"})["value"], "%s: sub_carol" % label)

    run_matrix("first")
    # reads stay open to every user (docs/api.md): the tree, the orchid, the history
    for user in ("alice", "bob", "carol"):
        for command, body in (("get", {"path": P + "/team/@"}), ("list", {"path": P}),
                              ("get", {"path": "//sys/scheduler/orchid/scheduler/pool_trees"}),
                              ("get", {"path": "//sys/groups/devs/@members"}),
                              ("get_history", {"pool_tree": "physical"})):
            st, out = call(tok[user], command, body)
            check(st == 200, "read %s %s as %s: %d %s" % (command, body, user, st, out))
    # a member of superusers may everything, whatever its token's role
    s.ok("add_member", {"member": "carol", "group": "superusers"})
    st, out = call(tok["carol"], "set", {"path": P + "/team/@max_running_operation_count", "value": 4})
    check(st == 200, "carol as a superuser: %d %s" % (st, out))
    s.ok("remove_member", {"member": "carol", "group": "superusers"})
    st, out = call(tok["carol"], "set", {"path": P + "/team/@max_running_operation_count", "value": 5})
    check(st == 403, "carol no longer a superuser: %d %s" % (st, out))
    # an admin token is a superuser everywhere, the engine's `use` check of start_op included;
    # check_permission answers by the user's groups, whatever token asks
    s.ok("create", {"type": "user", "attributes": {"name": "dave"}})
    dave_admin, dave_user = s.token("dave", "admin"), s.token("dave")
    st, out = call(dave_admin, "start_op", {"operation_type": "vanilla", "spec": spec})
    check(st == 200, "dave's admin token starts in team: %d %s" % (st, out))
    st, out = call(dave_user, "start_op", {"operation_type": "vanilla", "spec": spec})
    check(st == 403 and "dave" in out.get("message", ""), "dave's user token: %d %s" % (st, out))
    got = call(dave_admin, "check_permission", {"user": "dave", "permission": "use", "path": P + "/team"})
    check(got == (200, {"action": "deny"}), "check_permission for dave by dave's admin token: %s" % (got,))
    # as upstream, a removed user cannot authenticate (401; code 900 in the YTsaurus face),
    # whatever its tokens' roles; a token of a user never created acts as an ordinary user
    s.ok("remove", {"path": "//sys/users/dave"})

    def dave_refused(label):
        for t in (dave_admin, dave_user):
            st, out = call(t, "get", {"path": P + "/@"})
            check(st == 401 and out.get("message") == 'No such user "dave"', "%s: %d %s" % (label, st, out))
        st, out = s.raw("GET", "/api/v4/get?path=" + P + "/@max_operation_count", None, dave_user)
        err = json.loads(out) if out.startswith("{") else {}
        check(st == 401 and err.get("code") == 900, "%s, v4: %d %s" % (label, st, out))

    dave_refused("removed dave")
    st, out = call(s.token("erin"), "get", {"path": P + "/@"})
    check(st == 200, "a user never created: %d %s" % (st, out))
    # the paths other parts of the service answer (node health, the user -> pool map, the
    # scheduler's config) change by superusers only, before anything else is looked at
    for path, value in (("//sys/cluster_nodes/no-such-node/@banned", True),
                        ("//sys/scheduler/user_to_default_pool", {"carol": "team"}),
                        ("//sys/scheduler/config", {})):
        for command, body in (("set", {"path": path, "value": value}), ("remove", {"path": path})):
            st, out = call(tok["carol"], command, body)
            check(st == 403 and "superusers" in out.get("message", ""),
                  "%s %s as carol: %d %s" % (command, path, st, out))
    for user, want in (("alice", "allow"), ("bob", "deny"), ("carol", "deny")):
        got = s.ok("check_permission", {"user": user, "permission": "write", "path": P + "/team"})
        check(got == {"action": want}, "check_permission write %s: %s" % (user, got))
    out = subprocess.run([binary, "check-permission", "carol", "use", P + "/team", "--proxy",
                          "127.0.0.1:%d" % s.port, "--token", s.admin],
                         capture_output=True, text=True)
    check(out.returncode == 0 and out.stdout.strip() == "deny", "CLI: %r %r" % (out.stdout, out.stderr))

    # the YTsaurus face: check_permission (a read: GET) and the denial as code 901
    import urllib.parse
    q = urllib.parse.urlencode({"user": "carol", "permission": "use", "path": P + "/team"})
    st, out = s.raw("GET", "/api/v4/check_permission?" + q, None, s.admin)
    check(st == 200 and json.loads(out) == {"action": "deny"}, "v4 check_permission: %d %s" % (st, out))
    q = urllib.parse.urlencode({"path": P + "/team/@weight"})
    st, out = s.raw("PUT", "/api/v4/set?" + q, "9", tok["carol"])
    err = json.loads(out) if out.startswith("{") else {}
    check(st == 403 and err.get("code") == 901 and
          err.get("message", "").startswith('Access denied for user "carol": "write" permission'
                                            ' for node //sys/pool_trees/physical/team'),
          "v4 denial: %d %s" % (st, out))

    # operation ACLs: the owner (alice) reads and manages; the spec's acl adds others, deny wins
    s.ok("create", {"type": "scheduler_pool", "path": P + "/open"})
    ospec = {"pool": "open", "tasks": {"t": {"command": "true", "job_count": 1}},
             "acl": [ace("allow", ["carol"], ["read"]), ace("allow", ["leads"], ["read", "manage"]),
                     ace("deny", ["bob"], ["manage"])]}
    op = call(tok["alice"], "start_op", {"operation_type": "vanilla", "spec": ospec})[1]["operation_id"]
    plain = call(tok["alice"], "start_op", {"operation_type": "vanilla",
                                            "spec": {"pool": "open", "tasks": ospec["tasks"]}})[1]["operation_id"]
    st, out = call(tok["alice"], "start_op", {"operation_type": "vanilla",
                                              "spec": dict(ospec, acl=[{"action": "maybe"}])})
    check(st == 400 and "acl/0/action" in out.get("message", ""), "bad op acl: %d %s" % (st, out))

    def op_matrix(label, expect):
        for command, user, allowed in expect:
            body = {"operation_id": op}
            if command == "update_op_parameters":
                body["parameters"] = {"weight": 2}
            st, out = call(tok[user], command, body)
            msg = out.get("message", "") if isinstance(out, dict) else ""
            check(st == 200 if allowed else (st == 403 and user in msg and "operation " + op in msg),
                  "%s: %s as %s: %d %s" % (label, command, user, st, out))

    op_matrix("op acl", [("list_jobs", "carol", True), ("suspend_op", "carol", False),
                         ("list_jobs", "bob", True), ("suspend_op", "bob", False),
                         ("update_op_parameters", "bob", False),
                         ("suspend_op", "alice", True), ("resume_op", "alice", True),
                         ("update_op_parameters", "alice", True)])
    # check_permission on an operation (//sys/operations/<id>), by its ACL
    for user, perm, want in (("carol", "read", "allow"), ("carol", "manage", "deny"),
                             ("bob", "manage", "deny"), ("alice", "manage", "allow")):
        got = s.ok("check_permission", {"user": user, "permission": perm, "path": "//sys/operations/" + op})
        check(got == {"action": want}, "check_permission %s %s on the op: %s" % (user, perm, got))
    st, out = s.call("check_permission", {"user": "carol", "permission": "read", "path": "//sys/operations/nope"})
    check(st == 404, "check_permission on no operation: %d %s" % (st, out))
    # the effective ACL: the pool's own ACEs, then those it inherits, each with where it is set
    team_node = "node " + P + "/team"
    check(s.get(P + "/team/@effective_acl") == [dict(a, **{"from": team_node}) for a in team_acl],
          "team's effective acl (inherit_acl false): %s" % s.get(P + "/team/@effective_acl"))
    check(s.get(P + "/open/@effective_acl") ==
          [dict(ace("allow", ["users"], ["use"]), **{"from": "node //sys/pool_trees"})],
          "open's effective acl: %s" % s.get(P + "/open/@effective_acl"))
    check("effective_acl" not in s.get(P + "/team/@"), "effective_acl is not listed by @")
    st, out = call(tok["carol"], "list_jobs", {"operation_id": plain})
    check(st == 403, "no acl: carol may not read alice's jobs: %d %s" % (st, out))
    st, out = call(tok["carol"], "get_operation", {"operation_id": plain})
    check(st == 200, "get_operation is open: %d" % st)
    # list_operations' access filter (upstream's): the operations on which a subject has rights
    def listed(subject, perms):
        out = s.ok("list_operations", {"access": {"subject": subject, "permissions": perms}})
        return {o["id"] for o in out["operations"]}
    check(listed("carol", ["read"]) & {op, plain} == {op}, "access carol read")
    check(listed("carol", ["read", "manage"]) & {op, plain} == set(), "access carol read+manage")
    check(listed("alice", ["manage"]) & {op, plain} == {op, plain}, "access alice manage")
    st, out = s.call("list_operations", {"access": {"subject": "carol", "permissions": ["fly"]}})
    check(st == 400 and "access/permissions" in out.get("message", ""), "bad access: %d %s" % (st, out))

    # update_op_parameters replaces the acl
    call(tok["alice"], "update_op_parameters",
         {"operation_id": op, "parameters": {"acl": [ace("allow", ["carol"], ["manage"])]}})
    op_matrix("updated acl", [("suspend_op", "carol", True), ("list_jobs", "bob", False)])

    # everything survives a restart; so do the refusals
    s.stop()
    s.start()
    check(s.get("//sys/groups/devs/@members") == ["alice", "leads"], "members after restart")
    check(s.get("//sys/users/bob/@member_of") == ["leads", "users", "everyone"],
          "member_of after restart: %s" % s.get("//sys/users/bob/@member_of"))
    check(s.get(P + "/team/@acl") == team_acl, "acl after restart")
    dave_refused("removed dave after restart")
    s.ok("create", {"type": "user", "attributes": {"name": "dave"}})
    st, out = call(dave_user, "get", {"path": P + "/@"})
    check(st == 200, "dave created again: %d %s" % (st, out))
    op_matrix("op acl after restart", [("resume_op", "carol", True), ("list_jobs", "bob", False),
                                       ("abort_op", "bob", False)])
    for sub in ("sub_alice", "sub_bob"):
        s.ok("remove", {"path": P + "/team/" + sub})
    run_matrix("after restart")

    # removing a user drops it from its groups; a removed group from its parents
    s.ok("remove", {"path": "//sys/groups/leads"})
    check(s.get("//sys/groups/devs/@members") == ["alice"], "leads left devs")
    st, out = call(tok["bob"], "start_op", {"operation_type": "vanilla", "spec": spec})
    check(st == 403, "bob without leads: %d %s" % (st, out))

    # an old database: a pool acl stored as a list of user names
    if backend == "sqlite":
        s.ok("create", {"type": "scheduler_pool", "path": P + "/legacy"})
        # and operations whose spec had acl and owners keys, ignored then: any value
        old_ops = {}
        for key, value in (("acl", ["alice"]), ("owners", "alice")):
            old_ops[key] = call(tok["carol"], "start_op", {"operation_type": "vanilla", "spec": {
                "pool": "open", "tasks": {"t": {"command": "true", "job_count": 1}}}})[1]["operation_id"]
        s.stop()
        db = sqlite3.connect(os.path.join(data, "poolsched.db"))
        (doc,) = db.execute("SELECT value FROM objects WHERE kind='tree' AND key='physical'").fetchone()
        tree = json.loads(doc)
        for pool in tree["pools"]:
            if pool["name"] == "legacy":
                pool["acl"] = ["alice"]
                pool.pop("inherit_acl", None)
        db.execute("UPDATE objects SET value=? WHERE kind='tree' AND key='physical'",
                   (json.dumps(tree),))
        for key, value in (("acl", ["alice"]), ("owners", "alice")):
            (doc,) = db.execute("SELECT value FROM objects WHERE kind='operation' AND key=?",
                                (old_ops[key],)).fetchone()
            doc = json.loads(doc)
            doc["spec"][key] = value
            db.execute("UPDATE objects SET value=? WHERE kind='operation' AND key=?",
                       (json.dumps(doc), old_ops[key]))
        db.commit()
        db.close()
        s.start()
        log = s.logtext()
        check("operation_not_restored" not in log, "an old operation was not restored")
        for key, value in (("acl", ["alice"]), ("owners", "alice")):
            opid = old_ops[key]
            got = s.ok("get_operation", {"operation_id": opid})
            check(got["state"] in ("pending", "running") and key not in got["spec"],
                  "old op with %s: %s" % (key, got))
            check("operation_spec_key_ignored id=%s key=%s value=%s" % (opid, key, json.dumps(value))
                  in log, "warning for %s: %s" % (key, log[-2000:]))
            st, out = call(tok["alice"], "suspend_op", {"operation_id": opid})
            check(st == 403, "old %s gives alice nothing: %d %s" % (key, st, out))
            st, out = call(tok["carol"], "suspend_op", {"operation_id": opid})
            check(st == 200, "old op's owner manages it: %d %s" % (st, out))
        check(s.get(P + "/legacy/@acl") == [ace("allow", ["alice"], ["use"])], "legacy acl")
        check(s.get(P + "/legacy/@inherit_acl") is False, "legacy inherit_acl")
        lspec = {"pool": "legacy", "tasks": {"t": {"command": "true", "job_count": 1}}}
        st, out = call(tok["alice"], "start_op", {"operation_type": "vanilla", "spec": lspec})
        check(st == 200, "legacy: alice: %d %s" % (st, out))
        st, out = call(tok["carol"], "start_op", {"operation_type": "vanilla", "spec": lspec})
        check(st == 403, "legacy: carol: %d %s" % (st, out))
finish()
PYEOF
}

unset POOLSCHED_STORE
scenario "$work/sqlite" sqlite
echo "ok sqlite"
if pg_bin_dir >/dev/null 2>&1; then
  pg_cluster_start "$work/pg"
  POOLSCHED_STORE=$(pg_cluster_createdb acl) scenario "$work/pgdata" postgresql
  echo "ok postgresql"
else
  echo "PostgreSQL is not installed: the PostgreSQL run is skipped"
fi
