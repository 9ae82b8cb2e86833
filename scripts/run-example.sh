#!/usr/bin/env bash
# `make run`: computes the fair share of the example pool tree and prints it as a table.
# (Later this starts a local cluster: scheduler, nodes and example operations.)
set -euo pipefail
bin=${1:-build/poolsched}
example=examples/fair-share/example.json
echo "== poolsched fair-share $example --format table"
"$bin" fair-share "$example" --format table
echo
echo "The same as JSON (the snapshot contract of docs/formats): $bin fair-share $example"
echo "Edit $example (weights, guarantees, demands) and run 'make run' again to see the effect."
