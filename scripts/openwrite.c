/* The minimal open-write-close loop that `iolab files` is measured against
 * (scripts/bench-vs-fsmark.sh). Same syscalls as iolab's `--method write --sync none`
 * create phase: openat(dirfd, name, O_WRONLY|O_CREAT|O_EXCL|O_CLOEXEC), write, close,
 * names counted in place, no allocation in the loop.
 *
 * usage: openwrite DIR COUNT SIZE    (DIR must exist and be empty; prints files/s)
 * The files are left in DIR for the caller to remove. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s DIR COUNT SIZE\n", argv[0]);
        return 2;
    }
    long count = atol(argv[2]);
    size_t size = (size_t)atol(argv[3]);
    int dirfd = open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dirfd < 0) { perror(argv[1]); return 1; }
    char *buf = malloc(size ? size : 1);
    for (size_t i = 0; i < size; i++) buf[i] = (char)(i * 131 + 7);
    char name[16] = "00000000";
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long n = 0; n < count; n++) {
        int fd = openat(dirfd, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0) { perror("openat"); return 1; }
        if (size && write(fd, buf, size) != (ssize_t)size) { perror("write"); return 1; }
        close(fd);
        for (int i = 7; i >= 0; i--) {
            if (name[i] == '9') { name[i] = '0'; } else { name[i]++; break; }
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
    printf("%.0f\n", count / s);
    return 0;
}
