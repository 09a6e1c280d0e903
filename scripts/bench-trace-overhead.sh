#!/bin/sh
# Recording overhead of `iolab trace record` (issue #30): the tar pipeline of
# scripts/bench-trace-replay.sh (500 files, 16 MB) run un-traced, under the tracepoints
# recorder and under strace, N times each in turn (default 5); prints every run and the
# medians, then replays the last tracepoints recording with `--timing recorded`.
# The traced time is the program's own wall time as iolab measured it (spawn to exit,
# the trace's `wall_ns`), the un-traced time the same span measured by this shell.
# Every measured run starts after a `sync`, so that no run pays for the dirty data the one
# before it left (on ext4 the un-traced runs otherwise slowed from 76 to 202 ms over five
# rounds); the per-round ratio (traced / un-traced of the same round) is printed beside
# the medians.
# Needs root (the tracepoints recorder) and strace. Release build:
#   cargo build --release && sudo scripts/bench-trace-overhead.sh target/release/iolab
# Usage: scripts/bench-trace-overhead.sh [IOLAB_BINARY] [DIR] [N]
set -eu
BIN=${1:-target/release/iolab}
BIN=$(readlink -f "$BIN")
BASE=${2:-${TMPDIR:-/tmp}}
N=${3:-5}
W=$(mktemp -d "$BASE/iolab-trace-overhead.XXXXXX")
R=$(mktemp -d "$BASE/iolab-trace-overhead-target.XXXXXX")
trap 'rm -rf "$W" "$R"' EXIT
cd "$W"
mkdir -p src
i=0
while [ $i -lt 500 ]; do
    mkdir -p "src/d$((i % 20))"
    head -c $(( (i * 7919) % 65536 + 512 )) /dev/urandom > "src/d$((i % 20))/f$i"
    i=$((i + 1))
done
PIPE='tar cf a.tar src && mkdir out && tar xf a.tar -C out && rm a.tar'
ms() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f\n", (b - a) / 1e6 }'; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.1f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
wall_of() { head -1 "$1" | sed 's/.*"wall_ns":\([0-9]*\).*/\1/' | awk '{ printf "%.1f\n", $1 / 1e6 }'; }
# Warm-up: the tree in the page cache, tar's binary loaded.
sh -c "$PIPE"; rm -rf out
: > plain.ms; : > tp.ms; : > st.ms; : > tptotal.ms; : > ratio
r=1
while [ $r -le "$N" ]; do
    sync; t0=$(date +%s%N); sh -c "$PIPE"; t1=$(date +%s%N); rm -rf out
    ms "$t0" "$t1" >> plain.ms
    sync; t0=$(date +%s%N)
    "$BIN" trace record --recorder tracepoints -o tp.trace -- sh -c "$PIPE" 2> tp.log
    t1=$(date +%s%N); rm -rf out
    wall_of tp.trace >> tp.ms
    ms "$t0" "$t1" >> tptotal.ms
    awk -v a="$(tail -1 tp.ms)" -v b="$(tail -1 plain.ms)" 'BEGIN { printf "%.3f\n", a / b }' >> ratio
    sync
    "$BIN" trace record --recorder strace -o st.trace -- sh -c "$PIPE" 2> st.log; rm -rf out
    wall_of st.trace >> st.ms
    echo "run $r: un-traced $(tail -1 plain.ms) ms, tracepoints $(tail -1 tp.ms) ms (x$(tail -1 ratio); iolab in all $(tail -1 tptotal.ms) ms), strace $(tail -1 st.ms) ms"
    r=$((r + 1))
done
P=$(median < plain.ms); T=$(median < tp.ms); S=$(median < st.ms)
echo "medians of $N: un-traced $P ms, tracepoints $T ms (x$(awk -v a="$T" -v b="$P" 'BEGIN { printf "%.2f", a / b }')), strace $S ms (x$(awk -v a="$S" -v b="$P" 'BEGIN { printf "%.2f", a / b }'))"
echo "tracepoints / un-traced of the same round: median x$(median < ratio)"
echo "iolab trace record --recorder tracepoints in all (setup, run, reading and parsing the events, writing the trace): median $(median < tptotal.ms) ms"
grep -E '^recorded with' tp.log
grep -E '^recorded with' st.log
echo "== replay of the last tracepoints recording ($(tail -1 tp.ms) ms), --timing recorded; un-traced median $P ms"
sync
"$BIN" trace replay tp.trace --target "$R" --timing recorded --repeat 3 --no-save 2>/dev/null \
    | grep -E 'total|replay \('
