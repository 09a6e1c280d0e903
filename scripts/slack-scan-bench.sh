#!/bin/bash
# Scan speed of `iolab slack` on a generated tree (docs/PERFORMANCE.md, section slack).
# Usage: scripts/slack-scan-bench.sh [FILES] [IOLAB]   (root: a private tmpfs is mounted in a
# temp dir and removed afterwards; otherwise the tree goes to a temp dir on $TMPDIR).
# Files are sparse (truncate), so a million of them costs inodes, not data.
set -euo pipefail
FILES=${1:-1000000}
IOLAB=${2:-target/release/iolab}
WORK=$(mktemp -d -t iolab-slack-bench-XXXXXX)
MOUNTED=0
cleanup() {
    if [ "$MOUNTED" = 1 ]; then umount "$WORK"; fi
    rm -rf "$WORK"
}
trap cleanup EXIT
if [ "$(id -u)" = 0 ]; then
    mount -t tmpfs -o size=4g,nr_inodes=0 iolab-slack-bench "$WORK"
    MOUNTED=1
fi
python3 - "$WORK/tree" "$FILES" <<'PY'
import os, sys, random
root, n = sys.argv[1], int(sys.argv[2])
rnd = random.Random(42)
dirs = max(1, n // 1000)
for d in range(dirs):
    os.makedirs(f"{root}/d{d // 100:03}/e{d % 100:02}", exist_ok=True)
for i in range(n):
    d = i % dirs
    p = f"{root}/d{d // 100:03}/e{d % 100:02}/file{i:07}.dat"
    fd = os.open(p, os.O_CREAT | os.O_WRONLY, 0o644)
    os.ftruncate(fd, int(rnd.lognormvariate(8, 2.5)) % (1 << 30))
    os.close(fd)
PY
echo "generated $FILES files under $WORK/tree ($(df -h --output=fstype "$WORK" | tail -1))"
sync
for run in 1 2 3; do
    /usr/bin/time -f "run $run: %e s wall, %U s user, %S s sys, %M KiB max RSS" \
        "$IOLAB" slack "$WORK/tree" --no-save --json > "$WORK/out.json"
    python3 -c "import json,sys; s=json.load(open(sys.argv[1]))['slack']['scan']; print(f\"  scan: {s['files']} files, {s['dirs']} dirs in {s['elapsed_s']:.2f} s = {s['entries_per_s']:.0f} entries/s\")" "$WORK/out.json"
done
