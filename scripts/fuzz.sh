#!/usr/bin/env bash
# Runs every cargo-fuzz target of fuzz/ for SECONDS each (default 30),
# starting from the committed seeds (fuzz/seeds/TARGET) plus whatever an
# earlier run added to the git-ignored corpus (fuzz/corpus/TARGET), and
# prints the executions and findings per target. Exits non-zero when a
# target found a crash (the input is kept in fuzz/artifacts/TARGET/).
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]
#
# FUZZ_FLAGS adds cargo-fuzz options to the build and every run (CI uses
# `--dev -s none`: a debug build without AddressSanitizer, which compiles
# much faster; the crates forbid `unsafe`, and libFuzzer still catches
# panics, overflows, timeouts and runaway memory).
#
# Needs the nightly toolchain (`cargo +nightly`) and cargo-fuzz (installed
# here with `cargo install --locked cargo-fuzz` when missing); without
# nightly it says so and exits 0.
set -euo pipefail
cd "$(dirname "$0")/.."
secs="${1:-30}"
shift || true

if ! cargo +nightly --version >/dev/null 2>&1; then
  echo "fuzz: no nightly toolchain (cargo +nightly); skipping the fuzz targets"
  exit 0
fi
if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
  cargo install --locked cargo-fuzz@0.13.2
fi
export CARGO_INCREMENTAL=0

targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

mkdir -p fuzz/target
read -r -a flags <<<"${FUZZ_FLAGS:-}"
if ! cargo +nightly fuzz build "${flags[@]}" >fuzz/target/build.log 2>&1; then
  tail -n 40 fuzz/target/build.log
  exit 1
fi

failed=0
summary=()
for t in "${targets[@]}"; do
  mkdir -p "fuzz/corpus/$t"
  log="fuzz/target/$t.log"
  status=0
  cargo +nightly fuzz run "${flags[@]}" "$t" "fuzz/corpus/$t" "fuzz/seeds/$t" -- \
    -max_total_time="$secs" -timeout=10 -print_final_stats=1 >"$log" 2>&1 || status=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 | grep -o '[0-9]*$' || true)
  if [ "$status" -ne 0 ]; then
    failed=1
    finding=$(grep -m 1 -E 'panicked at|ERROR: libFuzzer|SUMMARY:' "$log" || echo "exit $status")
    echo "---- $t: FINDING (log $log)"
    grep -E -A 12 'panicked at|ERROR: libFuzzer' "$log" | head -n 30 || true
    summary+=("$(printf '%-14s %12s execs  cov %5s  FINDING: %s' "$t" "${execs:-?}" "${cov:-?}" "$finding")")
  else
    summary+=("$(printf '%-14s %12s execs  cov %5s  no findings' "$t" "${execs:-?}" "${cov:-?}")")
  fi
done

echo "fuzz: ${secs}s per target"
printf '%s\n' "${summary[@]}"
exit "$failed"
