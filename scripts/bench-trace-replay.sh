#!/bin/sh
# Replay overhead of `iolab trace`: record a real program (tar of a 500-file tree, then
# extracting it again; with the tracepoints recorder as root, else strace), replay it as
# fast as possible and at the recorded times, and print replay time vs recorded time and
# calls per second. The recording's own overhead: scripts/bench-trace-overhead.sh.
# Usage: scripts/bench-trace-replay.sh [IOLAB_BINARY] [DIR]
set -eu
BIN=${1:-target/release/iolab}
BIN=$(readlink -f "$BIN")
BASE=${2:-${TMPDIR:-/tmp}}
W=$(mktemp -d "$BASE/iolab-trace-bench.XXXXXX")
trap 'rm -rf "$W"' EXIT
cd "$W"
mkdir -p src
i=0
while [ $i -lt 500 ]; do
    mkdir -p "src/d$((i % 20))"
    head -c $(( (i * 7919) % 65536 + 512 )) /dev/urandom > "src/d$((i % 20))/f$i"
    i=$((i + 1))
done
"$BIN" trace record -o app.trace -- sh -c 'tar cf a.tar src && mkdir out && tar xf a.tar -C out && rm a.tar'
R=$(mktemp -d "$BASE/iolab-trace-bench-target.XXXXXX")
trap 'rm -rf "$W" "$R"' EXIT
for timing in asap recorded; do
    echo "== replay --timing $timing"
    "$BIN" trace replay app.trace --target "$R" --timing $timing --repeat 3 --no-save 2>/dev/null \
        | grep -E 'total|replay \('
done
