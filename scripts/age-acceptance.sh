#!/usr/bin/env bash
# How much `iolab age` ages a file system, and whether the same seed ages it the same way
# (docs/PERFORMANCE.md, "Aging and many writers"): on fresh 2 GiB ext4 and btrfs images in
# RAM, the layout score of one large file written sequentially; then, on a fresh image each
# time, `iolab age` with a churn profile to 80 % twice with the same seed and once with
# another: the layout score after, the free-space fragmentation, the aging speed, and a digest
# of the aged file set (names and sizes). Needs root (loop devices).
#
#   scripts/age-acceptance.sh [IOLAB] [PROFILE] [FS...]
#       (default: target/release/iolab source-tree ext4 btrfs)
set -euo pipefail
iolab=${1:-target/release/iolab}
profile=${2:-source-tree}
shift $(( $# > 2 ? 2 : $# ))
filesystems=("${@:-ext4 btrfs}")
[ "${#filesystems[@]}" -eq 1 ] && read -r -a filesystems <<<"${filesystems[0]}"
# shellcheck source=scripts/ramfs.sh
. "$(dirname "$0")/ramfs.sh"
ramfs_init age-acceptance
fresh() { ramfs_fresh "$1" 2G; } # a fresh 2 GiB file system of type $1 in RAM at $work/mnt
py() { python3 -c "import json,sys; d=json.load(sys.stdin); $1"; }

echo "profile $profile, 2 GiB images in RAM, $(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg)"
for fs in "${filesystems[@]}"; do
    fresh "$fs"
    dd if=/dev/urandom of="$work/mnt/big" bs=1M count=1024 conv=fsync status=none
    big=$("$iolab" info "$work/mnt" --layout --json 2>/dev/null |
        py "print('%.5f' % d['layout']['layout_score'])")
    echo "$fs fresh, one 1 GiB file written sequentially: layout score $big"
    for seed in 1 1 2; do
        fresh "$fs"
        "$iolab" age "$work/mnt" --profile "$profile" --seed "$seed" --no-save --json -q \
            >"$work/age.json"
        digest=$(cd "$work/mnt" && find . -path ./lost+found -prune -o -type f -printf '%P %s\n' |
            sort | sha256sum | cut -c1-12)
        py "
a=d['tests'][0]['age']; l=a['layout_after']; f=l.get('free_space') or {}
free = ('%.1f %% of free space in >= 1 MiB extents' % (100*f['share_in_1mib_extents'])) if f else (l.get('free_space_note') or 'no free-space figure')
print('$fs seed $seed: layout score %.4f, %d of %d files in more than one piece, %.2f pieces/file; %s; fullness %.1f %%, %.2f GiB written, %d created + %d deleted in %.1f s of aging (%.1f s with the layout scoring) = %d files/s, a writer waited %s for a CPU; file set $digest' % (l['layout_score'], l['fragmented_files'], l['files'], l['pieces_per_file_mean'], free, 100*a['fullness'], a['bytes_written']/2**30, a['files_created'], a['files_deleted'], (a['files_created']+a['files_deleted'])/max(a['file_ops_per_s'], 1e-9), a['elapsed_s'], a['file_ops_per_s'], '%.0f %%' % a['cpu_wait_pct'] if 'cpu_wait_pct' in a else '-'))
" <"$work/age.json"
    done
done
