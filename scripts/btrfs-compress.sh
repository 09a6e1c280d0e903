#!/usr/bin/env bash
# Does a compressing btrfs shrink what iolab writes? 256 MiB of sequential buffered writes of
# BS bytes (default 8K) on a btrfs mounted with compress-force=zstd, once per pattern
# (default: random stamped); prints the data space btrfs used for each. The default pattern
# (every write under 1 MiB filled anew) must take about the 256 MiB written; `stamped` (each
# write only stamped, fio's default buffers) is shrunk by btrfs.
#
#   scripts/btrfs-compress.sh            BS=4K scripts/btrfs-compress.sh
#
# Needs root, btrfs-progs and a kernel with btrfs; makes its own image file and loop device in
# a temp directory and removes them.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
cargo build --release -q || exit 2
bin=$PWD/target/release/iolab
bs=${BS:-8K}
w=$(mktemp -d /tmp/iolab-btrfs-compress.XXXX)
loop=
# Unmount, retrying while busy (right after a run btrfs can hold it for a moment; a single
# failed umount here once left the file system mounted and its loop device held).
umount_retry() {
    local i
    mountpoint -q "$1" || return 0
    for i in $(seq 1 50); do
        umount "$1" 2>/dev/null && return 0
        sleep 0.1
    done
    umount "$1"
}
cleanup() {
    umount_retry "$w/mnt" || { echo "could not unmount $w/mnt; $loop left attached" >&2; return; }
    [ -n "$loop" ] && losetup -d "$loop"
    rm -rf "$w"
}
trap cleanup EXIT
truncate -s 2G "$w/img"
loop=$(losetup -f --show "$w/img") || exit 2
mkdir "$w/mnt"
for p in ${PATTERNS:-random stamped}; do
    mkfs.btrfs -q -f "$loop" >/dev/null || exit 2
    mount -o compress-force=zstd "$loop" "$w/mnt" || exit 2
    IOLAB_NO_HISTORY=1 "$bin" run -t "$w/mnt" --rw "${RW:-write}" --bs "$bs" --iodepth 1 --size 256M \
        --io-size 256M --repeat 1 --direct false --pattern "$p" --keep --no-save -q \
        >/dev/null || exit 1
    sync
    used=$(btrfs filesystem df -b "$w/mnt" | sed -n 's/^Data.*used=\([0-9]*\).*/\1/p')
    echo "pattern $p, $bs ${RW:-write}s, 256 MiB written: btrfs data used $((used >> 20)) MiB"
    umount_retry "$w/mnt" || exit 1
done
