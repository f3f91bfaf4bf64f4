#!/usr/bin/env bash
# Runs the official MCP conformance suite against mcp-compat.
#
# usage:
#   scripts/conformance.sh [server]           the server suite (default)
#   scripts/conformance.sh client             the non-auth client scenarios (root: network namespace)
#   scripts/conformance.sh all                both
#   scripts/conformance.sh scenario NAME [REVISION]
#                                             one server scenario (REVISION: its wire revision;
#                                             leave it out for an extension scenario such as tasks-*)
#
# What it does:
#   1. installs @modelcontextprotocol/conformance@$SUITE_VERSION with npm into
#      .cache/peers (git-ignored), unless that exact version is there already;
#   2. builds `cargo build --release -p mcp-compat`;
#   3. server: starts `mcp-compat serve --bind 127.0.0.1:0` (stopped on exit),
#      reads `listening on http://HOST:PORT/PATH` from its first stdout line,
#      and runs `--requirements 2025-11-25`, `--requirements 2026-07-28`, and
#      the scenarios those sets run but never score (pending or added after
#      the release) one by one with `--scenario`;
#      client: runs each client scenario with
#      `--command "target/release/mcp-compat conformance-client"` inside
#      `unshare -n` with only loopback up (the suite's mock servers listen on
#      every interface);
#   4. every run is gated by conformance/expected-failures-{server,client}.yml:
#      a failure (FAILURE or WARNING check) not listed there fails the run,
#      and so does a listed entry that passes (the suite reports it as stale)
#      or never ran. The extension scenarios that `--requirements` also runs
#      count in its totals but the suite never gates them: the Tasks
#      extension's (tasks-*) are therefore run again one by one and gated
#      like the rest (the skills extension's, sep-2640-*, are not: we do not
#      implement it). A client scenario
#      fails when the suite's verdict says so (OVERALL: FAILED), which also
#      covers a client that exits with an error before any check fails;
#   5. prints each run's totals line; exits non-zero if any run failed.
#
# The baselines use the suite's format (`server:` / `client:` lists of
# `<scenario>` or `<scenario>:<check-id>`, reasons as comments) plus
# `server@<revision>:` lists for entries that fail at one wire revision only;
# scripts/node20/baseline.mjs derives each run's file.
#
# Node: >= 20.6 (`--import` hooks). On Node 20 the suite's CLI needs
# `fs.globSync`; scripts/node20/register.mjs supplies it.
#
# Environment:
#   CONFORMANCE_OUT          results directory (default target/conformance/<UTC time>)
#   CONFORMANCE_SERVE_FLAGS  extra `mcp-compat serve` flags (default: --retry-ms 500)
#   CONFORMANCE_NPM_FLAGS    extra `npm install` flags (e.g. --offline)
#   CONFORMANCE_RUN_TIMEOUT  seconds one suite invocation may take (default 900)
#   CONFORMANCE_SERVER       a command to start instead of `mcp-compat serve …` (it
#                            must print the same first line; for trying other builds)
set -euo pipefail

SUITE_VERSION=0.2.0-alpha.12
SUITE_PACKAGE=@modelcontextprotocol/conformance

ROOT=$(cd "$(dirname "$0")/.." && pwd)
PEERS=$ROOT/.cache/peers
NODE_MODULES=$PEERS/node_modules
DIST=$NODE_MODULES/$SUITE_PACKAGE/dist/index.js
SHIM=$ROOT/scripts/node20/register.mjs
BASELINE_TOOL=$ROOT/scripts/node20/baseline.mjs
SERVER_BASELINE=$ROOT/conformance/expected-failures-server.yml
CLIENT_BASELINE=$ROOT/conformance/expected-failures-client.yml
BIN=$ROOT/target/release/mcp-compat
OUT=${CONFORMANCE_OUT:-$ROOT/target/conformance/$(date -u +%Y%m%dT%H%M%SZ)}
SERVE_FLAGS=${CONFORMANCE_SERVE_FLAGS:---retry-ms 500}
RUN_TIMEOUT=${CONFORMANCE_RUN_TIMEOUT:-900}

# The wire revisions whose requirement sets are run.
REVISIONS=(2025-11-25 2026-07-28)
# Server scenarios that `--requirements` runs but never scores, as
# `<revision>:<scenario>` (from `conformance list --requirements <revision>`
# of the pinned version, extensions left out): run on their own so the
# baseline gates them too.
UNSCORED_SERVER=(
  2025-11-25:server-session-lifecycle
  2025-11-25:server-sse-polling
  2025-11-25:json-schema-2020-12
  2026-07-28:json-schema-2020-12
  2026-07-28:http-header-validation
  2026-07-28:http-custom-header-server-validation
)
# Extension scenarios that `--requirements 2026-07-28` runs but never
# gates, as `<revision>:<scenario>` (the revision names the baseline list;
# they run without --spec-version, which would skip an extension scenario):
# the Tasks extension (io.modelcontextprotocol/tasks, SEP-2663).
EXTENSION_SERVER=(
  2026-07-28:tasks-lifecycle
  2026-07-28:tasks-capability-negotiation
  2026-07-28:tasks-wire-fields
  2026-07-28:tasks-request-state-removal
  2026-07-28:tasks-mrtr-input
  2026-07-28:tasks-request-headers
  2026-07-28:tasks-dispatch-and-envelope
  2026-07-28:tasks-status-notifications
  2026-07-28:tasks-required-task-error
  2026-07-28:tasks-mrtr-composition
)
# The client scenarios (no authorization ones).
CLIENT_SCENARIOS=(
  initialize
  tools_call
  sse-retry
  elicitation-sep1034-client-defaults
  request-metadata
  sep-2322-client-request-state
  http-standard-headers
  http-custom-headers
  http-invalid-tool-headers
  json-schema-ref-no-deref
  json-schema-2020-12-preservation
)

die() {
  echo "conformance.sh: $*" >&2
  exit 2
}

need() {
  command -v "$1" >/dev/null 2>&1 || die "'$1' is required but not on PATH"
}

installed_version() {
  node -e 'try { console.log(require(process.argv[1]).version) } catch { console.log("") }' \
    "$NODE_MODULES/$SUITE_PACKAGE/package.json"
}

install_suite() {
  need node
  need npm
  node -e 'const [a, b] = process.versions.node.split(".").map(Number); process.exit(a > 20 || (a === 20 && b >= 6) ? 0 : 1)' ||
    die "Node >= 20.6 is required (found $(node --version))"
  if [ "$(installed_version)" = "$SUITE_VERSION" ]; then
    echo "conformance suite $SUITE_VERSION already installed in $PEERS"
    return
  fi
  echo "installing $SUITE_PACKAGE@$SUITE_VERSION into $PEERS"
  mkdir -p "$PEERS"
  # shellcheck disable=SC2086 # CONFORMANCE_NPM_FLAGS is a list of flags
  npm install --prefix "$PEERS" --no-audit --no-fund --save-exact \
    ${CONFORMANCE_NPM_FLAGS:-} "$SUITE_PACKAGE@$SUITE_VERSION"
  [ "$(installed_version)" = "$SUITE_VERSION" ] ||
    die "npm did not install $SUITE_PACKAGE@$SUITE_VERSION into $PEERS"
}

build() {
  need cargo
  (cd "$ROOT" && cargo build --release -p mcp-compat)
  [ -x "$BIN" ] || die "$BIN was not built"
}

SERVER_PID=
URL=

start_server() {
  local log=$OUT/server
  mkdir -p "$log"
  if [ -n "${CONFORMANCE_SERVER:-}" ]; then
    # shellcheck disable=SC2086 # a command line
    ${CONFORMANCE_SERVER} >"$log/stdout" 2>>"$log/stderr" &
  else
    # shellcheck disable=SC2086 # SERVE_FLAGS is a list of flags
    "$BIN" serve --bind 127.0.0.1:0 $SERVE_FLAGS >"$log/stdout" 2>>"$log/stderr" &
  fi
  SERVER_PID=$!
  local line="" _
  for _ in $(seq 1 300); do
    if [ -s "$log/stdout" ] && [ "$(wc -l <"$log/stdout")" -ge 1 ]; then
      line=$(head -n 1 "$log/stdout")
      break
    fi
    if ! kill -0 "$SERVER_PID" 2>/dev/null; then
      cat "$log/stderr" >&2
      SERVER_PID=
      die "the server exited before it was listening"
    fi
    sleep 0.1
  done
  case $line in
    "listening on http://"*) URL=${line#listening on } ;;
    *) die "the server did not print 'listening on http://…' within 30 s (first line: '$line')" ;;
  esac
  [[ $URL =~ ^http://(127\.0\.0\.1|localhost|\[::1\]):[0-9]+/ ]] ||
    die "the server must listen on a loopback address, got $URL"
  echo "server (pid $SERVER_PID) listening on $URL"
}

# After a run: if the server died during it, say so (a failure whatever the
# suite concluded) and start a new one for the runs still to come.
check_server() {
  local label=$1 status=0
  [ -n "$SERVER_PID" ] || return 0
  kill -0 "$SERVER_PID" 2>/dev/null && return 0
  wait "$SERVER_PID" 2>/dev/null || status=$?
  SERVER_PID=
  FAILED=1
  SUMMARY+=("FAIL  $label: the server exited during the run (status $status; see ${OUT#"$ROOT"/}/server/stderr)")
  start_server
}

stop_server() {
  if [ -n "$SERVER_PID" ]; then
    kill "$SERVER_PID" 2>/dev/null || true
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=
  fi
}

trap stop_server EXIT
trap 'exit 130' INT TERM

SUMMARY=()
FAILED=0
RUN_STATUS=0
RUN_TOTALS=

# The log without colours.
plain() {
  sed 's/\x1b\[[0-9;]*m//g' "$1"
}

# run LEG REVISION DIR -- COMMAND...
# Derives the baseline of LEG at REVISION into DIR/expected-failures.yml,
# runs COMMAND followed by `--expected-failures <that> -o DIR`, logs to
# DIR/output.log; sets RUN_STATUS and RUN_TOTALS (the run's totals line).
run() {
  local leg=$1 revision=$2 dir=$3
  shift 4
  local baseline
  case $leg in
    server) baseline=$SERVER_BASELINE ;;
    client) baseline=$CLIENT_BASELINE ;;
  esac
  mkdir -p "$dir"
  node "$BASELINE_TOOL" derive "$NODE_MODULES" "$baseline" "$leg" "$revision" "$dir/expected-failures.yml" ||
    die "cannot read $baseline"
  RUN_STATUS=0
  "$@" --expected-failures "$dir/expected-failures.yml" -o "$dir" 2>&1 | tee "$dir/output.log" ||
    RUN_STATUS=${PIPESTATUS[0]}
  RUN_TOTALS=$(plain "$dir/output.log" | grep -E '^(Total: |Passed: [0-9]+/[0-9]+)' | tail -n 1 || true)
}

# record LABEL STATUS [NOTE]: one summary line.
record() {
  if [ "$2" -eq 0 ]; then
    SUMMARY+=("ok    $1: ${RUN_TOTALS:-no totals printed}${3:-}")
  else
    FAILED=1
    SUMMARY+=("FAIL  $1 (exit $2): ${RUN_TOTALS:-no totals printed}${3:-}")
  fi
}

# gated LABEL LEG REVISION DIR -- COMMAND...: run, and record the suite's verdict.
gated() {
  local label=$1
  shift
  echo
  echo "=== $label ==="
  run "$@"
  record "$label" "$RUN_STATUS"
}

suite() {
  timeout "$RUN_TIMEOUT" node --import "$SHIM" "$DIST" "$@"
}

# Entries of BASELINE that no run exercised (a typo, or the wrong revision).
check_unrun() {
  local leg=$1 baseline=$2 results=$3 unrun
  unrun=$(node "$BASELINE_TOOL" unrun "$NODE_MODULES" "$baseline" "$leg" "$results")
  if [ -n "$unrun" ]; then
    FAILED=1
    SUMMARY+=("FAIL  ${baseline#"$ROOT"/} lists entries that never ran:")
    while IFS= read -r e; do SUMMARY+=("        $e"); done <<<"$unrun"
  fi
}

server_suite() {
  start_server
  local rev entry scenario
  for rev in "${REVISIONS[@]}"; do
    gated "server, requirements $rev" server "$rev" "$OUT/server/$rev/requirements" -- \
      suite server --url "$URL" --requirements "$rev"
    check_server "server, requirements $rev"
  done
  for entry in "${UNSCORED_SERVER[@]}"; do
    rev=${entry%%:*}
    scenario=${entry#*:}
    gated "server, $scenario at $rev" server "$rev" "$OUT/server/$rev/$scenario" -- \
      suite server --url "$URL" --scenario "$scenario" --spec-version "$rev"
    check_server "server, $scenario at $rev"
  done
  for entry in "${EXTENSION_SERVER[@]}"; do
    rev=${entry%%:*}
    scenario=${entry#*:}
    gated "server, extension scenario $scenario" server "$rev" "$OUT/server/$rev/$scenario" -- \
      suite server --url "$URL" --scenario "$scenario"
    check_server "server, extension scenario $scenario"
  done
  stop_server
  check_unrun server "$SERVER_BASELINE" "$OUT/server"
}

one_scenario() {
  local scenario=$1 rev=${2:-}
  start_server
  if [ -n "$rev" ]; then
    gated "server, $scenario at $rev" server "$rev" "$OUT/server/$rev/$scenario" -- \
      suite server --url "$URL" --scenario "$scenario" --spec-version "$rev"
  else
    gated "server, $scenario" server any "$OUT/server/any/$scenario" -- \
      suite server --url "$URL" --scenario "$scenario"
  fi
  check_server "server, $scenario"
  stop_server
}

client_suite() {
  need unshare
  need ip
  [ "$(id -u)" = 0 ] || die "client mode needs root (it runs the suite in a network namespace with only loopback)"
  case $BIN in *" "*) die "the suite splits --command on spaces; $BIN contains one" ;; esac
  local scenario dir verdict status note
  for scenario in "${CLIENT_SCENARIOS[@]}"; do
    dir=$OUT/client/any/$scenario
    echo
    echo "=== client, $scenario ==="
    run client any "$dir" -- \
      unshare -n sh -c 'ip link set lo up && exec "$@"' sh \
      timeout "$RUN_TIMEOUT" node --import "$SHIM" "$DIST" client \
      --command "$BIN conformance-client" --scenario "$scenario"
    # The suite's baseline check looks at checks only: a client that exits
    # with an error before any check fails (no checks, or only skipped ones)
    # passes it, and a listed scenario is called stale. The suite's own
    # verdict (OVERALL: FAILED) counts the exit status, so it decides here.
    status=$RUN_STATUS
    note=
    verdict=$(plain "$dir/output.log" | grep -Eo 'OVERALL: (FAILED|PASSED)' | tail -n 1 || true)
    if [ "$verdict" = "OVERALL: FAILED" ]; then
      if grep -qE "^  - \"?$scenario\"?\$" "$dir/expected-failures.yml"; then
        status=0
        note=" (failed, as the baseline expects)"
      elif [ "$status" -eq 0 ]; then
        status=1
        note=" (the client failed though no check did; not in the baseline)"
      fi
    fi
    record "client, $scenario" "$status" "$note"
  done
  check_unrun client "$CLIENT_BASELINE" "$OUT/client"
}

main() {
  local mode=${1:-server}
  case $mode in
    server | client | all) [ $# -le 1 ] || die "usage: $0 [server|client|all] | scenario NAME [REVISION]" ;;
    scenario) [ $# -ge 2 ] && [ $# -le 3 ] || die "usage: $0 scenario NAME [REVISION]" ;;
    -h | --help)
      sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
      exit 0
      ;;
    *) die "usage: $0 [server|client|all] | scenario NAME [REVISION]" ;;
  esac
  mkdir -p "$OUT"
  install_suite
  build
  case $mode in
    server) server_suite ;;
    client) client_suite ;;
    all)
      server_suite
      client_suite
      ;;
    scenario) one_scenario "$2" "${3:-}" ;;
  esac
  echo
  echo "=== conformance summary (results in ${OUT#"$ROOT"/}) ==="
  printf '%s\n' "${SUMMARY[@]}"
  if [ "$FAILED" -ne 0 ]; then
    echo "conformance: unexpected failures, stale or unrun baseline entries (see above)"
    exit 1
  fi
  echo "conformance: every failure is an expected one"
}

main "$@"
