#!/usr/bin/env bash
# Orchid attributes derived from settings and preemption lists (docs/api.md "Orchid"):
# effective_* starvation settings and effective_aggressive_preemption_allowed inherited down the
# tree, and an operation's preemptible_job_count / aggressively_preemptible_job_count as the
# preemption classes of semantics.md 3.3 put its jobs, and custom_profiling_tag against the
# pools' allowed_profiling_tags; an operation's spec strong_guarantee_resources and the
# min_share_ratio of operations (0) and pools.
# usage: server_orchid_attrs.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_orchid_attrs.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PYEOF'
import sys
from server_helper import check, finish
import upslib
from upslib import Env, near

upslib.BIN, upslib.WORK = sys.argv[1], sys.argv[2]
with Env("attrs", cpu=8, slots=8) as env:
    env.pool("a", fair_share_starvation_tolerance=0.5, allow_aggressive_preemption=False,
             allowed_profiling_tags=["team"])
    env.pool("b", "a")
    env.pool("c")
    A = env.op(jobs=8, pool="b")
    env.wait(lambda: env.op_attr(A, "resource_usage")["user_slots"] == 8, "A runs 8 jobs")
    a = env.pool_attr
    check(near(a("b", "effective_fair_share_starvation_tolerance"), 0.5), "tolerance inherited from a")
    check(near(a("c", "effective_fair_share_starvation_tolerance"), 0.8), "tree default tolerance 0.8")
    check(a("c", "effective_fair_share_starvation_timeout") == 30000, "tree default timeout")
    check(a("a", "aggressive_preemption_allowed") is False, "a: specified false")
    check(a("b", "aggressive_preemption_allowed") is None, "b: unspecified")
    check(a("b", "effective_aggressive_preemption_allowed") is False, "b inherits false")
    check(a("c", "effective_aggressive_preemption_allowed") is True, "c: default true")
    # a second operation halves A's fair share (0.5): of A's 8 one-cpu jobs (0.125 each) the
    # first is non-preemptible (usage before it 0 < 0.5 x 0.2), the next three aggressively
    # preemptible (usage before them < 0.5), the last four preemptible.
    B = env.op(jobs=8, pool="b")
    env.wait(lambda: near(env.op_attr(A, "detailed_fair_share")["total"]["cpu"], 0.5), "A's fair share 0.5")
    env.wait(lambda: env.op_attr(A, "preemptible_job_count") == 4, "4 preemptible")
    check(env.op_attr(A, "aggressively_preemptible_job_count") == 3, "3 aggressively preemptible")
    check(env.op_attr(B, "preemptible_job_count") == 0, "B has none")
    # custom_profiling_tag: as given when an ancestor allows it, else "invalid" (upstream)
    check(env.op_attr(A, "custom_profiling_tag") is None, "no tag: null")
    T1 = env.op(pool="b", custom_profiling_tag="team")
    T2 = env.op(pool="c", custom_profiling_tag="team")
    env.wait(lambda: env.op_attr(T1, "custom_profiling_tag") == "team", "allowed by a")
    check(env.op_attr(T2, "custom_profiling_tag") == "invalid", "not allowed under c")
    # An operation's spec strong guarantee (min_share_resources, docs/api.md): recognised (no
    # unrecognized_spec alert), shown as given, no share of its own (min_share_ratio 0, as
    # upstream's current vector HDRF); a pool's min_share_ratio is its dominant guarantee share.
    env.pool("g", strong_guarantee_resources={"cpu": 4})
    G = env.op(pool="g", min_share_resources={"cpu": 1, "user_slots": 6})
    env.wait(lambda: env.op_attr(G, "strong_guarantee_resources") == {"cpu": 1.0, "user_slots": 6},
             "G's spec guarantee in the orchid")
    env.wait(lambda: near(a("g", "min_share_ratio"), 0.5), "g's min_share_ratio: 4 of 8 cpu")
    check(env.op_attr(G, "min_share_ratio") == 0.0, "an operation gets no strong guarantee")
    alerts = env.s.ok("get_operation", {"operation_id": G}).get("alerts", {})
    check("unrecognized_spec" not in alerts, "min_share_resources is recognised: %r" % alerts)
finish()
PYEOF
