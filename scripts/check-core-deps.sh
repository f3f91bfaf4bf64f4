#!/usr/bin/env bash
# transport-core is sans-IO: no async runtime, HTTP server or HTTP client may
# appear among its normal (non-dev, non-build) dependencies, direct or not.
set -euo pipefail
cd "$(dirname "$0")/.."
tree=$(cargo tree -e normal -p mcp-transport-core --prefix none --format '{p}')
bad=$(printf '%s\n' "$tree" | awk '{print $1}' | grep -E '^(tokio|tokio-util|axum|axum-core|reqwest|hyper|hyper-util|tower|mio)$' | sort -u || true)
if [ -n "$bad" ]; then
  echo "check-core-deps: mcp-transport-core must stay sans-IO, but its normal dependencies include:" >&2
  printf '  %s\n' $bad >&2
  exit 1
fi
echo "check-core-deps: mcp-transport-core has no runtime or HTTP dependencies"
