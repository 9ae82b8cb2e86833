#!/usr/bin/env bash
# TestSchedulerPoolAcls (test_scheduler_pools.py) and the pool ACL cases of
# TestSchedulerOperationLimits (test_scheduler_strategy.py) translated: users, ACEs on pools,
# trees and //sys/pool_trees, check_permission, and the authorization errors of a real
# scheduler (docs/api.md "Users, groups and ACLs"). Each case has trees, pools and a user of
# its own on one scheduler; upstream's authenticated_user="u" is a token issued for the user.
# usage: pool_acls.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: pool_acls.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PYEOF'
import sys, time
from server_helper import FakeNode, finish
from upslib import CASES, case, run
from checks import eq
import upslib

s, ok, refused = upslib.shared(sys.argv[1], sys.argv[2])
T = "//sys/pool_trees/"


def make_ace(action, subject, permissions):
    return {"action": action, "subjects": [subject],
            "permissions": permissions if isinstance(permissions, list) else [permissions]}


def create_user(name):
    ok("create", {"type": "user", "attributes": {"name": name}})
    return s.token(name)


def as_user(token, command, body):
    return s.call(command, body, token=token)


def denied(token, command, body, user):
    st, out = as_user(token, command, body)
    msg = out.get("message", "") if isinstance(out, dict) else str(out)
    if st != 403 or ('Access denied for user "%s"' % user) not in msg:
        raise AssertionError("%s %s as %s: %d %s" % (command, body, user, st, out))


def allowed(token, command, body):
    st, out = as_user(token, command, body)
    if st != 200:
        raise AssertionError("%s %s: %d %s" % (command, body, st, out))
    return out


def create_tree(name, token=None):
    return {"type": "scheduler_pool_tree", "attributes": {"name": name}}


def pool_body(name, tree, parent=None, attributes=None):
    attrs = dict(attributes or {})
    attrs.update({"name": name, "pool_tree": tree})
    if parent:
        attrs["parent_name"] = parent
    return {"type": "scheduler_pool", "attributes": attrs}


def set_(path, value):
    ok("set", {"path": path, "value": value})


def check_permission(user, permission, path):
    return ok("check_permission", {"user": user, "permission": permission, "path": path})


def nirvana_case(t, *children):
    """Most cases' start: tree t with pool nirvana (children under it), user t_u with a token.
    Returns (the user, its token, nirvana's path)."""
    ok("create", create_tree(t))
    ok("create", pool_body("nirvana", t))
    for child in children:
        ok("create", pool_body(child, t, "nirvana"))
    u = t + "_u"
    return u, create_user(u), T + t + "/nirvana"


def grant(path, action, user, permissions):
    """path's ACL: the one ACE."""
    set_(path + "/@acl", [make_ace(action, user, permissions)])


@case
def nested_pool_use_permission(t):
    # upstream: test_scheduler_pools::TestSchedulerPoolAcls::test_nested_pool_use_permission
    u, _, nirvana = nirvana_case(t, "prod")
    prod = nirvana + "/prod"
    eq(check_permission(u, "use", prod)["action"], "allow", "inherited from //sys/pool_trees")
    set_(nirvana + "/@inherit_acl", False)
    eq(check_permission(u, "use", prod)["action"], "deny", "inherit_acl false")
    grant(nirvana, "allow", u, "use")
    eq(check_permission(u, "use", prod)["action"], "allow", "allowed on nirvana")
    grant(nirvana, "deny", u, "use")
    eq(check_permission(u, "use", prod)["action"], "deny", "denied on nirvana")


@case
def modify_children_allows_to_create_child(t):
    # upstream: test_scheduler_pools::TestSchedulerPoolAcls::test_modify_children_allows_to_create_child
    u, tok, nirvana = nirvana_case(t)
    denied(tok, "create", pool_body("prod", t, "nirvana"), u)
    grant(nirvana, "allow", u, "modify_children")
    allowed(tok, "create", pool_body("prod", t, "nirvana"))


@case
def modify_children_allows_to_remove_child(t):
    # upstream: test_scheduler_pools::TestSchedulerPoolAcls::test_modify_children_allows_to_remove_child
    u, tok, nirvana = nirvana_case(t, "prod")
    prod = nirvana + "/prod"
    denied(tok, "remove", {"path": prod}, u)
    grant(nirvana, "allow", u, "modify_children")
    grant(prod, "allow", u, "remove")
    allowed(tok, "remove", {"path": prod})
    eq(ok("exists", {"path": prod})["value"], False, "removed")


@case
def write_allows_to_set_user_managed_attribute(t):
    # upstream: test_scheduler_pools::TestSchedulerPoolAcls::test_write_allows_to_set_user_managed_attribute
    u, tok, nirvana = nirvana_case(t)
    attr = {"path": nirvana + "/@max_operation_count", "value": 10}
    denied(tok, "set", attr, u)
    grant(nirvana, "allow", u, "write")
    allowed(tok, "set", attr)
    eq(ok("get", {"path": attr["path"]})["value"], 10, "set by u")


@case
def administer_allows_to_set_non_user_managed_attribute(t):
    # upstream: test_scheduler_pools::TestSchedulerPoolAcls::test_administer_allows_to_set_non_user_managed_attribute
    u, tok, nirvana = nirvana_case(t)
    grant(nirvana, "allow", u, "write")
    attr = {"path": nirvana + "/@enable_aggressive_starvation", "value": True}
    denied(tok, "set", attr, u)
    eq(ok("get", {"path": attr["path"]})["value"], None, "a denied set changes nothing")
    grant(nirvana, "allow", u, ["administer", "write"])
    allowed(tok, "set", attr)
    # the ACL itself is not user-managed either: write alone may not change it
    grant(nirvana, "allow", u, "write")
    denied(tok, "set", {"path": nirvana + "/@acl", "value": []}, u)


@case
def administer_allows_to_set_non_system_attribute(t):
    # upstream: test_scheduler_pools::TestSchedulerPoolAcls::test_administer_allows_to_set_non_system_attribute
    u, tok, nirvana = nirvana_case(t)
    grant(nirvana, "allow", u, "write")
    attr = {"path": nirvana + "/@non_system_attribute", "value": True}
    denied(tok, "set", attr, u)
    eq(refused("get", {"path": attr["path"]})[0], 404, "a denied set sets nothing")
    grant(nirvana, "allow", u, ["administer", "write"])
    allowed(tok, "set", attr)
    eq(ok("get", {"path": attr["path"]})["value"], True, "the custom attribute set by u")


@case
def administer_allows_to_remove_non_system_attribute(t):
    # upstream: test_scheduler_pools::TestSchedulerPoolAcls::test_administer_allows_to_remove_non_system_attribute
    u, tok, nirvana = nirvana_case(t)
    path = nirvana + "/@non_system_attribute"
    set_(path, True)
    grant(nirvana, "allow", u, "write")
    denied(tok, "remove", {"path": path}, u)
    eq(ok("get", {"path": path})["value"], True, "a denied remove changes nothing")
    grant(nirvana, "allow", u, ["administer", "write"])
    allowed(tok, "remove", {"path": path})
    eq(refused("get", {"path": path})[0], 404, "removed by u")


@case
def write_on_root_allows_to_create_remove_pool_trees(t):
    # upstream: test_scheduler_pools::TestSchedulerPoolAcls::test_write_on_root_allows_to_create_remove_pool_trees
    ok("create", create_tree(t))
    u = t + "_u"
    tok = create_user(u)
    denied(tok, "create", create_tree(t + "_new"), u)
    denied(tok, "remove", {"path": T + t}, u)
    root_acl = ok("get", {"path": "//sys/pool_trees/@acl"})["value"]
    try:
        set_("//sys/pool_trees/@acl", root_acl + [make_ace("allow", u, ["write", "remove"])])
        allowed(tok, "create", create_tree(t + "_new"))
        allowed(tok, "remove", {"path": T + t})
        eq(ok("exists", {"path": T + t})["value"], False, "tree removed by u")
    finally:
        set_("//sys/pool_trees/@acl", root_acl)


def run_to_completion(op, node_id):
    """upstream's map(...) returns once the operation completed: a fake node runs its job (the
    other cases' trees, done with, take no nodes: a node may match one tree only)."""
    for tree in ok("get", {"path": "//sys/pool_trees"})["value"]:
        if tree != "physical":
            set_(T + tree + "/@nodes_filter", "no_node_has_this_tag")
    node = FakeNode(s, node_id, cpu=1, memory=1 << 30, slots=1)
    end = time.time() + 60
    while time.time() < end:
        node.heartbeat()
        node.finish_all("completed")
        if ok("get_operation", {"operation_id": op})["state"] == "completed":
            return
        time.sleep(0.1)
    raise AssertionError("operation %s did not complete" % op)


def pool_acl_core(t, pool, acl_path):
    """upstream's _test_pool_acl_core: u runs an operation in pool to completion; after the ACE
    turns to deny, it may not start one."""
    u = t + "_u"
    tok = s.token(u)
    spec = {"pool": pool, "tasks": {"t": {"command": "true", "job_count": 1, "cpu_limit": 1,
                                          "memory_limit": 1 << 20}}}
    op = allowed(tok, "start_op", {"operation_type": "vanilla", "spec": spec})["operation_id"]
    run_to_completion(op, t + "_n")
    set_("//sys/pools" + acl_path + "/@acl/0/action", "deny")
    eq(check_permission(u, "use", "//sys/pools" + acl_path)["action"], "deny", "check_permission")
    denied(tok, "start_op", {"operation_type": "vanilla", "spec": spec}, u)


@case
def global_pool_acl(t):
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_global_pool_acl
    u = t + "_u"
    create_user(u)
    p = t + "_p"
    ok("create", pool_body(p, "physical", None,
                           {"inherit_acl": False, "acl": [make_ace("allow", u, "use")]}))
    pool_acl_core(t, p, "/" + p)


@case
def inner_pool_acl(t):
    # upstream: test_scheduler_strategy::TestSchedulerOperationLimits::test_inner_pool_acl
    u = t + "_u"
    create_user(u)
    p1, p2 = t + "_p1", t + "_p2"
    ok("create", pool_body(p1, "physical", None,
                           {"inherit_acl": False, "acl": [make_ace("allow", u, "use")]}))
    ok("create", pool_body(p2, "physical", p1))
    pool_acl_core(t, p2, "/" + p1)


with s:
    run(CASES, sys.argv[3:], lambda i, name: "t%d" % i)
finish()
PYEOF
