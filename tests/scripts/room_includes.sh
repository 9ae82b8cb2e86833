#!/usr/bin/env bash
# The rooms' walls (docs/design.md, "Rooms and what each may include"): each file of a room
# includes project headers ("room/x.h") only of the rooms the table allows it. src/core has its
# own, stricter check (core_includes.sh); src/cli may include every room; nothing but main.c and
# src/cli includes cli/. Inside src/server, the API faces, the engine loop, the model and the
# store and journal keep the walls of the table below, and the store's backends stay behind
# store.h.
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
# Walls inside src/server (docs/design.md, "The scheduler service's rooms"). Each group is
# file globs under src/server; it may not include the headers listed for it.
declare -A group=(
  [faces]="api.c api_*.c ui.c long_poll.c"
  [loop]="engine_loop.c"
  [model]="service.c svc_jobs.c op_*.c sched_host.c pool_gauges.c"
  [store]="store*.c journal.c persist*.c"
)
declare -A forbidden=(
  # the store is reached through persist.h, journal.h and store_mirror.h
  [faces]="server/store.h server/store_backend.h server/store_sqlite.h"
  [loop]="server/store.h server/store_backend.h server/store_sqlite.h"
  # the model and the store do not call up into the faces
  [model]="server/store.h server/store_backend.h server/store_sqlite.h server/api.h server/api_cypress.h server/api_cypress_impl.h server/heartbeat.h"
  [store]="server/api.h server/api_cypress.h server/api_cypress_impl.h server/heartbeat.h"
)
# headers that only these files (under src/server) may include: the store's one interface is
# store.h; its backends' own headers stay inside it
declare -A only_from=(
  [server/store_backend.h]="store.c store_sqlite.c store_pg.c"
  [server/store_sqlite.h]="store_sqlite.c"
)
includes_of() { grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$1" | sed -E 's/^[^"]*"([^"]*)".*/\1/' || true; }
for g in "${!group[@]}"; do
  for pat in ${group[$g]}; do
    for f in "$src"/src/server/$pat; do
      [ -e "$f" ] || continue
      for inc in $(includes_of "$f"); do
        for no in ${forbidden[$g]}; do
          if [[ $inc == "$no" ]]; then
            bad+="${f#"$src"/}: includes \"$inc\" (server room $g may not: ${forbidden[$g]})"$'\n'
          fi
        done
      done
    done
  done
done
while IFS= read -r f; do
  for inc in $(includes_of "$f"); do
    [ -n "${only_from[$inc]+x}" ] || continue
    ok=0
    for name in ${only_from[$inc]}; do
      if [[ $f == "$src/src/server/$name" ]]; then ok=1; fi
    done
    [ $ok -eq 1 ] || bad+="${f#"$src"/}: includes \"$inc\" (only ${only_from[$inc]} may)"$'\n'
  done
done < <(find "$src/src" -name '*.[ch]')
if [ -n "$bad" ]; then
  echo "FAIL: an include that crosses a room's wall (docs/design.md):" >&2
  printf '%s' "$bad" >&2
  exit 1
fi
echo "room includes: $files files in ${#allowed[@]} rooms and ${#group[@]} server rooms, each only what docs/design.md allows"
