#!/usr/bin/env bash
# A real cluster on 127.0.0.1 (poolsched scheduler + poolsched node, real jobs), group "cglock" of
# node_e2e.py: an agent with the same node id started for another scheduler leaves an idle
# agent's cgroups alone, so its next jobs run (docs/faults.md). Skipped (77) without usable
# cgroups (the agent's log says "no usable cgroups"). Bounded in time.
# Usage: bash node_e2e_cglock.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
exec timeout -k 5 90 python3 "$3/tests/scripts/node_e2e.py" "$1" cglock
