#!/usr/bin/env bash
# Interop with the TypeScript SDK (@modelcontextprotocol/sdk, pinned in
# scripts/ts-interop/package.json), both ways: our client against an SDK
# server, the SDK client against `mcp-compat serve`, and 2025-11-25 tasks
# both ways (tasks-client.mjs, tasks-server.mjs)
# (integration-tests/tests/ts_sdk.rs; docs/INTEROP.md has the findings).
#
# usage: scripts/ts-interop.sh [TEST-FILTER...]
#        (extra arguments go to the test binary, e.g. `ours_vs_ts_server`)
#
# What it does:
#   1. installs the SDK with npm into .cache/ts-sdk (git-ignored, its own
#      folder: independent of the conformance suite's .cache/peers), unless
#      the pinned version is there already with the same package.json, and
#      links scripts/ts-interop/node_modules to .cache/ts-sdk/node_modules
#      (ignored by scripts/ts-interop/.gitignore) so the scripts' imports
#      resolve;
#   2. `cargo build -p mcp-compat` (the TS client's server);
#   3. `cargo test -p integration-tests --test ts_sdk -- --ignored
#      --test-threads 1`, with MCP_COMPAT_BIN naming the binary just built.
# Exit status: the tests' (2 when a prerequisite is missing).
#
# Environment:
#   TS_SDK_NPM_FLAGS   extra `npm install` flags (e.g. --offline)
#   NODE               the node binary the tests run (default: node)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SCRIPTS=$ROOT/scripts/ts-interop
CACHE=$ROOT/.cache/ts-sdk
SDK_PACKAGE=@modelcontextprotocol/sdk

die() {
  echo "ts-interop.sh: $*" >&2
  exit 2
}

need() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' is required but not on PATH"
}

# The version pinned in scripts/ts-interop/package.json.
pinned_version() {
  node -e 'console.log(require(process.argv[1]).dependencies[process.argv[2]])' \
    "$SCRIPTS/package.json" "$SDK_PACKAGE"
}

installed_version() {
  node -e 'try { console.log(require(process.argv[1]).version) } catch { console.log("") }' \
    "$CACHE/node_modules/$SDK_PACKAGE/package.json"
}

install_sdk() {
  need node
  need npm
  node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
    die "Node >= 20 is required (found $(node --version))"
  local want
  want=$(pinned_version)
  if [ "$(installed_version)" = "$want" ] && cmp -s "$SCRIPTS/package.json" "$CACHE/package.json"; then
    echo "TypeScript SDK $want already installed in ${CACHE#"$ROOT"/}"
  else
    echo "installing $SDK_PACKAGE@$want into ${CACHE#"$ROOT"/}"
    mkdir -p "$CACHE"
    cp "$SCRIPTS/package.json" "$CACHE/package.json"
    # shellcheck disable=SC2086 # TS_SDK_NPM_FLAGS is a list of flags
    npm install --prefix "$CACHE" --no-audit --no-fund ${TS_SDK_NPM_FLAGS:-}
    [ "$(installed_version)" = "$want" ] ||
      die "npm did not install $SDK_PACKAGE@$want into $CACHE"
  fi
  # The scripts import the SDK by name: resolve it through a link.
  local link=$SCRIPTS/node_modules
  if [ -e "$link" ] && [ ! -L "$link" ]; then
    die "$link exists and is not a link; remove it (the SDK lives in $CACHE)"
  fi
  ln -sfn ../../.cache/ts-sdk/node_modules "$link"
}

main() {
  case ${1:-} in
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
  esac
  need cargo
  install_sdk
  (cd "$ROOT" && cargo build -p mcp-compat)
  local bin=${CARGO_TARGET_DIR:-$ROOT/target}/debug/mcp-compat
  case $bin in /*) ;; *) bin=$ROOT/$bin ;; esac
  [ -x "$bin" ] || die "$bin was not built"
  local status=0
  (cd "$ROOT" && MCP_COMPAT_BIN=$bin cargo test -p integration-tests --test ts_sdk -- \
    --ignored --test-threads 1 "$@") || status=$?
  if [ "$status" -eq 0 ]; then
    echo "ts-interop: every TypeScript SDK interop test passed"
  else
    echo "ts-interop: TypeScript SDK interop tests failed (exit $status)" >&2
  fi
  exit "$status"
}

main "$@"
