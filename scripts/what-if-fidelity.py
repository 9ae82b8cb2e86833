#!/usr/bin/env python3
"""what-if-fidelity.py BINARY [BINARY ...] -- RUN_DIR [RUN_DIR ...]

The fidelity of what-if's no-change replay (docs/what-if.md "Fidelity and its tolerance") of
the same records under several builds: each RUN_DIR is one kept by the end-to-end test
(`PS_KEEP=1 python3 tests/scripts/what_if_e2e.py BINARY` keeps its rows.json, the event log it
saved, and window.json, its window); each BINARY replays each record with the test's periods.
Prints a line per record (usage error mean and operation start error p95 per binary), then per
binary the mean and the worst usage error over the records and how many were above 0.02.
"""
import json
import os
import subprocess
import sys
import tempfile


def fidelity(binary, run_dir, out):
    w = json.load(open(os.path.join(run_dir, "window.json")))
    r = subprocess.run([binary, "what-if", "--event-log", os.path.join(run_dir, "rows.json"),
                        "--since", str(w["since"]), "--until", str(w["until"]),
                        "--heartbeat-period", "100", "--fair-share-update-period", "20",
                        "--out", out, "--format", "json"],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        sys.exit("%s on %s: exit %d: %s" % (binary, run_dir, r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)["fidelity"]


def main():
    args = sys.argv[1:]
    if "--" not in args or args.index("--") == 0 or args[-1] == "--":
        sys.exit(__doc__.strip().splitlines()[0])
    cut = args.index("--")
    binaries, runs = args[:cut], args[cut + 1:]
    errors = {b: [] for b in binaries}
    with tempfile.TemporaryDirectory() as tmp:
        for run in runs:
            line = [os.path.basename(run.rstrip("/"))]
            for i, b in enumerate(binaries):
                f = fidelity(b, run, os.path.join(tmp, str(i)))
                errors[b].append(f["usage_error_mean"])
                line.append("%.4f/%dms" % (f["usage_error_mean"], f["start_error_p95_ms"]))
            print(" ".join(line), flush=True)
    for b in binaries:
        e = errors[b]
        print("%s: usage error mean over %d records %.4f, worst %.4f, above 0.02 in %d"
              % (b, len(e), sum(e) / len(e), max(e), sum(1 for x in e if x > 0.02)))


if __name__ == "__main__":
    main()
