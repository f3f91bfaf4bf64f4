#!/usr/bin/env bash
# Where a server under load spends its time on atomic read-modify-writes
# (docs/PERFORMANCE.md, session 47). callgrind (scripts/instructions.sh,
# scripts/wire-instructions.sh) counts a `lock`-prefixed instruction as
# one instruction, but on two CPUs one that updates a word both CPUs
# update (a shared `Arc`'s count, a lock, a counter every request moves)
# waits for the word's cache line to come from the other CPU: tens of
# nanoseconds that no instruction count shows. `perf record` samples land
# on the instruction after the one that waited, so the share of samples
# that follow a locked instruction is the time spent on them.
#
#   scripts/atomics-profile.sh [BINARY] [WORKLOAD] [TOP]
#
# Runs `BINARY bench --workloads WORKLOAD` (default: target/release/
# mcp-compat, modern-json; `floor` profiles the bare-axum floor), waits
# until the workload's server is busy, samples it for 3 s, and prints the
# share of its samples on locked instructions (`lock ...` and `xchg` with
# memory, which is locked on x86) and the TOP (default 25) functions
# they are in. Needs perf, objdump and python3; x86-64 only. A build with
# line tables (CARGO_PROFILE_RELEASE_DEBUG=line-tables-only) lets
# `perf annotate` or `addr2line -i` name the source line of each.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-target/release/mcp-compat}")
workload=${2:-modern-json}
top=${3:-25}
for tool in perf objdump python3; do
  command -v "$tool" >/dev/null || { echo "atomics-profile: $tool is not installed" >&2; exit 1; }
done
tmp=$(mktemp -d)
bench=
cleanup() { [[ -n $bench ]] && kill "$bench" 2>/dev/null; rm -rf "$tmp"; }
trap cleanup EXIT

"$bin" bench --workloads "$workload" --rounds 1 --duration-ms 6000 >"$tmp/bench.out" 2>&1 &
bench=$!
if [[ $workload == floor ]]; then pattern="$bin bench --floor-server"; else pattern="$bin serve "; fi
# CPU ticks (user + system) of a process.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
server=
for _ in $(seq 200); do
  server=$(pgrep -f "^$pattern" | head -1 || true)
  if [[ -n $server ]]; then
    before=$(ticks "$server")
    sleep 0.5
    # Busy: more than a fifth of a CPU over the half second (ticks are
    # 1/100 s).
    (($(ticks "$server") - before > 10)) && break
  else
    sleep 0.1
  fi
done
[[ -n $server ]] || { echo "atomics-profile: no server for $workload" >&2; exit 1; }
sleep 1
perf record -q -F 4999 -p "$server" -o "$tmp/perf.data" -- sleep 3 >/dev/null 2>&1
wait "$bench" || true
bench=
grep -E "^(floor|$workload) " "$tmp/bench.out" || true
objdump -d --no-show-raw-insn "$bin" >"$tmp/dis.txt"
perf script -i "$tmp/perf.data" --show-mmap-events 2>/dev/null | grep 'PERF_RECORD_MMAP' >"$tmp/mmap.txt" || true
perf script -i "$tmp/perf.data" -F ip,sym,dso 2>/dev/null >"$tmp/samples.txt"
python3 - "$tmp" "$bin" "$top" <<'PY'
import collections, re, subprocess, sys
tmp, binary, top = sys.argv[1], sys.argv[2], int(sys.argv[3])
# Addresses that follow a locked instruction, and the file offset of the
# executable segment (to undo the position-independent load address).
after, prev = set(), None
line = re.compile(r'^\s*([0-9a-f]+):\s+(\S+)\s*(.*)$')
for text in open(f'{tmp}/dis.txt'):
    m = line.match(text)
    if not m:
        prev = None
        continue
    addr, op, args = int(m.group(1), 16), m.group(2), m.group(3)
    if prev is not None:
        after.add(addr)
    prev = addr if op == 'lock' or (op.startswith('xchg') and '(' in args) else None
segments = subprocess.run(['readelf', '-lW', binary], capture_output=True, text=True).stdout
vaddr_minus_offset = 0
for s in segments.splitlines():
    f = s.split()
    if f[:1] == ['LOAD'] and 'E' in f[6:-1]:
        vaddr_minus_offset = int(f[2], 16) - int(f[1], 16)
base = None
for s in open(f'{tmp}/mmap.txt'):
    if 'r-xp' in s and s.rstrip().endswith(binary):
        m = re.search(r'\[0x([0-9a-f]+)\(0x[0-9a-f]+\) @ 0x([0-9a-f]+)', s)
        base = int(m.group(1), 16) - int(m.group(2), 16)
        break
if base is None:
    sys.exit('atomics-profile: the binary is not in the recorded mappings')
total, locked, by = 0, 0, collections.Counter()
for s in open(f'{tmp}/samples.txt'):
    f = s.split(None, 1)
    if not f:
        continue
    total += 1
    if binary not in s:
        continue
    if int(f[0], 16) - base + vaddr_minus_offset in after:
        locked += 1
        by[f[1].rsplit('(', 1)[0].strip()[:110]] += 1
print(f'{total} samples of the server; {locked} on locked instructions: {100 * locked / max(total, 1):.2f} %')
for name, n in by.most_common(top):
    print(f'{100 * n / total:6.2f} %  {name}')
PY
