#!/usr/bin/env bash
# The engine's walls (docs/design.md): a file in src/core includes only core headers
# ("core/x.h") and standard headers that touch no OS facility: the C library's pure parts,
# POSIX regex (a pure matcher, tree_template.c) and the compiler's SIMD intrinsics. The build
# already refuses a core file that names another room's header (ps_core's include path holds
# core/ only, CMakeLists.txt); this check also refuses a relative path ("../server/x.h") and an
# OS header (<unistd.h>, <pthread.h>, <time.h>, ...).
# usage: core_includes.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
src=${3:?usage: core_includes.sh BINARY DATA_DIR SOURCE_DIR}
allowed='assert|ctype|emmintrin|errno|float|immintrin|inttypes|limits|math|regex|stdalign|stdarg|stdbool|stddef|stdint|stdio|stdlib|string'
bad=$(grep -nE '^[[:space:]]*#[[:space:]]*include' "$src"/src/core/*.[ch] |
      grep -vE "#[[:space:]]*include[[:space:]]+(\"core/[A-Za-z0-9_]+\.h\"|<($allowed)\.h>)" || true)
if [ -n "$bad" ]; then
  echo "FAIL: src/core includes outside core/ or an OS header (docs/design.md):" >&2
  echo "$bad" >&2
  exit 1
fi
echo "core includes: $(ls "$src"/src/core/*.[ch] | wc -l) files, only core/ and pure standard headers"
