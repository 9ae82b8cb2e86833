#!/usr/bin/env python3
"""Checks `poolsched fair-share` against the fair-share vectors (tests/data/vectors/fair-share).

usage: check_vectors.py BINARY VECTOR_FILE_OR_DIR...

A vector is a JSON object {"name", "source", "input", "expect": [{"path", "value", "tolerance"}]}:
`input` is a snapshot (formats.md section 2), written to a temporary file and given to
`BINARY fair-share FILE`, which must print one JSON object. `path` walks that object by keys
separated by '/' (e.g. pools/<Root>/detailed_fair_share/total); an expected object compares only
the keys it names; numbers compare within `tolerance` (0 when absent), anything else exactly.
Prints each failed check on a line of its own, then 'N passed, M failed'. Exits 1 when a check
failed or none passed.
"""
import json
import os
import subprocess
import sys
import tempfile


def walk(doc, path):
    for key in path.split("/"):
        if not isinstance(doc, dict) or key not in doc:
            return False, None
        doc = doc[key]
    return True, doc


def is_number(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def differences(got, want, tolerance, where):
    """Every way `got` differs from `want`, as lines naming the place."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return ["%s: expected an object, got %s" % (where, json.dumps(got))]
        out = []
        for key, value in want.items():
            if key not in got:
                out.append("%s/%s: missing" % (where, key))
            else:
                out.extend(differences(got[key], value, tolerance, where + "/" + key))
        return out
    if is_number(want):
        if not is_number(got) or abs(got - want) > tolerance:
            return ["%s: expected %r (+-%g), got %r" % (where, want, tolerance, got)]
        return []
    return [] if got == want else ["%s: expected %r, got %r" % (where, want, got)]


def fair_share(binary, snapshot):
    fd, path = tempfile.mkstemp(suffix=".json")
    try:
        with os.fdopen(fd, "w") as fh:
            json.dump(snapshot, fh)
        proc = subprocess.run([binary, "fair-share", path], capture_output=True, text=True,
                              timeout=120)
    finally:
        os.unlink(path)
    if proc.returncode != 0:
        return None, "exit %d: %s" % (proc.returncode, proc.stderr.strip())
    try:
        return json.loads(proc.stdout), None
    except ValueError as err:
        return None, "output is not JSON (%s)" % err


def check_vector(binary, path):
    """(checks passed, lines of failures) of one vector file."""
    with open(path) as fh:
        vector = json.load(fh)
    name = vector.get("name", os.path.basename(path))
    result, error = fair_share(binary, vector["input"])
    if error:
        return 0, ["%s: %s" % (name, error)]
    passed, failures = 0, []
    for expect in vector["expect"]:
        where = "%s: %s" % (name, expect["path"])
        found, got = walk(result, expect["path"])
        lines = (differences(got, expect["value"], float(expect.get("tolerance", 0)), where)
                 if found else [where + ": missing"])
        if lines:
            failures.extend(lines)
        else:
            passed += 1
    return passed, failures


def vector_files(args):
    for arg in args:
        if os.path.isdir(arg):
            for entry in sorted(os.listdir(arg)):
                if entry.endswith(".json"):
                    yield os.path.join(arg, entry)
        else:
            yield arg


def main(argv):
    if len(argv) < 3:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    passed = failed = 0
    for path in vector_files(argv[2:]):
        ok, failures = check_vector(argv[1], path)
        passed += ok
        failed += len(failures)
        for line in failures:
            print(line)
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
