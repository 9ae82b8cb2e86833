#!/usr/bin/env bash
# sim-equivalence.sh BASE_BINARY NEW_BINARY [WORK_DIR] — runs `bench simulate --keep` with both
# binaries on the same generated scenarios (several seeds and sizes, overloaded and not) and
# checks that every output (summary.json, events.jsonl, operations.csv, pools.csv) is byte for
# byte the same. For changes that must not move the simulator's results (performance work).
# summary.json's `scheduler` object is left out: it counts the simulator's own work (heartbeats
# and updates it evaluated or skipped), which performance work is meant to change.
# SIM_EQ_CASES overrides the cases: "seed:nodes:operations:jobs ...".
set -euo pipefail
base=${1:?usage: sim-equivalence.sh BASE_BINARY NEW_BINARY [WORK_DIR]}
new=${2:?usage: sim-equivalence.sh BASE_BINARY NEW_BINARY [WORK_DIR]}
work=${3:-$(mktemp -d)}
mkdir -p "$work"
cases=${SIM_EQ_CASES:-"1:40:100:5000 2:40:100:5000 3:200:100:5000 4:60:300:20000 5:1000:200:20000"}
files="results.json events.jsonl operations.csv pools.csv"   # results.json: summary.json without scheduler
fail=0
for c in $cases; do
    IFS=: read -r seed nodes ops jobs <<<"$c"
    for which in base new; do
        bin=$base
        [ "$which" = new ] && bin=$new
        dir=$work/${c//:/-}-$which
        rm -rf "$dir"
        "$bin" bench simulate --seed "$seed" --nodes "$nodes" --operations "$ops" --jobs "$jobs" \
            --keep "$dir" >"$dir.json"
    done
    verdict=same
    for which in base new; do
        python3 -c 'import json, sys
s = json.load(open(sys.argv[1])); s.pop("scheduler", None)
json.dump(s, open(sys.argv[2], "w"), indent=1, sort_keys=True)' \
            "$work/${c//:/-}-$which/summary.json" "$work/${c//:/-}-$which/results.json"
    done
    for f in $files; do
        if ! cmp -s "$work/${c//:/-}-base/$f" "$work/${c//:/-}-new/$f"; then
            echo "DIFFERENT: case $c, $f" >&2
            verdict=different
            fail=1
        fi
    done
    echo "case seed=$seed nodes=$nodes operations=$ops jobs=$jobs: $verdict"
done
[ $fail = 0 ] && echo "all outputs identical" || { echo "outputs differ" >&2; exit 1; }
