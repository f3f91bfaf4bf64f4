#!/usr/bin/env sh
# Installs the TypeScript SDK pinned in peers/ts-sdk/package.json into
# .cache/peer-ts-sdk (git-ignored) and links peers/ts-sdk/node_modules to it.
# Idempotent: does nothing when the pinned version is installed with the same
# package.json. Run from the repository root (`mcp-compat matrix` does).
# Environment: TS_SDK_NPM_FLAGS (extra `npm install` flags, e.g. --offline).
set -eu
DIR=peers/ts-sdk
CACHE=.cache/peer-ts-sdk
command -v node >/dev/null 2>&1 || { echo "install.sh: node is required" >&2; exit 2; }
command -v npm >/dev/null 2>&1 || { echo "install.sh: npm is required" >&2; exit 2; }
node -e 'process.exit(Number(process.versions.node.split(".")[0]) >= 20 ? 0 : 1)' ||
  { echo "install.sh: Node >= 20 is required" >&2; exit 2; }
want=$(node -e 'console.log(require(process.argv[1]).dependencies["@modelcontextprotocol/sdk"])' "$PWD/$DIR/package.json")
have=$(node -e 'try { console.log(require(process.argv[1]).version) } catch { console.log("") }' \
  "$PWD/$CACHE/node_modules/@modelcontextprotocol/sdk/package.json")
if [ "$have" != "$want" ] || ! cmp -s "$DIR/package.json" "$CACHE/package.json"; then
  rm -rf "$CACHE"
  mkdir -p "$CACHE"
  cp "$DIR/package.json" "$CACHE/package.json"
  # shellcheck disable=SC2086
  (cd "$CACHE" && npm install --no-audit --no-fund --no-package-lock --silent ${TS_SDK_NPM_FLAGS:-})
fi
if [ "$(readlink "$DIR/node_modules" 2>/dev/null)" != "../../$CACHE/node_modules" ]; then
  rm -rf "$DIR/node_modules"
  ln -s "../../$CACHE/node_modules" "$DIR/node_modules"
fi
