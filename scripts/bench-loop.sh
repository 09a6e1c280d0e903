# Sourced by the fio benchmarks (bench-vs-fio.sh, bench-rotate.sh): a work directory in
# /dev/shm with a 1 GiB backing file, a loop device over it with its first 512 MiB prefilled
# (reads never hit holes; every tool reads the same data), both removed on exit.
#   bench_loop NAME   -> sets WORK and LOOP
bench_loop() {
    WORK=$(mktemp -d "/dev/shm/iolab-$1.XXXXXX")
    LOOP=""
    trap 'bench_loop_cleanup' EXIT INT TERM
    truncate -s 1G "$WORK/backing.img"
    LOOP=$(losetup --find --show "$WORK/backing.img")
    dd if=/dev/urandom of="$LOOP" bs=1M count=512 oflag=direct status=none
}

bench_loop_cleanup() {
    [ -n "$LOOP" ] && losetup -d "$LOOP" 2>/dev/null || true
    rm -rf "$WORK"
}
