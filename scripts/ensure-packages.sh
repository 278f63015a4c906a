#!/usr/bin/env bash
# Installs the Debian packages the tests start as real counterparts (.ci/apt-packages):
# TLS servers, resolvers... Runs before `npm test`; as root it installs what is
# missing, otherwise it says what to install.
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=$(grep -v '^\s*#' .ci/apt-packages | sed 's/#.*//' | grep -v '^\s*$' | tr '\n' ' ')
missing=""
for p in $pkgs; do dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"; done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "installing Debian packages for the tests:$missing"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends $missing >/dev/null
else
  echo "The tests need these Debian packages:$missing" >&2
  echo "Install them with: sudo apt-get install$missing" >&2
  exit 1
fi
