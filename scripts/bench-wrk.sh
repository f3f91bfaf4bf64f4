#!/usr/bin/env bash
# Cross-checks `mcp-compat bench`'s in-process load generator against wrk
# (Debian's `wrk`; not needed by the benchmark itself): the floor, the
# floor behind `mcp-http-edge`'s accept loop (`floor-edge`) and the
# stateless 2026-07-28 JSON tools/call, same connections and duration, so
# the two generators' request rates can be compared (docs/PERFORMANCE.md).
#
#   scripts/bench-wrk.sh [BINARY] [CONNECTIONS] [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/mcp-compat}
conns=${2:-64}
secs=${3:-5}
command -v wrk >/dev/null || { echo "bench-wrk: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

# Not called in `$(...)`: a subshell's `pids+=` would be lost and the
# servers left running after the script.
start() { # VAR NAME ARGS... -> sets VAR to the URL
  local var=$1 name=$2; shift 2
  "$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do
    if grep -q '^listening on ' "$tmp/$name.out" 2>/dev/null; then
      printf -v "$var" '%s' "$(sed -n 's/^listening on //p' "$tmp/$name.out" | head -1)"
      return
    fi
    sleep 0.1
  done
  echo "bench-wrk: $name did not start" >&2; exit 1
}

start floor floor bench --floor-server
start edge edge bench --floor-server --edge
start modern modern serve --bind 127.0.0.1:0 --json-response --max-connections 100000

cat >"$tmp/call.lua" <<'LUA'
wrk.method = "POST"
wrk.headers["Accept"] = "application/json, text/event-stream"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["MCP-Protocol-Version"] = "2026-07-28"
wrk.headers["Mcp-Method"] = "tools/call"
wrk.headers["Mcp-Name"] = "add"
wrk.body = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
LUA

for target in "floor $floor" "floor-edge $edge" "modern-json $modern"; do
  set -- $target
  echo "== wrk: $1 ($conns connections, ${secs}s)"
  wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$tmp/call.lua" "$2" | grep -E 'Requests/sec|50%|99%|Non-2xx'
done
