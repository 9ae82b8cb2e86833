#!/usr/bin/env bash
# Runs every fuzz target in BUILD_DIR for SECONDS each; a crash fails the run.
set -euo pipefail
build_dir=$1
seconds=$2
status=0
for target in "$build_dir"/fuzz_*; do
  [ -x "$target" ] || continue
  name=$(basename "$target")
  corpus_src="fuzz/corpus/${name#fuzz_}"
  work=$(mktemp -d)
  [ -d "$corpus_src" ] && cp -r "$corpus_src"/. "$work"/
  echo "fuzzing $name for ${seconds}s"
  if ! "$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=0 "$work" > "$work.log" 2>&1; then
    echo "FUZZ FAILURE in $name:"; tail -40 "$work.log"; status=1
  else
    grep -E "^Done|#[0-9]+.*DONE" "$work.log" | tail -1 || true
  fi
  rm -rf "$work" "$work.log"
done
exit $status
