# Sourced by the scripts that need fresh file systems in RAM (bench-age.sh,
# age-acceptance.sh): one image in a work directory under /dev/shm, on a loop device,
# mounted at $work/mnt, all removed when the script exits. Needs root.
#
#   ramfs_init NAME                  $work = a new /dev/shm/iolab-NAME.XXXXXX, the exit trap
#   ramfs_fresh FS SIZE [MKFS ARG…]  a fresh FS of SIZE (truncate's units) at $work/mnt
work=""
lo=""
ramfs_cleanup() {
    mountpoint -q "$work/mnt" && umount "$work/mnt"
    [ -n "$lo" ] && losetup -d "$lo"
    rm -rf "$work"
}
ramfs_init() {
    work=$(mktemp -d "/dev/shm/iolab-$1.XXXXXX")
    trap ramfs_cleanup EXIT
    mkdir "$work/mnt"
}
ramfs_fresh() {
    local fs=$1 size=$2
    shift 2
    mountpoint -q "$work/mnt" && umount "$work/mnt"
    if [ -n "$lo" ]; then losetup -d "$lo"; lo=""; fi
    rm -f "$work/img" && truncate -s "$size" "$work/img"
    lo=$(losetup -f --show "$work/img")
    case $fs in
    btrfs) mkfs.btrfs -q -f "$@" "$lo" >/dev/null ;;
    xfs) mkfs.xfs -q -f "$@" "$lo" ;;
    *) "mkfs.$fs" -q -F "$@" "$lo" ;;
    esac
    mount "$lo" "$work/mnt"
}
