#!/usr/bin/env bash
# CI's script, N times in a row, each on a fresh clone, while a background load runs on the
# same machine: two CPU hogs (stress-ng --cpu 1, twice) and a direct-I/O write loop on the
# root disk. What docs/RELIABILITY.md's "The suite under load" records.
#
#   scripts/ci-under-load.sh [RUNS] [REPO] [REF]   (default: 5 runs of this checkout's HEAD)
#
# Needs root (CI does), stress-ng (apt-get install stress-ng). Prints one line per run:
# duration, exit code, tests passed/failed/ignored; logs stay in the printed directory.
set -uo pipefail
runs=${1:-5}
repo=$(cd "${2:-$(dirname "$0")/..}" && pwd)
# The commit under test, fixed at the start (the checkout may move on while this runs).
ref=$(git -C "$repo" rev-parse "${3:-HEAD}")
work=$(mktemp -d /var/tmp/iolab-ci-load.XXXXXX)
load_file="$work/dd-load.bin"
pids=()
stop_load() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null; done
    wait 2>/dev/null
    rm -f "$load_file"
}
trap stop_load EXIT

command -v stress-ng >/dev/null || { echo "stress-ng is not installed" >&2; exit 2; }
stress-ng --cpu 1 --timeout 0 --quiet &
pids+=($!)
stress-ng --cpu 1 --timeout 0 --quiet &
pids+=($!)
# 256 MiB written with O_DIRECT, over and over, on the disk that holds the clones.
( while :; do dd if=/dev/zero of="$load_file" bs=1M count=256 oflag=direct status=none; done ) &
pids+=($!)

# One build directory for all the clones: the first run builds everything, the others only
# iolab itself (each clone is a new path). What is under test is the suite, not the compiler.
export CARGO_TARGET_DIR="$work/target"
# WARM_TARGET=DIR starts it from a copy of an existing build directory (dependencies built).
[ -n "${WARM_TARGET:-}" ] && cp -a "$WARM_TARGET" "$CARGO_TARGET_DIR"
echo "commit $ref"
echo "load: 2 x stress-ng --cpu 1, dd oflag=direct loop on $(df --output=source "$work" | tail -1); logs in $work"
fails=0
for i in $(seq 1 "$runs"); do
    clone="$work/clone-$i/iolab"
    mkdir -p "$work/clone-$i"
    git clone -q "$repo" "$clone" && git -C "$clone" checkout -q "$ref"
    # CI runs with the steering repo's shared/ beside the clone.
    [ -d "$repo/../shared" ] && ln -s "$(cd "$repo/../shared" && pwd)" "$work/clone-$i/shared"
    start=$(date +%s)
    (cd "$clone" && CI=true bash .ci/run) > "$work/run-$i.log" 2>&1
    rc=$?
    took=$(( $(date +%s) - start ))
    passed=$(grep -oE '[0-9]+ passed' "$work/run-$i.log" | awk '{s+=$1} END {print s+0}')
    failed=$(grep -oE '[0-9]+ failed' "$work/run-$i.log" | awk '{s+=$1} END {print s+0}')
    ignored=$(grep -oE '[0-9]+ ignored' "$work/run-$i.log" | awk '{s+=$1} END {print s+0}')
    echo "run $i: exit $rc, $((took / 60)) min $((took % 60)) s, $passed passed, $failed failed, $ignored ignored ($(date -u +%H:%M) UTC)"
    [ "$rc" -eq 0 ] || fails=$((fails + 1))
done
echo "$runs runs, $fails failed"
[ "$fails" -eq 0 ]
