#!/usr/bin/env bash
# What the default data costs where nothing compresses: iolab's default pattern against
# --pattern stamped (buffers reused, only stamped, as fio's default) on a loop device over
# /dev/shm (no file system: the default only stamps there, so the ratios must be 1 within the
# noise), 4 KiB sequential writes at QD1 and QD32 and 1 MiB sequential writes at QD8, through
# io_uring with O_DIRECT, alternating in every round; prints each line's paired ratio
# (default / stamped) per round and its median. Both pinned to one CPU (BENCH_CPU, default 1)
# as in scripts/bench-vs-fio.sh. History: at 884e82c the default refilled every write under
# 1 MiB everywhere, and this script measured what that cost: 4 KiB sequential writes at QD32
# 0.61x, random ones 0.935x, 1 MiB 1.00x (another core reads the buffers here, as a VM's host
# does: the refill's stores then cost ~2 us per 4 KiB instead of 0.15 us); since then only a
# compressing file system gets refilled writes (runner::block::written_pattern).
#
#   sudo scripts/bench-pattern.sh [SECONDS_PER_RUN] [ROUNDS]
#
# Needs root (loop device) and python3; creates and removes its own file and device.
set -uo pipefail
SECS=${1:-3}
ROUNDS=${2:-5}
CPU=${BENCH_CPU:-1}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT" || exit 2
cargo build --release -q || exit 2
IOLAB="$ROOT/target/release/iolab"
# shellcheck source=scripts/bench-loop.sh
. "$ROOT/scripts/bench-loop.sh"
bench_loop pattern
iops() { # rw bs qd pattern
    taskset -c "$CPU" "$IOLAB" run --target "$LOOP" --allow-destroy "$LOOP" --prefill false \
        --engine uring --direct true --rw "$1" --bs "$2" --iodepth "$3" --size 512M \
        --duration "${SECS}s" --ramp 500ms --repeat 1 --pattern "$4" --json --no-save 2>/dev/null |
        python3 -c 'import json,sys; print(json.load(sys.stdin)["tests"][0]["summary"]["iops"]["median"])'
}
# BENCH_LINES="randwrite 4k 32;write 1m 8" picks lines (rw bs depth, ';' between them).
IFS=';' read -ra LINES <<<"${BENCH_LINES:-write 4k 1;write 4k 32;write 1m 8}"
for line in "${LINES[@]}"; do
    set -- $line
    ratios=()
    for r in $(seq 1 "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then a=$(iops "$1" "$2" "$3" random); b=$(iops "$1" "$2" "$3" stamped)
        else b=$(iops "$1" "$2" "$3" stamped); a=$(iops "$1" "$2" "$3" random); fi
        ratios+=("$(python3 -c "print(f'{$a/$b:.3f}')")")
        echo "  $1 $2 QD$3 round $r: random $a IOPS, stamped $b IOPS" >&2
    done
    echo "$1 $2 QD$3: random / stamped per round ${ratios[*]}; median $(printf '%s\n' "${ratios[@]}" | sort -n | sed -n "$(((ROUNDS + 1) / 2))p")"
done
