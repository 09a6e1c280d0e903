#!/usr/bin/env bash
# Aging speed against the small-file create rate on the same kind of file system, and
# `iolab files --jobs 2` against `--jobs 1` on tmpfs (docs/PERFORMANCE.md, "Aging and many
# writers"). Needs root (loop devices), a release build (cargo build --release).
#
#   scripts/bench-age.sh [IOLAB]        (default: target/release/iolab)
set -euo pipefail
iolab=${1:-target/release/iolab}
# shellcheck source=scripts/ramfs.sh
. "$(dirname "$0")/ramfs.sh"
ramfs_init bench-age
fresh() { ramfs_fresh ext4 1G -i 4096; } # a fresh 1 GiB ext4 in RAM at $work/mnt
json_field() { python3 -c "import json,sys; d=json.load(sys.stdin); print($1)"; }

# The same work on both sides: 4 KiB files on a 1 GiB ext4 with an inode per 4 KiB (so
# that space, not inodes, is the limit), no per-file sync. `iolab age` with a profile of
# 4 KiB files only (a tree of 10 x 10 directories, churn 1: 1 GiB written), against
# `iolab files` creating and deleting 4 KiB files, one directory per portion.
cat >"$work/small.toml" <<'TOML'
description = "4 KiB files only (the files comparison)"
fill = "80%"
churn = 1.0
append_share = 0.0
[tree]
depth = 2
dirs_per_dir = 10
files_per_dir = 2000
[[sizes]]
from = "4K"
to = "4K"
weight = 1
TOML
# Aging with one writer, and with its default (one per CPU, at most 8).
fresh
age1=$("$iolab" age "$work/mnt" --profile "$work/small.toml" --jobs 1 --no-save --json -q 2>/dev/null |
    json_field "round(d['tests'][0]['age']['file_ops_per_s'])")
fresh
ageall=$("$iolab" age "$work/mnt" --profile "$work/small.toml" --no-save --json -q 2>/dev/null |
    json_field "'%d %d' % (round(d['tests'][0]['age']['file_ops_per_s']), d['tests'][0]['age']['jobs'])")
agen=${ageall% *}
jobs=${ageall#* }
fresh
# files/s (portions only: the final syncfs left out) and files/s with that sync.
read -r create synced < <("$iolab" files -t "$work/mnt" --sizes 4K --files-per-portion 2000 --portions 10 \
    --passes 1 --repeat 3 --phases create,delete --no-save --json 2>/dev/null |
    json_field "'%d %d' % (round(d['tests'][0]['summary']['files_per_s']['median']), round(sorted(r['files']['files_per_s_with_sync'] for r in d['tests'][0]['runs'])[1]))")
# The same fill: aging creates ~237,000 files into a file system it fills to 80 % (and
# deletes ~47,000 on the way); the files run above creates 20,000 and deletes them again,
# so its directories, inodes and page cache stay small and hot. Here `iolab files` creates
# as many files as aging leaves (~190,000: the file system as full as aging makes it), in
# portions of 2,000, in one run, before deleting them.
fresh
read -r left created < <("$iolab" age "$work/mnt" --profile "$work/small.toml" --jobs 1 --no-save --json -q 2>/dev/null |
    json_field "'%d %d' % (d['tests'][0]['age']['files_left'], d['tests'][0]['age']['files_created'])")
fresh
read -r vcreate vsynced < <("$iolab" files -t "$work/mnt" --sizes 4K --files-per-portion 2000 \
    --portions $((left / 2000)) --passes 1 --repeat 1 --phases create,delete --no-save --json 2>/dev/null |
    json_field "'%d %d' % (round(d['tests'][0]['summary']['files_per_s']['median']), round(d['tests'][0]['runs'][0]['files']['files_per_s_with_sync']))")
ratio() { python3 -c "print(round($1/$2,2))"; }
echo "ext4 1 GiB in RAM, 4 KiB files: files create ${create} files/s (${synced} with its sync)"
echo "  age --jobs 1: ${age1} files created+deleted/s; ratio $(ratio "$age1" "$create") (with sync $(ratio "$age1" "$synced"))"
echo "  age, ${jobs} writers: ${agen} files created+deleted/s; ratio $(ratio "$agen" "$create") (with sync $(ratio "$agen" "$synced"))"
echo "same fill: files creating $(((left / 2000) * 2000)) files (aging leaves ${left} of the ${created} it creates): ${vcreate} files/s (${vsynced} with its sync)"
echo "  age --jobs 1: ratio $(ratio "$age1" "$vcreate"); age, ${jobs} writers: ratio $(ratio "$agen" "$vcreate")"
fresh
real=$("$iolab" age "$work/mnt" --profile source-tree --churn 1 --no-save --json -q 2>/dev/null |
    json_field "round(d['tests'][0]['age']['file_ops_per_s'])")
echo "ext4 1 GiB in RAM, source-tree profile (1 B - 8 MiB files, synced every MiB): age ${real} files created+deleted/s"

mkdir "$work/tmp"
for j in 1 2; do
    r=$("$iolab" files -t "$work/tmp" --jobs $j --sizes 1 --files-per-portion 5000 --portions 10 \
        --passes 1 --repeat 5 --phases create,delete --no-save --json 2>/dev/null |
        json_field "round(d['tests'][0]['summary']['files_per_s']['median'])")
    echo "tmpfs: files --jobs $j: ${r} files/s created (median of 5)"
done
