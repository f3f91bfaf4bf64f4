#!/usr/bin/env bash
# Server instructions a request over a real socket, counted by callgrind:
# `scripts/instructions.sh` drives the servers in process, with no
# socket, so hyper's parsing and writing of each request and response,
# the edge's connection loop and tokio's I/O are outside its counts; a
# change in how a response is framed (chunked or with a length, one body
# frame or two) shows here and not there (docs/PERFORMANCE.md, session 22).
#
#   scripts/wire-instructions.sh [BINARY...]   (default: target/release/mcp-compat)
#
# For each binary and case, the server runs under callgrind twice, serving
# N1 and then N2 requests on one keep-alive connection from a small Python
# client (standard library only) that checks every answer; the figure is
# (count(N2) - count(N1)) / (N2 - N1): the server's whole work for one
# request, its start-up and shutdown taken out. A count, not a timing:
# the same binary gives the same figure on any load (a few hundred
# instructions apart between runs, from hash seeds and timer wake-ups).
# Cases: floor (`bench --floor-server`), modern-json (2026-07-28
# stateless, `serve --json-response`), legacy-json and legacy-sse (a
# 2025-11-25 session, `serve --json-response` and `serve`).
set -euo pipefail
cd "$(dirname "$0")/.."

bins=("$@")
[[ ${#bins[@]} -gt 0 ]] || bins=(target/release/mcp-compat)
n1=${WIRE_N1:-200}
n2=${WIRE_N2:-1200}
for tool in valgrind python3; do
  command -v "$tool" >/dev/null || {
    echo "wire-instructions: $tool is not installed" >&2
    exit 1
  }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/drive.py" <<'PY'
import http.client, json, sys
port, case, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
c = http.client.HTTPConnection("127.0.0.1", port)
base = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
def post(body, extra):
    h = dict(base); h.update(extra)
    c.request("POST", "/mcp", json.dumps(body), h)
    r = c.getresponse()
    return r, r.read()
add = {"name": "add", "arguments": {"a": 2, "b": 3}}
if case in ("floor", "modern-json"):
    h = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "add"}
    params = dict(add, _meta={"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                              "io.modelcontextprotocol/clientCapabilities": {}})
else:
    r, _ = post({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "wire-instructions", "version": "1"}}}, {})
    h = {"Mcp-Session-Id": r.getheader("mcp-session-id"), "MCP-Protocol-Version": "2025-11-25"}
    r, _ = post({"jsonrpc": "2.0", "method": "notifications/initialized"}, h)
    assert r.status == 202, r.status
    params = add
for i in range(n):
    r, data = post({"jsonrpc": "2.0", "id": i + 1, "method": "tools/call", "params": params}, h)
    if r.status != 200 or b'"text":"5"' not in data:
        sys.exit("%s: unexpected answer %d: %r" % (case, r.status, data))
PY

count() { # BINARY CASE N -> instructions of the whole server run
  local bin=$1 case=$2 n=$3 args
  case $case in
    floor) args=(bench --floor-server) ;;
    modern-json | legacy-json) args=(serve --json-response) ;;
    legacy-sse) args=(serve) ;;
  esac
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "${args[@]}" \
    >"$tmp/out" 2>"$tmp/err" &
  local pid=$! port=""
  for _ in $(seq 300); do
    port=$(sed -n 's/^listening on http:\/\/127\.0\.0\.1:\([0-9]*\).*/\1/p' "$tmp/out")
    [[ -n $port ]] && break
    sleep 0.1
  done
  [[ -n $port ]] || { echo "wire-instructions: $bin ${args[*]} did not start" >&2; cat "$tmp/err" >&2; exit 1; }
  python3 "$tmp/drive.py" "$port" "$case" "$n" || { kill "$pid"; exit 1; }
  kill -INT "$pid"
  wait "$pid" || true
  sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' "$tmp/err"
}

echo "| binary | case | instructions/request |"
echo "| --- | --- | --- |"
for bin in "${bins[@]}"; do
  for case in floor modern-json legacy-json legacy-sse; do
    a=$(count "$bin" "$case" "$n1")
    b=$(count "$bin" "$case" "$n2")
    echo "| $bin | $case | $(((b - a) / (n2 - n1))) |"
  done
done
