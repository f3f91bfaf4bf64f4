#!/usr/bin/env sh
# Installs the Python SDK pinned in peers/py-sdk/requirements.txt into a
# virtualenv in .cache/py-sdk (git-ignored; the same one scripts/py-interop.sh
# uses, same pin). Idempotent: nothing to do when the virtualenv holds the
# same requirements. Run from the repository root (`mcp-compat matrix` does).
# Environment: PYTHON (default python3, >= 3.10), PY_SDK_PIP_FLAGS.
set -eu
REQ=peers/py-sdk/requirements.txt
VENV=.cache/py-sdk
PYTHON=${PYTHON:-python3}
command -v "$PYTHON" >/dev/null 2>&1 || { echo "install.sh: $PYTHON is required" >&2; exit 2; }
if [ -x "$VENV/bin/python" ] && cmp -s "$REQ" "$VENV/requirements.txt"; then
  exit 0
fi
rm -rf "$VENV"
"$PYTHON" -m venv "$VENV"
# shellcheck disable=SC2086
"$VENV/bin/pip" install --quiet --disable-pip-version-check ${PY_SDK_PIP_FLAGS:-} -r "$REQ"
cp "$REQ" "$VENV/requirements.txt"
