#!/usr/bin/env bash
# Interop with the Python SDK (`mcp` on PyPI, pinned in
# scripts/py-interop/requirements.txt): its client against
# `mcp-compat serve` under every SEP-1699 disconnect policy
# (integration-tests/tests/py_sdk.rs; docs/INTEROP.md has the findings).
#
# usage: scripts/py-interop.sh [TEST-FILTER...]
#        (extra arguments go to the test binary, e.g. `after_priming`)
#
# What it does:
#   1. creates a virtualenv in .cache/py-sdk (git-ignored) and installs the
#      pinned requirements into it, unless they are there already;
#   2. `cargo build -p mcp-compat`;
#   3. `cargo test -p integration-tests --test py_sdk -- --ignored
#      --test-threads 1`, with PY_SDK_PYTHON naming the virtualenv's python
#      and MCP_COMPAT_BIN the binary just built.
# Exit status: the tests' (2 when a prerequisite is missing).
#
# Environment:
#   PYTHON             the interpreter that makes the virtualenv (default python3; >= 3.10)
#   PY_SDK_PIP_FLAGS   extra `pip install` flags (e.g. --no-index --find-links DIR)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REQUIREMENTS=$ROOT/scripts/py-interop/requirements.txt
VENV=$ROOT/.cache/py-sdk
PYTHON=${PYTHON:-python3}

die() {
  echo "py-interop.sh: $*" >&2
  exit 2
}

command -v "$PYTHON" >/dev/null 2>&1 || die "'$PYTHON' is required but not on PATH"
"$PYTHON" -c 'import sys; sys.exit(0 if sys.version_info >= (3, 10) else 1)' ||
  die "Python >= 3.10 is required (found $("$PYTHON" --version 2>&1))"

if [ -x "$VENV/bin/python" ] && cmp -s "$REQUIREMENTS" "$VENV/requirements.txt"; then
  echo "Python SDK already installed in ${VENV#"$ROOT"/} ($(cat "$REQUIREMENTS"))"
else
  rm -rf "$VENV"
  "$PYTHON" -m venv "$VENV"
  # shellcheck disable=SC2086
  "$VENV/bin/pip" install --quiet --disable-pip-version-check ${PY_SDK_PIP_FLAGS:-} -r "$REQUIREMENTS"
  cp "$REQUIREMENTS" "$VENV/requirements.txt"
fi

cd "$ROOT"
cargo build -p mcp-compat
export PY_SDK_PYTHON=$VENV/bin/python
export MCP_COMPAT_BIN=$ROOT/target/debug/mcp-compat
cargo test -p integration-tests --test py_sdk -- --ignored --test-threads 1 "$@"
