#!/usr/bin/env bash
# iolab files vs fs_mark -S 0 vs a minimal C open-write-close loop (scripts/openwrite.c),
# on the same tmpfs directory and on ext4 on a loop device (image, loop and mounts are made
# here and torn down on exit), 0-byte and 4 KiB files, COUNT files per run, the three tools
# alternating (order rotated each round, `sync` between runs), REPS rounds; the median
# files/s of each is reported. fs_mark and iolab time their own create loop; the C loop
# times its loop with CLOCK_MONOTONIC.
#
# All three are pinned to the same CPU (BENCH_CPU, default 1; `taskset`), so the scheduler's
# placement of one tool is not what is compared.
#
# usage: sudo scripts/bench-vs-fsmark.sh [COUNT=10000] [REPS=9]
# Targets (issue 4): iolab >= 1.5x fs_mark on tmpfs, >= 0.9x the C loop.
set -euo pipefail

COUNT=${1:-10000}
REPS=${2:-9}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
IOLAB=${IOLAB:-$ROOT/target/release/iolab}
CPU=${BENCH_CPU:-1}

[ "$(id -u)" = 0 ] || { echo "needs root (mounts tmpfs and a loop device)" >&2; exit 2; }
for t in fs_mark cc jq losetup mkfs.ext4 taskset; do
    command -v "$t" >/dev/null || { echo "missing: $t" >&2; exit 2; }
done
[ -x "$IOLAB" ] || (cd "$ROOT" && cargo build --release --quiet)

WORK=$(mktemp -d /tmp/iolab-bench.XXXXXX)
LOOP=""
cleanup() {
    set +e
    for m in "$WORK/tmpfs" "$WORK/ext4"; do mountpoint -q "$m" && umount "$m"; done
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

cc -O2 -o "$WORK/openwrite" "$ROOT/scripts/openwrite.c"
mkdir "$WORK/tmpfs" "$WORK/ext4"
mount -t tmpfs -o size=2g iolab-bench "$WORK/tmpfs"
truncate -s 4G "$WORK/ext4.img"
LOOP=$(losetup -f --show "$WORK/ext4.img")
mkfs.ext4 -q -F "$LOOP"
mount "$LOOP" "$WORK/ext4"

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

run_fsmark() { # dir size -> files/s
    local d="$1/fsm"; rm -rf "$d"; mkdir "$d"
    taskset -c "$CPU" fs_mark -d "$d" -n "$COUNT" -s "$2" -S 0 -L 1 -t 1 -l "$WORK/fs_log.txt" 2>/dev/null |
        awk '/^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+/ {print $4}' | tail -1
    rm -rf "$d"
}
run_c() {
    local d="$1/c"; rm -rf "$d"; mkdir "$d"
    taskset -c "$CPU" "$WORK/openwrite" "$d" "$COUNT" "$2"
    rm -rf "$d"
}
run_iolab() {
    taskset -c "$CPU" "$IOLAB" files --target "$1" --sizes "$2" --files-per-portion "$COUNT" --portions 1 \
        --passes 1 --repeat 1 --sync none --phases create,delete --no-save --json 2>/dev/null |
        jq -r '.tests[0].runs[0].files_per_s | floor'
}

printf '| fs | size | fs_mark -S 0 files/s | C loop files/s | iolab files/s | iolab / fs_mark | iolab / C |\n'
printf '|---|---|---|---|---|---|---|\n'
for fs in tmpfs ext4; do
    dir="$WORK/$fs"
    for size in 0 4096; do
        : >"$WORK/f"; : >"$WORK/c"; : >"$WORK/i"
        for r in $(seq "$REPS"); do
            # Rotate the order so no tool always runs right after another one's deletes.
            for k in 0 1 2; do
                case $(( (r + k) % 3 )) in
                    0) run_fsmark "$dir" "$size" >>"$WORK/f" ;;
                    1) run_c "$dir" "$size" >>"$WORK/c" ;;
                    2) run_iolab "$dir" "$size" >>"$WORK/i" ;;
                esac
                sync
            done
        done
        f=$(median <"$WORK/f"); c=$(median <"$WORK/c"); i=$(median <"$WORK/i")
        awk -v fs="$fs" -v s="$size" -v f="$f" -v c="$c" -v i="$i" \
            'BEGIN {printf "| %s | %s | %.0f | %.0f | %.0f | %.2fx | %.2fx |\n", fs, s, f, c, i, i/f, i/c}'
    done
done
