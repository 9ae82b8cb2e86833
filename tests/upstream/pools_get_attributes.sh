#!/usr/bin/env bash
# test_scheduler_pools.py's cases of get with an attributes filter, translated onto a real
# scheduler through the YTsaurus face (/api/v4/get with "attributes", as the Python client's
# get(path, attributes=[...]) sends it; docs/api.md "The Python client and the yt CLI").
# usage: pools_get_attributes.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: pools_get_attributes.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import json, sys, urllib.request
from server_helper import Scheduler, check, finish

bin, work = sys.argv[1], sys.argv[2]
s = Scheduler(bin, work + "/data").start()

def get(path, attributes):
    params = json.dumps({"path": path, "attributes": attributes, "output_format": "json"})
    req = urllib.request.Request(s.url("/api/v4/get"), method="GET")
    req.add_header("Authorization", "OAuth " + s.admin)
    req.add_header("X-YT-Parameters", params)
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read().decode())["value"]

with s:
    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_get_pool_with_attributes_returns_only_specified_attributes
    s.ok("create", {"type": "scheduler_pool_tree", "path": "//sys/pool_trees/my_tree", "attributes": {}})
    s.ok("create", {"type": "scheduler_pool", "path": "//sys/pool_trees/my_tree/nirvana"})
    s.set("//sys/pool_trees/my_tree/nirvana/@max_operation_count", 2)
    result = get("//sys/pool_trees/my_tree/nirvana", ["max_operation_count", "max_running_operation_count"])
    check(result["$attributes"].get("max_operation_count") == 2, "max_operation_count: %s" % result)
    check("max_running_operation_count" not in result["$attributes"],
          "max_running_operation_count is not set, so not returned: %s" % result)

    # poolsched's own: a pool's custom attribute (docs/api.md) answers the filter too, on the
    # pool and among the descendants of //sys/pool_trees, as upstream's Cypress answers it
    s.set("//sys/pool_trees/my_tree/nirvana/@some_attr", "attr_value")
    result = get("//sys/pool_trees/my_tree/nirvana", ["some_attr"])
    check(result["$attributes"] == {"some_attr": "attr_value"}, "custom attribute: %s" % result)
    root = get("//sys/pool_trees", ["max_operation_count", "some_attr"])
    got = root["$value"]["my_tree"]["$value"]["nirvana"]["$attributes"]
    check(got == {"max_operation_count": 2, "some_attr": "attr_value"},
          "descendant's attributes: %s" % root)

    # upstream: test_scheduler_pools::TestSchedulerPoolManipulations::test_get_root_returns_descendant_attributes
    s.set("//sys/pool_trees/my_tree/@some_attr", "attr_value")
    s.set("//sys/pool_trees/my_tree/nirvana/@max_operation_count", 10)
    root = get("//sys/pool_trees", ["max_operation_count", "some_attr"])
    tree_attrs = root["$value"]["my_tree"]["$attributes"]
    check("some_attr" in tree_attrs and tree_attrs["some_attr"] == "attr_value",
          "the tree's custom attribute: %s" % root)
    nirvana = root["$value"]["my_tree"]["$value"]["nirvana"]["$attributes"]
    check("max_operation_count" in nirvana and nirvana["max_operation_count"] == 10,
          "the pool's max_operation_count: %s" % root)
finish()
PY
