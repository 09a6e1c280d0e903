#!/usr/bin/env bash
# The result history's acceptance figure (issue #31): 1,000 imported results list in under
# a second (docs/PERFORMANCE.md, "Result history"). Makes N result files from a real one
# (tests/fixtures/run-a.json: four block tests, repeats, latency histograms), each with its
# own start time and figures, imports them into a fresh history, then times
# `iolab history --limit 0` (the table) and `--json` REPEAT times each. No root needed.
#
#   scripts/bench-history.sh [IOLAB] [N] [REPEAT]   (default: target/release/iolab 1000 5)
set -euo pipefail
iolab=${1:-target/release/iolab}
n=${2:-1000}
repeat=${3:-5}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export IOLAB_HISTORY="$work/history.sqlite"
unset IOLAB_NO_HISTORY

python3 - "$n" "$work/res" tests/fixtures/run-a.json <<'PY'
import copy, datetime, json, os, sys
n, out, template = int(sys.argv[1]), sys.argv[2], json.load(open(sys.argv[3]))
os.makedirs(out)
t0 = datetime.datetime(2026, 1, 1, tzinfo=datetime.timezone.utc)
for i in range(n):
    d = copy.deepcopy(template)
    d["started_at"] = (t0 + datetime.timedelta(hours=i)).strftime("%Y-%m-%dT%H:%M:%S.000Z")
    d["environment"]["device_serial"] = f"BENCH{i % 4}"
    for t in d["tests"]:
        for s in t["summary"].values():
            for k in ("mean", "median", "min", "max", "ci95_low", "ci95_high"):
                s[k] *= 1 + (i % 7) / 100
    json.dump(d, open(f"{out}/run-{i:05}.json", "w"))
PY
du -sh "$work/res" | sed 's/^/result files: /'
start=$(date +%s.%N)
"$iolab" history import "$work/res"
echo "import of $n files: $(echo "$(date +%s.%N) - $start" | bc) s"
ls -l "$IOLAB_HISTORY" | awk '{print "database: " $5 " bytes"}'

time_it() { # median wall seconds of REPEAT runs of: iolab ARGS > /dev/null
    local times=()
    for _ in $(seq "$repeat"); do
        local s e
        s=$(date +%s.%N)
        "$iolab" "$@" > /dev/null 2>&1
        e=$(date +%s.%N)
        times+=("$(echo "$e - $s" | bc)")
    done
    printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "median %.3f s (min %.3f, max %.3f) over %d runs\n", a[int((NR+1)/2)], a[1], a[NR], NR}'
}
rows=$("$iolab" history --limit 0 --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
echo "rows listed: $rows"
echo "iolab history --limit 0:        $(time_it history --limit 0)"
echo "iolab history --limit 0 --json: $(time_it history --limit 0 --json)"
echo "iolab history (newest 50):      $(time_it history)"
echo "iolab history trend --device BENCH1: $(time_it history trend --device BENCH1)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
