#!/usr/bin/env bash
# Acceptance of `poolsched fair-share`: every vector of shared/vectors/fair-share (values from the
# YTsaurus vector HDRF unit tests), checked by shared/tools/check-vectors exactly as the
# acceptance run does. usage: fair_share_vectors.sh BINARY SHARED_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?usage: fair_share_vectors.sh BINARY SHARED_DIR SOURCE_DIR}
shared=${2:?usage: fair_share_vectors.sh BINARY SHARED_DIR SOURCE_DIR}
checker="$shared/tools/check-vectors"
vectors="$shared/vectors/fair-share"
[ -x "$bin" ] || { echo "FAIL: no executable binary at $bin"; exit 1; }
[ -f "$checker" ] || { echo "FAIL: no checker at $checker"; exit 1; }
[ -d "$vectors" ] || { echo "FAIL: no vectors in $vectors"; exit 1; }
count=$(find "$vectors" -maxdepth 1 -name '*.json' | wc -l)
[ "$count" -gt 0 ] || { echo "FAIL: $vectors holds no *.json vector"; exit 1; }
echo "checking $count fair-share vectors"
# check-vectors prints one line per failed check and 'N passed, M failed'; it exits non-zero
# when anything failed or nothing passed.
exec python3 "$checker" "$bin" "$vectors"
