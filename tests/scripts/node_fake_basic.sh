#!/usr/bin/env bash
# The node agent against a fake scheduler (node_fake.py), group "basic": real job processes on
# 127.0.0.1, bounded in time. Usage: bash node_fake_basic.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
exec timeout -k 5 120 python3 "$3/tests/scripts/node_fake.py" "$1" basic
