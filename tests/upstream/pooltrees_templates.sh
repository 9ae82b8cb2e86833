#!/usr/bin/env bash
# test_scheduler_pool_trees.py's template cases translated: the scheduler config's
# template_pool_tree_config_map at //sys/scheduler/config (docs/api.md, "Tree config templates"),
# tree configs built from the templates matching a tree's name under the tree's own attributes.
# Upstream's "default" tree is poolsched's "physical". Beyond upstream: the templates and the
# trees' own attributes survive a kill -9 apart.
# usage: pooltrees_templates.sh BINARY DATA_DIR SOURCE_DIR [CASE...]
source "${3:?usage: pooltrees_templates.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 200 "$@" <<'PYEOF'
import sys
from server_helper import finish
from upslib import CASES, Env, case, run, refused
from checks import eq
import upslib

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]
TEMPLATES = "//sys/scheduler/config/template_pool_tree_config_map"
INFO = "//sys/scheduler/orchid/scheduler/scheduling_info_per_pool_tree/"


def subdict(d, sub):
    return all(k in d and d[k] == v for k, v in sub.items())


@case
def template_pool_trees_config():
    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_template_pool_trees_config
    with Env("templates") as env:
        templates = {
            "custom_": {"priority": 1, "filter": "custom_.*",
                        "config": {"enable_aggressive_starvation": True,
                                   "max_unpreemptible_running_allocation_count": 731,
                                   "max_running_operation_count": 21}},
            "pool": {"priority": 70, "filter": ".*pool.*",
                     "config": {"max_running_operation_count": 93,
                                "max_running_operation_count_per_pool": 70}},
            "not_matching_config": {"priority": 1000, "filter": ".*not_matched_regexp.*",
                                    "config": {"max_running_operation_count": 88888,
                                               "max_running_operation_count_per_pool": 88888}},
        }
        env.s.set(TEMPLATES, templates)
        env.s.ok("create", {"type": "scheduler_pool_tree", "attributes": {
            "name": "custom_pool_tree",
            "config": {"nodes_filter": "custom_tag", "max_running_operation_count_per_pool": 180}}})
        want = {"max_running_operation_count_per_pool": 180, "enable_aggressive_starvation": True,
                "max_running_operation_count": 93, "max_unpreemptible_running_allocation_count": 731}
        config = lambda: env.get(INFO + "custom_pool_tree/config")
        env.wait(lambda: subdict(config(), want), "custom_pool_tree's config from the templates")
        saved = config()
        env.wait(lambda: not env.get("//sys/scheduler/@alerts"), "no alerts")

        # poolsched: two templates of one priority are refused, naming both (upstream accepts
        # the scheduler config and raises an update_config alert); nothing changes either way
        bad = {"custom_": {"priority": 70, "filter": "custom_.*",
                           "config": {"enable_aggressive_starvation": False,
                                      "max_unpreemptible_running_allocation_count": 1,
                                      "max_running_operation_count": 1}},
               "pool": {"priority": 70, "filter": ".*pool.*",
                        "config": {"max_running_operation_count": 1,
                                   "max_running_operation_count_per_pool": 1}}}
        st, out = refused(env.s, "set", {"path": TEMPLATES, "value": bad})
        msg = out["message"] if isinstance(out, dict) else str(out)
        eq(st, 400, "refusal status")
        for text in ('"template_pool_tree_config_map" has equal priority for templates',
                     '"custom_"', '"pool"'):
            if text not in msg:
                raise AssertionError("%r not in %r" % (text, msg))
        eq(config(), saved, "custom_pool_tree's config after the refusal")
        eq(env.get(TEMPLATES), templates, "templates after the refusal")

        # poolsched: the templates and the tree's own attributes are stored apart
        env.s.kill9()
        env.s.start()
        env.wait(lambda: config() == saved, "custom_pool_tree's config after a restart")
        eq(env.get(TEMPLATES), templates, "templates after a restart")
        env.s.set(TEMPLATES + "/pool", {"priority": 70, "filter": ".*pool.*",
                                        "config": {"max_running_operation_count": 94}})
        env.wait(lambda: subdict(config(), {"max_running_operation_count": 94,
                                            "max_running_operation_count_per_pool": 180}),
                 "a changed template")
        env.s.ok("remove", {"path": "//sys/pool_trees/custom_pool_tree/@max_running_operation_count_per_pool"})
        env.wait(lambda: config()["max_running_operation_count_per_pool"] == 50,
                 "the default without the tree's own value and the template's")


@case
def tree_config_change_forces_pools_update_with_invalid_config():
    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_tree_config_change_forces_pools_update_with_invalid_config
    with Env("invalid") as env:
        env.pool("pool", config_preset="preset")
        env.wait(lambda: len(env.get("//sys/scheduler/@alerts")) == 1, "one alert")
        eq(env.get("//sys/scheduler/@alerts")[0]["attributes"]["alert_type"], "update_pools",
           "alert type")
        env.s.set(TEMPLATES, {"default": {"priority": 0, "filter": ".*",
                                          "config": {"pool_config_presets": {"preset": {}}}}})
        env.wait(lambda: not env.get("//sys/scheduler/@alerts"), "no alerts")


@case
def tree_config_change_forces_pools_update_with_valid_config():
    # upstream: test_scheduler_pool_trees::TestPoolTreesReconfiguration::test_tree_config_change_forces_pools_update_with_valid_config
    with Env("valid") as env:
        env.s.set(TEMPLATES, {"default": {"priority": 0, "filter": ".*",
                                          "config": {"max_running_operation_count_per_pool": 3}}})
        env.wait(lambda: env.get(INFO + "physical/config/max_running_operation_count_per_pool") == 3,
                 "per-pool limit from the template")


run(CASES, sys.argv[3:])
finish()
PYEOF
