#!/usr/bin/env bash
# The rooms' walls (docs/design.md, "Rooms and what each may include"): each file of a room
# includes project headers ("room/x.h") only of the rooms the table allows it. src/core has its
# own, stricter check (core_includes.sh); src/cli may include every room; nothing but main.c and
# src/cli includes cli/.
# usage: room_includes.sh BINARY DATA_DIR SOURCE_DIR
set -euo pipefail
src=${3:?usage: room_includes.sh BINARY DATA_DIR SOURCE_DIR}
# room -> what its files may include: rooms (a trailing /) and single headers
declare -A allowed=(
  [io]="core/ io/"
  [platform]="core/ io/ platform/"
  [sim]="core/ io/ sim/"
  [whatif]="core/ io/ platform/ sim/ whatif/ server/ui_assets.h"
  [server]="core/ io/ platform/ whatif/ server/"
  [node]="core/ io/ platform/ node/"
  [bench]="core/ io/ platform/ sim/ bench/ server/bench_hooks.h"
)
bad=""
files=0
for room in "${!allowed[@]}"; do
  for f in "$src"/src/"$room"/*.[ch]; do
    files=$((files + 1))
    while IFS= read -r line; do
      inc=${line#*\"}
      inc=${inc%%\"*}
      ok=0
      for a in ${allowed[$room]}; do
        case $a in
          */) [[ $inc == "$a"* ]] && ok=1 ;;
          *) [[ $inc == "$a" ]] && ok=1 ;;
        esac
      done
      [ $ok -eq 1 ] || bad+="${f#"$src"/}: includes \"$inc\" (room $room may include: ${allowed[$room]})"$'\n'
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$f" || true)
  done
done
if [ -n "$bad" ]; then
  echo "FAIL: an include that crosses a room's wall (docs/design.md):" >&2
  printf '%s' "$bad" >&2
  exit 1
fi
echo "room includes: $files files in ${#allowed[@]} rooms, each only what docs/design.md allows"
