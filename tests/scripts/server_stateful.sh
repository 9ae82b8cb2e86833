#!/usr/bin/env bash
# The stateful random test of the scheduler service (server_stateful.py: random pools,
# operations, nodes, jobs and restarts against a model, invariants after every step), short:
# a few hundred steps for each of two fixed seeds. The long form is `make stateful STEPS=N`.
# PS_STATEFUL_SEEDS and PS_STATEFUL_STEPS override the defaults (a failing seed is replayed
# with `server_stateful.py BINARY --seed S --steps N`).
# usage: server_stateful.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?usage: server_stateful.sh BINARY DATA_DIR SOURCE_DIR}
src=${3:?}
for seed in ${PS_STATEFUL_SEEDS:-1 2}; do
    python3 "$src/tests/scripts/server_stateful.py" "$bin" --seed "$seed" \
        --steps "${PS_STATEFUL_STEPS:-400}" --restart-every 100
done
