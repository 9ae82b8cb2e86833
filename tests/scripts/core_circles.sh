#!/usr/bin/env bash
# Core is layered (docs/design.md, "Layers inside core"): a file of src/core does not call up
# into a file that calls it, directly or through others. The graph is the linker's: for each
# object of libps_core.a (built next to BINARY), the core objects that define what it uses
# (nm). A circle of two or more files fails unless it is one module split over files that share
# a private header, listed below exactly (a file joining one of them fails too).
# usage: core_circles.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?usage: core_circles.sh BINARY DATA_DIR SOURCE_DIR}
lib=$(dirname "$bin")/libps_core.a
[ -f "$lib" ] || { echo "FAIL: $lib not found (built with poolsched)" >&2; exit 1; }
nm -A "$lib" | python3 -c '
import collections, sys
MODULES = [   # one module each, over a private header
    "isa plf plf_compress plf_ops plf_sum plf_sum_points",     # plf.h over plf_impl.h, isa.c picks kernels
    "fair_share fs_functions fs_guarantees fs_integral",       # fair_share.h over fs_internal.h
    "pool_tree pool_tree_doc tree_nodes tree_ops user_pools",  # pool_tree.h over pool_tree_impl.h
]
allowed = {frozenset(m.split()) for m in MODULES}
defs, uses = collections.defaultdict(set), collections.defaultdict(set)
for line in sys.stdin:
    parts = line.split(":", 2)
    if len(parts) < 3 or not parts[1].endswith(".c.o"):
        continue
    f, sym = parts[1][:-4], parts[2].split()
    if len(sym) == 3 and sym[1] in "TDRBC":
        defs[f].add(sym[2])
    elif len(sym) == 2 and sym[0] == "U":
        uses[f].add(sym[1])
owner = {s: f for f, ss in defs.items() for s in ss}
files = set(defs) | set(uses)
edges = {f: collections.defaultdict(list) for f in files}
for f in files:
    for s in sorted(uses[f]):
        if s in owner and owner[s] != f:
            edges[f][owner[s]].append(s)
index, low, stack, on, circles = {}, {}, [], set(), []
def visit(v):   # Tarjan: the strongly connected components
    index[v] = low[v] = len(index)
    stack.append(v); on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = set()
        while True:
            w = stack.pop(); on.discard(w); comp.add(w)
            if w == v:
                break
        if len(comp) > 1:
            circles.append(frozenset(comp))
sys.setrecursionlimit(10000)
for v in sorted(files):
    if v not in index:
        visit(v)
bad = 0
for c in circles:
    if c in allowed:
        print("module over a private header: %s" % " ".join(sorted(c)))
        continue
    bad += 1
    print("FAIL: a circle of %d files in src/core: %s" % (len(c), " ".join(sorted(c))), file=sys.stderr)
    for a in sorted(c):
        for b, names in sorted(edges[a].items()):
            if b in c:
                print("  %s.c -> %s.c (%s)" % (a, b, ", ".join(names[:4])), file=sys.stderr)
if len(files) < 50:
    print("FAIL: only %d objects in the library" % len(files), file=sys.stderr); bad += 1
print("core layers: %d files, %d circles outside a module" % (len(files), bad))
sys.exit(1 if bad else 0)
'
