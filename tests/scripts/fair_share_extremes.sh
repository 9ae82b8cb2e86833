#!/usr/bin/env bash
# Extreme values through the engine: every number of every valid snapshot of the fuzz corpus
# (fuzz/corpus/snapshot), one at a time, replaced by 1e18, 9.3e18, 1e300, 4e15, -1 and 0,
# then `fair-share`. Each run either computes (exit 0, every share in the output finite
# and not negative) or refuses the input (exit 2, one line naming the key), and nothing else:
# no crash, and under the sanitizers (CI runs this test in the ASan+UBSan build) no undefined
# behaviour, which the sanitized binary turns into a failing exit. It found inferred guarantees,
# guarantee sums and integral volumes overflowing int64 (fuzz/corpus/snapshot/huge-*.json).
# usage: fair_share_extremes.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: fair_share_extremes.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 600 "$@" <<'EOF2'
import copy, glob, json, math, os, subprocess, sys
import server_helper
from server_helper import check, finish

bin, work = sys.argv[1], sys.argv[2]
src = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(server_helper.__file__))))
VALUES = [1e18, 9.3e18, 1e300, 4e15, -1, 0]
env = dict(os.environ, UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1",
           ASAN_OPTIONS="detect_leaks=0")

def leaves(o, path=()):
    if isinstance(o, dict):
        for k, v in o.items():
            yield from leaves(v, path + (k,))
    elif isinstance(o, list):
        for i, v in enumerate(o):
            yield from leaves(v, path + (i,))
    elif isinstance(o, (int, float)) and not isinstance(o, bool):
        yield path

def shares(o, key=""):
    """(key, value) of every number under a key ending in _share, at any depth."""
    if isinstance(o, dict):
        for k, v in o.items():
            yield from shares(v, k if k.endswith("_share") else key)
    elif isinstance(o, list):
        for v in o:
            yield from shares(v, key)
    elif isinstance(o, (int, float)) and not isinstance(o, bool) and key:
        yield key, o

runs = computed = 0
path = work + "/snapshot.json"
for name in sorted(glob.glob(src + "/fuzz/corpus/snapshot/*.json")):
    try:
        base = json.load(open(name))
    except ValueError:
        continue   # the corpus' malformed inputs
    if subprocess.run([bin, "fair-share", name], env=env, capture_output=True).returncode != 0:
        continue   # the corpus' invalid snapshots: their numbers are not what is tested
    for where in list(leaves(base)):
        for value in VALUES:
            doc = copy.deepcopy(base)
            at = doc
            for p in where[:-1]:
                at = at[p]
            at[where[-1]] = value
            with open(path, "w") as f:
                json.dump(doc, f)
            r = subprocess.run([bin, "fair-share", path, "--format", "json"], env=env,
                               capture_output=True, text=True)
            runs += 1
            what = "%s %s=%r" % (os.path.basename(name), "/".join(map(str, where)), value)
            if r.returncode == 2:
                msg = r.stderr.strip()
                check("\n" not in msg and str(where[-1]) in msg,
                      "%s: a one-line error naming the key: %r" % (what, msg[:300]))
                continue
            if not check(r.returncode == 0, "%s: exit %d: %s" % (what, r.returncode, r.stderr[-600:])):
                continue
            computed += 1
            bad = [(k, v) for k, v in shares(json.loads(r.stdout)) if not (math.isfinite(v) and v >= 0)]
            check(not bad, "%s: shares finite and not negative: %s" % (what, bad[:5]))
check(computed > 100, "enough inputs computed (%d of %d runs)" % (computed, runs))
print("%d runs, %d computed" % (runs, computed))
finish()
EOF2
