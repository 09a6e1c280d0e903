#!/usr/bin/env bash
# A/B of iolab builds against fio (or each other) on one loop-device line, variants
# rotated every round; prints each variant's median IOPS and its *paired* ratio to the first
# variant (median and range of the per-round ratios, and their geometric mean with its 95 %
# interval: 'faster'/'slower' when it excludes 1, '~' when these rounds cannot tell), and
# each variant's median idle-state entries of all CPUs per I/O (vCPU halts on a VM).
#
#   sudo [RW=randread] [BS=4k] [QD=32] [S=2] [N=12] scripts/bench-rotate.sh VARIANT...
#
# VARIANT is `fio`, optionally followed by `:--OPTION=VALUE+--OPTION=VALUE` (extra fio options,
# e.g. `fio:--gtod_reduce=1`), or the path of an iolab binary, optionally followed by
# `:VAR=VALUE+VAR=VALUE` (environment for that run). Example, an old build against the
# current one and fio:
#   sudo N=16 scripts/bench-rotate.sh fio target/release/iolab /tmp/iolab-old
# Same device setup and pinning as scripts/bench-vs-fio.sh (BENCH_CPU, default 1; BENCH_HALTPOLL,
# see scripts/bench-loop.sh); BENCH_KEEP=DIR keeps the rounds' figures in DIR/rounds.txt.
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,15p' "$0" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "needs root for the loop device" >&2; exit 1; }
command -v fio >/dev/null || { echo "fio is not installed (apt-get install fio)" >&2; exit 1; }
RW=${RW:-randread} BS=${BS:-4k} QD=${QD:-32} S=${S:-2} N=${N:-12} CPU=${BENCH_CPU:-1}
awk "BEGIN { exit !($S >= 1.5) }" || { echo "S=$S: runs must be 1.5 s or longer" >&2; exit 2; }
# shellcheck source=scripts/bench-loop.sh
. "$(dirname "$0")/bench-loop.sh"
bench_loop rotate

run_one() { # variant -> IOPS
    if [ "${1%%:*}" = fio ]; then
        local fopts=()
        [[ "$1" == *:* ]] && IFS=+ read -r -a fopts <<<"${1#*:}"
        taskset -c "$CPU" fio --name=b --filename="$LOOP" --size=512M --direct=1 --ioengine=io_uring \
            --rw="$RW" --bs="$BS" --iodepth="$QD" --time_based --runtime="$S" --ramp_time=250ms \
            --randrepeat=0 --fixedbufs=1 --registerfiles=1 "${fopts[@]}" --output-format=json 2>/dev/null |
            python3 -c 'import json,sys; j=json.load(sys.stdin)["jobs"][0]; d=j["read"] if j["read"]["io_bytes"] else j["write"]; print(int(d["iops"]))'
    else
        local bin=${1%%:*} envs=()
        [[ "$1" == *:* ]] && IFS=+ read -r -a envs <<<"${1#*:}"
        env "${envs[@]}" taskset -c "$CPU" "$bin" run --target "$LOOP" --allow-destroy "$LOOP" --prefill false \
            --engine uring --direct true --rw "$RW" --bs "$BS" --iodepth "$QD" --size 512M \
            --duration "${S}s" --ramp 250ms --repeat 1 --json --no-save 2>/dev/null |
            python3 -c 'import json,sys; print(int(json.load(sys.stdin)["tests"][0]["runs"][0]["iops"]))'
    fi
}

# Idle-state entries are counted over the steady middle of each run: from 0.5 s after the
# 0.25 s ramp to 0.15 s before the end.
WIN_FROM=0.75
WIN_TO=$(awk "BEGIN { print 0.25 + $S - 0.15 }")
one() { # variant -> IOPS:HALTS:WINDOW_S (idle-state entries of all CPUs in the window)
    local iops before after win
    iops=$(counted "$WORK/idle" "$WIN_FROM" "$WIN_TO" run_one "$1")
    { read -r before; read -r after; read -r win; } <"$WORK/idle"
    echo "$iops:$(($(halt_sum "$after") - $(halt_sum "$before"))):$win"
}

V=("$@")
n=${#V[@]}
OUT="$WORK/rounds.txt"
for r in $(seq 1 "$N"); do
    res=()
    for k in $(seq 0 $((n - 1))); do
        idx=$(((k + r) % n)) # a different variant goes first every round
        res[idx]=$(one "${V[idx]}")
    done
    echo "${res[*]}" >>"$OUT"
done
if [ -n "${BENCH_KEEP:-}" ]; then
    mkdir -p "$BENCH_KEEP" && cp "$OUT" "$BENCH_KEEP/rounds.txt" &&
        echo "rounds kept in $BENCH_KEEP/rounds.txt (a line per round, IOPS:HALTS:WINDOW_S per variant)"
fi
python3 - "$(dirname "$0")" "$OUT" "$S" "${V[@]}" <<'PY'
import statistics as st, sys
sys.path.insert(0, sys.argv[1])
from ratio_ci import paired_ci
out, names = sys.argv[2], sys.argv[4:]
cells = [[tuple(map(float, c.split(":"))) for c in l.split()] for l in open(out)]
rows = [[c[0] for c in r] for r in cells]
# Halts per I/O: the idle-state entries in the window over the I/Os in it (IOPS x window).
halts = [[c[1] / max(c[0] * c[2], 1) for c in r] for r in cells]
print(f"{len(rows)} rounds; paired = each round's IOPS / {names[0]}'s in the same round; "
      "halts = idle-state entries of all CPUs per I/O (vCPU halts on a VM)")
for i, name in enumerate(names):
    col = [r[i] for r in rows]
    rat = sorted(r[i] / r[0] for r in rows)
    g, lo, hi, verdict = paired_ci(rat)
    print(f"{name:44} median {st.median(col):10,.0f} IOPS  paired {st.median(rat):.3f} ({rat[0]:.2f}-{rat[-1]:.2f})"
          f"  geo-mean {g:.3f} [95 % CI {lo:.3f}-{hi:.3f}] {verdict}"
          f"  halts {st.median(h[i] for h in halts):.3f}/IO"
          f" (paired {st.median(h[i] / max(h[0], 1e-12) for h in halts):.2f})")
PY
