#!/usr/bin/env bash
# `poolsched trace import alibaba-gpu` on slices of the real trace: the output is valid JSON,
# has one operation per selected pod minus the skipped ones, agrees field by field with an
# independent Python reading of the CSV files and docs/alibaba-trace.md's rules, and is
# byte-identical from run to run. --compress: start times divided, run times kept, each value
# computed here from the CSV. The trace is the repository's copy, examples/alibaba/data.
# Usage: trace_import.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
. "$(dirname "${BASH_SOURCE[0]}")/lib/sh_test.bash"
sh_test "$@"
trace="$src/examples/alibaba/data"

[ -f "$trace/openb_pod_list_default.csv" ] || fail "no trace in $trace"

# 1. A slice of the default pod list, twice: stdout and --output give the same bytes.
"$bin" trace import alibaba-gpu "$trace" --limit 300 > "$work/a.json" 2> "$work/a.err" \
    || { cat "$work/a.err"; fail "import --limit 300 failed"; }
"$bin" trace import alibaba-gpu "$trace" --limit 300 --output "$work/b.json" 2> "$work/b.err" \
    || { cat "$work/b.err"; fail "import --output failed"; }
cmp -s "$work/a.json" "$work/b.json" || fail "two imports of the same slice differ"
cmp -s "$work/a.err" "$work/b.err" || fail "two summaries of the same slice differ"
grep -q "pods: 8152 read, 300 selected" "$work/a.err" || { cat "$work/a.err"; fail "summary"; }

# 2. The gpuspec33 list (every pod), where gpu_spec becomes scheduling_tag_filter.
"$bin" trace import alibaba-gpu "$trace" --pods gpuspec33 --output "$work/g.json" 2> "$work/g.err" \
    || { cat "$work/g.err"; fail "import --pods gpuspec33 failed"; }
# 3. A window with a time scale.
"$bin" trace import alibaba-gpu "$trace" --start-offset 10000000 --limit 500 --time-scale 0.01 \
    > "$work/w.json" 2> "$work/w.err" || { cat "$work/w.err"; fail "import window failed"; }
# 4. Compressed: the whole list as examples/alibaba/run.sh imports it, and a window with a time
#    scale and a compression that does not divide evenly.
"$bin" trace import alibaba-gpu "$trace" --compress 30000 > "$work/c.json" 2> "$work/c.err" \
    || { cat "$work/c.err"; fail "import --compress 30000 failed"; }
"$bin" trace import alibaba-gpu "$trace" --start-offset 10000000 --limit 500 --time-scale 0.5 \
    --compress=7 > "$work/cw.json" 2> "$work/cw.err" || { cat "$work/cw.err"; fail "import window --compress 7 failed"; }

PYTHONPATH="$src/tests/scripts" python3 - "$trace" "$work" <<'EOF'
import csv, json, math, sys
from checks import fail

trace, work = sys.argv[1], sys.argv[2]
MIB = 1024 * 1024
POOLS = {"LS": "ls", "Guaranteed": "guaranteed", "Burstable": "burstable", "BE": "be"}


nodes = list(csv.DictReader(open(f"{trace}/openb_node_list_all_node.csv")))
shapes = {(int(n["cpu_milli"]), int(n["memory_mib"]), int(n["gpu"]), n["model"] or "cpu_only")
          for n in nodes}

def rules_from(err_path):
    counts = {}
    for line in open(err_path):
        parts = line.split()
        if len(parts) >= 2 and parts[1].isdigit() and line.startswith("    "):
            counts[parts[0]] = int(parts[1])
    return counts

def run_time(p, end):
    """docs/alibaba-trace.md: the run time in seconds, or None when the median applies."""
    if p["scheduled_time"] == "":
        return None
    sched = int(p["scheduled_time"])
    dele = p["deletion_time"]
    dele = end if dele in ("", "0") else int(dele)
    if dele < sched:
        return None
    return max(dele - sched, 1)

def half_up(x):
    """C's llround for x >= 0 (Python's round() rounds halves to even)."""
    return int(math.floor(x + 0.5))

def check(out_path, err_path, pod_file, limit=None, offset=0, scale=1.0, compress=1.0):
    doc = json.load(open(out_path))   # valid JSON
    counts = rules_from(err_path)
    pods = list(csv.DictReader(open(f"{trace}/{pod_file}")))
    end = max(int(x) for p in pods for x in (p["creation_time"], p["deletion_time"],
                                             p["scheduled_time"]) if x != "")
    runs = sorted(r for r in (run_time(p, end) for p in pods) if r is not None)
    median = runs[(len(runs) - 1) // 2]
    first = min(int(p["creation_time"]) for p in pods)
    order = sorted(range(len(pods)), key=lambda i: (int(pods[i]["creation_time"]), i))
    sel = [pods[i] for i in order if int(pods[i]["creation_time"]) >= first + offset]
    if limit:
        sel = sel[:limit]
    expected = []
    for p in sel:
        cpu, mem, gpu = int(p["cpu_milli"]), int(p["memory_mib"]), int(p["num_gpu"])
        if int(p["gpu_milli"]) < 1000 and (gpu > 0 or int(p["gpu_milli"]) > 0):
            gpu = max(gpu, 1)
        spec = set(p["gpu_spec"].split("|")) if p["gpu_spec"] else None
        if not any(c >= cpu and m >= mem and g >= gpu and (spec is None or t in spec)
                   for c, m, g, t in shapes):
            continue
        expected.append((p, gpu))
    ops = doc["operations"]
    skipped = counts["no_node_fits"] + counts["no_matching_node_fits"]
    if len(ops) != len(sel) - skipped:
        fail(f"{out_path}: {len(ops)} operations, expected {len(sel)} selected - {skipped} skipped")
    if len(ops) != len(expected):
        fail(f"{out_path}: {len(ops)} operations, the Python reading expects {len(expected)}")
    for op, (p, gpu) in zip(ops, expected):
        if op["id"] != p["name"]:
            fail(f"{out_path}: operation {op['id']} where {p['name']} was expected")
        run = run_time(p, end)
        run = median if run is None else run
        want_start = half_up((int(p["creation_time"]) - first - offset) * 1000 * scale / compress)
        want_duration = max(half_up(run * 1000 * scale), 1)   # --compress keeps run times
        task = op["tasks"][0]
        res = task["resources"]
        got = (op["start_time"], task["duration"], res["cpu"], res["memory"], res["gpu"],
               op["spec"]["pool"], op["spec"].get("scheduling_tag_filter", ""), task["job_count"])
        want = (want_start, want_duration, round(int(p["cpu_milli"]) / 1000, 2), int(p["memory_mib"]) * MIB,
                gpu, POOLS[p["qos"]], p["gpu_spec"], 1)
        if got != want:
            fail(f"{out_path}: {p['name']}: got {got}, expected {want}")
    groups = doc["node_groups"]
    if sum(g["count"] for g in groups) != len(nodes) or len(groups) != len(shapes):
        fail(f"{out_path}: node groups do not cover the {len(nodes)} nodes in {len(shapes)} shapes")
    names = [f"{g['name']}-{i}" for g in groups for i in range(g["count"])]
    if len(set(names)) != len(nodes):
        fail(f"{out_path}: node ids are not unique")
    # a pod is an operation: no operation count limit may refuse or hold back one of the file
    tree = doc["pool_trees"]["physical"]
    for key in ("max_operation_count", "max_operation_count_per_pool",
                "max_running_operation_count", "max_running_operation_count_per_pool"):
        if tree.get(key) != len(pods):
            fail(f"{out_path}: tree {key} {tree.get(key)}, expected the {len(pods)} pods of the file")
    want_end = max(op["start_time"] + op["tasks"][0]["duration"] for op in ops)
    if doc["duration"] != want_end:
        fail(f"{out_path}: duration {doc['duration']}, the last pod ends at {want_end}")
    return counts, len(ops)

counts, n = check(f"{work}/a.json", f"{work}/a.err", "openb_pod_list_default.csv", limit=300)
if n == 0:
    fail("the default slice has no operations")
counts, n = check(f"{work}/g.json", f"{work}/g.err", "openb_pod_list_gpuspec33.csv")
if counts["gpu_spec_filter"] == 0 or counts["never_scheduled"] == 0 or counts["fractional_gpu"] == 0:
    fail(f"gpuspec33: expected gpu_spec filters, pods never scheduled and fractional GPUs: {counts}")
check(f"{work}/w.json", f"{work}/w.err", "openb_pod_list_default.csv", limit=500,
      offset=10000000, scale=0.01)
check(f"{work}/c.json", f"{work}/c.err", "openb_pod_list_default.csv", compress=30000)
check(f"{work}/cw.json", f"{work}/cw.err", "openb_pod_list_default.csv", limit=500,
      offset=10000000, scale=0.5, compress=7)
# The compressed list arrives within 149.3 days / 30000 (430 s), and its pods still run as
# long as in the trace (the longest 145 days), so the scenario lasts as long as that run.
doc = json.load(open(f"{work}/c.json"))
last = max(op["start_time"] for op in doc["operations"])
longest = max(op["tasks"][0]["duration"] for op in doc["operations"])
if not (425000 <= last <= 431000) or longest < 145 * 86400000:
    fail(f"--compress 30000: last submission at {last} ms, longest run {longest} ms")
EOF

# 5. Bad input: one line `error: ...`, exit 2, nothing on stdout.
expect_error() {
    local want=$1; shift
    set +e
    "$bin" "$@" > "$work/out" 2> "$work/err"
    local code=$?
    set -e
    [ "$code" -eq 2 ] || fail "$* exited $code, expected 2"
    [ ! -s "$work/out" ] || fail "$* wrote to stdout"
    grep -q "^error: .*$want" "$work/err" || { cat "$work/err"; fail "$*: no '$want' in the error"; }
}
expect_error "no-such-dir/openb_node_list_all_node.csv: No such file" trace import alibaba-gpu "$work/no-such-dir"
expect_error "openb_pod_list_nope.csv: No such file" trace import alibaba-gpu "$trace" --pods nope
expect_error "--limit: must be a positive integer, got '0'" trace import alibaba-gpu "$trace" --limit 0
expect_error "unknown option '--limt'" trace import alibaba-gpu "$trace" --limt 5
expect_error "--time-scale: must be a positive number" trace import alibaba-gpu "$trace" --time-scale=-1
expect_error "--compress: must be a number >= 1, got '0.5'" trace import alibaba-gpu "$trace" --compress 0.5
expect_error "--compress: must be a number >= 1, got 'fast'" trace import alibaba-gpu "$trace" --compress fast
expect_error "--compress: must be in \[1, 1e+06\], got 2e+06" trace import alibaba-gpu "$trace" --compress 2e6
expect_error "unknown trace format 'borg'" trace import borg "$trace"
mkdir "$work/bad"
printf 'sn,cpu_milli,memory_mib,gpu,model\nn0,1000,1024,0,\nn1,1000,1024\n' > "$work/bad/openb_node_list_all_node.csv"
cp "$trace/openb_pod_list_default.csv" "$work/bad/"
expect_error "openb_node_list_all_node.csv:3: expected 5 fields as in the header, got 3" \
    trace import alibaba-gpu "$work/bad"
[ ! -e "$work/never.json" ] || fail "setup"
expect_error "expected 5 fields" trace import alibaba-gpu "$work/bad" --output "$work/never.json"
[ ! -e "$work/never.json" ] || fail "a failed import left an output file"
echo "trace_import: ok"
