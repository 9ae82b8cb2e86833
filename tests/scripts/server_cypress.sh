#!/usr/bin/env bash
# The Cypress-like API of a real scheduler: the default tree, pool creation (by path and by
# attributes), every pool and tree attribute set and read back (also nested keys), the seed
# documents' commands (burst pool, orchid integral_pool_capacity), list/exists/remove, and a
# table of bad inputs, each with its HTTP status, message and no state change.
# usage: server_cypress.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_cypress.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'EOF'
import json, sys, time
from server_helper import Scheduler, FakeNode, check, finish

bin, work = sys.argv[1], sys.argv[2]
s = Scheduler(bin, work + "/data").start()
P = "//sys/pool_trees/physical"
with s:
    check(s.get("//sys/pool_trees/@default_tree") == "physical", "default tree")
    check(s.get("//sys/pool_trees") == {"physical": {}}, "empty tree")
    s.ok("create", {"type": "scheduler_pool", "path": P + "/root-pool"})
    s.ok("create", {"type": "scheduler_pool", "attributes": {"name": "burst", "pool_tree": "physical",
                                                             "parent_name": "root-pool", "weight": 3}})
    check(s.get("//sys/pools") == {"root-pool": {"burst": {}}}, "hierarchy via //sys/pools")
    check(s.get(P + "/root-pool/burst/@weight") == 3, "attributes applied with the creation")
    check(s.ok("exists", {"path": "//sys/pools/root-pool/burst"})["value"] is True, "exists")
    check(s.ok("exists", {"path": "//sys/pools/burst"})["value"] is False, "wrong parent: not exists")
    check(s.ok("list", {"path": P})["value"] == ["root-pool"], "list")

    # the seed documents: a burst pool under root-pool
    s.set("//sys/pools/root-pool/@strong_guarantee_resources", {"cpu": 10})
    s.set("//sys/pools/root-pool/@integral_guarantees", {"resource_flow": {"cpu": 1000},
                                                         "burst_guarantee_resources": {"cpu": 2000}})
    s.set("//sys/pools/root-pool/burst/@integral_guarantees",
          {"guarantee_type": "burst", "resource_flow": {"cpu": 1000},
           "burst_guarantee_resources": {"cpu": 2000}})
    check(s.get("//sys/pools/root-pool/burst/@integral_guarantees/resource_flow") == {"cpu": 1000},
          "nested get")
    s.set("//sys/pools/root-pool/burst/@integral_guarantees/resource_flow", {"cpu": 500})
    check(s.get("//sys/pools/root-pool/burst/@integral_guarantees/resource_flow/cpu") == 500, "nested set")
    check(s.get("//sys/pools/root-pool/burst/@integral_guarantees/guarantee_type") == "burst",
          "nested set keeps siblings")
    n = FakeNode(s, "n1", cpu=100, memory=100 << 30, slots=100)
    n.heartbeat()
    s.update()
    cap = s.get("//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/"
                "fair_share_info/pools/burst/integral_pool_capacity")
    check(isinstance(cap, dict) and cap.get("cpu", 0) > 0, "orchid integral_pool_capacity %s" % cap)
    pool = s.get("//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/physical/"
                 "fair_share_info/pools/root-pool")
    for k in ("fair_share_ratio", "detailed_fair_share", "starvation_status", "satisfaction_ratio",
              "running_operation_count", "operation_count", "accumulated_resource_volume"):
        check(k in pool, "orchid pool has %s" % k)

    # every pool attribute: set, read back
    ACL_AB = [{"action": "allow", "subjects": ["alice", "bob"], "permissions": ["use"],
               "inheritance_mode": "object_and_descendants"}]
    s.ok("create", {"type": "scheduler_pool", "path": P + "/a"})
    s.ok("create", {"type": "scheduler_pool", "path": P + "/f"})
    pool_values = [
        ("weight", 2.5), ("max_share_ratio", 0.5), ("strong_guarantee_resources", {"cpu": 5}),
        ("resource_limits", {"cpu": 50, "memory": 1 << 30}), ("scheduling_tag_filter", "ssd & !gpu"),
        ("max_running_operation_count", 7), ("max_operation_count", 9),
        ("fifo_sort_parameters", ["start_time", "weight"]), ("fifo_pool_scheduling_order", "fifo"),
        ("forbid_immediate_operations", True), ("create_ephemeral_subpools", True),
        ("ephemeral_subpool_config", {"mode": "fifo", "max_running_operation_count": 2}),
        ("fair_share_starvation_timeout", 60000), ("fair_share_starvation_tolerance", 0.7),
        ("non_preemptible_resource_usage_threshold", {"cpu": 1}),
        ("enable_aggressive_starvation", True), ("allow_aggressive_preemption", False),
        ("allow_normal_preemption", False), ("acl", ACL_AB), ("inherit_acl", False),
    ]
    for key, value in pool_values:
        st, out = s.call("set", {"path": P + "/a/@" + key, "value": value})
        if check(st == 200, "set pool %s: %d %s" % (key, st, out)):
            got = s.get(P + "/a/@" + key)
            if isinstance(value, dict) and isinstance(got, dict):
                check(all(got.get(k) == v for k, v in value.items()), "pool %s: %s != %s" % (key, got, value))
            else:
                check(got == value, "pool %s: %s != %s" % (key, got, value))
    s.set(P + "/f/@mode", "fifo")
    check(s.get(P + "/f/@mode") == "fifo", "mode")
    s.set(P + "/a/@integral_guarantees/relaxed_share_multiplier_limit", 2)
    s.set(P + "/a/@integral_guarantees/can_accept_free_volume", False)
    s.set(P + "/a/@integral_guarantees/should_distribute_free_volume_among_children", True)
    ig = s.get(P + "/a/@integral_guarantees")
    check(ig["relaxed_share_multiplier_limit"] == 2 and ig["can_accept_free_volume"] is False
          and ig["should_distribute_free_volume_among_children"] is True, "integral keys %s" % ig)
    attrs = s.get(P + "/a/@")
    check(attrs["weight"] == 2.5 and attrs["acl"] == ACL_AB, "all attributes")
    s.ok("remove", {"path": P + "/a/@weight"})
    check(s.get(P + "/a/@weight") is None, "remove attribute resets it")

    # every tree attribute
    tree_values = [
        ("nodes_filter", "!gpu"), ("max_operation_count", 1000), ("max_operation_count_per_pool", 60),
        ("max_running_operation_count", 500), ("max_running_operation_count_per_pool", 40),
        ("default_parent_pool", "root-pool"), ("enable_pool_starvation", False),
        ("forbid_immediate_operations_in_root", False), ("max_ephemeral_pools_per_user", 3),
        ("fair_share_starvation_timeout", 20000), ("fair_share_aggressive_starvation_timeout", 90000),
        ("fair_share_starvation_tolerance", 0.9), ("enable_aggressive_starvation", True),
        ("min_share_preemption_timeout", 10000), ("non_preemptible_resource_usage_threshold", {"cpu": 2}),
        ("preemption_satisfaction_threshold", 0.9), ("aggressive_preemption_satisfaction_threshold", 0.3),
        ("preemptive_scheduling_backoff", 2000), ("allocation_preemption_timeout", 5000),
        ("allocation_graceful_preemption_timeout", 30000), ("max_unpreemptible_running_allocation_count", 4),
        ("enable_conditional_preemption", False), ("allocation_count_preemption_timeout_coefficient", 2),
        ("scheduling_preemption_priority_scope", "operation_only"), ("fifo_pool_scheduling_order", "fifo"),
        ("integral_guarantees/smooth_period", 30000), ("integral_guarantees/pool_capacity_saturation_period", 3600000),
        ("integral_guarantees/relaxed_share_multiplier_limit", 4),
        ("enable_step_function_for_gang_operations", False),
        ("enable_improved_fair_share_by_fit_factor_computation", True),
        ("infer_weight_from_guarantees_share_multiplier", 2), ("main_resource", "memory"),
        ("node_reconnection_timeout", 1000), ("fair_share_update_period", 500),
        ("should_distribute_free_volume_among_children", True),
    ]
    for key, value in tree_values:
        if key == "main_resource":
            continue   # a memory main resource needs memory guarantees; checked below
        st, out = s.call("set", {"path": P + "/@" + key, "value": value})
        if check(st == 200, "set tree %s: %d %s" % (key, st, out)):
            got = s.get(P + "/@" + key)
            check(got == value or (isinstance(value, dict) and all(got.get(k) == v for k, v in value.items())),
                  "tree %s: %s != %s" % (key, got, value))
    st, out = s.call("set", {"path": P + "/@main_resource", "value": "memory"})
    check(st == 400 and "strong" in out["message"], "main_resource vs cpu guarantees: %s" % out)

    # a second tree, created and removed
    s.ok("create", {"type": "scheduler_pool_tree", "attributes": {"name": "other", "nodes_filter": "other"}})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pool_trees/other/x"})
    st, out = s.call("remove", {"path": "//sys/pool_trees/other"})
    check(st == 409 and "pools" in out["message"], "tree with pools: %d %s" % (st, out))
    check(out.get("code") == -8 and out.get("error") == "wrong state",
          "error body: negative code and its name: %s" % out)
    s.ok("remove", {"path": "//sys/pool_trees/other/x"})
    s.ok("remove", {"path": "//sys/pool_trees/other"})
    check(s.ok("list", {"path": "//sys/pool_trees"})["value"] == ["physical"], "tree removed")

    # ---- bad inputs: status, message, and nothing changed ----
    user = s.token("carol")
    before = s.get(P + "/root-pool/@")
    before_tree = s.get("//sys/pool_trees")
    bad = [
        ("malformed JSON/YSON", "set", None, '{"path": "' + P + '/root-pool/@weight", "value": 1', 400, "invalid"),
        ("malformed YSON", "set", None, '{path="' + P + '/root-pool/@weight"; value=}', 400, "invalid YSON"),
        ("body not a map", "get", None, '[1]', 400, "must be a map"),
        ("wrong type", "set", {"path": P + "/root-pool/@weight", "value": "heavy"}, None, 400, "weight"),
        ("out of range", "set", {"path": P + "/root-pool/@max_share_ratio", "value": 2}, None, 400, "max_share_ratio"),
        ("bad path", "get", {"path": "//sys/pools//x"}, None, 400, "empty name"),
        ("relative path", "get", {"path": "sys/pools"}, None, 400, "invalid path"),
        ("no such pool", "get", {"path": P + "/nope/@weight"}, None, 404, "nope"),
        ("no such attribute", "get", {"path": P + "/root-pool/@nope"}, None, 404, "nope"),
        ("set on a node", "set", {"path": P + "/root-pool", "value": {}}, None, 400, "attribute"),
        ("guarantee overcommit", "set", {"path": P + "/root-pool/burst/@strong_guarantee_resources",
                                         "value": {"cpu": 20}}, None, 400, "root-pool"),
        ("burst overcommit", "set", {"path": P + "/root-pool/burst/@integral_guarantees/burst_guarantee_resources",
                                     "value": {"cpu": 5000}}, None, 400, "burst"),
        ("pool exists", "create", {"type": "scheduler_pool", "path": P + "/root-pool"}, None, 409, "root-pool"),
        ("bad pool name", "create", {"type": "scheduler_pool", "path": P + "/bad$name"}, None, 400, "bad$name"),
        ("unknown type", "create", {"type": "table", "path": P + "/t"}, None, 400, "table"),
        ("remove with children", "remove", {"path": P + "/root-pool"}, None, 409, "root-pool"),
        ("orchid is read-only", "set", {"path": "//sys/scheduler/orchid/scheduler/x", "value": 1}, None, 400, "orchid"),
        ("unknown command", "frobnicate", {}, None, 404, "frobnicate"),
        ("unknown operation", "get_operation", {"operation_id": "0-0-0-0"}, None, 404, "0-0-0-0"),
        ("user changes pools", "set", {"path": P + "/root-pool/@weight", "value": 5}, None, 403, "carol"),
        ("bad spec", "start_op", {"spec": {"tasks": {"t": {"command": "x", "job_count": 0}}}}, None, 400, "job_count"),
        ("no tasks", "start_op", {"spec": {}}, None, 400, "tasks"),
    ]
    for name, cmd, body, raw, status, text in bad:
        token = user if name in ("user changes pools",) else None
        st, out = s.call(cmd, body, token=token, raw_body=raw)
        msg = out.get("message", "") if isinstance(out, dict) else str(out)
        check(st == status, "%s: status %d, expected %d (%s)" % (name, st, status, msg))
        check(text in msg, "%s: message lacks %r: %s" % (name, text, msg))
        check("\n" not in msg, "%s: one-line message" % name)
    # missing and wrong tokens
    st, out = s.call("get", {"path": P}, token="x" * 64)
    check(st == 401, "unknown token: %d" % st)
    st, out = s.raw("POST", "/api/v1/get", json.dumps({"path": P}))
    check(st == 401, "missing token: %d" % st)
    st, out = s.heartbeat({"node_id": "n9", "resource_limits": {"cpu": 1}}, token=s.admin)
    check(st == 401, "node with a user token: %d" % st)
    check(s.get(P + "/root-pool/@") == before, "refused writes changed nothing")
    check(s.get("//sys/pool_trees") == before_tree, "refused creates changed nothing")

    # acl: carol may not start in a pool that lists alice and bob
    ACL_A = [{"action": "allow", "subjects": ["alice"], "permissions": ["use"],
              "inheritance_mode": "object_and_descendants"}]
    s.ok("create", {"type": "scheduler_pool", "path": P + "/private",
                    "attributes": {"acl": ACL_A, "inherit_acl": False}})
    st, out = s.call("start_op", {"spec": {"pool": "private", "tasks": {"t": {"command": "x", "job_count": 1}}}}, token=user)
    check(st == 403 and "carol" in out["message"], "acl: %d %s" % (st, out))

    # a key that is not a pool setting is a custom attribute, as upstream's Cypress keeps it:
    # read back by get (of it and of @), logged as such, moved with its pool, no scheduling
    # meaning; remove drops it (then 404)
    CUSTOM = {"owner": "team-a", "ids": [1, 2]}
    s.ok("set", {"path": P + "/private/@some_attr", "value": CUSTOM})
    s.ok("set", {"path": P + "/private/@wieght", "value": 2})
    check(s.get(P + "/private/@some_attr") == CUSTOM, "custom attribute read back")
    got = s.get(P + "/private/@")
    check(got.get("some_attr") == CUSTOM and got.get("wieght") == 2, "custom attributes in @: %s" % got)
    check(s.get(P + "/private/@weight") is None, "a misspelt key sets nothing else")
    check("custom_attribute" in s.logtext() and "key=wieght" in s.logtext(), "custom attribute logged")
    s.ok("move", {"source_path": P + "/private", "destination_path": P + "/root-pool/private"})
    check(s.get(P + "/root-pool/private/@some_attr") == CUSTOM, "a move keeps custom attributes")
    s.ok("move", {"source_path": P + "/root-pool/private", "destination_path": P + "/private"})
    s.ok("remove", {"path": P + "/private/@wieght"})
    st, out = s.call("get", {"path": P + "/private/@wieght"})
    check(st == 404, "a removed custom attribute is gone: %d %s" % (st, out))

    # a tree object keeps custom attributes too (upstream's Cypress does): set, read back, in
    # @ but not in @config; a key inside @config must be a tree config key, a pool setting is no
    # tree attribute, and remove drops a custom attribute (then 404)
    TREE_CUSTOM = {"team": "infra", "n": [1, 2]}
    s.ok("set", {"path": P + "/@my_attr", "value": TREE_CUSTOM})
    s.ok("set", {"path": P + "/@gone_attr", "value": 1})
    check(s.get(P + "/@my_attr") == TREE_CUSTOM, "tree custom attribute read back")
    check(s.get(P + "/@").get("my_attr") == TREE_CUSTOM, "tree custom attribute in @")
    check("my_attr" not in s.get(P + "/@config"), "tree custom attribute not in @config")
    st, out = s.call("get", {"path": P + "/@config/my_attr"})
    check(st == 404, "no custom attribute through @config: %d %s" % (st, out))
    for path, word in ((P + "/@config/my_option", "my_option"), (P + "/@weight", "weight")):
        st, out = s.call("set", {"path": path, "value": 1})
        check(st == 400 and word in out.get("message", ""), "refused %s: %d %s" % (path, st, out))
    s.ok("remove", {"path": P + "/@gone_attr"})
    st, out = s.call("get", {"path": P + "/@gone_attr"})
    check(st == 404, "a removed tree custom attribute is gone: %d %s" % (st, out))

    # everything survives a restart
    s.stop()
    s.start()
    check(s.get(P + "/@my_attr") == TREE_CUSTOM, "restart keeps the tree's custom attributes")
    st, out = s.call("get", {"path": P + "/@gone_attr"})
    check(st == 404, "restart does not bring back a removed one: %d %s" % (st, out))
    check(s.get(P + "/private/@some_attr") == CUSTOM, "restart keeps custom attributes")
    check(s.get("//sys/pools/root-pool/burst/@integral_guarantees/resource_flow/cpu") == 500, "restart keeps attributes")
    check(s.get(P + "/@fair_share_update_period") == 500, "restart keeps tree config")
    check(s.get(P + "/private/@acl") == ACL_A, "restart keeps acl")
    check(s.get(P + "/private/@inherit_acl") is False, "restart keeps inherit_acl")
finish()
EOF
