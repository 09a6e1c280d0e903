#!/usr/bin/env bash
# iolab vs fio on identical jobs, alternating in one run; prints ratios (iolab / fio).
#
#   sudo scripts/bench-vs-fio.sh [SECONDS_PER_RUN] [ROUNDS]
#
# Lines: 4 KiB randread QD1 (iolab sync vs fio psync) on a buffered tmpfs file; 4 KiB
# randread/randwrite QD1 and QD32 (iolab uring vs fio io_uring) with O_DIRECT on a loop
# device over a file in /dev/shm; 1 MiB sequential read and write QD8 on the same device.
# Needs root (loop device), fio 3.x and python3. Creates and removes its own files/devices.
# Both tools are pinned to the same CPU (BENCH_CPU, default 1; `taskset`): on a small VM the
# placement of the submitting thread relative to the loop driver's worker moves QD1 results
# by 2x from run to run, which would otherwise decide the ratio.
set -euo pipefail
SECS=${1:-4}
ROUNDS=${2:-3}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "needs root for the loop device" >&2; exit 1; }
cargo build --release --quiet --manifest-path "$ROOT/Cargo.toml"
IOLAB="$ROOT/target/release/iolab"
CPU=${BENCH_CPU:-1}

WORK=$(mktemp -d /dev/shm/iolab-bench.XXXXXX)
LOOP=""
cleanup() {
    [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
    rm -rf "$WORK"
}
trap cleanup EXIT INT TERM

mkdir -p "$WORK/tmpfs"
truncate -s 1G "$WORK/backing.img"
LOOP=$(losetup --find --show "$WORK/backing.img")
SIZE=512M
# Prefill once so reads never hit holes (both tools then read the same data).
dd if=/dev/urandom of="$LOOP" bs=1M count=512 oflag=direct status=none

RES="$WORK/results"
mkdir -p "$RES"

run_iolab() { # name target direct engine rw bs qd
    local name=$1 target=$2 direct=$3 engine=$4 rw=$5 bs=$6 qd=$7 extra=()
    [ -b "$target" ] && extra=(--allow-destroy "$target")
    taskset -c "$CPU" "$IOLAB" run --target "$target" "${extra[@]}" --engine "$engine" --direct "$direct" \
        --rw "$rw" --bs "$bs" --iodepth "$qd" --size $SIZE --duration "${SECS}s" --ramp 500ms \
        --repeat 1 --json --no-save 2>/dev/null > "$RES/$name.iolab.$ROUND.json"
}

run_fio() { # name target direct engine rw bs qd
    local name=$1 target=$2 direct=$3 engine=$4 rw=$5 bs=$6 qd=$7 file=$2 extra=()
    [ -d "$target" ] && file="$target/fio.dat"
    [ "$engine" = io_uring ] && extra=(--fixedbufs=1 --registerfiles=1)
    taskset -c "$CPU" fio --name=bench --filename="$file" --size=$SIZE --direct="$direct" --ioengine="$engine" \
        --rw="$rw" --bs="$bs" --iodepth="$qd" --time_based --runtime="$SECS" --ramp_time=500ms \
        --randrepeat=0 --lat_percentiles=1 --group_reporting "${extra[@]}" \
        --output-format=json > "$RES/$name.fio.$ROUND.json" 2>/dev/null
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
    for line in "${LINES[@]}"; do
        IFS='|' read -r name target direct ieng feng rw bs qd <<<"$line"
        # Alternate which tool goes first, so drift does not favour one.
        if [ $((ROUND % 2)) = 1 ]; then
            run_fio "$name" "$target" "$direct" "$feng" "$rw" "$bs" "$qd"
            run_iolab "$name" "$target" "$direct" "$ieng" "$rw" "$bs" "$qd"
        else
            run_iolab "$name" "$target" "$direct" "$ieng" "$rw" "$bs" "$qd"
            run_fio "$name" "$target" "$direct" "$feng" "$rw" "$bs" "$qd"
        fi
        rm -f "$WORK/tmpfs/fio.dat"
    done
done

python3 - "$RES" "$ROUNDS" "${LINES[@]}" <<'PY'
import json, sys, statistics as st
res, rounds, lines = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
spreads = []
print(f"{'test':22} {'iolab IOPS':>12} {'fio IOPS':>12} {'ratio':>6}  {'lat mean i/f':>14} {'p99 i/f':>9} {'p99.9 i/f':>10}")
for line in lines:
    name = line.split('|')[0]
    ii, ff = [], []
    for r in range(1, rounds + 1):
        i = json.load(open(f"{res}/{name}.iolab.{r}.json"))["tests"][0]["runs"][0]
        f = json.load(open(f"{res}/{name}.fio.{r}.json"))["jobs"][0]
        fj = f["read"] if f["read"]["io_bytes"] > 0 else f["write"]
        ii.append((i["iops"], i["lat_ns"]["mean"], i["lat_ns"]["p99"], i["lat_ns"]["p999"]))
        pct = fj["lat_ns"].get("percentile") or fj["clat_ns"]["percentile"]
        ff.append((fj["iops"], fj["lat_ns"]["mean"], pct["99.000000"], pct["99.900000"]))
    med = lambda xs, k: st.median(x[k] for x in xs)
    print(f"{name:22} {med(ii,0):12,.0f} {med(ff,0):12,.0f} {med(ii,0)/med(ff,0):6.2f}  "
          f"{med(ii,1)/med(ff,1):14.2f} {med(ii,2)/med(ff,2):9.2f} {med(ii,3)/med(ff,3):10.2f}")
    # Each tool's own round-to-round range (max / min): a gap between the tools smaller
    # than these is not a difference of the tools.
    rng = lambda xs, k: max(x[k] for x in xs) / max(min(x[k] for x in xs), 1e-9)
    spreads.append((name, rng(ii, 0), rng(ff, 0), rng(ii, 2), rng(ff, 2), rng(ii, 3), rng(ff, 3)))
print(f"(median of {rounds} alternating rounds, both tools pinned to one CPU; ratio = iolab / fio; "
      "latency ratios compare iolab's submit-to-completion latency with fio's total lat_ns)")
print()
print("Each tool's own range over the rounds (max / min):")
print(f"{'test':22} {'IOPS i':>7} {'IOPS f':>7} {'p99 i':>7} {'p99 f':>7} {'p99.9 i':>8} {'p99.9 f':>8}")
for n, *r in spreads:
    print(f"{n:22} " + " ".join(f"{v:7.2f}" if k < 4 else f"{v:8.2f}" for k, v in enumerate(r)))
PY
