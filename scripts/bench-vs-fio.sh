#!/usr/bin/env bash
# iolab vs fio on identical jobs, alternating in one run; prints ratios (iolab / fio).
#
#   sudo scripts/bench-vs-fio.sh [SECONDS_PER_RUN] [ROUNDS]
#
# Lines: 4 KiB randread QD1 (iolab sync vs fio psync) on a buffered tmpfs file; 4 KiB
# randread/randwrite QD1 and QD32 (iolab uring vs fio io_uring) with O_DIRECT on a loop
# device over a file in /dev/shm; 1 MiB sequential read and write QD8 on the same device.
# Needs root (loop device), fio 3.x and python3; the report (median of the rounds and the
# percentiles of all rounds' samples pooled) is scripts/bench-vs-fio-report.py.
# Creates and removes its own files and devices; BENCH_KEEP=DIR keeps every run's JSON there
# (re-report with `BENCH_SECS=SECONDS scripts/bench-vs-fio-report.py DIR ROUNDS NAME...`).
# BENCH_CONTROL=1 also runs fio a second time in every round (order rotated) and reports fio
# against itself: the A/A control, i.e. how far two runs of the *same* tool differ on this
# machine — a gap between iolab and fio smaller than that is not a difference of the tools.
# Both tools are pinned to the same CPU (BENCH_CPU, default 1; `taskset`): on a small VM the
# placement of the submitting thread relative to the loop driver's worker moves QD1 results
# by 2x from run to run, which would otherwise decide the ratio.
# During every run it also reads the CPUs' idle-state entry counts (cpuidle `usage`, every
# state but POLL: halts on a VM, C-states on bare metal) over the steady middle of the run,
# and the report gives the halts per I/O of each tool, on the tools' CPU and on the others:
# at QD1 on a VM each halt costs a wake-up through the host (docs/PERFORMANCE.md).
set -euo pipefail
SECS=${1:-4}
ROUNDS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root for the loop device" >&2; exit 1; }
cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
IOLAB="$ROOT/target/release/iolab"
CPU=${BENCH_CPU:-1}
CONTROL=${BENCH_CONTROL:-0}

# shellcheck source=scripts/bench-loop.sh
. "$ROOT/scripts/bench-loop.sh"
bench_loop bench
mkdir -p "$WORK/tmpfs"
SIZE=512M

# Idle counts are read over the steady middle of each run: from 1 s after its start (setup
# and the 0.5 s ramp done) to 0.2 s before its measured time ends.
WIN_FROM=1
WIN_TO=$(awk "BEGIN { print 0.5 + $SECS - 0.2 }")
COUNT=1
if ! awk "BEGIN { exit !($WIN_TO > $WIN_FROM + 0.5) }"; then
    COUNT=0
    echo "runs of ${SECS}s are too short to count idle states in (2 s or more): no halts table" >&2
fi
count() { # file command... : the command, with its idle counts in file when COUNT=1
    local file=$1
    shift
    if [ "$COUNT" = 1 ]; then counted "$file" "$WIN_FROM" "$WIN_TO" "$@"; else "$@"; fi
}
RES="$WORK/results"
mkdir -p "$RES"

run_iolab() { # name target direct engine rw bs qd
    local name=$1 target=$2 direct=$3 engine=$4 rw=$5 bs=$6 qd=$7 extra=()
    # The device was filled once by bench_loop (dd from /dev/urandom) and fio reads it as it
    # is; iolab does the same (--prefill false) rather than writing 512 MiB before each run.
    [ -b "$target" ] && extra=(--allow-destroy "$target" --prefill false)
    count "$RES/$name.iolab.$ROUND.idle" taskset -c "$CPU" "$IOLAB" run --target "$target" "${extra[@]}" --engine "$engine" --direct "$direct" \
        --rw "$rw" --bs "$bs" --iodepth "$qd" --size $SIZE --duration "${SECS}s" --ramp 500ms \
        --repeat 1 --json --no-save 2>/dev/null > "$RES/$name.iolab.$ROUND.json"
}

run_fio() { # name target direct engine rw bs qd [tag]
    local name=$1 target=$2 direct=$3 engine=$4 rw=$5 bs=$6 qd=$7 tag=${8:-fio} file=$2 extra=()
    [ -d "$target" ] && file="$target/fio.dat"
    [ "$engine" = io_uring ] && extra=(--fixedbufs=1 --registerfiles=1)
    count "$RES/$name.$tag.$ROUND.idle" taskset -c "$CPU" fio --name=bench --filename="$file" --size=$SIZE --direct="$direct" --ioengine="$engine" \
        --rw="$rw" --bs="$bs" --iodepth="$qd" --time_based --runtime="$SECS" --ramp_time=500ms \
        --randrepeat=0 --lat_percentiles=1 --group_reporting "${extra[@]}" \
        --output-format=json+ > "$RES/$name.$tag.$ROUND.json" 2>/dev/null
}

LINES=(
    "rr4k-qd1-psync-tmpfs|$WORK/tmpfs|0|sync|psync|randread|4k|1"
    "rr4k-qd1-uring|$LOOP|1|uring|io_uring|randread|4k|1"
    "rr4k-qd32-uring|$LOOP|1|uring|io_uring|randread|4k|32"
    "rw4k-qd1-uring|$LOOP|1|uring|io_uring|randwrite|4k|1"
    "rw4k-qd32-uring|$LOOP|1|uring|io_uring|randwrite|4k|32"
    "seqr1m-qd8-uring|$LOOP|1|uring|io_uring|read|1m|8"
    "seqw1m-qd8-uring|$LOOP|1|uring|io_uring|write|1m|8"
)

for ROUND in $(seq 1 "$ROUNDS"); do
    for i in "${!LINES[@]}"; do
        IFS='|' read -r name target direct ieng feng rw bs qd <<<"${LINES[i]}"
        if [ "$CONTROL" = 1 ]; then
            # fio, iolab and fio again (the A/A control), in a rotated order. The rotation
            # keeps the cycle fio -> iolab -> fio #2 -> fio, so iolab and fio always follow
            # a run of fio (their ratio is not moved by what a run leaves behind), and fio #2
            # always follows iolab: the control also shows what an iolab run does to the next.
            for k in 0 1 2; do
                case $(((ROUND + k) % 3)) in
                    0) run_fio "$name" "$target" "$direct" "$feng" "$rw" "$bs" "$qd" ;;
                    1) run_iolab "$name" "$target" "$direct" "$ieng" "$rw" "$bs" "$qd" ;;
                    2) run_fio "$name" "$target" "$direct" "$feng" "$rw" "$bs" "$qd" fio2 ;;
                esac
                rm -f "$WORK/tmpfs/fio.dat"
            done
        # Alternate which tool goes first, by round and by line: drift does not favour one,
        # and each tool's first run follows its own run of the line before, its second run
        # the other tool's run of this line, in as many rounds as the other tool's — a run
        # that leaves the machine slower or faster for the next (seen: 3-4 %, see
        # docs/PERFORMANCE.md) does not favour either tool.
        elif [ $(((ROUND + i) % 2)) = 1 ]; then
            run_fio "$name" "$target" "$direct" "$feng" "$rw" "$bs" "$qd"
            run_iolab "$name" "$target" "$direct" "$ieng" "$rw" "$bs" "$qd"
        else
            run_iolab "$name" "$target" "$direct" "$ieng" "$rw" "$bs" "$qd"
            run_fio "$name" "$target" "$direct" "$feng" "$rw" "$bs" "$qd"
        fi
        rm -f "$WORK/tmpfs/fio.dat"
    done
done

if [ -n "${BENCH_KEEP:-}" ]; then
    mkdir -p "$BENCH_KEEP" && cp "$RES"/*.json "$BENCH_KEEP"/ && { cp "$RES"/*.idle "$BENCH_KEEP"/ 2>/dev/null || true; } && echo "JSON of every run kept in $BENCH_KEEP"
fi
BENCH_CPU=$CPU BENCH_SECS=$SECS python3 "$ROOT/scripts/bench-vs-fio-report.py" "$RES" "$ROUNDS" "${LINES[@]}"
