#!/usr/bin/env bash
# test_scheduler_pools.py's move and rename cases translated: Cypress's move command and the
# @parent_name and @name attributes of a pool on a real scheduler (docs/api.md). Upstream runs
# each case on an empty master and compares all of //sys/pool_trees; here each case has trees
# of its own on one scheduler and compares those. Upstream's expected values throughout.
# usage: pools_move.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: pools_move.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PYEOF'
import json, sys
from server_helper import finish
from upslib import CASES, case, run
import upslib

s, ok, refused = upslib.shared(sys.argv[1], sys.argv[2])
T = "//sys/pool_trees/"


class Case:
    """upstream's helpers, on trees named after the case"""

    def __init__(self, prefix):
        self.prefix = prefix

    def tree(self, name):
        return self.prefix + name

    def create_pool_tree(self, name):
        ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": self.tree(name)}})

    def create_pool(self, name, pool_tree, parent_name=None):
        a = {"name": name, "pool_tree": self.tree(pool_tree)}
        if parent_name:
            a["parent_name"] = parent_name
        ok("create", {"type": "scheduler_pool", "attributes": a})

    def path(self, p):   # //sys/pool_trees/my_tree/x -> the case's tree
        rest = p[len(T):]
        tree, _, tail = rest.partition("/")
        return T + self.tree(tree) + ("/" + tail if tail else "")

    def set(self, p, value):
        return ok("set", {"path": self.path(p), "value": value})

    def set_refused(self, p, value):
        return refused("set", {"path": self.path(p), "value": value})

    def move(self, a, b):
        return ok("move", {"source_path": self.path(a), "destination_path": self.path(b)})

    def move_refused(self, a, b):
        return refused("move", {"source_path": self.path(a), "destination_path": self.path(b)})

    def get(self, p):
        return ok("get", {"path": self.path(p)})["value"]

    def trees(self, want):
        """upstream's get("//sys/pool_trees") == want, over the case's trees"""
        got = {name: self.get(T + name) for name in want}
        if got != want:
            raise AssertionError("pool trees %r, expected %r" % (got, want))


@case
def move_via_attribute_pool_to_subpool(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_move_via_attribute_pool_to_subpool
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("logfeller", pool_tree="my_tree")
    c.create_pool("logfeller_prod", pool_tree="my_tree", parent_name="logfeller")
    c.set("//sys/pool_trees/my_tree/logfeller/logfeller_prod/@parent_name", "nirvana")
    c.trees({"my_tree": {"logfeller": {}, "nirvana": {"logfeller_prod": {}}}})
    if c.get("//sys/pool_trees/my_tree/nirvana/logfeller_prod/@parent_name") != "nirvana":
        raise AssertionError("@parent_name reads the new parent")


@case
def standard_move_pool_to_subpool(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_standard_move_pool_to_subpool
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("logfeller", pool_tree="my_tree")
    c.create_pool("logfeller_prod", pool_tree="my_tree", parent_name="logfeller")
    c.move("//sys/pool_trees/my_tree/logfeller/logfeller_prod",
           "//sys/pool_trees/my_tree/nirvana/logfeller_prod")
    c.trees({"my_tree": {"logfeller": {}, "nirvana": {"logfeller_prod": {}}}})


@case
def move_via_attribute_pool_to_root(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_move_via_attribute_pool_to_root
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("logfeller", pool_tree="my_tree", parent_name="nirvana")
    c.set("//sys/pool_trees/my_tree/nirvana/logfeller/@parent_name", "<Root>")
    c.trees({"my_tree": {"logfeller": {}, "nirvana": {}}})


@case
def standard_move_pool_to_root(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_standard_move_pool_to_root
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("logfeller", pool_tree="my_tree", parent_name="nirvana")
    c.move("//sys/pool_trees/my_tree/nirvana/logfeller", "//sys/pool_trees/my_tree/logfeller")
    c.trees({"my_tree": {"logfeller": {}, "nirvana": {}}})


@case
def move_via_attribute_to_descendant_is_forbidden(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_move_via_attribute_to_descendant_is_forbidden
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("prod", pool_tree="my_tree", parent_name="nirvana")
    c.set_refused("//sys/pool_trees/my_tree/nirvana/@parent_name", "prod")
    c.trees({"my_tree": {"nirvana": {"prod": {}}}})


@case
def standard_move_to_descendant_is_forbidden2(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_standard_move_to_descendant_is_forbidden2
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("prod", pool_tree="my_tree", parent_name="nirvana")
    c.move_refused("//sys/pool_trees/my_tree/nirvana",
                   "//sys/pool_trees/my_tree/nirvana/prod/nirvana")
    c.trees({"my_tree": {"nirvana": {"prod": {}}}})


@case
def move_via_attribute_of_pool_trees_is_forbidden(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_move_via_attribute_of_pool_trees_is_forbidden
    c.create_pool_tree("my_tree")
    c.create_pool_tree("another_tree")
    c.create_pool("nirvana", pool_tree="another_tree")
    c.set_refused("//sys/pool_trees/my_tree/@parent_name", "nirvana")
    c.trees({"my_tree": {}, "another_tree": {"nirvana": {}}})


@case
def standard_move_of_pool_trees_is_forbidden(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_standard_move_of_pool_trees_is_forbidden
    c.create_pool_tree("my_tree")
    c.create_pool_tree("another_tree")
    c.move_refused("//sys/pool_trees/my_tree", "//sys/pool_trees/another_tree/nirvana")
    c.trees({"my_tree": {}, "another_tree": {}})


@case
def move_via_attribute_to_another_pool_tree_is_forbidden(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_move_via_attribute_to_another_pool_tree_is_forbidden
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool_tree("another_tree")
    c.create_pool("logfeller", pool_tree="another_tree")
    c.set_refused("//sys/pool_trees/my_tree/nirvana/@parent_name", "logfeller")
    c.trees({"my_tree": {"nirvana": {}}, "another_tree": {"logfeller": {}}})


@case
def standard_move_to_another_pool_tree(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_standard_move_to_another_pool_tree
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool_tree("another_tree")
    c.create_pool("logfeller", pool_tree="another_tree")
    c.move("//sys/pool_trees/my_tree/nirvana", "//sys/pool_trees/another_tree/logfeller/nirvana")
    c.trees({"my_tree": {}, "another_tree": {"logfeller": {"nirvana": {}}}})


@case
def standard_move_to_another_tree_respects_duplicate_name_validation(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_standard_move_to_another_tree_respects_duplicate_name_validation
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool_tree("another_tree")
    c.create_pool("nirvana", pool_tree="another_tree")
    c.create_pool("logfeller", pool_tree="another_tree")
    # each is refused for the name taken in another_tree (409, naming it), not for the tree
    for dest, taken in (("nirvana", "nirvana"), ("logfeller/nirvana", "nirvana"),
                        ("nirvana/logfeller", "logfeller")):
        st, out = c.move_refused("//sys/pool_trees/my_tree/nirvana", "//sys/pool_trees/another_tree/" + dest)
        if st != 409 or '"%s"' % taken not in out.get("message", ""):
            raise AssertionError("move to %s: %d %s" % (dest, st, out))
    c.trees({"my_tree": {"nirvana": {}}, "another_tree": {"nirvana": {}, "logfeller": {}}})


@case
def move_via_attribute_respects_validation(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_move_via_attribute_respects_validation
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("logfeller", pool_tree="my_tree")
    c.set("//sys/pool_trees/my_tree/logfeller/@min_share_resources", {"cpu": 10})
    c.set_refused("//sys/pool_trees/my_tree/logfeller/@parent_name", "nirvana")
    c.trees({"my_tree": {"nirvana": {}, "logfeller": {}}})


@case
def standard_move_respects_validation(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_standard_move_respects_validation
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("logfeller", pool_tree="my_tree")
    c.set("//sys/pool_trees/my_tree/logfeller/@min_share_resources", {"cpu": 10})
    c.move_refused("//sys/pool_trees/my_tree/logfeller", "//sys/pool_trees/my_tree/nirvana/logfeller")
    c.trees({"my_tree": {"nirvana": {}, "logfeller": {}}})


@case
def rename_pool(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_rename_pool
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.set("//sys/pool_trees/my_tree/nirvana/@name", "logfeller")
    c.trees({"my_tree": {"logfeller": {}}})
    if c.get("//sys/pool_trees/my_tree/logfeller/@name") != "logfeller":
        raise AssertionError("@name reads the new name")


@case
def rename_via_attribute_respects_name_validation(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_rename_via_attribute_respects_name_validation
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("prod", pool_tree="my_tree", parent_name="nirvana")
    c.create_pool("logfeller", pool_tree="my_tree")
    c.set_refused("//sys/pool_trees/my_tree/logfeller/@name", "logfeller$logfeller")
    c.set_refused("//sys/pool_trees/my_tree/logfeller/@name", "prod")
    c.trees({"my_tree": {"nirvana": {"prod": {}}, "logfeller": {}}})


@case
def move_with_rename(c):
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_move_with_rename
    c.create_pool_tree("my_tree")
    c.create_pool("nirvana", pool_tree="my_tree")
    c.create_pool("logfeller", pool_tree="my_tree")
    c.create_pool("logfeller_prod", pool_tree="my_tree", parent_name="logfeller")
    c.move("//sys/pool_trees/my_tree/logfeller/logfeller_prod",
           "//sys/pool_trees/my_tree/nirvana/nirvana_prod")
    c.trees({"my_tree": {"logfeller": {}, "nirvana": {"nirvana_prod": {}}}})


@case
def service_rules(c):
    # poolsched's own: a move that fails at its rename step puts the pool back (all or
    # nothing); a pool with an operation in its subtree moves but is not renamed (operations
    # name their pool); moves and renames are journalled (they survive a restart); users may
    # not move (admin only); the YTsaurus face runs the same command.
    c.create_pool_tree("my_tree")
    c.create_pool("a", pool_tree="my_tree")
    c.create_pool("b", pool_tree="my_tree")
    c.create_pool("c", pool_tree="my_tree", parent_name="a")
    st, out = c.move_refused("//sys/pool_trees/my_tree/a/c", "//sys/pool_trees/my_tree/b/a")
    if st != 409 or "already exists" not in out["message"]:
        raise AssertionError("a taken name: %d %s" % (st, out))
    c.trees({"my_tree": {"a": {"c": {}}, "b": {}}})
    # a move refused after its rename (c's guarantee does not fit under b) renames it back
    c.set("//sys/pool_trees/my_tree/a/@strong_guarantee_resources", {"cpu": 2})
    c.set("//sys/pool_trees/my_tree/a/c/@strong_guarantee_resources", {"cpu": 2})
    st, out = c.move_refused("//sys/pool_trees/my_tree/a/c", "//sys/pool_trees/my_tree/b/c2")
    if st != 400:
        raise AssertionError("a move that breaks a tree rule: %d %s" % (st, out))
    c.trees({"my_tree": {"a": {"c": {}}, "b": {}}})
    st, out = c.move_refused("//sys/pool_trees/my_tree/a", "//sys/pool_trees/my_tree/a/c/a2")
    if st != 400 or "under itself" not in out["message"]:
        raise AssertionError("a move under itself with a new name: %d %s" % (st, out))
    c.set("//sys/pool_trees/my_tree/a/c/@strong_guarantee_resources", {})
    c.set("//sys/pool_trees/my_tree/a/@strong_guarantee_resources", {})
    op = s.ok("start_op", {"operation_type": "vanilla", "spec": {
        "pool": "c", "pool_trees": [c.tree("my_tree")],
        "tasks": {"t": {"command": "true", "job_count": 1}}}})["operation_id"]
    st, out = c.set_refused("//sys/pool_trees/my_tree/a/@name", "renamed")
    if st != 409 or "operations" not in out["message"]:
        raise AssertionError("a rename above an operation: %d %s" % (st, out))
    c.move("//sys/pool_trees/my_tree/a/c", "//sys/pool_trees/my_tree/b/c")
    c.trees({"my_tree": {"a": {}, "b": {"c": {}}}})
    s.ok("abort_op", {"operation_id": op})
    st, out = s.call("move", {"source_path": c.path(T + "my_tree/b/c"),
                              "destination_path": c.path(T + "my_tree/c")}, token=s.token("eve"))
    if st != 403:
        raise AssertionError("a user's move: %d %s" % (st, out))
    st, out = s.raw("POST", "/api/v4/move", json.dumps({
        "source_path": c.path(T + "my_tree/b/c"), "destination_path": c.path(T + "my_tree/d")}),
        s.admin)
    if st != 200:
        raise AssertionError("v4 move: %d %s" % (st, out))
    # a dry run of a move shows the shares it would give and changes nothing
    out = ok("set", {"path": c.path(T + "my_tree/a/@parent_name"), "value": "b", "dry_run": True})
    if not out.get("dry_run"):
        raise AssertionError("dry run reply %s" % out)
    c.trees({"my_tree": {"a": {}, "b": {}, "d": {}}})
    c.set("//sys/pool_trees/my_tree/a/@name", "e")
    s.stop()
    s.start()
    c.trees({"my_tree": {"e": {}, "b": {}, "d": {}}})


with s:
    run(CASES, sys.argv[3:], lambda i, name: Case("t%d_" % i))
finish()
PYEOF
