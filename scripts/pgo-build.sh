#!/usr/bin/env bash
# Builds `mcp-compat` with profile-guided optimisation (PGO) on top of the
# release profile's fat LTO, trained on the binary's own benchmark
# workloads (docs/PERFORMANCE.md, "Session 20"):
#
#   scripts/pgo-build.sh        # prints the binary's path: target/pgo/release/mcp-compat
#
# 1. an instrumented build (`-Cprofile-generate`, target/pgo-gen);
# 2. training: `bench --quick` (every workload once, briefly: the long-
#    running modes, resumption, cancellation, idle sessions) and then the
#    request-rate workloads for a few seconds each (the floor, both eras,
#    JSON and SSE, a shared session) — each server child exits through its
#    own shutdown on SIGTERM and writes its profile then;
# 3. `llvm-profdata merge` (rustup's `llvm-tools` component, added when
#    missing);
# 4. the optimised build (`-Cprofile-use`, target/pgo).
#
# Not part of CI: the two extra whole-program builds take ~20 minutes on
# two CPUs. The floor server is in the same binary and trained alike, so
# `bench` run with the result compares like with like. An application
# embedding these crates gets the same by training its own binary.
set -euo pipefail
cd "$(dirname "$0")/.."

sysroot=$(rustc --print sysroot)
host=$(rustc -vV | sed -n 's/^host: //p')
profdata=$sysroot/lib/rustlib/$host/bin/llvm-profdata
if [[ ! -x $profdata ]]; then
  rustup component add llvm-tools >&2
fi
[[ -x $profdata ]] || {
  echo "pgo-build: no llvm-profdata at $profdata (rustup component add llvm-tools)" >&2
  exit 1
}

data=$PWD/target/pgo-data
rm -rf "$data"
mkdir -p "$data"

echo "pgo-build: instrumented build (target/pgo-gen)" >&2
RUSTFLAGS="-Cprofile-generate=$data" \
  cargo build --release --locked -p mcp-compat --target-dir target/pgo-gen >&2

echo "pgo-build: training" >&2
trained=target/pgo-gen/release/mcp-compat
"$trained" bench --quick >/dev/null
"$trained" bench --workloads rate --rounds 1 --duration-ms 4000 --warmup-ms 500 >/dev/null
shopt -s nullglob
profiles=("$data"/*.profraw)
[[ ${#profiles[@]} -gt 0 ]] || {
  echo "pgo-build: the training wrote no profile to $data" >&2
  exit 1
}
"$profdata" merge -o "$data/merged.profdata" "${profiles[@]}"

echo "pgo-build: optimised build (target/pgo)" >&2
RUSTFLAGS="-Cprofile-use=$data/merged.profdata" \
  cargo build --release --locked -p mcp-compat --target-dir target/pgo >&2
echo target/pgo/release/mcp-compat
