#!/usr/bin/env bash
# The real-SDK matrix (`mcp-compat matrix --peer ...`, peers/*.toml): the
# TypeScript SDK 1.32.2, the Python SDK 2.3.0 and rmcp 3.11.0's server
# (a cargo build, cached in .cache/peer-rmcp), installed on demand into
# .cache/ by their manifests' install commands, both ways and against each
# other (cli/tests/peers_matrix.rs, its #[ignore]d tests: a subset of the
# cells, chosen to stay within a few minutes).
#
# usage: scripts/peers-matrix.sh [TEST-FILTER...]
#        scripts/peers-matrix.sh --full   (every peer cell of every peer,
#                                          rmcp included: tens of minutes)
# Exit status: the tests' (or the matrix's with --full).
#
# Needs node >= 20 + npm, python3 >= 3.10 (venv), cargo (rmcp).
# Environment: TS_SDK_NPM_FLAGS, PY_SDK_PIP_FLAGS (passed to npm / pip).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
export CARGO_INCREMENTAL=${CARGO_INCREMENTAL:-0}
if [ "${1:-}" = "--full" ]; then
  cargo build -p mcp-compat
  exec ./target/debug/mcp-compat matrix --peers --format markdown
fi
# The installs first, so a test's time is its cells'.
sh peers/ts-sdk/install.sh
sh peers/py-sdk/install.sh
sh peers/rmcp/install.sh
cargo build -p mcp-compat
cargo test -p mcp-compat --test peers_matrix -- --include-ignored --test-threads 1 "$@"
