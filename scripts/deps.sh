#!/usr/bin/env bash
# Installs the Debian packages poolsched needs, and only those that are missing.
# Why each one is there: docs/dependencies.md.
set -euo pipefail
packages=(build-essential cmake pkg-config clang libclang-rt-14-dev python3
          libjansson-dev libcmocka-dev libsqlite3-dev libmicrohttpd-dev libcurl4-openssl-dev curl
          libpq-dev)
# The PostgreSQL store's tests (tests/scripts/lib/pg_cluster.bash) and `make run-ha` start a
# throwaway cluster with Debian's PostgreSQL 15 (initdb, pg_ctl, psql).
packages+=(postgresql-15)
# The YTsaurus-face test (tests/scripts/yt_js_wrapper.sh) runs the official JavaScript wrapper on
# Node.js: Debian's nodejs and npm, unless a node with npm is already there (an image may ship
# its own Node.js build, whose package already holds npm and conflicts with Debian's npm).
command -v npm >/dev/null 2>&1 || packages+=(nodejs npm)
# The web UI's browser test (tests/scripts/ui_browser.sh) drives Debian's headless Chromium.
packages+=(chromium)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing missing packages: ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
