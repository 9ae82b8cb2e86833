#!/usr/bin/env bash
# `poolsched what-if` on a real cluster whose event log passed its bound: the replay starts
# from the scheduler's state rows (what_if_wrapped.py). Bounded in time.
# Usage: bash what_if_wrapped.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
exec timeout -k 5 150 python3 "$3/tests/scripts/what_if_wrapped.py" "$1"
