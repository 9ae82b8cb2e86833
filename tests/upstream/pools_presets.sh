#!/usr/bin/env bash
# test_scheduler_pools.py's TestSchedulerPoolConfigPresets translated: the tree key
# pool_config_presets and the pool attribute config_preset on a real scheduler (docs/api.md,
# "Pool config presets"). Upstream's "default" tree is poolsched's "physical". Beyond upstream:
# Cypress keeps reading what was set on the pool, and presets and pools survive a kill -9.
# usage: pools_presets.sh BINARY DATA_DIR SOURCE_DIR [CASE...]
source "${3:?usage: pools_presets.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 200 "$@" <<'PYEOF'
import json
import sys
from server_helper import finish
from upslib import CASES, ORCHID, Env, case, run
from checks import eq
import upslib

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]
T = "//sys/pool_trees/physical/"
PRESETS = {"presetA": {"fair_share_starvation_tolerance": 0.6},
           "presetB": {"fair_share_starvation_tolerance": 0.5,
                       "fair_share_starvation_timeout": 2000}}


def alerts(env):
    return env.get("//sys/scheduler/@alerts")


@case
def presets():
    # upstream: test_scheduler_pools::TestSchedulerPoolConfigPresets::test_presets
    with Env("presets") as env:
        env.pool("pool", fair_share_starvation_timeout=1000)
        attr = lambda key: env.pool_attr("pool", key)
        env.wait(lambda: attr("fair_share_starvation_timeout") == 1000, "timeout 1000")
        env.s.set(T + "@config/pool_config_presets", PRESETS)
        env.wait(lambda: sorted(env.get(ORCHID + "/config")["pool_config_presets"]) ==
                 ["presetA", "presetB"], "presets in the orchid's tree config")
        env.s.set(T + "pool/@config_preset", "presetA")
        env.wait(lambda: attr("fair_share_starvation_tolerance") == 0.6, "presetA's tolerance")
        env.s.set(T + "pool/@config_preset", "presetB")
        env.wait(lambda: attr("fair_share_starvation_tolerance") == 0.5, "presetB's tolerance")
        env.wait(lambda: attr("fair_share_starvation_timeout") == 1000, "the pool's own timeout")
        env.s.ok("remove", {"path": T + "pool/@fair_share_starvation_timeout"})
        env.wait(lambda: attr("fair_share_starvation_timeout") == 2000, "presetB's timeout")

        # poolsched: Cypress shows what was set on the pool, the orchid what it runs with
        explicit = env.get(T + "pool/@")
        eq([explicit.get(k) for k in ("config_preset", "fair_share_starvation_tolerance",
                                      "fair_share_starvation_timeout")],
           ["presetB", None, None], "explicit attributes")
        eq(env.get(T + "pool/@fair_share_starvation_tolerance", "absent"), None,
           "tolerance as set on the pool")
        # the store keeps the same split: after a kill -9 the preset applies again
        env.s.kill9()
        env.s.start()
        env.wait(lambda: attr("fair_share_starvation_timeout") == 2000, "timeout after restart")
        env.wait(lambda: attr("fair_share_starvation_tolerance") == 0.5, "tolerance after restart")
        eq(env.get(T + "pool/@"), explicit, "explicit after restart")
        # a changed preset reaches its pools; without config_preset the tree's values apply
        env.s.set(T + "@config/pool_config_presets/presetB", {"fair_share_starvation_tolerance": 0.3})
        env.wait(lambda: attr("fair_share_starvation_tolerance") == 0.3, "changed preset")
        env.wait(lambda: attr("fair_share_starvation_timeout") == 30000, "tree's timeout")
        env.s.ok("remove", {"path": T + "pool/@config_preset"})
        env.wait(lambda: attr("fair_share_starvation_tolerance") == 0.8, "tree's tolerance")
        eq(alerts(env), [], "no alerts")


def bad_preset(name, preset, text):
    with Env(name) as env:
        env.pool("pool")
        eq(alerts(env), [], "alerts before")
        env.s.set(T + "@config/pool_config_presets", {"preset": preset})
        env.s.set(T + "pool/@config_preset", "preset")
        env.wait(lambda: len(alerts(env)) == 1, "one alert")
        dump = json.dumps(alerts(env)[0])
        if text not in dump:
            raise AssertionError("%r not in the alert %s" % (text, dump))
        eq(alerts(env)[0]["attributes"]["alert_type"], "update_pools", "alert type")
        # poolsched: the pool runs without the preset; a mended preset clears the alert
        env.s.set(T + "@config/pool_config_presets/preset", {"fair_share_starvation_tolerance": 0.4})
        env.wait(lambda: alerts(env) == [], "alert cleared")
        env.wait(lambda: env.pool_attr("pool", "fair_share_starvation_tolerance") == 0.4,
                 "mended preset applied")


@case
def preset_with_forbidden_option():
    # upstream: test_scheduler_pools::TestSchedulerPoolConfigPresets::test_preset_with_forbidden_option
    bad_preset("forbidden", {"mode": "fifo"}, "contains unrecognized options")


@case
def preset_with_unrecognized_option():
    # upstream: test_scheduler_pools::TestSchedulerPoolConfigPresets::test_preset_with_unrecognized_option
    bad_preset("unrecognized", {"ffair_share_starvation_timeout": "fifo"},
               "contains unrecognized options")


@case
def preset_with_incorrect_option():
    # upstream: test_scheduler_pools::TestSchedulerPoolConfigPresets::test_preset_with_incorrect_option
    bad_preset("incorrect", {"fair_share_starvation_timeout": -10},
               "failed to load as TPoolPresetConfig")


run(CASES, sys.argv[3:])
finish()
PYEOF
