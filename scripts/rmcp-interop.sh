#!/usr/bin/env bash
# Interop with rmcp, the official Rust SDK (pinned in
# scripts/rmcp-interop/Cargo.toml and its Cargo.lock): its client against
# `mcp-compat serve` under every SEP-1699 disconnect policy
# (integration-tests/tests/rmcp_sdk.rs; docs/INTEROP.md has the findings).
#
# usage: scripts/rmcp-interop.sh [TEST-FILTER...]
#
# What it does:
#   1. builds scripts/rmcp-interop (not a workspace member; --locked) into
#      .cache/rmcp-interop/target (git-ignored);
#   2. `cargo build -p mcp-compat`;
#   3. `cargo test -p integration-tests --test rmcp_sdk -- --ignored
#      --test-threads 1`, with RMCP_CLIENT_BIN naming the client just built
#      and MCP_COMPAT_BIN the server.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export CARGO_TARGET_DIR_RMCP=$ROOT/.cache/rmcp-interop/target
CARGO_TARGET_DIR=$CARGO_TARGET_DIR_RMCP cargo build --locked \
  --manifest-path scripts/rmcp-interop/Cargo.toml
cargo build -p mcp-compat
export RMCP_CLIENT_BIN=$CARGO_TARGET_DIR_RMCP/debug/rmcp-interop-client
export MCP_COMPAT_BIN=$ROOT/target/debug/mcp-compat
cargo test -p integration-tests --test rmcp_sdk -- --ignored --test-threads 1 "$@"
