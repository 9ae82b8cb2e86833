#!/usr/bin/env bash
# Long-poll heartbeats on a real cluster at the default periods (node_longpoll.py). Bounded in
# time. Usage: bash node_e2e_longpoll.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
exec timeout -k 5 150 python3 "$3/tests/scripts/node_longpoll.py" "$1"
