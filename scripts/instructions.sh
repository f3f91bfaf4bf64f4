#!/usr/bin/env bash
# Instructions a request, in process, counted by callgrind: the servers
# `serve` builds driven with no socket (cli/benches/instructions.rs, with
# the binary's allocator and tracing subscriber), every answer checked.
# A count, not a timing: the same binary gives the same figure on any
# load, so it can be bounded where request rates cannot (issue 19 asks
# that something stop a regression; docs/PERFORMANCE.md).
#
#   scripts/instructions.sh [--check] [CASE...]
#
# Each case runs twice (N1 and N2 requests after the same start-up) and
# the figure is (count(N2) - count(N1)) / (N2 - N1). CASE is one of
# `bench::inproc`'s cases (default: the floor and the four bounded
# below: stateless and session, JSON and SSE). With
# --check, exits 1 when a case is over its bound below; the floor is
# printed for scale and has none (it is axum's work, not ours).
set -euo pipefail
cd "$(dirname "$0")/.."

check=0
if [[ ${1:-} == --check ]]; then
  check=1
  shift
fi
cases=("$@")
[[ ${#cases[@]} -gt 0 ]] || cases=(floor modern-json modern-sse legacy-json legacy-sse)

# Bounds, instructions a request: ~6 % over the counts with the release
# profile's LTO (session 19: 31,484 and 32,428 for the stateless cases;
# session 21: 32,690 and 42,252 for the session cases; session 22: 40,294
# for legacy-sse; session 23: 31,153 / 32,115 / 29,585 / 37,665; session 24:
# 29,374 / 30,333 / 29,099 / 37,183; session 25: 28,447 / 29,407 / 28,842 /
# 36,927; session 27, `serve`'s endpoint without axum's `Router`, SSE
# headers cloned, the loopback `Host` shortcut: 25,727 / 26,269 / 25,037 /
# 32,780; a few instructions
# apart between runs here, from hash seeds; on another CPU glibc may pick
# another memcpy, which moves a count a little more). Lower them when a
# change lowers the count for good.
declare -A bound=([modern-json]=27300 [modern-sse]=27900 [legacy-json]=26600 [legacy-sse]=34800)
n1=200
n2=1200

command -v valgrind >/dev/null || {
  echo "instructions: valgrind is not installed (apt-get install valgrind)" >&2
  exit 1
}
built=$(cargo bench -p mcp-compat --bench instructions --no-run 2>&1) || {
  echo "$built" >&2
  exit 1
}
bin=$(sed -n 's/.*Executable benches\/instructions.rs (\(.*\))$/\1/p' <<<"$built" | tail -1)
[[ -x $bin ]] || {
  echo "instructions: cannot find the bench binary in cargo's output:" >&2
  echo "$built" >&2
  exit 1
}

count() { # CASE N -> instructions of the whole run
  local out
  out=$(valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1:$2" 2>&1) || {
    echo "$out" >&2
    return 1
  }
  sed -n 's/^==[0-9]*== Collected : \([0-9]*\)$/\1/p' <<<"$out"
}

over=0
echo "| case | instructions/request | bound |"
echo "| --- | --- | --- |"
for c in "${cases[@]}"; do
  a=$(count "$c" "$n1")
  b=$(count "$c" "$n2")
  [[ -n $a && -n $b ]] || {
    echo "instructions: no count for $c" >&2
    exit 1
  }
  per=$(((b - a) / (n2 - n1)))
  max=${bound[$c]:-}
  echo "| $c | $per | ${max:-none} |"
  if [[ -n $max && $per -gt $max ]]; then
    echo "instructions: $c costs $per instructions a request, over its bound of $max" >&2
    over=1
  fi
done
if ((check && over)); then
  exit 1
fi
