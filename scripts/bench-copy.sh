#!/usr/bin/env bash
# iolab copy's write phase against `cp -r` and `rsync -a --whole-file` on the very same
# generated tree (iolab copy --generate), RAM -> tmpfs and RAM -> ext4 on a loop device
# (image created and removed here), plus the RAM-to-RAM ceiling measured with cp.
#
# Every tool: caches dropped before each run, time until the command returns ("close"),
# then `sync -f` (syncfs) timed separately; median of REPEAT runs. Root needed (mounts,
# loop device, drop_caches).
#
#   scripts/bench-copy.sh                      # media-mix and source-tree at scale 0.25
#   DATASETS="media-mix" SCALE=0.5 REPEAT=5 scripts/bench-copy.sh
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${IOLAB:-target/release/iolab}
DATASETS=${DATASETS:-"media-mix source-tree"}
SCALE=${SCALE:-0.25}
REPEAT=${REPEAT:-3}
METHOD=${METHOD:-rw}

[ "$(id -u)" = 0 ] || { echo "bench-copy.sh: needs root (mounts, loop device, drop_caches)" >&2; exit 2; }
[ -x "$BIN" ] || cargo build --release
for t in rsync python3 losetup mkfs.ext4; do
    command -v "$t" >/dev/null || { echo "bench-copy.sh: $t is missing" >&2; exit 2; }
done

WORK=$(mktemp -d /tmp/iolab-bench-copy.XXXXXX)
RAM=$(mktemp -d /dev/shm/iolab-bench-copy.XXXXXX)
LOOP=""
cleanup() {
    set +e
    for m in "$WORK/ext4" "$WORK/tmpfs"; do mountpoint -q "$m" && umount "$m"; done
    [ -n "$LOOP" ] && losetup -d "$LOOP"
    rm -rf "$WORK" "$RAM"
}
trap cleanup EXIT INT TERM

drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
now() { date +%s%N; }
median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }

# One external tool run: prints "close_s sync_s".
time_tool() { # $1 = target dir (fresh), rest = command
    local dst=$1; shift
    drop
    local t0 t1 t2
    t0=$(now); "$@" >/dev/null; t1=$(now)
    sync -f "$dst"; t2=$(now)
    echo "$(( t1 - t0 )) $(( t2 - t1 ))" | awk '{printf "%.4f %.4f\n", $1/1e9, $2/1e9}'
}

# Median close and close+sync seconds of a tool over REPEAT runs: prints "close total".
bench_tool() { # $1 = fs dir, $2 = name (cp|rsync|cp-ram), $3 = source tree
    local fs=$1 name=$2 src=$3 closes=() totals=()
    for _ in $(seq "$REPEAT"); do
        local dst="$fs/dst-$name"
        rm -rf "$dst"; sync -f "$fs"
        local r
        case $name in
            cp | cp-ram) r=$(time_tool "$fs" cp -r "$src" "$dst") ;;
            rsync) r=$(time_tool "$fs" rsync -a --whole-file "$src/" "$dst/") ;;
        esac
        closes+=("${r% *}"); totals+=("$(echo "$r" | awk '{print $1+$2}')")
        rm -rf "$dst"; sync -f "$fs"
    done
    echo "$(median "${closes[@]}") $(median "${totals[@]}")"
}

# iolab's write phase (median close and close+syncfs seconds).
bench_iolab() { # $1 = fs dir, $2 = data set
    "$BIN" copy --dataset "$2" --scale "$SCALE" -t "$1" --ram-dir "$RAM" --phases write \
        --method "$METHOD" --repeat "$REPEAT" --no-save --json -q |
        python3 -c '
import json, sys
t = json.load(sys.stdin)["tests"][0]["summary"]
print("%.4f %.4f" % (t["close_ns"]["median"] / 1e9, t["elapsed_ns"]["median"] / 1e9))'
}

mkdir -p "$WORK/tmpfs" "$WORK/ext4"
echo "iolab $("$BIN" --version | awk '{print $2}'), $(cp --version | head -1), $(rsync --version | head -1 | awk '{print $1, $2, $3}'), kernel $(uname -r)"
echo "scale $SCALE, $REPEAT runs each (median), iolab --method $METHOD"
echo
printf '| %-11s | %-6s | %-28s | %9s | %9s | %9s | %s |\n' "data set" "target" "tool" "close s" "+sync s" "MB/s" "iolab speed-up (durable)"
printf '|%s|%s|%s|%s|%s|%s|%s|\n' "-------------" "--------" "------------------------------" "-----------" "-----------" "-----------" "---------------------------"
for ds in $DATASETS; do
    src="$RAM/src-$ds"
    "$BIN" copy --dataset "$ds" --scale "$SCALE" --generate "$src" >/dev/null
    bytes=$(du -sb --apparent-size "$src" | awk '{print $1}')
    need=$(( bytes * 3 / 1048576 + 256 ))
    mount -t tmpfs -o "size=${need}m" iolab-bench "$WORK/tmpfs"
    truncate -s "$(( need * 2 ))M" "$WORK/ext4.img"
    LOOP=$(losetup --find --show "$WORK/ext4.img")
    mkfs.ext4 -q -F "$LOOP"
    mount "$LOOP" "$WORK/ext4"
    for fs in tmpfs ext4; do
        dir="$WORK/$fs"
        read -r i_close i_total < <(bench_iolab "$dir" "$ds")
        read -r c_close c_total < <(bench_tool "$dir" cp "$src")
        read -r r_close r_total < <(bench_tool "$dir" rsync "$src")
        for row in "iolab copy --method $METHOD:$i_close:$i_total" "cp -r:$c_close:$c_total" \
            "rsync -a --whole-file:$r_close:$r_total"; do
            IFS=: read -r tool close total <<<"$row"
            awk -v ds="$ds" -v fs="$fs" -v tool="$tool" -v c="$close" -v t="$total" -v b="$bytes" \
                -v it="$i_total" 'BEGIN { printf "| %-11s | %-6s | %-28s | %9.3f | %9.3f | %9.1f | %s |\n",
                ds, fs, tool, c, t - c, b / t / 1e6, (tool ~ /^iolab/) ? "" : sprintf("x%.2f", t / it) }'
        done
        if [ "$fs" = tmpfs ]; then
            # The ceiling: cp RAM -> RAM on the same tmpfs as the source.
            read -r k_close k_total < <(bench_tool "$RAM" cp-ram "$src")
            awk -v ds="$ds" -v c="$k_close" -v t="$k_total" -v b="$bytes" -v it="$i_total" \
                'BEGIN { printf "| %-11s | %-6s | %-28s | %9.3f | %9.3f | %9.1f | iolab at %.0f %% of it |\n",
                ds, "RAM", "ceiling: cp -r RAM -> RAM", c, t - c, b / t / 1e6, t / it * 100 }'
        fi
    done
    umount "$WORK/ext4"; losetup -d "$LOOP"; LOOP=""; rm -f "$WORK/ext4.img"
    umount "$WORK/tmpfs"
    rm -rf "$src"
done
