#!/usr/bin/env bash
# Cross-checks `mcp-compat bench`'s in-process load generator against wrk
# (Debian's `wrk`; not needed by the benchmark itself): the floor, the
# floor behind `mcp-http-edge`'s accept loop (`floor-edge`) and the
# stateless 2026-07-28 JSON tools/call, same connections and duration, so
# the two generators' request rates can be compared (docs/PERFORMANCE.md).
#
#   scripts/bench-wrk.sh [BINARY] [CONNECTIONS] [SECONDS]
#
# Besides wrk's rate and latency, each case prints its server's CPU a
# request, user and kernel apart (`/proc/PID/stat` over the run, divided
# by the requests wrk completed). With PIN=1 every server runs on CPU 0
# and wrk on CPU 1 (`taskset`): the server then has a CPU of its own and
# no client preempts it. With SCHED=1 (needs `perf`), also the server's
# wake-ups of other threads, its threads' context switches and its
# syscalls a request (docs/PERFORMANCE.md, session 48: a slower server
# wakes wrk more often and is preempted by it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-target/release/mcp-compat}
conns=${2:-64}
secs=${3:-5}
command -v wrk >/dev/null || { echo "bench-wrk: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
pin_server=() pin_client=() pinned=
if [[ ${PIN:-0} == 1 ]]; then
  pin_server=(taskset -c 0) pin_client=(taskset -c 1) pinned=", pinned"
fi
[[ ${SCHED:-0} != 1 ]] || command -v perf >/dev/null || { echo "bench-wrk: SCHED=1 needs perf" >&2; exit 1; }
tmp=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$tmp"; }
trap cleanup EXIT

# Not called in `$(...)`: a subshell's `pids+=` would be lost and the
# servers left running after the script.
start() { # VAR NAME ARGS... -> sets VAR to "URL PID"
  local var=$1 name=$2; shift 2
  "${pin_server[@]}" "$bin" "$@" >"$tmp/$name.out" 2>"$tmp/$name.err" &
  pids+=($!)
  for _ in $(seq 100); do
    if grep -q '^listening on ' "$tmp/$name.out" 2>/dev/null; then
      printf -v "$var" '%s %s' "$(sed -n 's/^listening on //p' "$tmp/$name.out" | head -1)" "$!"
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

# utime + stime of PID, in clock ticks, as "USER KERNEL".
ticks() { awk '{print $14, $15}' "/proc/$1/stat"; }
hz=$(getconf CLK_TCK)

for target in "floor $floor" "floor-edge $edge" "modern-json $modern"; do
  set -- $target
  name=$1 url=$2 pid=$3
  echo "== wrk: $name ($conns connections, ${secs}s$pinned)"
  if [[ ${SCHED:-0} == 1 ]]; then
    perf stat -x, -e sched:sched_wakeup,sched:sched_switch,raw_syscalls:sys_enter \
      -p "$pid" -o "$tmp/sched.csv" -- sleep "$secs" &
    perf_pid=$!
  fi
  read -r u0 k0 < <(ticks "$pid")
  "${pin_client[@]}" wrk -t2 -c"$conns" -d"${secs}s" --latency -s "$tmp/call.lua" "$url" >"$tmp/wrk.out"
  read -r u1 k1 < <(ticks "$pid")
  grep -E 'Requests/sec|^ +(50|99)% |Non-2xx' "$tmp/wrk.out"
  n=$(awk '/requests in/ {print $1}' "$tmp/wrk.out")
  awk -v u=$((u1 - u0)) -v k=$((k1 - k0)) -v n="$n" -v hz="$hz" 'BEGIN {
    printf "  server CPU a request: user %.2f us, kernel %.2f us\n", u / hz / n * 1e6, k / hz / n * 1e6 }'
  if [[ ${SCHED:-0} == 1 ]]; then
    wait "$perf_pid"
    # perf counted over `secs` from its start, wrk over its own run: close
    # enough for ratios, since both cover the same steady load.
    awk -F, -v n="$n" '$3 ~ /sched|syscalls/ { printf "  %s a request: %.3f\n", $3, $1 / n }' "$tmp/sched.csv"
  fi
done
