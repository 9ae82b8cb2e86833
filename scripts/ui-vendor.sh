#!/usr/bin/env bash
# Rebuilds web/dist (the web UI's vendored libraries, embedded in the binary by CMake) from
# web/package-lock.json: `npm ci` into a temporary copy, then the distributed files are copied
# as published (minified upstream; nothing is rebuilt or patched here). Commit web/dist after.
# usage: scripts/ui-vendor.sh      (needs node and npm: scripts/deps.sh)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$root/web/package.json" "$root/web/package-lock.json" "$work/"
(cd "$work" && npm ci --no-audit --no-fund --loglevel=error)
dist=$root/web/dist
rm -rf "$dist" && mkdir -p "$dist"
up=$work/node_modules/uplot
cp "$up/dist/uPlot.iife.min.js" "$up/dist/uPlot.min.css" "$dist/"
cp "$up/LICENSE" "$dist/uPlot.LICENSE.txt"
version=$(node -p "require('$up/package.json').version")
echo "uPlot $version (npm uplot, web/package-lock.json); rebuilt by scripts/ui-vendor.sh" \
    > "$dist/VERSIONS.txt"
echo "web/dist: uPlot $version"
