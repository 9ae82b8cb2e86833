#!/usr/bin/env bash
# Acceptance of `poolsched fair-share`: every vector of tests/data/vectors/fair-share (values from
# the YTsaurus vector HDRF unit tests; tests/data/README.md names their sources), checked by
# tests/tools/check_vectors.py. usage: fair_share_vectors.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?usage: fair_share_vectors.sh BINARY DATA_DIR SOURCE_DIR}
data=${2:?usage: fair_share_vectors.sh BINARY DATA_DIR SOURCE_DIR}
src=${3:?usage: fair_share_vectors.sh BINARY DATA_DIR SOURCE_DIR}
checker="$src/tests/tools/check_vectors.py"
vectors="$data/vectors/fair-share"
[ -x "$bin" ] || { echo "FAIL: no executable binary at $bin"; exit 1; }
[ -f "$checker" ] || { echo "FAIL: no checker at $checker"; exit 1; }
[ -d "$vectors" ] || { echo "FAIL: no vectors in $vectors"; exit 1; }
count=$(find "$vectors" -maxdepth 1 -name '*.json' | wc -l)
[ "$count" -gt 0 ] || { echo "FAIL: $vectors holds no *.json vector"; exit 1; }
echo "checking $count fair-share vectors"
# check_vectors.py prints one line per failed check and 'N passed, M failed'; it exits non-zero
# when anything failed or nothing passed.
exec python3 "$checker" "$bin" "$vectors"
