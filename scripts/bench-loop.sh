# Sourced by the fio benchmarks (bench-vs-fio.sh, bench-rotate.sh): a work directory in
# /dev/shm with a 1 GiB backing file, a loop device over it with its first 512 MiB prefilled
# (reads never hit holes; every tool reads the same data), both removed on exit.
#   bench_loop NAME   -> sets WORK and LOOP
#   halts             -> per CPU, idle-state entries (cpuidle, all states but POLL) since boot
#   counted FILE FROM TO CMD… -> runs CMD, writes `halts` FROM and TO seconds after its start
#                     and the window's length to FILE
#   halt_sum "$(halts)" -> the sum over the CPUs
# BENCH_HALTPOLL=NS sets the guest's cpuidle-haltpoll polling window
# (/sys/module/haltpoll/parameters/guest_halt_poll_ns) for the run and restores the old value
# on exit. On a KVM guest where it is 0, every idle vCPU halts at once and each wake-up goes
# through the host, which decides QD1 results (docs/PERFORMANCE.md); the kernel's default is
# 200000.
HALTPOLL_PARAM=/sys/module/haltpoll/parameters/guest_halt_poll_ns
bench_loop() {
    WORK=$(mktemp -d "/dev/shm/iolab-$1.XXXXXX")
    LOOP=""
    HALTPOLL_OLD=""
    trap 'bench_loop_cleanup' EXIT INT TERM
    if [ -n "${BENCH_HALTPOLL:-}" ]; then
        [ -w "$HALTPOLL_PARAM" ] || { echo "BENCH_HALTPOLL: no $HALTPOLL_PARAM here (not a KVM guest with cpuidle-haltpoll?)" >&2; exit 1; }
        HALTPOLL_OLD=$(cat "$HALTPOLL_PARAM")
        echo "$BENCH_HALTPOLL" >"$HALTPOLL_PARAM"
        echo "guest_halt_poll_ns set to $BENCH_HALTPOLL for this run (was $HALTPOLL_OLD)" >&2
    fi
    truncate -s 1G "$WORK/backing.img"
    LOOP=$(losetup --find --show "$WORK/backing.img")
    dd if=/dev/urandom of="$LOOP" bs=1M count=512 oflag=direct status=none
}

bench_loop_cleanup() {
    [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
    [ -n "$HALTPOLL_OLD" ] && echo "$HALTPOLL_OLD" >"$HALTPOLL_PARAM" || true
    rm -rf "$WORK"
}

halts() { # per CPU: entries into idle states other than POLL since boot, space-separated
    # (builtins only: no process is started, so reading the counts adds no wake-ups)
    local c s n v name out=()
    for c in /sys/devices/system/cpu/cpu[0-9]*; do
        n=0
        for s in "$c"/cpuidle/state*; do
            [ -r "$s/usage" ] || continue
            read -r name <"$s/name"
            read -r v <"$s/usage"
            [ "$name" = POLL ] || n=$((n + v))
        done
        out+=("${c##*cpu}:$n")
    done
    echo "${out[*]}"
}

counted() { # file from_s to_s command... : runs the command; writes to file the idle counts
    # read from_s and to_s seconds after its start (the steady middle of a time-based run:
    # setup, ramp and teardown left out) and the length of that window
    local file=$1 from=$2 to=$3 pid before after win
    shift 3
    win=$(awk "BEGIN { print $to - $from }")
    "$@" &
    pid=$!
    sleep "$from"
    before=$(halts)
    sleep "$win"
    after=$(halts)
    wait "$pid"
    printf '%s\n%s\n%s\n' "$before" "$after" "$win" >"$file"
}

halt_sum() { # "CPU:COUNT ..." -> sum of the counts
    local x n=0
    for x in $1; do n=$((n + ${x#*:})); done
    echo "$n"
}
