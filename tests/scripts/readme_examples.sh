#!/usr/bin/env bash
# The README's examples, run: so that text and behaviour cannot part (issue 24). Every fenced
# block of README.md is one of
#   an example   lines "$ COMMAND" (a command continues on the next lines after a trailing "\"
#                or through a here-document), each followed by the output it shows. The block
#                runs in one bash, in a fresh temporary directory holding build/poolsched (the
#                binary under test) and examples/ (the repository's); each command's stdout and
#                stderr together must equal the lines shown, exactly. A command that exits
#                non-zero must be followed by "$ echo $?" showing the code. The one
#                non-deterministic part allowed: the path in $tmp (a block's `tmp=$(mktemp -d)`)
#                is shown as the text $tmp.
#                After <!-- doctest: cluster --> the block runs against a local cluster this
#                test starts as `make run` does (scripts/local-cluster.sh, its example pools and
#                operations), with POOLSCHED_PROXY and POOLSCHED_DATA_DIR set as it prints.
#   a synopsis   an sh block without "$ " lines: command forms, not run; each
#                `build/poolsched COMMAND ...` must name a command and only options its --help
#                lists, each `make TARGET` a target of the Makefile; a bare `poolsched` fails
#                (the binary is build/poolsched).
#   skipped      after <!-- doctest: skip: REASON --> (a reason is required): not checked.
# Any other block fails the test. usage: readme_examples.sh BINARY DATA_DIR SOURCE_DIR
source "${3:?usage: readme_examples.sh BINARY DATA_DIR SOURCE_DIR}/tests/scripts/lib/py_test.bash"
root=$(cd "$3" && pwd)
test_cleanup() {
  if [ -f "$work/cluster/run/scheduler.pid" ]; then
    RUN_DIR=$work/cluster/run bash "$src/scripts/local-cluster.sh" stop > /dev/null 2>&1 || true
  fi
}
py_test 600 "$@" "$root" "${README:-$root/README.md}" <<'PY'
import os, re, socket, subprocess, sys
from checks import check, finish

bin, work, src, readme = sys.argv[1:5]

lines = open(readme).read().split("\n")

# ---- the fenced blocks, with the marker on the line before ----------------------------------
blocks = []
i = 0
while i < len(lines):
    m = re.match(r"^(\s*)```(\w*)\s*$", lines[i])
    if not m:
        i += 1
        continue
    indent, lang, start = m.group(1), m.group(2), i
    j = i + 1
    while j < len(lines) and lines[j].strip() != "```":
        j += 1
    body = [l[len(indent):] if l.startswith(indent) else l.lstrip() for l in lines[i + 1:j]]
    k = start - 1
    while k >= 0 and lines[k].strip() == "":
        k -= 1
    marker = ""
    mm = re.match(r"^\s*<!-- doctest: (.*?) -->\s*$", lines[k]) if k >= 0 else None
    if mm:
        marker = mm.group(1).strip()
    blocks.append({"line": start + 1, "lang": lang, "body": body, "marker": marker})
    i = j + 1

# ---- examples ---------------------------------------------------------------------------------
def parse_example(body):
    """[(command, [shown output lines])]"""
    out, k = [], 0
    while k < len(body):
        l = body[k]
        if not l.startswith("$ "):
            raise ValueError("line %r is neither a command nor the output of one" % l)
        cmd = [l[2:]]
        k += 1
        here = re.search(r"<<-?\s*'?\"?(\w+)'?\"?", l)
        if here:
            end = here.group(1)
            while k < len(body) and body[k] != end:
                cmd.append(body[k]); k += 1
            cmd.append(body[k] if k < len(body) else ""); k += 1
        while cmd[-1].endswith("\\") and k < len(body):
            cmd.append(body[k]); k += 1
        shown = []
        while k < len(body) and not body[k].startswith("$ "):
            shown.append(body[k]); k += 1
        out.append(("\n".join(cmd), shown))
    return out

cluster_env = None
def start_cluster():
    global cluster_env
    if cluster_env is not None:
        return cluster_env
    s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
    run = os.path.join(work, "cluster", "run")
    os.makedirs(os.path.dirname(run))
    os.chmod(os.path.dirname(run), 0o755)
    env = dict(os.environ, POOLSCHED_PORT=str(port), RUN_DIR=run, NODE_PREFIX="doc%d-" % port)
    r = subprocess.run(["bash", os.path.join(src, "scripts/local-cluster.sh"), "start", bin],
                       cwd=os.path.join(work, "cluster"), env=env, capture_output=True,
                       text=True, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("local cluster did not start: " + r.stdout + r.stderr)
    cluster_env = {"POOLSCHED_PROXY": "127.0.0.1:%d" % port,
                   "POOLSCHED_DATA_DIR": os.path.join(run, "data")}
    return cluster_env

def run_example(b, n):
    cmds = parse_example(b["body"])
    d = os.path.join(work, "block%d" % n)
    os.makedirs(os.path.join(d, "build"))
    os.symlink(bin, os.path.join(d, "build", "poolsched"))
    os.symlink(os.path.join(src, "examples"), os.path.join(d, "examples"))
    env = dict(os.environ)
    for k in ("POOLSCHED_PROXY", "POOLSCHED_DATA_DIR", "POOLSCHED_TOKEN"):
        env.pop(k, None)
    env["TMPDIR"] = os.path.join(d, "tmp")
    os.makedirs(env["TMPDIR"])
    if b["marker"] == "cluster":
        env.update(start_cluster())
    script = ["exec 2>&1", "__rc=0", "tmp="]
    for c, (cmd, _) in enumerate(cmds):
        script += ["echo '@@doctest-begin %d'" % c, "(exit $__rc); " + cmd if "\n" not in cmd
                   else "(exit $__rc)\n" + cmd, "__rc=$?",
                   "echo; echo \"@@doctest-end %d $__rc $tmp\"" % c]
    r = subprocess.run(["bash", "-c", "\n".join(script)], cwd=d, env=env, capture_output=True,
                       text=True, timeout=300)
    text = r.stdout
    for c, (cmd, shown) in enumerate(cmds):
        m = re.search(r"@@doctest-begin %d\n(.*?)\n@@doctest-end %d (\d+) ?([^\n]*)\n" % (c, c),
                      text, re.S)
        where = "README.md:%d: $ %s" % (b["line"], cmd.split("\n")[0])
        if not m:
            check(False, "%s: did not run to its end:\n%s" % (where, text[-2000:]))
            return
        got, rc, tmpval = m.group(1), int(m.group(2)), m.group(3)
        if tmpval:
            got = got.replace(tmpval, "$tmp")
        got_lines = got.split("\n") if got else []
        want = list(shown)
        while want and want[-1] == "":
            want.pop()
        while got_lines and got_lines[-1] == "":
            got_lines.pop()
        if got_lines != want:
            check(False, "%s: the output differs from the README's\n--- shown\n%s\n--- got\n%s"
                 % (where, "\n".join(want), "\n".join(got_lines)))
        nxt = cmds[c + 1][0] if c + 1 < len(cmds) else ""
        if rc != 0 and nxt.strip() != "echo $?":
            check(False, "%s: exit code %d, not shown by a following \"$ echo $?\"" % (where, rc))

# ---- synopses ---------------------------------------------------------------------------------
helps = {}
def help_of(cmd):
    if cmd not in helps:
        r = subprocess.run([bin, cmd, "--help"], capture_output=True, text=True, timeout=30)
        helps[cmd] = r.stdout + r.stderr if r.returncode == 0 else None
    return helps[cmd]

targets = set(re.findall(r"^([a-z][\w-]*):", open(os.path.join(src, "Makefile")).read(), re.M))

def check_synopsis(b):
    text = "\n".join(b["body"]).replace("\\\n", " ")
    for n, l in enumerate(text.split("\n")):
        l = l.split("  #")[0].strip()
        if not l or l.startswith("#"):
            continue
        where = "README.md:%d (synopsis): %s" % (b["line"], l)
        words = l.split()
        if words[0] == "poolsched":
            check(False, where + ": the binary is build/poolsched")
        elif words[0] == "build/poolsched":
            if len(words) < 2 or words[1].startswith("-"):
                continue
            h = help_of(words[1])
            if h is None:
                check(False, "%s: \"%s\" is not a command (no --help)" % (where, words[1]))
                continue
            for opt in re.findall(r"(?<![\w-])--[a-z][\w-]*", l):
                if opt not in h:
                    check(False, "%s: %s is not an option of %s (its --help)" % (where, opt, words[1]))
        elif words[0] == "make":
            for t in words[1:]:
                if "=" not in t and t not in targets:
                    check(False, "%s: make %s is no target of the Makefile" % (where, t))
        elif words[0] in ("export", "rm"):
            continue
        else:
            check(False, where + ": a synopsis line must be build/poolsched, make or export")

# ---- every block ------------------------------------------------------------------------------
examples = 0
for n, b in enumerate(blocks):
    mk = b["marker"]
    if mk.startswith("skip"):
        if not re.match(r"skip: \S", mk):
            check(False, "README.md:%d: a skipped block needs a reason (<!-- doctest: skip: REASON -->)"
                 % b["line"])
        continue
    if any(l.startswith("$ ") for l in b["body"]):
        examples += 1
        try:
            run_example(b, n)
        except (ValueError, RuntimeError, subprocess.TimeoutExpired) as e:
            check(False, "README.md:%d: %s" % (b["line"], e))
    elif b["lang"] in ("sh", "bash") and mk == "":
        check_synopsis(b)
    else:
        check(False, "README.md:%d: a block that is neither an example (\"$ \" lines), an sh synopsis, "
             "nor marked <!-- doctest: skip: REASON -->" % b["line"])
skipped = sum(1 for b in blocks if b["marker"].startswith("skip"))
print("%d blocks: %d examples run, %d skipped" % (len(blocks), examples, skipped))
finish()
PY
