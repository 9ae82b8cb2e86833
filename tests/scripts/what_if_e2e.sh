#!/usr/bin/env bash
# `poolsched what-if` on a real cluster on 127.0.0.1 (scheduler + six node agents, real jobs):
# fidelity of the no-change replay and the direction of a weight change (what_if_e2e.py).
# Bounded in time. Usage: bash what_if_e2e.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
exec timeout -k 5 150 python3 "$3/tests/scripts/what_if_e2e.py" "$1"
