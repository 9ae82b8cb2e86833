#!/usr/bin/env bash
# Free volume among siblings in `poolsched simulate` (upstream's DistributeFreeVolume): under
# pool p (resource flow 6 cpu), relaxed pool a (flow 5 cpu, no operations) fills its capacity
# (flow x pool_capacity_saturation_period, 10 s) and then overflows its whole inflow; relaxed
# pool b (flow 1 cpu) spends its volume at once (smooth_period 1 s). With
# should_distribute_free_volume_among_children on p, a's overflow goes to b, whose integral
# share rises from its own flow (0.1) to its relaxed cap (flow x relaxed_share_multiplier_limit
# 3 = 0.3); without it the overflow is lost.
# Usage: sim_free_volume.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: sim_free_volume.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import sys
from simlib import *
init(sys.argv)

def sc(distribute):
    ig = {"resource_flow": {"cpu": 6}}
    if distribute is not None:
        ig["should_distribute_free_volume_among_children"] = distribute
    tree = {"integral_guarantees": {"pool_capacity_saturation_period": 10000, "smooth_period": 1000},
            "pools": [{"name": "p", "integral_guarantees": ig},
                      {"name": "a", "parent": "p", "integral_guarantees": {"guarantee_type": "relaxed", "resource_flow": {"cpu": 5}}},
                      {"name": "b", "parent": "p", "integral_guarantees": {"guarantee_type": "relaxed", "resource_flow": {"cpu": 1}}},
                      {"name": "c"}]}
    ops = [op("B", 0, "b", jobs=10, duration=600000), op("C", 0, "c", jobs=10, duration=600000)]
    return scenario([nodes("n", 1, cpu=10)], {"physical": tree}, ops, duration=40000)

def b_at(r, t):
    row = [x for x in r.pools if x["pool"] == "b" and int(x["time"]) <= t][-1]
    return float(row["integral_guarantee_ratio"]), float(row["accumulated_resource_ratio_volume"])

for distribute, share, volume in ((None, 0.1, 0.1), (False, 0.1, 0.1), (True, 0.3, 1.0)):
    r = load(run(f"distribute_{distribute}", sc(distribute))[0])
    got = b_at(r, 30000)
    require(abs(got[0] - share) < 1e-9 and abs(got[1] - volume) < 1e-9,
          f"should_distribute_free_volume_among_children={distribute}: b's integral share and volume {got}, expected {(share, volume)}")
    a = [x for x in r.pools if x["pool"] == "a"][-1]
    require(abs(float(a["accumulated_resource_ratio_volume"]) - 5) < 1e-9, f"a stays at its capacity: {a}")
print("free volume: overflow reaches the sibling only with should_distribute_free_volume_among_children")
PY
