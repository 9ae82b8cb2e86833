#!/usr/bin/env bash
# Rebuilds web/dist (the web UI's vendored libraries, embedded in the binary by CMake) from
# web/package-lock.json: `npm ci` into a temporary copy, then uPlot's distributed files are
# copied as published and the YTsaurus wrapper is bundled for the browser with esbuild (pinned
# in the same lock). Commit web/dist after.
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
# The official YTsaurus JavaScript wrapper is CommonJS on axios: bundled for the browser (axios's
# XMLHttpRequest adapter) into one script that defines the global ytWrapper.
yw=$work/node_modules/@ytsaurus/javascript-wrapper
echo "module.exports = require('@ytsaurus/javascript-wrapper');" > "$work/entry.js"
"$work/node_modules/.bin/esbuild" "$work/entry.js" --bundle --format=iife --global-name=ytWrapper \
    --platform=browser --minify --legal-comments=none --log-level=warning \
    --outfile="$dist/yt-wrapper.min.js"
cp "$yw/LICENSE" "$dist/yt-wrapper.LICENSE.txt"
cp "$work/node_modules/axios/LICENSE" "$dist/axios.LICENSE.txt"
v() { node -p "require('$work/node_modules/$1/package.json').version"; }
{
  echo "uPlot $(v uplot) (npm uplot): uPlot.iife.min.js, uPlot.min.css as published"
  echo "@ytsaurus/javascript-wrapper $(v @ytsaurus/javascript-wrapper) with axios $(v axios):" \
       "yt-wrapper.min.js, bundled by esbuild $(v esbuild)"
  echo "versions fixed by web/package-lock.json; rebuilt by scripts/ui-vendor.sh"
} > "$dist/VERSIONS.txt"
cat "$dist/VERSIONS.txt"
