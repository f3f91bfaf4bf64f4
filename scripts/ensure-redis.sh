#!/usr/bin/env bash
# Makes sure `redis-server` is installed, for the tests that start one
# (test-support's Redis fixture calls this when it finds none on PATH, so
# README's `cargo test --workspace` works on a fresh machine; .ci/run calls
# it up front). Prints the binary's path on success.
#
# Installs the Debian/Ubuntu package `redis-server` with apt-get (as root,
# or through sudo without a password). Anything else: exits 2 saying what
# to install. Concurrent callers are serialised with flock.
set -euo pipefail

found() { command -v redis-server 2>/dev/null; }
if found; then exit 0; fi

install() {
  local sudo=()
  if [ "$(id -u)" != 0 ]; then
    if command -v sudo >/dev/null && sudo -n true 2>/dev/null; then
      sudo=(sudo -n)
    else
      return 1
    fi
  fi
  command -v apt-get >/dev/null || return 1
  "${sudo[@]}" apt-get update -qq >&2 &&
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends redis-server >&2
}

LOCK=${TMPDIR:-/tmp}/mcp-ensure-redis.lock
exec 9>"$LOCK"
flock 9
if found; then exit 0; fi
echo "ensure-redis.sh: redis-server not found; installing the Debian package redis-server" >&2
if install && found; then exit 0; fi
echo "ensure-redis.sh: cannot install redis-server here (needs apt-get as root or passwordless sudo); install Redis >= 6.2 or Valkey and put redis-server on PATH" >&2
exit 2
