#!/usr/bin/env bash
# Set-up and teardown cost of one matrix configuration, per file system: mkfs, mount,
# umount + loop detach on a sparse image (default 1 GiB), median of 3 fresh file systems.
# Needs root. Usage: scripts/matrix-setup-time.sh [IMAGE_DIR] [SIZE]
set -euo pipefail
cd "$(dirname "$0")/.."
dir="${1:-.}"
size="${2:-1G}"
cargo build --release --quiet
exec ./target/release/iolab matrix --setup-only \
    --fs ext2,ext3,ext4,xfs,btrfs,ntfs,exfat,vfat,tmpfs \
    --image-dir "$dir" --image-size "$size" --repeat 3 --no-save
