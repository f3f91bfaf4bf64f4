#!/usr/bin/env bash
# Server instructions a request over a real socket, counted by callgrind:
# `scripts/instructions.sh` drives the servers in process, with no
# socket, so hyper's parsing and writing of each request and response,
# the edge's connection loop and tokio's I/O are outside its counts; a
# change in how a response is framed (chunked or with a length, one body
# frame or two) or in the edge's loop shows here and not there
# (docs/PERFORMANCE.md, sessions 22 and 28).
#
#   scripts/wire-instructions.sh [BINARY...]   (default: target/release/mcp-compat)
#   scripts/wire-instructions.sh --check [BINARY]
#
# For each binary and case, the server runs under callgrind twice, serving
# N1 and then N2 requests on one keep-alive connection from a small Python
# client (standard library only) that checks every answer; the figure is
# (count(N2) - count(N1)) / (N2 - N1): the server's whole work for one
# request, its start-up and shutdown taken out. A count, not a timing:
# the same binary gives the same figure on any load (within ~100
# instructions between runs, from hash seeds and timer wake-ups, with the
# server on one CPU as below).
# Cases: floor (`bench --floor-server`), floor-edge (the same handler
# behind `mcp-http-edge`'s accept loop, `bench --floor-server --edge`),
# modern-json (2026-07-28 stateless, `serve --json-response`), legacy-json
# and legacy-sse (a 2025-11-25 session, `serve --json-response` and
# `serve`). With --check (one binary), exits 1 when a case is over its
# bound below, or when the edge costs more than EDGE_BOUND over the floor
# measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
bins=("$@")
[[ ${#bins[@]} -gt 0 ]] || bins=(target/release/mcp-compat)
[[ $check == 0 || ${#bins[@]} == 1 ]] || {
  echo "wire-instructions: --check takes one binary" >&2
  exit 1
}
# Bounds, instructions a request on the wire: ~6 % over session 50's
# counts with the server on one CPU (34,774-34,873 / 34,348-34,437 /
# 41,979-42,008 for a plain release build; ~1,000 more each on two
# workers), and the edge's own cost (`floor-edge` less `floor`: ~200 on
# one CPU; ~400 since session 28 on two, 1,625 before: a control polled at
# every wake-up, or an allocation a request, shows here first). Lower them
# when a change lowers a count for good.
declare -A bound=([modern-json]=36900 [legacy-json]=36500 [legacy-sse]=44500)
edge_bound=600
n1=${WIRE_N1:-200}
n2=${WIRE_N2:-1200}
# Each count is the least of this many runs: what varies between runs is
# extra work (tokio waking its other worker to look for tasks, a timer
# firing), never less, so the least is the steadiest figure (one run's
# `floor-edge` was 1,138 where the others gave 460-700, session 28). The
# runs of one count are spread over the whole measurement (every case
# once, then every case again, ...), not made back to back: in `.ci/run`
# a noisy spell of a few seconds right after the test suite raised both
# back-to-back runs of one count twice in a row (`floor` 22,788, then
# `floor-edge` 23,199 against ~22,000 and ~22,350 idle; session 30).
repeat=${WIRE_REPEAT:-3}
# The server runs on one CPU (the first this script may use), so tokio
# starts one worker: with two, whether a request's wake-up finds the other
# worker parked or spinning changed a whole run's count by up to ~1,000 a
# request (28.76M against 27.77M instructions for one 1,200-request floor
# run, eight runs); pinned, eight runs lie within ~50 a request of each
# other (session 50). The scheduling between workers is tokio's, and
# what this script watches for (the edge's loop, a response's framing, an
# allocation a request) shows on one worker as on two.
cpu=$(taskset -cp $$ | sed 's/.*: *//; s/[-,].*//')
# WIRE_CASES: the cases to count (default all; the edge's figure needs
# floor and floor-edge). WIRE_RAW=1: print every count to stderr.
read -ra cases <<<"${WIRE_CASES:-floor floor-edge modern-json legacy-json legacy-sse}"
for tool in valgrind python3 taskset; do
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
if case in ("floor", "floor-edge", "modern-json"):
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
    floor-edge) args=(bench --floor-server --edge) ;;
    modern-json | legacy-json) args=(serve --json-response) ;;
    legacy-sse) args=(serve) ;;
  esac
  # The last run's output removed first: the background child truncates
  # it only when it starts, and the loop below could read the old port.
  rm -f "$tmp/out" "$tmp/err"
  taskset -c "$cpu" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "${args[@]}" \
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

over=0
echo "| binary | case | instructions/request | bound |"
echo "| --- | --- | --- | --- |"
for bin in "${bins[@]}"; do
  declare -A least=() per=()
  for _ in $(seq "$repeat"); do
    for case in "${cases[@]}"; do
      for n in "$n1" "$n2"; do
        c=$(count "$bin" "$case" "$n") || c=""
        [[ -z ${WIRE_RAW:-} ]] || echo "raw $case $n $c" >&2
        [[ -n $c ]] || {
          echo "wire-instructions: no count for $case ($n requests)" >&2
          exit 1
        }
        key="$case/$n"
        if [[ -z ${least[$key]:-} || $c -lt ${least[$key]} ]]; then least[$key]=$c; fi
      done
    done
  done
  for case in "${cases[@]}"; do
    a=${least[$case/$n1]}
    b=${least[$case/$n2]}
    per[$case]=$(((b - a) / (n2 - n1)))
    max=${bound[$case]:-}
    echo "| $bin | $case | ${per[$case]} | ${max:-none} |"
    if [[ $check == 1 && -n $max && ${per[$case]} -gt $max ]]; then
      echo "wire-instructions: $case costs ${per[$case]} instructions a request on the wire, over its bound of $max" >&2
      over=1
    fi
  done
  if [[ -n ${per[floor]:-} && -n ${per[floor-edge]:-} ]]; then
    edge=$((per[floor-edge] - per[floor]))
    echo "| $bin | the edge (floor-edge - floor) | $edge | $edge_bound |"
    if [[ $check == 1 && $edge -gt $edge_bound ]]; then
      echo "wire-instructions: the edge costs $edge instructions a request over axum::serve, over its bound of $edge_bound" >&2
      over=1
    fi
  fi
  unset least per
done
exit "$over"
