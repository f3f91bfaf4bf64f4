#!/usr/bin/env sh
# Builds the rmcp client and server adapters (peers/rmcp, rmcp pinned by its Cargo.lock)
# into .cache/peer-rmcp (git-ignored). Idempotent: cargo rebuilds only what
# changed. Run from the repository root (`mcp-compat matrix` does).
set -eu
command -v cargo >/dev/null 2>&1 || { echo "install.sh: cargo is required" >&2; exit 2; }
CARGO_TARGET_DIR=.cache/peer-rmcp CARGO_INCREMENTAL=0 \
  cargo build --quiet --locked --manifest-path peers/rmcp/Cargo.toml
