# Sourced by the fio benchmarks (bench-vs-fio.sh, bench-rotate.sh): a work directory in
# /dev/shm with a 1 GiB backing file, a loop device over it with its first 512 MiB prefilled
# (reads never hit holes; every tool reads the same data), both removed on exit.
#   bench_loop NAME   -> sets WORK and LOOP
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
