#!/usr/bin/env bash
# Reading //sys/scheduler/event_log (docs/api.md "Event log") from a log of 25,000 rows, more
# than two of the blocks a read steps back through from the newest row: every filter (since,
# until, upper_row_index, limit, event_type, operation_id) returns exactly the newest matches in
# row order with the row index of the oldest, and paging back by it (as what-if and `event-log
# --all` do) returns every row once, across block boundaries, with timestamps that go back now
# and then (a clock stepped back) and rows whose stored text does not begin with the timestamp
# (read the slow way); rows before the log's first kept row are not returned; rows that reach the
# store after the first read (a commit that was still pending then) are found by the next ones,
# even where the rows read before would put their block outside the filter's times; a stored row
# without an event type is never returned nor counted toward a limit, and paging reads past it;
# after a restart the blocks' times are learnt by the reads, the first of them filtered by an
# operation whose rows are all in the middle of their blocks, and paging still returns every row,
# and a read below a row in the middle of a block does not take the span of the rows it saw for
# the block's; the CLI's `event-log` prints a read's rows (for a full read without --limit,
# saying that older rows are not shown) and with --all every matching row, paged back, in each
# format. The rows are written into the scheduler's store by this test, so that the expected
# answers are computed here from the same rows, not by the scheduler.
# usage: server_event_log_read.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: server_event_log_read.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
py_test 0 "$@" <<'PY'
import json, random, sqlite3, subprocess, sys
from server_helper import EVENT_LOG as LOG, Scheduler, check, event_log_rows, finish

bin, work = sys.argv[1], sys.argv[2]
data = work + "/data"
s = Scheduler(bin, data).start()
s.stop()

rng = random.Random(7)
FIRST, NEXT = 1500, 26500          # the rows kept; 1,500 older ones were dropped
TYPES = ["job_started", "job_completed", "job_aborted", "operation_started", "pools_info"]
ops = ["op-%02d" % i for i in range(40)]
rows, t = {}, 1_700_000_000_000
for seq in range(0, NEXT):
    t += rng.choice([0, 1, 5, 40, 200])
    if rng.random() < 0.002:
        t -= 5000                  # the clock stepped back
    row = {"timestamp": t, "event_type": rng.choice(TYPES), "operation_id": rng.choice(ops),
           "job_id": "j-%d" % seq}
    if 4000 <= seq % 10000 < 4500:  # one operation's rows in the middle of each block of rows
        row["operation_id"] = "op-mid"
    if seq % 97 == 0:              # another key order: not read off the text
        row = dict(reversed(list(row.items())))
    rows[seq] = row
LATE = range(26300, 26400)         # stored only after the first read, and older than the rest
for q in LATE:
    rows[q]["timestamp"] = 1_600_000_000_000 + q
MAXTS = max(r["timestamp"] for r in rows.values())   # rows the scheduler adds are newer

def store(seqs, meta=False):
    db = sqlite3.connect(data + "/poolsched.db", timeout=30)
    db.executemany("INSERT INTO objects(kind, key, value) VALUES ('event', ?, ?)",
                   [("%020d" % q, json.dumps(rows[q], separators=(",", ":"))) for q in seqs])
    if meta:
        db.execute("INSERT OR REPLACE INTO objects(kind, key, value) VALUES ('meta', 'event_log', ?)",
                   (json.dumps({"first": FIRST, "next": NEXT}),))
    db.commit()
    db.close()

# 1000..1499: below FIRST, left behind
store([q for q in range(1000, NEXT) if q not in LATE], meta=True)
s.start()
newest = event_log_rows(s, until=MAXTS, limit=1)     # the first read: the late rows are missing
check(newest == [rows[NEXT - 1]], "the newest row: %s" % newest)
store(LATE)

DAMAGED = set()                    # rows replaced in the store by one without an event type

def expected_seqs(since=0, until=MAXTS, limit=10000, event_type=None, operation_id=None,
                  upper_row_index=NEXT):
    types = [event_type] if isinstance(event_type, str) else event_type
    got = [q for q in range(FIRST, min(NEXT, upper_row_index))
           if q not in DAMAGED and since <= rows[q]["timestamp"] <= until and
           (types is None or rows[q]["event_type"] in types) and
           (operation_id is None or rows[q]["operation_id"] == operation_id)]
    return got[-limit:]

def expected(**filters):
    return [rows[q] for q in expected_seqs(**filters)]

def read(**filters):
    """The reply of a get of the log: its rows, and first_row_index (None when absent)."""
    reply = s.ok("get", dict(filters, path=LOG))
    check(set(reply) <= {"value", "first_row_index"}, "the reply's keys: %s" % sorted(reply))
    return reply["value"], reply.get("first_row_index")

def same(label, **filters):
    filters.setdefault("until", MAXTS)
    got, first = read(**filters)
    want = expected_seqs(**filters)
    check(got == [rows[q] for q in want], "%s %s: %d rows, want %d; first differing at %s" %
          (label, filters, len(got), len(want),
           next((i for i, (a, q) in enumerate(zip(got, want)) if a != rows[q]),
                min(len(got), len(want)))))
    check(first == (want[0] if want else None),
          "%s %s: first_row_index %s, want %s" % (label, filters, first, want[:1]))

try:
    ts = sorted(r["timestamp"] for q, r in rows.items() if q >= FIRST)
    mid = ts[len(ts) // 2]
    same("everything (the newest 10,000)")
    same("a small limit", limit=7)
    same("until in the middle", until=mid)
    same("until in the middle, limit 10000 reaching back over two blocks", until=ts[9000], limit=10000)
    same("since and until", since=ts[3000], until=ts[20000])
    same("since only", since=ts[18000])
    same("before the first kept row", until=1_600_000_000_000 - 1)
    same("up to the dropped rows' times", until=max(rows[q]["timestamp"] for q in range(1000, FIRST)))
    same("the late rows' times", until=1_600_000_000_000 + NEXT, limit=50)
    same("one event type", event_type="job_aborted")
    same("two event types, until", event_type=["operation_started", "pools_info"], until=mid, limit=500)
    same("one operation", operation_id="op-17")
    same("one operation, since, limit", operation_id="op-03", since=ts[5000], limit=100)
    same("no such operation", operation_id="op-99")
    same("upper_row_index", upper_row_index=20000)
    same("upper_row_index inside a block, a small limit", upper_row_index=13333, limit=9)
    same("upper_row_index, until and event types", upper_row_index=21111, until=mid,
         event_type=["job_started", "pools_info"])
    same("upper_row_index, one operation", upper_row_index=14400, operation_id="op-mid", limit=30)
    same("upper_row_index at the first kept row", upper_row_index=FIRST)
    same("upper_row_index below the first kept row", upper_row_index=10)
    same("upper_row_index past the newest row", upper_row_index=10 ** 15, limit=20)
    for v in (-1, "12", 1.5):
        status, out = s.call("get", {"path": LOG, "upper_row_index": v})
        check(status == 400 and "upper_row_index: must be a row index (an integer >= 0), got %s"
              % json.dumps(v) == out.get("message"), "upper_row_index %r refused" % (v,), status, out)

    # The CLI prints a read's rows; a full read without --limit says that older rows are not
    # shown (a file for `what-if --event-log` is not silently the newest page of the log)
    def cli(*extra):
        return subprocess.run([bin, "event-log", "--proxy", s.url(""), "--token", s.admin] +
                              list(extra), capture_output=True, text=True, timeout=60)
    # (the newest rows are the scheduler's own, logged at its start: the API's read, checked
    # above against the rows written here, is the oracle)
    r = cli()
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    newest = event_log_rows(s, limit=10000)
    check(r.returncode == 0 and len(lines) == 10000 and lines == newest,
          "event-log: %d rows" % len(lines), r.stderr)
    check("the newest 10000 matching rows; older ones are not shown" in r.stderr,
          "event-log says older rows are not shown", r.stderr)
    r = cli("--limit", "10000", "--format", "json")
    check(r.returncode == 0 and json.loads(r.stdout) == newest and r.stderr == "",
          "event-log --limit 10000: the rows, no note", r.stderr)
    r = cli("--operation-id", "op-17")
    check(r.returncode == 0 and r.stderr == "" and
          [json.loads(line) for line in r.stdout.splitlines()] == expected(operation_id="op-17"),
          "event-log, fewer rows than a read's: no note", r.stderr)
    # --all pages back through the matching rows as what-if reads the log, by row index: every
    # matching row once, in the order written, the clock's steps back notwithstanding (the rows
    # written before a step whose timestamps are later than the next page's first row, which
    # paging by timestamp missed, are there); the formats hold the same rows.
    def paged(**filters):
        return expected(limit=10 ** 9, **filters)
    def cli_all(*extra):
        r = cli("--all", "--until", str(MAXTS), *extra)
        check(r.returncode == 0 and r.stderr == "", "event-log --all %s" % (extra,), r.stderr)
        return r.stdout
    every = paged()
    stepped = [q for q in range(FIRST + 1, NEXT) if rows[q]["timestamp"] < rows[q - 1]["timestamp"]]
    check(len(every) > 20000 and len(stepped) > 10, "the log: %d rows, %d steps back of the clock"
          % (len(every), len(stepped)))
    lines = cli_all().splitlines()
    got = [json.loads(line) for line in lines]
    check(got == every, "event-log --all: %d rows, want %d" % (len(got), len(every)))
    # (each line is the row as stored: compact, in its keys' order, a job row's text as it is)
    check(lines == [json.dumps(r, separators=(",", ":")) for r in every],
          "event-log --all: the rows' text", next((l for l, r in zip(lines, every)
                                                    if l != json.dumps(r, separators=(",", ":"))), None))
    got = json.loads(cli_all("--format", "json", "--operation-id", "op-17", "--since", str(ts[4000])))
    check(got == paged(operation_id="op-17", since=ts[4000]),
          "event-log --all --format json, filtered: %d rows" % len(got))
    lines = cli_all("--format", "yson", "--event-type", "pools_info").splitlines()
    check(lines[0] == "[" and lines[-1] == "]" and
          len(lines) - 2 == len(paged(event_type="pools_info")) and
          all(l.startswith("{") and l.endswith("};") for l in lines[1:-1]),
          "event-log --all --format yson: a row a line", lines[:3])
    for flag, v in (("--until", "soon"), ("--since", "-5"), ("--limit", "10001")):
        r = cli(flag, v)
        hi = 10000 if flag == "--limit" else 9223372036854775807
        check(r.returncode == 2 and r.stdout == "" and "%s: must be an integer from %d to %d, got "
              "\"%s\"" % (flag, 1 if flag == "--limit" else 0, hi, v) in r.stderr,
              "event-log %s %s: refused" % (flag, v), r.returncode, r.stderr)
    r = cli("--all", "--limit", "5")
    check(r.returncode == 2 and "--all reads every matching row: not with --limit" in r.stderr,
          "event-log --all --limit: refused", r.returncode, r.stderr)

    # what-if's paging: the newest page, then each time the rows below its first row index
    def paging(label):
        upper, pages, got = NEXT, 0, []
        while pages < 20:
            page, first = read(until=MAXTS, upper_row_index=upper, limit=4000)
            want = expected_seqs(upper_row_index=upper, limit=4000)
            check(page == [rows[q] for q in want] and first == (want[0] if want else None),
                  "%s: page %d (below row %d)" % (label, pages + 1, upper))
            pages, got = pages + 1, page + got
            if len(page) < 4000:
                break
            upper = first
        check(pages > 5 and got == paged(), "%s: read %d rows in %d pages" % (label, len(got), pages))
    paging("paging")

    # A stored row without an event type (the store only takes valid JSON) is never returned,
    # nor counted toward a limit: a read filtered by time alone, which hands rows over as their
    # text, parses under the lock a text that does not begin with its timestamp and event type
    # (docs/api.md "Event log"). Paging back over it, as what-if does, still reads every row
    # (a page a row short would end the read there).
    bad = 20000
    cut = json.dumps({"timestamp": rows[bad]["timestamp"], "job_id": "damaged"}, separators=(",", ":"))
    s.stop()   # (written while it runs, the row took up to a second to show)
    db = sqlite3.connect(data + "/poolsched.db", timeout=30)
    db.execute("UPDATE objects SET value = ? WHERE kind = 'event' AND key = ?", (cut, "%020d" % bad))
    db.commit()
    db.close()
    s.start()
    since, until = rows[bad - 20]["timestamp"], rows[bad]["timestamp"]
    check(rows[bad] in expected(since=since, until=until, limit=5),
          "the damaged row is among the newest 5 matches")
    DAMAGED.add(bad)
    got = event_log_rows(s, since=since, until=until, limit=5)
    check(len(got) == 5 and got == expected(since=since, until=until, limit=5),
          "time alone, around a damaged row: %s" % [r["job_id"] for r in got])
    kind = rows[bad]["event_type"]
    got = event_log_rows(s, since=since, until=until, limit=5, event_type=kind)
    check(got == expected(since=since, until=until, limit=5, event_type=kind),
          "by type, around a damaged row: %s" % [r["job_id"] for r in got])
    paging("paging over a damaged row")
    got = [json.loads(line) for line in cli_all().splitlines()]
    check(got == paged(), "event-log --all over a damaged row: %d rows" % len(got))

    # After a restart the blocks' spans are learnt by the reads that list them: here first by a
    # read of one operation's rows (all in the middle of their blocks), whose other rows still
    # count in their block's span.
    # (the damaged row repaired)
    s.stop()
    db = sqlite3.connect(data + "/poolsched.db", timeout=30)
    db.execute("UPDATE objects SET value = ? WHERE kind = 'event' AND key = ?",
               (json.dumps(rows[bad], separators=(",", ":")), "%020d" % bad))
    db.commit()
    db.close()
    DAMAGED.discard(bad)
    s.start()
    same("one operation, after a restart", operation_id="op-mid")
    paging("paging after a restart")
    # A read below a row in the middle of a block sees only the block's older rows: it does not
    # learn the block's span from them (else the block's newer rows would be stepped over)
    s.stop()
    s.start()
    same("below a row in the middle of a block, after a restart", upper_row_index=12000, limit=5)
    same("the newer rows of that block", since=rows[19000]["timestamp"],
         until=rows[19500]["timestamp"])
finally:
    s.stop()
finish()
PY
