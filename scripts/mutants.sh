#!/usr/bin/env bash
# Mutation testing of the critical files with cargo-mutants (not in .ci/run:
# a full run takes hours on 2 cores; run it when one of these files changes,
# and update the table in docs/TESTING.md).
#
# usage:
#   scripts/mutants.sh            every critical file, one after another
#   scripts/mutants.sh FILE...    only these (paths as in the table below)
#   scripts/mutants.sh --list     the files, packages and test targets
#   scripts/mutants.sh FILE -- ARGS...
#                                 extra cargo-mutants arguments, e.g. a first
#                                 pass on the lines that matter
#                                 (`--re 'is_decimal|numeric_eq'`), or
#                                 `--iterate` (skip the mutants the last run
#                                 of this file caught: re-check survivors
#                                 after adding tests)
#   MUTANTS_ALL_TARGETS=1 scripts/mutants.sh FILE
#                                 every test target of the packages, not
#                                 only the ones listed for the file
#   MUTANTS_TARGETS='--test x' scripts/mutants.sh FILE
#                                 these test targets instead of the listed
#                                 ones (a quicker pass: e.g. without `--lib`,
#                                 which builds the mutated crate twice)
#   MUTANTS_COPY=1 scripts/mutants.sh FILE
#                                 mutate a copy of the workspace (in
#                                 $TMPDIR, built from scratch once, about
#                                 1-2 GB) instead of this tree, so that
#                                 editing and building here go on while it
#                                 runs
#
# What it does, per file: `cargo mutants --in-place --file FILE` with the
# tests of the packages that exercise it (`--test-package`), restricted to
# the test targets listed for the file (`--cargo-arg`, which reaches both
# the build and the test command: `--cargo-test-arg` reaches only the
# latter, so cargo-mutants would still build every integration test of the
# packages for each mutant, 16 binaries for rev-2026-07-28), one job, no
# debug info, a timeout scaled from the baseline run (`--in-place` runs
# one mutant at a time; cargo-mutants refuses `--jobs` with it). `--in-place` mutates
# the working tree (no copy of the workspace, which would not fit a small
# disk) and puts each file back after its mutant; do not edit or build in
# this tree while it runs (a build with another CARGO_TARGET_DIR of a crate
# that does not depend on the mutated one is safe), and check `git status`
# if it was killed (stop it with SIGINT: cargo-mutants then restores the
# file). Results go to target/mutants/<file with / as _>/ (cargo-mutants'
# mutants.out: caught.txt, missed.txt, timeout.txt, unviable.txt).
#
# Score = caught / (caught + missed); timeouts are left out and listed.
set -euo pipefail

MUTANTS_VERSION=27.1.0
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

# file | packages whose tests run against its mutants | their test targets
# that exercise it (cargo target selection). cargo-mutants passes the
# list to the build of the mutated file's package and to the test run of
# every test package, so each `--test NAME` must exist in the mutated
# file's package (cargo builds it alone with the list first, and a
# `--test` naming another package's target fails there); a file whose
# tests live in two packages lists none and runs every target of both,
# which is slow. So the tests a critical file needs live in its package:
# the stores' shared suites run in transport-core's `memory_stores`, the
# SEP-1699 timing tests (the 2025-11-25 policies through the engine) in
# session-engine's `server_connection_timing`. policy.rs, in
# rev-2025-11-25, runs every target of both packages to include the latter.
CRITICAL=(
  "transport-core/src/sse/decoder.rs|mcp-transport-core|--lib --test sse_decoder"
  "transport-core/src/event_id.rs|mcp-transport-core|--lib --test event_id"
  "transport-core/src/json_members/mod.rs|mcp-transport-core|--lib"
  "transport-core/src/json_members/index.rs|mcp-transport-core|--lib"
  "transport-core/src/json_members/strict.rs|mcp-transport-core|--lib"
  "transport-core/src/jsonrpc/envelope.rs|mcp-transport-core|--lib --test raw_whitespace"
  "transport-core/src/event_log/memory.rs|mcp-transport-core|--lib --test memory_stores --test event_log"
  "transport-core/src/task_store/state.rs|mcp-transport-core|--lib --test memory_stores --test task_store --test task_input"
  "transport-core/src/task_store/memory.rs|mcp-transport-core|--lib --test memory_stores --test task_store --test task_input"
  "rev-2025-11-25/src/policy.rs|mcp-rev-2025-11-25,mcp-session-engine|"
  "session-engine/src/server/connection.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/outlet.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/stream.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/session.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/get.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/drain.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/lease.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/cluster.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/post.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/request.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/fanout.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/input.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/group.rs|mcp-session-engine,mcp-rev-2025-03-26|"
  "session-engine/src/server/open.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/batch.rs|mcp-session-engine,mcp-rev-2025-03-26|"
  "session-engine/src/server/initialize.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/checks.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/client_info.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/mod.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/config.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/held_lease.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/delete.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/server/reply.rs|mcp-session-engine|--lib --test server_*"
  "session-engine/src/client/resume.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/wire.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/state.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/request.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/legacy_client.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/config.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/session.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/exchange.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/listen.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/sse_reader.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/shared.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/cancel.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/input.rs|mcp-session-engine|--lib --test client_*"
  "session-engine/src/client/task.rs|mcp-session-engine,mcp-rev-2025-11-25|"
  "session-engine/src/client/batch.rs|mcp-session-engine,mcp-rev-2025-03-26|"
  "rev-2026-07-28/src/server/validate.rs|mcp-rev-2026-07-28|--lib --test server_headers --test server_meta"
  "rev-2026-07-28/src/server/result.rs|mcp-rev-2026-07-28|--lib --test server_meta --test server_http --test server_discover"
  "rev-2026-07-28/src/server/post.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/request.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/discover.rs|mcp-rev-2026-07-28|--lib --test server_discover --test tasks"
  "rev-2025-11-25/src/tasks/handler.rs|mcp-rev-2025-11-25|--lib --test *"
  "rev-2025-11-25/src/tasks/mod.rs|mcp-rev-2025-11-25|--lib --test *"
  "rev-2025-11-25/src/tasks/request.rs|mcp-rev-2025-11-25|--lib --test *"
  "rev-2025-11-25/src/tasks/wire.rs|mcp-rev-2025-11-25|--lib --test *"
  "rev-2025-11-25/src/tasks/worker.rs|mcp-rev-2025-11-25|--lib --test *"
  "negotiate/src/client/cache.rs|mcp-negotiate|--lib --test *"
  "negotiate/src/client/connection.rs|mcp-negotiate|--lib --test *"
  "negotiate/src/client/mod.rs|mcp-negotiate|--lib --test *"
  "negotiate/src/client/probe.rs|mcp-negotiate|--lib --test *"
  "rev-2026-07-28/src/client/config.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/listen.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/meta.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/modern_client.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/mrtr.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/request.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/run.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/shared.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/sse.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/task.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/tool_cache.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "rev-2026-07-28/src/client/wire.rs|mcp-rev-2026-07-28|--lib --test client_* --test tasks"
  "http-edge/src/header_scan.rs|mcp-http-edge,mcp-rev-2026-07-28|--lib"
  "negotiate/src/server/route.rs|mcp-negotiate|--lib --test eras --test fallback --test bad_input"
  "negotiate/src/server/mod.rs|mcp-negotiate|--lib --test *"
  "store-redis/src/event_store.rs|mcp-store-redis|--test event_store --test redis_down"
  "store-redis/src/session_store.rs|mcp-store-redis|--test session_store --test redis_down"
  "store-redis/src/lease_store.rs|mcp-store-redis|--test lease_store"
  "store-redis/src/connection.rs|mcp-store-redis|--test connection --test redis_down --test event_store"
  "store-redis/src/signals.rs|mcp-store-redis|--test signals"
  "rev-2026-07-28/src/server/mrtr.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/listen.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/tasks/mod.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/tasks/wire.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/tasks/worker.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "http-edge/src/server/conn.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/body.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/reply.rs|mcp-http-edge|--lib --test *"
  "transport-core/src/task_store/input.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/task_store/supervise.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/jsonrpc/mod.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/version.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/request_head.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/admission.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/endpoint.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/task_store/mod.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/transport.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/handler.rs|mcp-transport-core|--lib --test *"
  "rev-2026-07-28/src/server/config.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "http-edge/src/config.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/timed_body.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/timed_io.rs|mcp-http-edge|--lib --test *"
  "rev-2026-07-28/src/headers.rs|mcp-rev-2026-07-28|--lib --test server_* --test client_*"
  "transport-core/src/lease/memory.rs|mcp-transport-core|--lib --test *"
  "rev-2025-11-25/src/server.rs|mcp-rev-2025-11-25|--lib --test *"
  "rev-2025-11-25/src/lib.rs|mcp-rev-2025-11-25|--lib --test *"
  "rev-2024-11-05/src/config.rs|mcp-rev-2024-11-05|--lib --test *"
  "rev-2024-11-05/src/lib.rs|mcp-rev-2024-11-05|--lib --test *"
  "rev-2024-11-05/src/open.rs|mcp-rev-2024-11-05|--lib --test *"
  "rev-2024-11-05/src/reader.rs|mcp-rev-2024-11-05|--lib --test *"
  "rev-2024-11-05/src/request.rs|mcp-rev-2024-11-05|--lib --test *"
  "rev-2024-11-05/src/server.rs|mcp-rev-2024-11-05|--lib --test *"
  "rev-2024-11-05/src/shared.rs|mcp-rev-2024-11-05,mcp-negotiate|--lib --test *"
  "transport-core/src/sse/encoder.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/session_store/memory.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/session_store/mod.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/session_store/signals.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/cancel.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/negotiation.rs|mcp-transport-core|--lib --test *"
  "http-edge/src/server/span_body.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/client/answer.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/checks.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/reply.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/faults.rs|mcp-http-edge|--lib --test *"
  "tools/src/registry.rs|mcp-tools|--lib --test *"
  "tools/src/output.rs|mcp-tools|--lib --test *"
  "tools/src/prompts.rs|mcp-tools|--lib --test *"
  "tools/src/context.rs|mcp-tools|--lib --test *"
  "tools/src/resources.rs|mcp-tools|--lib --test *"
  "tools/src/revision.rs|mcp-tools|--lib --test *"
  "tools/src/schema.rs|mcp-tools|--lib --test *"
  "tools/src/typed.rs|mcp-tools|--lib --test *"
  "rev-2026-07-28/src/server/reply.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/fanout.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/dup_keys.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/catalog.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/schema.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "rev-2026-07-28/src/server/mod.rs|mcp-rev-2026-07-28|--lib --test server_* --test tasks"
  "http-edge/src/server/race.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/in_place.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/endpoint.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/service.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/client/sse.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/server/limits.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/client/deadline.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/trace.rs|mcp-http-edge|--lib --test *"
  "transport-core/src/lease/mod.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/task_store/liveness.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/error.rs|mcp-transport-core|--lib --test *"
  "transport-core/src/event_log/mod.rs|mcp-transport-core|--lib --test *"
  "session-engine/src/revision.rs|mcp-session-engine|--lib --test *"
  "rev-2025-03-26/src/lib.rs|mcp-rev-2025-03-26|--lib --test *"
  "rev-2025-03-26/src/server.rs|mcp-rev-2025-03-26|--lib --test *"
  "store-redis/src/task_store.rs|mcp-store-redis|--test task_store --test redis_down"
  "store-redis/src/error.rs|mcp-store-redis|--test *"
  "http-edge/src/server/reject.rs|mcp-http-edge|--lib --test *"
  "http-edge/src/client/send.rs|mcp-http-edge|--lib --test *"
  "cli/src/bench/throughput.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/load.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/wire.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/latency.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/edges.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/resume.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/idle.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/mod.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/long.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/child.rs|mcp-compat|--lib --test bench"
  "cli/src/bench/inproc.rs|mcp-compat|--lib"
  "cli/src/bench/report.rs|mcp-compat|--lib"
  "cli/src/bench/proc.rs|mcp-compat|--lib"
  "cli/src/matrix/expect.rs|mcp-compat|--lib"
  "cli/src/matrix/checks.rs|mcp-compat|--lib --test matrix_cells --test self_test"
  "cli/src/matrix/declared.rs|mcp-compat|--lib --test matrix_cells"
  "cli/src/matrix/report.rs|mcp-compat|--lib"
  "cli/src/matrix/outcome.rs|mcp-compat|--lib --test matrix_cells"
  "cli/src/matrix/peers/predict.rs|mcp-compat|--lib"
  "cli/src/matrix/peers/outcome.rs|mcp-compat|--lib"
  "cli/src/check/spec.rs|mcp-compat|--lib"
  "cli/src/check/report.rs|mcp-compat|--lib"
  "cli/src/check/level.rs|mcp-compat|--lib"
  "cli/src/check/quirks.rs|mcp-compat|--lib"
  "cli/src/revisions.rs|mcp-compat|--lib"
  "cli/src/matrix/peers/manifest.rs|mcp-compat|--lib"
  "cli/src/matrix/selftest.rs|mcp-compat|--lib --test self_test"
  "cli/src/check/detect.rs|mcp-compat|--lib --test check_server"
  "cli/src/matrix/peers/report.rs|mcp-compat|--lib"
  "cli/src/matrix/peers/cells.rs|mcp-compat|--lib --test peers_matrix"
  "cli/src/matrix/wire.rs|mcp-compat|--lib"
  "cli/src/matrix/peers/process.rs|mcp-compat|--lib"
  "cli/src/matrix/peers/forget.rs|mcp-compat|--lib"
  "cli/src/matrix/peers/proxy.rs|mcp-compat|--lib"
  "cli/src/matrix/peers/check_client.rs|mcp-compat|--lib --test peers_matrix"
  "cli/src/matrix/peers/ours.rs|mcp-compat|--lib --test peers_matrix"
  "cli/src/check/tasks.rs|mcp-compat|--lib --test check_server"
  "cli/src/check/mod.rs|mcp-compat|--lib --test check_server"
  "cli/src/check/legacy.rs|mcp-compat|--lib --test check_server"
  "cli/src/check/polling.rs|mcp-compat|--lib --test check_server"
  "cli/src/check/modern.rs|mcp-compat|--lib --test check_server"
  "cli/src/check/legacy_tasks.rs|mcp-compat|--lib --test check_server"
  "cli/src/check/wire.rs|mcp-compat|--lib --test check_server"
  "cli/src/matrix/long_running.rs|mcp-compat|--lib --test matrix_cells"
  "cli/src/matrix/harness.rs|mcp-compat|--lib --test matrix_cells"
  "cli/src/matrix/task.rs|mcp-compat|--lib --test matrix_cells"
  "cli/src/matrix/streams.rs|mcp-compat|--lib --test matrix_cells"
  "cli/src/matrix/sessions.rs|mcp-compat|--lib --test matrix_cells --test self_test"
  "cli/src/matrix/run.rs|mcp-compat|--lib --test matrix_cells"
  "cli/src/conformance_client/mod.rs|mcp-compat|--lib --test conformance_client"
  "cli/src/conformance_client/headers.rs|mcp-compat|--lib --test conformance_client"
  "cli/src/conformance_client/input.rs|mcp-compat|--lib --test conformance_client"
  "cli/src/conformance_client/schema.rs|mcp-compat|--lib --test conformance_client"
  "cli/src/conformance_client/session.rs|mcp-compat|--lib --test conformance_client"
  "cli/src/conformance_client/tools.rs|mcp-compat|--lib --test conformance_client"
  "cli/src/fixtures/mod.rs|mcp-compat|--lib"
  "cli/src/fixtures/tasks.rs|mcp-compat|--lib"
  "cli/src/fixtures/elicit.rs|mcp-compat|--lib"
  "cli/src/fixtures/resources.rs|mcp-compat|--lib"
  "cli/src/fixtures/prompts.rs|mcp-compat|--lib"
  "cli/src/fixtures/content.rs|mcp-compat|--lib"
  "cli/src/fixtures/tools.rs|mcp-compat|--lib"
  "cli/src/fixtures/mrtr.rs|mcp-compat|--lib"
  "cli/src/fixtures/input.rs|mcp-compat|--lib"
  "cli/src/reference.rs|mcp-compat|--lib"
  "cli/src/serve/mod.rs|mcp-compat|--lib --test serve_limits --test state_key --test process --test shutdown"
)

if [[ ${1:-} == --list ]]; then
  printf '%s\n' "${CRITICAL[@]}" | column -t -s '|'
  exit 0
fi

if ! cargo mutants --version 2>/dev/null | grep -q "$MUTANTS_VERSION"; then
  cargo install --locked "cargo-mutants@$MUTANTS_VERSION"
fi

export CARGO_INCREMENTAL=0 CARGO_PROFILE_DEV_DEBUG=false CARGO_PROFILE_TEST_DEBUG=false

# "packages|targets" of a critical file.
entry_of() {
  local entry
  for entry in "${CRITICAL[@]}"; do
    if [[ ${entry%%|*} == "$1" ]]; then
      echo "${entry#*|}"
      return
    fi
  done
  echo "not a critical file: $1 (scripts/mutants.sh --list)" >&2
  exit 2
}

files=()
extra=()
while (($# > 0)); do
  if [[ $1 == -- ]]; then
    shift
    extra=("$@")
    break
  fi
  files+=("$1")
  shift
done
if ((${#files[@]} == 0)); then
  for entry in "${CRITICAL[@]}"; do files+=("${entry%%|*}"); done
fi

status=0
for file in "${files[@]}"; do
  rest=$(entry_of "$file")
  packages=${rest%%|*}
  targets=${rest#*|}
  out="target/mutants/${file//\//_}"
  mkdir -p "$out"
  if [[ -n ${MUTANTS_TARGETS:-} ]]; then targets=$MUTANTS_TARGETS; fi
  if [[ -n ${MUTANTS_ALL_TARGETS:-} ]]; then targets=""; fi
  printf '\n=== %s (tests of %s: %s) ===\n' "$file" "$packages" "${targets:-all targets}"
  args=(--file "$file" --timeout-multiplier 3 --output "$out")
  if [[ -z ${MUTANTS_COPY:-} ]]; then args+=(--in-place); fi
  IFS=',' read -ra pkgs <<<"$packages"
  for p in "${pkgs[@]}"; do args+=(--test-package "$p"); done
  read -ra tgts <<<"$targets"
  # `--lib --test x` become `--cargo-arg=--lib --cargo-arg=--test=x`.
  i=0
  while ((i < ${#tgts[@]})); do
    if [[ ${tgts[i]} == --test ]]; then
      args+=("--cargo-arg=--test=${tgts[i + 1]}")
      i=$((i + 2))
    else
      args+=("--cargo-arg=${tgts[i]}")
      i=$((i + 1))
    fi
  done
  args+=("${extra[@]}")
  rc=0
  cargo mutants "${args[@]}" || rc=$?
  dir="$out/mutants.out"
  # cargo-mutants exits 2 when mutants were missed and 3 on timeouts; any
  # other failure (or no outcome at all) means the run did not happen.
  if [[ ! -f "$dir/outcomes.json" ]] || ((rc != 0 && rc != 2 && rc != 3)); then
    echo "$file: cargo mutants did not run (exit $rc)" >&2
    status=1
    continue
  fi
  ((rc == 0)) || status=$rc
  caught=$(wc -l <"$dir/caught.txt" 2>/dev/null || echo 0)
  missed=$(wc -l <"$dir/missed.txt" 2>/dev/null || echo 0)
  timeout=$(wc -l <"$dir/timeout.txt" 2>/dev/null || echo 0)
  total=$((caught + missed))
  score=$(( total > 0 ? 100 * caught / total : 100 ))
  printf '%s: %s caught, %s missed, %s timeouts: %s%%\n' "$file" "$caught" "$missed" "$timeout" "$score"
  if ((missed > 0)); then
    echo "missed (equivalent ones are listed in docs/TESTING.md):"
    sed 's/^/  /' "$dir/missed.txt"
  fi
done
exit "$status"
