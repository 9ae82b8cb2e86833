"""The one harness of the Python script tests (tests/scripts, tests/upstream).

A check fails in one of three ways, each written once here:
  check(cond, what, *context)    prints "FAIL: what" and counts it in FAILURES; the test goes
                                 on, and finish() fails it at the end
  require(cond, what, *context)  the case stops: raises Fail (run_cases, upslib.run or an
                                 uncaught exception fails the test)
  fail(msg)                      the test stops now: exit 1 with "FAIL: msg"
eq(a, b, what) is require(a == b) with both values in the message. context: values shown
under the message (each cut at 3000 characters). run_cases runs a script's cases, each in a
temporary directory of its own (run_group: the cases of a named group).
"""
import os
import shutil
import sys
import tempfile
import time

FAILURES = []


class Fail(AssertionError):
    """A failed requirement: the case stops."""


class Skip(Exception):
    """The case cannot run here (exit 77 when every case of the run skips)."""


def _message(what, context):
    return what + ("\n" + "\n".join(str(c)[:3000] for c in context) if context else "")


def check(cond, what, *context):
    if not cond:
        msg = _message(what, context)
        FAILURES.append(msg)
        print("FAIL: " + msg, flush=True)
    return cond


def require(cond, what, *context):
    if not cond:
        raise Fail(_message(what, context))


def eq(a, b, what):
    require(a == b, "%s: %r != %r" % (what, a, b))


def fail(msg):
    sys.exit("FAIL: " + msg)


def finish():
    if FAILURES:
        print("%d check(s) failed" % len(FAILURES))
        sys.exit(1)
    print("ok")


def run_cases(cases, run, prefix):
    """Runs each case: run(case, tmp) with tmp a new directory (mode 0755, removed after) sets
    the case up, calls it and tears it down. An exception fails the case, which prints the end
    of each *.log in tmp; Skip skips it. Exits 1 when a case failed, 77 when every case
    skipped, else 0."""
    failed = skipped = 0
    for case in cases:
        tmp = tempfile.mkdtemp(prefix=prefix)
        os.chmod(tmp, 0o755)
        t0 = time.time()
        try:
            run(case, tmp)
            print("ok   %s (%.1fs)" % (case.__name__, time.time() - t0), flush=True)
        except Skip as e:
            skipped += 1
            print("skip %s: %s" % (case.__name__, e), flush=True)
        except Exception as e:
            failed += 1
            print("FAIL %s: %s" % (case.__name__, e), flush=True)
            for f in sorted(os.listdir(tmp)):
                if f.endswith(".log"):
                    print("---- %s" % f)
                    with open(os.path.join(tmp, f), errors="replace") as fh:
                        print(fh.read()[-5000:])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print("%d passed, %d failed, %d skipped" % (len(cases) - failed - skipped, failed, skipped))
    sys.exit(1 if failed else 77 if skipped == len(cases) else 0)


def run_group(groups, group, run, prefix):
    """run_cases for the cases of groups[group] ({name: [case...]}; "all": every group's)."""
    cases = [c for g, cs in groups.items() if group in (g, "all") for c in cs]
    if not cases:
        sys.exit("unknown group " + group)
    run_cases(cases, run, prefix)
