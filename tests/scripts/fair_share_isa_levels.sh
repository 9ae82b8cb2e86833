#!/usr/bin/env bash
# The fair share update gives the same bits at every vector level: `bench fair-share` checksums
# (every element's fair share after the update) at the portable level (--isa base, and
# POOLSCHED_ISA=base for the whole process) against each wider level this CPU has; a level it
# lacks is reported as skipped. usage: fair_share_isa_levels.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
bin=${1:?usage: fair_share_isa_levels.sh BINARY DATA_DIR SOURCE_DIR}
. "$(dirname "${BASH_SOURCE[0]}")/lib/check.bash"
field() { python3 -c 'import json,sys; r=json.load(sys.stdin); print(r["checksum"], r["isa"]["used"], r["isa"]["detected"])'; }

read -r _ _ detected < <("$bin" bench fair-share --seed 1 --runs 1 | field)
for args in "--seed 1" "--seed 2 --improved"; do
  # shellcheck disable=SC2086
  read -r want used _ < <("$bin" bench fair-share $args --runs 1 --isa base | field)
  [ "$used" = base ] || fail "--isa base used $used"
  # shellcheck disable=SC2086
  read -r got used _ < <(POOLSCHED_ISA=base "$bin" bench fair-share $args --runs 1 | field)
  [ "$used" = base ] || fail "POOLSCHED_ISA=base used $used"
  [ "$got" = "$want" ] || fail "$args: POOLSCHED_ISA=base gives $got, --isa base $want"
  for level in avx2 avx512; do
    case "$detected:$level" in
      base:*|avx2:avx512) echo "SKIPPED $args at $level: this process's level is $detected (CPU or POOLSCHED_ISA)"; continue ;;
    esac
    # shellcheck disable=SC2086
    read -r got used _ < <("$bin" bench fair-share $args --runs 1 --isa $level | field)
    [ "$used" = "$level" ] || fail "--isa $level used $used"
    [ "$got" = "$want" ] || fail "$args: $level gives checksum $got, base $want"
    echo "ok $args: $level = base = $want"
  done
done
