#!/usr/bin/env bash
# The acceptance repetitions of `iolab sustain` (issue #29) on the write-cache emulator
# (tests/support_write_cache: a loop device in /dev/shm behind a cgroup-v1 blkio throttle):
#   - X = 1 GiB cache, A = 400 MB/s, B = 100 MB/s: cache within ±5 % of the emulator's own
#     switch point, both speeds within ±10 % of the limits — RUNS_CACHE times (default 5);
#   - X = 512 MiB, A = 400 MB/s, B = 200 MB/s: the same — RUNS_CACHE times;
#   - a plain throttle (400 MB/s, 1.5 GiB written): no cliff — RUNS_PLAIN times (default 10).
# Each repetition is one run of an #[ignore]d test of tests/sustain.rs (a fresh emulator
# every time); its ACCURACY line and its verdict are printed, then a tally per scenario. A
# cache run whose writer the machine stalled before the cliff is measured again (at most
# 3 times; the emulator's switch is no ground truth then) and the line says so.
#
#   scripts/sustain-accuracy.sh [RUNS_CACHE] [RUNS_PLAIN]
#
# Needs root (loop device, blkio cgroup) and about 3 GiB free in /dev/shm; about 10 s per
# cache run and 5 s per plain run after the build. Exit 1 when any repetition failed.
set -uo pipefail
runs_cache=${1:-5}
runs_plain=${2:-10}
cd "$(dirname "$0")/.." || exit 2
cargo test --test sustain --no-run -q 2>/dev/null || cargo test --test sustain --no-run || exit 2
failed=0
one() { # test name, runs
    local name=$1 runs=$2 ok=0
    for i in $(seq 1 "$runs"); do
        local log
        log=$(IOLAB_TEST_STRICT=1 cargo test -q --test sustain "$name" -- --exact --ignored --nocapture 2>&1)
        local rc=$?
        local acc
        acc=$(grep -o 'ACCURACY.*' <<<"$log" | head -1)
        # A cache run measured again because the machine stalled the writer (see
        # tests/sustain.rs, stalled_before_cliff): said, and counted.
        local retries
        retries=$(grep -c '^RETRY' <<<"$log")
        if [ "$retries" -gt 0 ]; then
            acc="$acc  (after $retries retr$([ "$retries" -eq 1 ] && echo y || echo ies): writer stalled)"
            grep '^RETRY' <<<"$log" | cut -c1-240 | sed 's/^/    /'
        fi
        if [ $rc -eq 0 ]; then
            ok=$((ok + 1))
            echo "$name #$i: pass  $acc"
        else
            failed=1
            echo "$name #$i: FAIL  $acc"
            grep -E 'panicked|assert|cliffs|series' <<<"$log" | head -8 | sed 's/^/    /'
        fi
    done
    echo "== $name: $ok of $runs passed"
}
one acceptance_1gib_cache_400_then_100 "$runs_cache"
one acceptance_512mib_cache_400_then_200 "$runs_cache"
one acceptance_plain_throttle "$runs_plain"
exit $failed
